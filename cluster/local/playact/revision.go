package playact

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	netv1alpha1 "knative.dev/networking/pkg/apis/networking/v1alpha1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"knative.dev/serving/pkg/apis/serving"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// A RevisionFault is how Knative's revision reconciler marks a Revision
// whose pods cannot serve, given the Revision's name. Each is written with
// Knative's own status methods and message helpers, from what the kubelet
// reports of the pod.
type RevisionFault func(revision string, rs *knservingv1.RevisionStatus)

// CrashLoop is a container that keeps exiting: the reconciler reads the
// last termination of the user container. It does so only when the
// Revision's Deployment changes, which a crash loop does not do, so on a
// real cluster this comes at the Deployment's progress deadline: 10m7s
// after the Revision was created on the local cluster, with Knative's
// default of 10 minutes. Until then the Revision is Deploying and only the
// kubelet says why, in its pods (CrashLoopingPod).
//
// By then the Deployment controller has given up on the Revision's
// ReplicaSet, in its words, and the autoscaler still buffers requests for
// pods that never became ready, in its words (kpa.go); the container's end
// is marked last, so it is the reason the Revision is not Ready, as the
// real node reports it (TestPlayedRolloutAsReal).
func CrashLoop(exitCode int32, message string) RevisionFault {
	return func(revision string, rs *knservingv1.RevisionStatus) {
		rs.MarkResourcesAvailableFalse(knservingv1.ReasonProgressDeadlineExceeded, fmt.Sprintf("ReplicaSet %q has timed out progressing.", replicaSet(revision)))
		rs.MarkActiveUnknown("Queued", msgQueued)
		rs.MarkContainerHealthyFalse(knservingv1.ExitCodeReason(exitCode), knservingv1.RevisionContainerExitingMessage(message))
	}
}

// msgQueued is the autoscaler's word for a Revision with no ready pod
// (kpa.go).
const msgQueued = "Requests to the target are being buffered as resources are provisioned."

// replicaSet is the name of the ReplicaSet of a Revision's Deployment as
// played: a real one ends in a hash of its pod template.
func replicaSet(revision string) string {
	return revision + "-deployment-5d8f6c7b9"
}

// podName is the name of a pod of a Revision as played: a real one ends in
// five random characters.
func podName(revision string) string {
	return replicaSet(revision) + "-x2k4p"
}

// Deploying is a Revision Knative has yet to report on: its pods are not
// ready, and its Deployment's progress deadline has not passed.
func Deploying() RevisionFault {
	return func(_ string, rs *knservingv1.RevisionStatus) {
		rs.MarkResourcesAvailableUnknown(knservingv1.ReasonDeploying, "")
		rs.MarkContainerHealthyUnknown(knservingv1.ReasonDeploying, "")
	}
}

// CrashLoopingPod is a pod of the Revision whose container the kubelet
// backs off restarting after it exited with the code, having written the
// message, which Knative has the kubelet keep as its termination message.
func CrashLoopingPod(svc *servingv1.Service, revision string, exitCode int32, message string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: podName(revision), Labels: map[string]string{serving.RevisionLabelKey: revision}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name:                 svc.Spec.Template.Spec.Containers[0].Name,
			RestartCount:         2,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: "Error", Message: message}},
		}}},
	}
}

// CrashLooping writes a pod of the Service's Revision as the kubelet
// reports it while it backs off restarting a crashing container
// (CrashLoopingPod), with the Service's containers, as its Deployment made
// it. Knative's Revision stays Deploying: see CrashLoop.
func CrashLooping(ctx context.Context, t T, c client.Client, svc *servingv1.Service, revision string, exitCode int32, message string) {
	t.Helper()
	pod := CrashLoopingPod(svc, revision, exitCode, message)
	status := pod.Status
	pod.Spec.Containers = slices.Clone(svc.Spec.Template.Spec.Containers)
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// ImagePullBackOff is an image the kubelet cannot pull, reported once the
// Deployment's progress deadline passes with the container still waiting
// (pullBackOff), while the autoscaler buffers requests and the container's
// health is still being deployed, as the real node reports it
// (TestPlayedRolloutAsReal).
func ImagePullBackOff(image, pullError string) RevisionFault {
	return func(_ string, rs *knservingv1.RevisionStatus) {
		rs.MarkActiveUnknown("Queued", msgQueued)
		rs.MarkContainerHealthyUnknown(knservingv1.ReasonDeploying, "")
		rs.MarkResourcesAvailableFalse("ImagePullBackOff", pullBackOff(image, pullError))
	}
}

// pullBackOff is the kubelet's message of a container waiting in
// ImagePullBackOff: the back-off, then the last pull's reason and error
// (pkg/kubelet/images, image_manager.go).
func pullBackOff(image, pullError string) string {
	return fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, pullError)
}

