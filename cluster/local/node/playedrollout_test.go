package node

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

// missingImage is an image the node's registry does not have, by digest,
// which Knative does not resolve.
var missingImage = Registry + "/library/missing@sha256:" + strings.Repeat("0", 64)

// unknownTag is a tag the node's registry does not have, which Knative
// resolves before it makes a pod.
const unknownTag = Registry + "/library/missing:1"

// annotationProgressDeadline is Knative's per-Revision progress deadline,
// at which it reports a Revision whose pods never became ready.
const annotationProgressDeadline = "serving.knative.dev/progress-deadline"

// A rollout is what a test compares of how Knative reported a Service's
// first Revision: the conditions of both, without times, and what observe
// reads of them but the URL.
type rollout struct {
	Service, Revision []apis.Condition
	Observed          observe.ServiceState
}

// rolloutOf is the rollout of a Service and its Revision.
func rolloutOf(svc *servingv1.Service, rev *servingv1.Revision) rollout {
	r := rollout{Service: conditions(svc.Status.Conditions), Revision: conditions(rev.Status.Conditions)}
	for i, c := range r.Revision {
		// Knative says Deploying here only in the status write that
		// follows its creating the Deployment; when another writer of
		// the Revision wins that race, the condition stays Unknown with
		// no reason until the container says more. CI's node wrote one
		// in one run and the other in the next, so an Unknown
		// ContainerHealthy is compared by its status alone.
		if c.Type == knservingv1.RevisionConditionContainerHealthy && c.Status == corev1.ConditionUnknown {
			r.Revision[i] = apis.Condition{Type: c.Type, Status: c.Status}
		}
	}
	var failed *servingv1.Revision
	if rev.Status.GetCondition(apis.ConditionReady).IsFalse() {
		failed = rev
	}
	r.Observed = observe.Service(svc, failed)
	// The domain is the cluster's setting, not the rollout's.
	r.Observed.URL = ""
	return r
}

// podTemplateHash is the hash of a pod template that ends the name of a
// Deployment's ReplicaSet: the cluster's, not the rollout's.
var podTemplateHash = regexp.MustCompile(`(-deployment-)[a-z0-9]+`)

// conditions are the type, status, reason and message of each condition,
// by type, without pod template hashes.
func conditions(in duckv1.Conditions) []apis.Condition {
	out := make([]apis.Condition, 0, len(in))
	for _, c := range in {
		out = append(out, apis.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: podTemplateHash.ReplaceAllString(c.Message, "${1}HASH")})
	}
	slices.SortFunc(out, func(a, b apis.Condition) int { return strings.Compare(string(a.Type), string(b.Type)) })
	return out
}

// TestPlayedRolloutAsReal holds playact to real Knative Serving, the
// kubelet, containerd and the registry: render's Service of a built
// function that serves, and ones whose container exits, whose image cannot
// be pulled or whose tag is unknown, are reported on the real node with
// Service and Revision conditions that playact writes alike for the same
// fault, and observe reads both alike. The provider's and the function's
// tests that play rollouts on the API server alone stand on this.
func TestPlayedRolloutAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	built := builtInline(ctx, t, c, kube, runtimes["Python3.11"], nil)

	cases := map[string]struct {
		reason string
		change func(*servingv1.Service)
		fault  playact.RevisionFault
	}{
		"Serves": {
			reason: "A Revision whose pod becomes ready makes the Service Ready.",
			fault:  nil,
		},
		"CrashLoop": {
			reason: "A container that keeps exiting fails the Revision at its progress deadline with its exit code and last words, and the Service with it.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Template.Annotations[annotationProgressDeadline] = "20s"
				svc.Spec.Template.Spec.Containers[0].Command = []string{"python", "-c", "import sys; sys.stderr.write('refusing to start'); sys.exit(3)"}
			},
			fault: playact.CrashLoop(3, "refusing to start"),
		},
		"ImagePullBackOff": {
			reason: "An image the kubelet cannot pull fails the Revision at its progress deadline with the kubelet's and containerd's words.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Template.Annotations[annotationProgressDeadline] = "20s"
				svc.Spec.Template.Spec.Containers[0].Image = missingImage
			},
			fault: playact.ImagePullBackOff(missingImage, fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", missingImage, missingImage, missingImage)),
		},
		"ContainerMissing": {
			reason: "A tag the registry does not have fails the Revision before any pod, with the registry's answer to Knative's resolver.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Template.Spec.Containers[0].Image = unknownTag
			},
			fault: playact.ContainerMissing(unknownTag, "HEAD http://"+Registry+"/v2/library/missing/manifests/1: unexpected status code 404 Not Found (HEAD responses have no body, use GET for details)"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			svc := built.Service.DeepCopy()
			svc.Name = strings.ToLower(name)
			// A Revision that serves keeps Knative's window: on a slow
			// node Knative took 25 s to report it Ready, when a quick
			// window had already scaled it to zero (Active False,
			// NoTraffic), which is the autoscaler's timing, not the
			// rollout's.
			if tc.fault != nil {
				idleQuickly(svc)
			}
			if tc.change != nil {
				tc.change(svc)
			}
			if err := kube.Create(ctx, svc); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			rev := reported(ctx, t, kube, svc)
			real := rolloutOf(svc, rev)
			t.Logf("Knative reported in %s: %+v", time.Since(start).Round(time.Second), real)

			played := svc.DeepCopy()
			played.Status = servingv1.ServiceStatus{}
			playedRev := playact.Roll(played, tc.fault)
			if diff := cmp.Diff(real, rolloutOf(played, playedRev)); diff != "" {
				t.Errorf("%s\nplayact's rollout: -real, +played:\n%s", tc.reason, diff)
			}
		})
	}
}

// reported waits until Knative has said whether the Service's first
// Revision serves, through its Configuration and its Route, and returns the
// Revision as Knative reported it. The Route says so last: on a busy node
// the Service was seen failed with its Route still Unknown.
func reported(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service) *servingv1.Revision {
	t.Helper()
	rev := &servingv1.Revision{}
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return false, err
		}
		ready, routes := svc.Status.GetCondition(apis.ConditionReady), svc.Status.GetCondition(servingv1.ServiceConditionRoutesReady)
		if svc.Status.ObservedGeneration != svc.Generation || ready == nil || ready.IsUnknown() || routes == nil || routes.IsUnknown() || svc.Status.LatestCreatedRevisionName == "" {
			return false, nil
		}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: svc.Status.LatestCreatedRevisionName}, rev); err != nil {
			return false, err
		}
		// Knative marks the Revision Active Deploying until its
		// autoscaler first reports, which on a busy node came after the
		// Revision had failed: what the autoscaler says is what stays.
		// A Revision Ready whose Active is still Unknown is between two
		// reports of the autoscaler (NotReady, once on a busy node): it
		// settles to True, or False once scaled to zero.
		active := rev.Status.GetCondition(knservingv1.RevisionConditionActive)
		between := rev.Status.GetCondition(apis.ConditionReady).IsTrue() && active.IsUnknown()
		return active.GetReason() != knservingv1.ReasonDeploying && !between, nil
	})
	if err != nil {
		t.Fatalf("Knative did not report on %s: %v: %+v", svc.Name, err, svc.Status.Conditions)
	}
	return rev
}
