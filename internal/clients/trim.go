package clients

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// trimConfigMap keeps of a cached ConfigMap what observe reads: its
// metadata. A team may label its own ConfigMaps as the provider labels a
// build's, and each would otherwise hold up to a MiB of the shared
// provider's heap for as long as it exists. A build's ConfigMap needs no
// data to be compared: it is immutable, named by its build's identity and
// annotated with all of it.
func trimConfigMap(cm *corev1.ConfigMap) {
	cm.Data, cm.BinaryData = nil, nil
	trimMeta(cm)
}

// trimPod keeps of a cached pod what a build's outcome is read from: the
// states of its containers. A team's pod labelled as a build's then costs
// the provider no more than a build pod does.
func trimPod(p *corev1.Pod) {
	p.Spec = corev1.PodSpec{}
	p.Status = corev1.PodStatus{
		InitContainerStatuses: states(p.Status.InitContainerStatuses),
		ContainerStatuses:     states(p.Status.ContainerStatuses),
	}
	trimMeta(p)
}

// states keeps each container's name and state.
func states(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, s := range in {
		out[i] = corev1.ContainerStatus{Name: s.Name, State: s.State}
	}
	return out
}

// trimMeta keeps only the labels the provider selects by and the
// annotations it writes: a team chooses the others, without a bound on
// their number.
func trimMeta(o metav1.Object) {
	l := o.GetLabels()
	for k := range l {
		if !selectedBy(k) {
			delete(l, k)
		}
	}
	a := o.GetAnnotations()
	for k := range a {
		if !strings.HasPrefix(k, v1alpha1.Group+"/") {
			delete(a, k)
		}
	}
}

// selectedBy is true of the label keys the provider selects, indexes or
// tells its objects by.
func selectedBy(key string) bool {
	switch key {
	case render.LabelManagedBy, render.LabelName, render.LabelComponent, render.LabelKind, render.LabelResource, render.LabelBuildIdentity, observe.LabelJobName:
		return true
	}
	return false
}
