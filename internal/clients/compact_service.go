package clients

import (
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// serviceParts are the parts of a Service that render writes alike for
// every function, and Knative's webhook defaults alike: its containers'
// security contexts, probes, ports and resources. Each is kept once for
// all the cached Services that carry it, since the cache holds every
// function's Service.
type serviceParts struct {
	security  *kept[*corev1.SecurityContext]
	probes    *kept[*corev1.Probe]
	ports     *kept[[]corev1.ContainerPort]
	resources *kept[corev1.ResourceList]
}

func newServiceParts() *serviceParts {
	return &serviceParts{
		security:  newKept(sameEncoding[*corev1.SecurityContext]),
		probes:    newKept(sameEncoding[*corev1.Probe]),
		ports:     newKept(sameEncoding[[]corev1.ContainerPort]),
		resources: newKept(sameEncoding[corev1.ResourceList]),
	}
}

// sameEncoding is true of two values that encode alike. Semantic equality
// would not do: it holds 1 and 1000m to be one quantity, and the cache
// would then hold a value the API server did not send.
func sameEncoding[T any](a, b T) bool { return reflect.DeepEqual(a, b) }

// compact keeps a Service's pods' labels, its containers' shared parts and
// the words of its status once.
func (p *serviceParts) compact(s *servingv1.Service) {
	compactPods(s)
	pod := &s.Spec.Template.Spec
	for i := range pod.Containers {
		p.container(&pod.Containers[i])
	}
	compactServiceStatus(&s.Status)
}

// container keeps a container's shared parts and names once.
func (p *serviceParts) container(c *corev1.Container) {
	c.Name = canonical(c.Name)
	for i := range c.Env {
		c.Env[i].Name = canonical(c.Env[i].Name)
	}
	c.SecurityContext = p.security.shared(c.SecurityContext)
	c.ReadinessProbe = p.probes.shared(c.ReadinessProbe)
	c.LivenessProbe = p.probes.shared(c.LivenessProbe)
	c.StartupProbe = p.probes.shared(c.StartupProbe)
	c.Ports = p.ports.shared(c.Ports)
	c.Resources.Limits = p.resources.shared(c.Resources.Limits)
	c.Resources.Requests = p.resources.shared(c.Resources.Requests)
}

// compactServiceStatus shares within a Service's status what Knative most
// often writes twice, its URL as its address and one Revision's name as
// the latest created, the latest ready and the one traffic goes to, and
// keeps its condition words once.
func compactServiceStatus(st *servingv1.ServiceStatus) {
	if a := st.Address; a != nil && a.URL != nil && st.URL != nil && *a.URL == *st.URL {
		a.URL = st.URL
	}
	ready := st.LatestReadyRevisionName
	if st.LatestCreatedRevisionName == ready {
		st.LatestCreatedRevisionName = ready
	}
	for i := range st.Traffic {
		if st.Traffic[i].RevisionName == ready {
			st.Traffic[i].RevisionName = ready
		}
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status, c.Severity, c.Reason = canonical(c.Type), canonical(c.Status), canonical(c.Severity), canonical(c.Reason)
	}
}

// compactPods compacts a Service's pod metadata, whose labels are most
// often its own: then the pods' are the Service's map, one map fewer a
// Service. Reads from the cache get deep copies, and nothing writes to a
// cached object, so two fields may share a map there.
func compactPods(s *servingv1.Service) {
	pods := &s.Spec.Template.ObjectMeta
	same := len(pods.Labels) > 0 && maps.Equal(pods.Labels, s.Labels)
	if same {
		// compactMeta would make them a map of their own.
		pods.Labels = nil
	}
	compactMeta(pods, s.Name)
	if same {
		pods.Labels = s.Labels
	}
}