// Unschedulable is a pod the scheduler finds no room for, reported in the
// scheduler's words once the Revision's Deployment changes while the pod
// waits. Knative does not look again when the pod is scheduled later and
// keeps exiting: its pods say what holds then (TestUnschedulableGoesStale).
func Unschedulable(message string) RevisionFault {
	return func(_ string, rs *knservingv1.RevisionStatus) {
		rs.MarkActiveUnknown("Queued", msgQueued)
		rs.MarkContainerHealthyUnknown(knservingv1.ReasonDeploying, "")
		rs.MarkResourcesAvailableFalse(corev1.PodReasonUnschedulable, message)
	}
}

// ContainerMissing is an image tag Knative cannot resolve to a digest; the
// message wraps the registry's error as the revision reconciler's
// background resolver does. The resources stay as the reconciler marked
// them while it waited for the resolver, since it makes no Deployment.
func ContainerMissing(image, resolveError string) RevisionFault {
	return func(_ string, rs *knservingv1.RevisionStatus) {
		rs.MarkResourcesAvailableUnknown(knservingv1.ReasonResolvingDigests, "")
		msg := knservingv1.RevisionContainerMissingMessage(image, "failed to resolve image to digest") + ": " + resolveError
		rs.MarkContainerHealthyFalse(knservingv1.ReasonContainerMissing, msg)
	}
}

// PodsForbidden is a Revision whose Deployment cannot make a pod, such as
// one a ResourceQuota refuses, reason being the API server's (exceeded
// quota: ...): the revision reconciler reports the ReplicaSet's
// FailedCreate at once, while the autoscaler buffers requests, as the real
// node reports it (TestPlayedRolloutAsReal).
func PodsForbidden(reason string) RevisionFault {
	return func(revision string, rs *knservingv1.RevisionStatus) {
		rs.MarkActiveUnknown("Queued", msgQueued)
		rs.MarkResourcesAvailableFalse("FailedCreate", fmt.Sprintf("pods %q is forbidden: %s", podName(revision), reason))
	}
}

// revisionName is the name Knative's Configuration controller gives the
// Revision of its generation; the Configuration of a Service is named after
// it.
func revisionName(svc *servingv1.Service, generation int64) string {
	return fmt.Sprintf("%s-%05d", svc.Name, generation)
}

// RollOut plays Knative Serving reconciling a Service in the cluster. A
// template unlike that of the Service's newest Revision makes a Revision of
// the next generation, Ready or failed with the fault; a Service whose
// template is unchanged, such as one whose traffic alone changed, keeps its
// Revisions, and the fault is not used. The Service's status is then written
// as Roll computes it, with its Route resolving the spec's traffic among the
// Revisions that exist. It returns the Service's URL.
func RollOut(ctx context.Context, t T, c client.Client, svc *servingv1.Service, fault RevisionFault) string {
	t.Helper()
	revs := &servingv1.RevisionList{}
	if err := c.List(ctx, revs, client.InNamespace(svc.Namespace), client.MatchingLabels{serving.ServiceLabelKey: svc.Name}); err != nil {
		t.Fatal(err)
	}
	if newest, made := Reconcile(svc, revs.Items, fault); made {
		create(ctx, t, c, newest)
	}
	if err := c.Status().Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	return svc.Status.URL.String()
}

