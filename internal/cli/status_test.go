package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/golden"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// t0 is when the played builds start.
var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

const (
	identity = "1bc7aa0ce2a0f53b39a2dad55bd1c739f250c51f69e0c3c1d2b1a0f9e8d7c6b5"
	jobName  = "orders-build-1bc7aa0ce2a0"
	digest   = "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
)

func newFunction(ns, name string) *v1alpha1.LambdaFunction {
	return testkit.InlineFunction(ns, name, "def handler(event, context):\n    return event\n")
}

// condition is a condition as the provider writes it, at a time.
func condition(t xpv2.ConditionType, s corev1.ConditionStatus, reason xpv2.ConditionReason, at time.Time, msg string) xpv2.Condition {
	return xpv2.Condition{Type: t, Status: s, Reason: reason, LastTransitionTime: metav1.NewTime(at), Message: msg}
}

// TestStatus shows a function building, one whose build failed and one
// that is Ready, each as the provider writes its status into the API
// server, against golden output.
func TestStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newScene(ctx, t)
	synced := condition(xpv2.TypeSynced, corev1.ConditionTrue, "ReconcileSuccess", t0, "")
	eventing := &v1alpha1.EventingObservation{Broker: "default", Triggers: []string{"orders-created-4b1e2a0c"}}
	started := metav1.NewTime(t0)

	cases := map[string]struct {
		reason string
		status v1alpha1.LambdaFunctionStatus
		now    time.Time
	}{
		"building": {
			reason: "A running build says for how long, with its Job; Ready says the image it builds.",
			now:    t0.Add(150 * time.Second),
			status: v1alpha1.LambdaFunctionStatus{
				ManagedResourceStatus: xpv2.ManagedResourceStatus{ConditionedStatus: xpv2.ConditionedStatus{Conditions: []xpv2.Condition{
					condition(xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonBuilding, t0, "building registry.test/apps/orders:1bc7aa0ce2a0 in Job "+jobName),
					synced,
				}}},
				AtProvider: v1alpha1.LambdaFunctionObservation{
					WorkloadObservation: v1alpha1.WorkloadObservation{Phase: v1alpha1.PhaseBuilding, Eventing: eventing},
					Build:               &v1alpha1.BuildObservation{Identity: identity, JobName: jobName, StartedAt: &started},
				},
			},
		},
		"failed": {
			reason: "A failed build shows the end of Kaniko's log under the build, and BuildFailed as Ready's reason.",
			now:    t0.Add(10 * time.Minute),
			status: v1alpha1.LambdaFunctionStatus{
				ManagedResourceStatus: xpv2.ManagedResourceStatus{ConditionedStatus: xpv2.ConditionedStatus{Conditions: []xpv2.Condition{
					condition(xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonBuildFailed, t0.Add(95*time.Second), "the build failed: Job "+jobName+": kaniko exited with 1\nERROR: No matching distribution found for reqests==2.0"),
					synced,
				}}},
				AtProvider: v1alpha1.LambdaFunctionObservation{
					WorkloadObservation: v1alpha1.WorkloadObservation{Phase: v1alpha1.PhaseFailed, Eventing: eventing},
					Build: &v1alpha1.BuildObservation{
						Identity: identity, JobName: jobName, StartedAt: &started, CompletedAt: ptr.To(metav1.NewTime(t0.Add(95 * time.Second))),
						Message: "Collecting reqests==2.0\nERROR: Could not find a version that satisfies the requirement reqests==2.0\nERROR: No matching distribution found for reqests==2.0",
					},
				},
			},
		},
		"hostile": {
			reason: "What a team's build printed is shown escaped: an OSC 52 clipboard write, a carriage return that would overwrite the line, a colour and a byte that is not UTF-8 reach the terminal as text.",
			now:    t0.Add(10 * time.Minute),
			status: v1alpha1.LambdaFunctionStatus{
				ManagedResourceStatus: xpv2.ManagedResourceStatus{ConditionedStatus: xpv2.ConditionedStatus{Conditions: []xpv2.Condition{
					condition(xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonBuildFailed, t0.Add(95*time.Second), "the build failed: \x1b]52;c;cm0gLXJmIH4=\x07\rReady: True"),
					synced,
				}}},
				AtProvider: v1alpha1.LambdaFunctionObservation{
					WorkloadObservation: v1alpha1.WorkloadObservation{Phase: v1alpha1.PhaseFailed, Eventing: eventing},
					Build: &v1alpha1.BuildObservation{
						Identity: identity, JobName: jobName, StartedAt: &started, CompletedAt: ptr.To(metav1.NewTime(t0.Add(95 * time.Second))),
						Message: "\x1b[32mOK\x1b[0m\nforged\rPhase: Ready\n\xff\u009b",
					},
				},
			},
		},
		"ready": {
			reason: "A Ready function shows its image by digest, its URL, the Revision that serves and the traffic split with each tag's URL.",
			now:    t0.Add(time.Hour),
			status: v1alpha1.LambdaFunctionStatus{
				ManagedResourceStatus: xpv2.ManagedResourceStatus{ConditionedStatus: xpv2.ConditionedStatus{Conditions: []xpv2.Condition{
					condition(xpv2.TypeReady, corev1.ConditionTrue, xpv2.ReasonAvailable, t0.Add(3*time.Minute), ""),
					synced,
					condition(v1alpha1.TypeLatestRevisionReady, corev1.ConditionTrue, v1alpha1.ReasonRevisionReady, t0.Add(3*time.Minute), ""),
				}}},
				AtProvider: v1alpha1.LambdaFunctionObservation{
					WorkloadObservation: v1alpha1.WorkloadObservation{
						Phase: v1alpha1.PhaseReady, Image: "registry.test/apps/orders:1bc7aa0ce2a0@" + digest,
						URL: "http://orders.apps.example.com", LatestReadyRevision: "orders-00002",
						Traffic: []v1alpha1.TrafficObservation{
							{RevisionName: "orders-00001", Percent: 90},
							{RevisionName: "orders-00002", LatestRevision: true, Percent: 10, Tag: "canary", URL: "http://canary-orders.apps.example.com"},
						},
						Eventing: eventing,
					},
					Build: &v1alpha1.BuildObservation{Identity: identity, JobName: jobName, Digest: digest, StartedAt: &started, CompletedAt: ptr.To(metav1.NewTime(t0.Add(100 * time.Second)))},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fn := newFunction(s.namespace, name)
			if err := s.kube.Create(ctx, fn); err != nil {
				t.Fatal(err)
			}
			fn.Status = tc.status
			if err := s.kube.Status().Update(ctx, fn); err != nil {
				t.Fatal(err)
			}
			out, err := s.kubectlLambda(ctx, tc.now, "status", name)
			if err != nil {
				t.Fatalf("%s\nkubectl lambda status %s: %v\n%s", tc.reason, name, err, out)
			}
			golden.Check(t, filepath.Join("testdata", "status-"+name+".txt"), []byte(strings.ReplaceAll(out, s.namespace, "NAMESPACE")), *update)
		})
	}
}
