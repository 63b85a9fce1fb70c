package observe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	knsourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// rollouts plays Knative rolling out one generation of a Service per fault
// (nil serves), as it reports them, and returns the Service and the
// Revision of the last.
func rollouts(faults ...playact.RevisionFault) (*servingv1.Service, *servingv1.Revision) {
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello"}}
	return svc, playact.RollEach(svc, faults...)
}

// allTo is the traffic Knative reports when the latest ready Revision
// takes all of it.
func allTo(rev string) []v1alpha1.TrafficObservation {
	return []v1alpha1.TrafficObservation{{RevisionName: rev, LatestRevision: true, Percent: 100}}
}

// withTraffic plays the rollouts of a Service whose spec routes traffic.
func withTraffic(traffic []servingv1.TrafficTarget, faults ...playact.RevisionFault) func() (*servingv1.Service, *servingv1.Revision) {
	return func() (*servingv1.Service, *servingv1.Revision) {
		svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello"}}
		svc.Spec.Traffic = traffic
		return svc, playact.RollEach(svc, faults...)
	}
}

func TestService(t *testing.T) {
	const url = "http://hello.apps.example.com"
	crash := playact.CrashLoop(1, "ModuleNotFoundError: No module named 'requests'")
	pull := playact.ImagePullBackOff("ghcr.io/acme/hello:v3", `failed to pull and unpack image "ghcr.io/acme/hello:v3": not found`)
	missing := playact.ContainerMissing("ghcr.io/acme/hello:v9", "GET https://ghcr.io/v2/acme/hello/manifests/v9: MANIFEST_UNKNOWN")
	withRevision := func(faults ...playact.RevisionFault) func() (*servingv1.Service, *servingv1.Revision) {
		return func() (*servingv1.Service, *servingv1.Revision) { return rollouts(faults...) }
	}
	cases := map[string]struct {
		reason  string
		rollout func() (*servingv1.Service, *servingv1.Revision)
		want    observe.ServiceState
		failure string
	}{
		"Ready": {
			reason:  "A Revision that serves makes the Service Ready and serving.",
			rollout: withRevision(nil),
			want:    observe.ServiceState{URL: url, LatestReadyRevision: "hello-00001", LatestCreatedRevision: "hello-00001", Ready: true, Serving: true, Traffic: allTo("hello-00001")},
		},
		"CrashLoop": {
			reason:  "A first Revision whose container exits fails, with the exit code and its message from the Revision.",
			rollout: withRevision(crash),
			want: observe.ServiceState{
				URL: url, LatestCreatedRevision: "hello-00001", Failed: true,
				Message: "Revision hello-00001: ExitCode1: Container failed with: ModuleNotFoundError: No module named 'requests'",
			},
			failure: "Revision hello-00001: ExitCode1: Container failed with: ModuleNotFoundError: No module named 'requests'",
		},
		"CrashLoopServiceOnly": {
			reason: "Without the Revision, the Service's own condition still says which Revision failed and why.",
			rollout: func() (*servingv1.Service, *servingv1.Revision) {
				svc, _ := rollouts(crash)
				return svc, nil
			},
			want: observe.ServiceState{
				URL: url, LatestCreatedRevision: "hello-00001", Failed: true,
				Message: `RevisionFailed: Revision "hello-00001" failed with message: Container failed with: ModuleNotFoundError: No module named 'requests'.`,
			},
			failure: `RevisionFailed: Revision "hello-00001" failed with message: Container failed with: ModuleNotFoundError: No module named 'requests'.`,
		},
		"NewFailsOldServes": {
			reason:  "A new Revision that cannot pull its image fails while the one before still serves.",
			rollout: withRevision(nil, pull),
			want: observe.ServiceState{
				URL: url, LatestReadyRevision: "hello-00001", LatestCreatedRevision: "hello-00002", Serving: true, Failed: true, Traffic: allTo("hello-00001"),
				Message: `Revision hello-00002: ImagePullBackOff: Back-off pulling image "ghcr.io/acme/hello:v3": ErrImagePull: failed to pull and unpack image "ghcr.io/acme/hello:v3": not found`,
			},
			failure: `Revision hello-00002: ImagePullBackOff: Back-off pulling image "ghcr.io/acme/hello:v3": ErrImagePull: failed to pull and unpack image "ghcr.io/acme/hello:v3": not found; Revision hello-00001 still serves`,
		},
		"ContainerMissing": {
			reason:  "A tag Knative cannot resolve fails the Revision.",
			rollout: withRevision(missing),
			want: observe.ServiceState{
				URL: url, LatestCreatedRevision: "hello-00001", Failed: true,
				Message: `Revision hello-00001: ContainerMissing: Unable to fetch image "ghcr.io/acme/hello:v9": failed to resolve image to digest: GET https://ghcr.io/v2/acme/hello/manifests/v9: MANIFEST_UNKNOWN`,
			},
			failure: `Revision hello-00001: ContainerMissing: Unable to fetch image "ghcr.io/acme/hello:v9": failed to resolve image to digest: GET https://ghcr.io/v2/acme/hello/manifests/v9: MANIFEST_UNKNOWN`,
		},
		"PodsForbidden": {
			reason:  "Pods a quota refuses fail the Revision, in the API server's words.",
			rollout: withRevision(playact.PodsForbidden("exceeded quota: team, requested: pods=1, used: pods=10, limited: pods=10")),
			want: observe.ServiceState{
				URL: url, LatestCreatedRevision: "hello-00001", Failed: true,
				Message: `Revision hello-00001: FailedCreate: pods "hello-00001-deployment-5d8f6c7b9-x2k4p" is forbidden: exceeded quota: team, requested: pods=1, used: pods=10, limited: pods=10`,
			},
			failure: `Revision hello-00001: FailedCreate: pods "hello-00001-deployment-5d8f6c7b9-x2k4p" is forbidden: exceeded quota: team, requested: pods=1, used: pods=10, limited: pods=10`,
		},
		"Recovered": {
			reason:  "A fixed Revision after a failed one serves, and nothing fails any more.",
			rollout: withRevision(crash, nil),
			want:    observe.ServiceState{URL: url, LatestReadyRevision: "hello-00002", LatestCreatedRevision: "hello-00002", Ready: true, Serving: true, Traffic: allTo("hello-00002")},
		},
		"Split": {
			reason: "A split reports each target's Revision and percent, and a tagged one its own URL.",
			rollout: withTraffic([]servingv1.TrafficTarget{
				{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Percent: ptr.To[int64](90)},
				{LatestRevision: ptr.To(true), Percent: ptr.To[int64](10), Tag: "canary"},
			}, nil, nil),
			want: observe.ServiceState{
				URL: url, LatestReadyRevision: "hello-00002", LatestCreatedRevision: "hello-00002", Ready: true, Serving: true,
				Traffic: []v1alpha1.TrafficObservation{
					{RevisionName: "hello-00001", Percent: 90},
					{RevisionName: "hello-00002", LatestRevision: true, Percent: 10, Tag: "canary", URL: "http://canary-hello.apps.example.com"},
				},
			},
		},
		"PinnedMissing": {
			reason: "A pinned Revision that does not exist fails the Route, in Knative's words, and no Revision fails.",
			rollout: withTraffic([]servingv1.TrafficTarget{
				{RevisionName: "hello-00009", LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)},
			}, nil),
			want: observe.ServiceState{
				URL: url, LatestReadyRevision: "hello-00001", LatestCreatedRevision: "hello-00001", RouteFailed: true,
				Message: `RevisionMissing: Revision "hello-00009" referenced in traffic not found.`,
			},
		},
		"NotObservedYet": {
			reason: "A failure Knative reported for an older generation says nothing of the current spec.",
			rollout: func() (*servingv1.Service, *servingv1.Revision) {
				svc, rev := rollouts(nil, crash)
				svc.Generation = 3
				return svc, rev
			},
			want: observe.ServiceState{
				URL: url, LatestReadyRevision: "hello-00001", LatestCreatedRevision: "hello-00002", Serving: true, Traffic: allTo("hello-00001"),
				Message: "Knative has not observed generation 3 of the Service yet",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			svc, rev := tc.rollout()
			got := observe.Service(svc, rev)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nService(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.failure, got.Failure()); diff != "" {
				t.Errorf("%s\nFailure(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEventingReadiness(t *testing.T) {
	broker := &eventingv1.Broker{
		TypeMeta:   metav1.TypeMeta{APIVersion: "eventing.knative.dev/v1", Kind: "Broker"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "events", Generation: 1},
	}
	trigger := &eventingv1.Trigger{
		TypeMeta:   metav1.TypeMeta{APIVersion: "eventing.knative.dev/v1", Kind: "Trigger"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello-orders", Generation: 2},
		Spec:       eventingv1.TriggerSpec{Broker: "events"},
	}
	readyBroker := broker.DeepCopy()
	readyBroker.Status.ObservedGeneration = 1
	readyBroker.Status.Conditions = duckv1.Conditions{{Type: apis.ConditionReady, Status: corev1.ConditionTrue}}
	settled := func(fault playact.TriggerFault) *eventingv1.Trigger {
		tr := trigger.DeepCopy()
		playact.SettleTrigger(tr, fault)
		return tr
	}
	stale := settled(playact.TriggerFault{})
	stale.Status.ObservedGeneration = 1
	// What real Eventing said on the node of a Trigger made before its
	// Service had an address.
	notAddressed := "address not set for Kind = Service, Namespace = functions, Name = hello, APIVersion = serving.knative.dev/v1, Group = , Address = "
	ofService := func(tr *eventingv1.Trigger) *eventingv1.Trigger {
		tr.Spec.Subscriber = duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "hello"}}
		return tr
	}
	unknown := settled(playact.BrokerNotReady(apis.Condition{Type: apis.ConditionReady, Status: corev1.ConditionUnknown, Reason: "BrokerUnknown", Message: "the Broker is not ready yet"}))

	cases := map[string]struct {
		reason string
		// trigger is the desired Trigger; the one above when nil.
		trigger *eventingv1.Trigger
		live    []client.Object
		want    observe.EventingState
	}{
		"Ready": {
			reason: "A Ready Broker and Trigger make eventing Ready.",
			live:   []client.Object{readyBroker, settled(playact.TriggerFault{})},
			want:   observe.EventingState{Ready: true},
		},
		"Missing": {
			reason: "A Trigger that does not exist yet is named.",
			live:   []client.Object{readyBroker, nil},
			want:   observe.EventingState{Message: "Trigger hello-orders does not exist yet"},
		},
		"NotObserved": {
			reason: "A Trigger Knative has not observed for its generation says nothing yet.",
			live:   []client.Object{readyBroker, stale},
			want:   observe.EventingState{Message: "Trigger hello-orders: Knative has not observed generation 2 yet"},
		},
		"NoCondition": {
			reason: "A Broker without a Ready condition is waited for.",
			live:   []client.Object{func() client.Object { b := broker.DeepCopy(); b.Status.ObservedGeneration = 1; return b }(), settled(playact.TriggerFault{})},
			want:   observe.EventingState{Message: "Broker events has no Ready condition yet"},
		},
		"Unknown": {
			reason: "A Trigger whose Broker Knative is still reconciling is waited for, with Knative's reason.",
			live:   []client.Object{readyBroker, unknown},
			want:   observe.EventingState{Message: "Trigger hello-orders: BrokerUnknown: the Broker is not ready yet"},
		},
		"DeadLetterSinkUnresolved": {
			reason: "A Trigger whose dead-letter sink cannot be resolved fails, named, with Knative's reason.",
			live:   []client.Object{readyBroker, settled(playact.DeadLetterSinkUnresolved(`services.serving.knative.dev "dlq" not found`))},
			want: observe.EventingState{Failed: true,
				Message: `Trigger hello-orders: Unable to get the dead letter sink's URI: services.serving.knative.dev "dlq" not found`},
		},
		"SubscriberNotAddressedYet": {
			reason: "A Trigger reconciled before the workload's own Service had an address is waited for, in Knative's words: Knative resolves it again once the Service has one. " +
				"Its subscriber is the rendered one: the function reads only a composed resource's status, and on the node it reported such a Trigger Failed, then Ready.",
			trigger: ofService(trigger.DeepCopy()),
			live:    []client.Object{readyBroker, settled(playact.SubscriberUnresolved(notAddressed))},
			want: observe.EventingState{Message: "Trigger hello-orders: Unable to get the Subscriber's URI: " + notAddressed +
				" (its subscriber is a Knative Service of the workload's own, which Knative's Trigger reconciler resolves again once the Service has an address)"},
		},
		"SubscriberUnresolved": {
			reason: "A Trigger of anything but a Service whose subscriber cannot be resolved fails.",
			live:   []client.Object{readyBroker, settled(playact.SubscriberUnresolved(notAddressed))},
			want:   observe.EventingState{Failed: true, Message: "Trigger hello-orders: Unable to get the Subscriber's URI: " + notAddressed},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			desired := []kube.Object{broker, trigger}
			if tc.trigger != nil {
				desired[1] = tc.trigger
			}
			got := observe.EventingReadiness(desired, func(o kube.Object) kube.Object {
				for i, d := range desired {
					if d == o && tc.live[i] != nil {
						return tc.live[i]
					}
				}
				return nil
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nEventingReadiness(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPingSourceReadiness(t *testing.T) {
	ping := &sourcesv1.PingSource{
		TypeMeta:   metav1.TypeMeta{APIVersion: "sources.knative.dev/v1", Kind: "PingSource"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "reports-nightly-3133ae5a", Generation: 1},
	}
	addressed := &servingv1.Service{}
	addressed.Status.Address = &duckv1.Addressable{URL: apis.HTTP("reports.apps.svc.cluster.local")}
	settled := func(sink *servingv1.Service, change func(*knsourcesv1.PingSourceStatus)) client.Object {
		p := ping.DeepCopy()
		playact.SettlePingSource(p, sink)
		if change != nil {
			knativetest.In(p, func(p *knsourcesv1.PingSource) { change(&p.Status) })
		}
		return p
	}
	cases := map[string]struct {
		reason string
		live   client.Object
		want   observe.EventingState
	}{
		"Ready": {
			reason: "A PingSource whose sink resolved to the Service's address is Ready.",
			live:   settled(addressed, nil),
			want:   observe.EventingState{Ready: true},
		},
		"SinkNotFound": {
			reason: "A PingSource that found no address for the workload's own Service is waited for: Knative resolves it again once the Service has one.",
			live:   settled(nil, nil),
			want:   observe.EventingState{Message: "PingSource reports-nightly-3133ae5a: NotFound (its sink is the workload's own Service, which Knative's PingSource reconciler resolves again once the Service has an address)"},
		},
		"AdapterUnavailable": {
			reason: "A PingSource whose adapter Deployment Knative reports unavailable fails, in Knative's words.",
			live: settled(addressed, func(s *knsourcesv1.PingSourceStatus) {
				s.PropagateDeploymentAvailability(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "pingsource-mt-adapter"}, Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."},
				}}})
			}),
			want: observe.EventingState{Failed: true, Message: "PingSource reports-nightly-3133ae5a: MinimumReplicasUnavailable: Deployment does not have minimum availability."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := observe.EventingReadiness([]kube.Object{ping}, func(kube.Object) kube.Object { return tc.live })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nEventingReadiness(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