// Reconcile computes, without writing anything, what RollOut writes of a
// Service whose Revisions are revs: it sets the Service's status and
// returns its newest Revision, which is made (not among revs) when the
// template is unlike the newest's.
func Reconcile(svc *servingv1.Service, revs []servingv1.Revision, fault RevisionFault) (newest *servingv1.Revision, made bool) {
	exists := map[string]bool{}
	for i := range revs {
		r := &revs[i]
		exists[r.Name] = true
		if newest == nil || generationOf(r) > generationOf(newest) {
			newest = r
		}
	}
	switch {
	case newest == nil || !sameTemplate(newest, svc):
		var gen int64 = 1
		if newest != nil {
			gen = generationOf(newest) + 1
		}
		newest, made = revision(svc, gen, fault), true
		exists[newest.Name] = true
	case newest.Status.GetCondition(apis.ConditionReady) == nil:
		// A play that stopped between creating the Revision and writing
		// its status, as when the API server went away: the revision
		// reconciler reports on it now.
		newest, made = revision(svc, generationOf(newest), fault), true
	}
	settle(svc, newest, func(name string) bool { return exists[name] })
	return newest, made
}

// create writes a Revision and the status its reconciler gives it, and
// returns it as written. A create answers with the object as stored, whose
// status the API server dropped; only a Revision that existed is read.
func create(ctx context.Context, t T, c client.Client, rev *servingv1.Revision) *servingv1.Revision {
	t.Helper()
	status := rev.Status
	err := c.Create(ctx, rev)
	if kerrors.IsAlreadyExists(err) {
		err = c.Get(ctx, client.ObjectKeyFromObject(rev), rev)
	}
	if err != nil {
		t.Fatal(err)
	}
	rev.Status = status
	rev.Status.ObservedGeneration = rev.Generation
	if err := c.Status().Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// generationOf is the Configuration generation a Revision was made for.
func generationOf(rev *servingv1.Revision) int64 {
	var gen int64
	_, _ = fmt.Sscan(rev.Labels[serving.ConfigurationGenerationLabelKey], &gen)
	return gen
}

// sameTemplate is true when a Revision was made from the Service's current
// template: Knative's Configuration only makes a new one when the template
// changes.
func sameTemplate(rev *servingv1.Revision, svc *servingv1.Service) bool {
	tmpl := svc.Spec.Template
	lbls := maps.Clone(rev.Labels)
	for _, k := range []string{serving.ServiceLabelKey, serving.ConfigurationLabelKey, serving.ConfigurationGenerationLabelKey} {
		delete(lbls, k)
	}
	return equality.Semantic.DeepEqual(rev.Spec, tmpl.Spec) && maps.Equal(lbls, tmpl.Labels) && maps.Equal(rev.Annotations, tmpl.Annotations)
}

// Roll computes, without writing anything, what Knative Serving reports of
// a rollout of a Service's current generation as a new template: the
// Revision the Configuration creates, Ready or failed with the fault, and
// the Service's status as settle computes it. Its Route knows the new
// Revision and those the Service's status names. It sets the Service's
// status and returns the Revision.
func Roll(svc *servingv1.Service, fault RevisionFault) *servingv1.Revision {
	rev := revision(svc, svc.Generation, fault)
	known := map[string]bool{rev.Name: true, svc.Status.LatestReadyRevisionName: true}
	for _, t := range svc.Status.Traffic {
		known[t.RevisionName] = true
	}
	settle(svc, rev, func(name string) bool { return known[name] })
	return rev
}

// settle sets the Service's status for its newest Revision, propagated
// from its Configuration's and Route's with Knative's own methods. A
// failing Revision leaves the latest traffic on the Revision that was ready
// before, as Knative does; a traffic target Knative cannot resolve fails
// the Route and leaves the traffic it routed before.
func settle(svc *servingv1.Service, rev *servingv1.Revision, exists func(string) bool) {
	revReady := rev.Status.GetCondition(apis.ConditionReady)
	cfg := knservingv1.ConfigurationStatus{}
	cfg.InitializeConditions()
	cfg.LatestReadyRevisionName = svc.Status.LatestReadyRevisionName
	cfg.SetLatestCreatedRevisionName(rev.Name)
	switch {
	case revReady.IsTrue():
		cfg.SetLatestReadyRevisionName(rev.Name)
	case revReady.IsFalse():
		cfg.MarkLatestCreatedFailed(rev.Name, revReady.GetMessage())
	}

	u := serviceURL(svc, svc.Name)
	route := knservingv1.RouteStatus{}
	route.InitializeConditions()
	route.URL = u
	route.Address = &duckv1.Addressable{URL: u}
	route.Traffic = *knativetest.As[[]knservingv1.TrafficTarget](svc.Status.Traffic)
	if targets, fail := routeTraffic(svc, &cfg, exists); fail != nil {
		fail(&route)
	} else {
		route.Traffic = targets
		route.MarkTrafficAssigned()
		ingress := netv1alpha1.IngressStatus{Status: duckv1.Status{Conditions: duckv1.Conditions{{Type: apis.ConditionReady, Status: corev1.ConditionTrue}}}}
		route.PropagateIngressStatus(ingress)
		route.MarkTLSNotEnabled(knservingv1.ExternalDomainTLSNotEnabledMessage)
	}

	st := knservingv1.ServiceStatus{}
	st.InitializeConditions()
	st.ObservedGeneration = svc.Generation
	st.PropagateConfigurationStatus(&cfg)
	st.PropagateRouteStatus(&route)
	svc.Status = *knativetest.As[servingv1.ServiceStatus](st)
}

// routeTraffic resolves a Service's traffic as Knative's Route reconciler
// does: the latest target to the latest ready Revision, a pinned one to its
// Revision if it exists, each tag with its own host from Knative's default
// tag template. Without traffic the Service's Route sends all of it to the
// latest. A target it cannot resolve returns how it marks the Route
// instead: the latest of a Configuration with no ready Revision is failed
// when the Configuration failed, and not ready while it has yet to say.
func routeTraffic(svc *servingv1.Service, cfg *knservingv1.ConfigurationStatus, exists func(string) bool) ([]knservingv1.TrafficTarget, func(*knservingv1.RouteStatus)) {
	latestReady := cfg.LatestReadyRevisionName
	spec := svc.Spec.Traffic
	if len(spec) == 0 {
		spec = []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	}
	var out []knservingv1.TrafficTarget
	for _, t := range spec {
		name := t.RevisionName
		switch {
		case name == "" && latestReady == "" && cfg.GetCondition(knservingv1.ConfigurationConditionReady).IsFalse():
			return nil, func(rs *knservingv1.RouteStatus) { rs.MarkConfigurationFailed(svc.Name) }
		case name == "" && latestReady == "":
			return nil, func(rs *knservingv1.RouteStatus) { rs.MarkConfigurationNotReady(svc.Name) }
		case name == "":
			name = latestReady
		case !exists(name):
			return nil, func(rs *knservingv1.RouteStatus) { rs.MarkMissingTrafficTarget("Revision", t.RevisionName) }
		}
		target := knservingv1.TrafficTarget{Tag: t.Tag, RevisionName: name, Percent: t.Percent, LatestRevision: ptr.To(t.RevisionName == "")}
		if t.Tag != "" {
			target.URL = serviceURL(svc, t.Tag+"-"+svc.Name)
		}
		out = append(out, target)
	}
	return out, nil
}

// serviceURL is the URL of a host of a Service's Route under Knative's
// default domain template, {{.Name}}.{{.Namespace}}.{{.Domain}}, the played
// cluster's domain being example.com.
func serviceURL(svc *servingv1.Service, name string) *apis.URL {
	return &apis.URL{Scheme: "http", Host: name + "." + svc.Namespace + ".example.com"}
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

// revision is the Revision the Configuration controller creates for its
// generation of the Service's template, with the status the revision
// reconciler writes with Knative's own methods: Ready, or failed with the
// fault.
func revision(svc *servingv1.Service, generation int64, fault RevisionFault) *servingv1.Revision {
	lbls := maps.Clone(svc.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[serving.ServiceLabelKey] = svc.Name
	lbls[serving.ConfigurationLabelKey] = svc.Name
	lbls[serving.ConfigurationGenerationLabelKey] = fmt.Sprint(generation)
	rev := &servingv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace, Name: revisionName(svc, generation), Labels: lbls,
			Annotations:     maps.Clone(svc.Spec.Template.Annotations),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: servingv1.SchemeGroupVersion.String(), Kind: "Service", Name: svc.Name, UID: svc.UID}},
		},
		Spec: svc.Spec.Template.Spec,
	}
	st := knservingv1.RevisionStatus{}
	st.InitializeConditions()
	if fault != nil {
		fault(rev.Name, &st)
	} else {
		st.MarkResourcesAvailableTrue()
		st.MarkContainerHealthyTrue()
		st.MarkActiveTrue()
	}
	rev.Status = *knativetest.As[servingv1.RevisionStatus](st)
	return rev
}
