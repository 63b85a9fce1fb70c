package playact

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	netv1alpha1 "knative.dev/networking/pkg/apis/networking/v1alpha1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"knative.dev/serving/pkg/apis/serving"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A RevisionFault is how Knative's revision reconciler marks a Revision
// whose pods cannot serve. Each is written with Knative's own status methods
// and message helpers, from what the kubelet reports of the pod.
type RevisionFault func(*servingv1.RevisionStatus)

// CrashLoop is a container that keeps exiting: the reconciler reads the
// last termination of the user container.
func CrashLoop(exitCode int32, message string) RevisionFault {
	return func(rs *servingv1.RevisionStatus) {
		rs.MarkContainerHealthyFalse(servingv1.ExitCodeReason(exitCode), servingv1.RevisionContainerExitingMessage(message))
	}
}

// ImagePullBackOff is an image the kubelet cannot pull, reported once the
// Deployment's progress deadline passes with the container still waiting.
// The message is the kubelet's (pkg/kubelet/images, image_manager.go) with
// the pull error it wraps.
func ImagePullBackOff(image, pullError string) RevisionFault {
	return func(rs *servingv1.RevisionStatus) {
		rs.MarkResourcesAvailableFalse("ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: %s", image, pullError))
	}
}

// ContainerMissing is an image tag Knative cannot resolve to a digest; the
// message wraps the registry's error as the revision reconciler's
// background resolver does.
func ContainerMissing(image, resolveError string) RevisionFault {
	return func(rs *servingv1.RevisionStatus) {
		msg := servingv1.RevisionContainerMissingMessage(image, "failed to resolve image to digest") + ": " + resolveError
		rs.MarkContainerHealthyFalse(servingv1.ReasonContainerMissing, msg)
	}
}

// ProgressDeadline is a Revision whose pods never reached their initial
// scale, such as pods a ResourceQuota refuses.
func ProgressDeadline() RevisionFault {
	return func(rs *servingv1.RevisionStatus) {
		rs.MarkResourcesAvailableFalse(servingv1.ReasonProgressDeadlineExceeded, "Initial scale was never achieved")
	}
}

// RevisionName is the name Knative gives the Revision of a Service's
// generation.
func RevisionName(svc *servingv1.Service) string {
	return fmt.Sprintf("%s-%05d", svc.Name, svc.Generation)
}

// RollOut plays Knative Serving rolling out a Service's current generation
// in the cluster: the Revision is created, and its status and the Service's
// are written as Roll computes them. It returns the Service's URL.
func RollOut(ctx context.Context, t T, c client.Client, svc *servingv1.Service, fault RevisionFault) string {
	t.Helper()
	rev := Roll(svc, fault)
	status := rev.Status
	if err := c.Create(ctx, rev); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rev), rev); err != nil {
		t.Fatal(err)
	}
	rev.Status = status
	rev.Status.ObservedGeneration = rev.Generation
	if err := c.Status().Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	return svc.Status.URL.String()
}

// Roll computes, without writing anything, what Knative Serving reports of
// a rollout of a Service's current generation: the Revision the
// Configuration creates, Ready or failed with the fault, and the Service's
// status, propagated from its Configuration's and Route's with Knative's
// own methods. A failing Revision leaves traffic on the Revision that was
// ready before, as Knative does. It sets the Service's status and returns
// the Revision.
func Roll(svc *servingv1.Service, fault RevisionFault) *servingv1.Revision {
	rev := revision(svc, fault)
	revReady := rev.Status.GetCondition(apis.ConditionReady)

	cfg := servingv1.ConfigurationStatus{}
	cfg.InitializeConditions()
	cfg.LatestReadyRevisionName = svc.Status.LatestReadyRevisionName
	cfg.SetLatestCreatedRevisionName(rev.Name)
	if fault == nil {
		cfg.SetLatestReadyRevisionName(rev.Name)
	} else {
		cfg.MarkLatestCreatedFailed(rev.Name, revReady.GetMessage())
	}

	u := &apis.URL{Scheme: "http", Host: svc.Name + "." + svc.Namespace + ".example.com"}
	route := servingv1.RouteStatus{}
	route.InitializeConditions()
	route.URL = u
	route.Address = &duckv1.Addressable{URL: u}
	if serving := cfg.LatestReadyRevisionName; serving != "" {
		route.Traffic = []servingv1.TrafficTarget{{RevisionName: serving, LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
		route.MarkTrafficAssigned()
		ingress := netv1alpha1.IngressStatus{Status: duckv1.Status{Conditions: duckv1.Conditions{{Type: apis.ConditionReady, Status: corev1.ConditionTrue}}}}
		route.PropagateIngressStatus(ingress)
		route.MarkTLSNotEnabled(servingv1.ExternalDomainTLSNotEnabledMessage)
	} else {
		route.MarkConfigurationFailed(svc.Name)
	}

	svc.Status = servingv1.ServiceStatus{}
	svc.Status.InitializeConditions()
	svc.Status.ObservedGeneration = svc.Generation
	svc.Status.PropagateConfigurationStatus(&cfg)
	svc.Status.PropagateRouteStatus(&route)
	return rev
}

// RollEach plays Roll for one generation of the Service per fault (nil
// serves), in order from generation 1, and returns the last Revision.
func RollEach(svc *servingv1.Service, faults ...RevisionFault) *servingv1.Revision {
	var rev *servingv1.Revision
	for i, f := range faults {
		svc.Generation = int64(i + 1)
		rev = Roll(svc, f)
	}
	return rev
}

// revision is the Revision the Configuration controller creates for the
// Service's generation, with the status the revision reconciler writes:
// Ready, or failed with the fault.
func revision(svc *servingv1.Service, fault RevisionFault) *servingv1.Revision {
	lbls := maps.Clone(svc.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[serving.ServiceLabelKey] = svc.Name
	lbls[serving.ConfigurationLabelKey] = svc.Name
	lbls[serving.ConfigurationGenerationLabelKey] = fmt.Sprint(svc.Generation)
	rev := &servingv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace, Name: RevisionName(svc), Labels: lbls,
			Annotations:     maps.Clone(svc.Spec.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: servingv1.SchemeGroupVersion.String(), Kind: "Service", Name: svc.Name, UID: svc.UID}},
		},
		Spec: svc.Spec.Template.Spec,
	}
	rev.Status.InitializeConditions()
	if fault != nil {
		fault(&rev.Status)
		return rev
	}
	rev.Status.MarkResourcesAvailableTrue()
	rev.Status.MarkContainerHealthyTrue()
	rev.Status.MarkActiveTrue()
	return rev
}
