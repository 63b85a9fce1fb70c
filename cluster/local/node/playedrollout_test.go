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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"knative.dev/serving/pkg/apis/serving"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
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
	r.Observed.Message = podTemplateHash.ReplaceAllString(r.Observed.Message, "${1}HASH")
	return r
}

// podTemplateHash is the hash of a pod template that ends the name of a
// Deployment's ReplicaSet, and the random end of its pods' names: the
// cluster's, not the rollout's.
var podTemplateHash = regexp.MustCompile(`(-deployment-)[a-z0-9]+(-[a-z0-9]{5}\b)?`)

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
// function that serves, and ones whose container exits, whose pods a
// ResourceQuota refuses, whose image cannot be pulled or whose tag is
// unknown, are reported on the real node with Service and Revision
// conditions that playact writes alike for the same fault, and observe
// reads both alike. The provider's and
// the function's tests that play rollouts on the API server alone stand on
// this.
func TestPlayedRolloutAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	built := builtInline(ctx, t, c, kube, runtimes["Python3.11"], nil)

	cases := map[string]struct {
		reason string
		change func(*servingv1.Service)
		// setup, when set, prepares the cluster for the Service.
		setup func(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service)
		fault playact.RevisionFault
	}{
		"Serves": {
			reason: "A Revision whose pod becomes ready makes the Service Ready.",
			fault:  nil,
		},
		"CrashLoop": {
			reason: "A container that keeps exiting fails the Revision at its progress deadline with its exit code and last words, and the Service with it.",
			change: func(svc *servingv1.Service) {
				svc.Spec.Template.Annotations[annotationProgressDeadline] = "20s"
				exits(svc)
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
		"PodsForbidden": {
			reason: "Pods a ResourceQuota refuses fail the Revision at once, in the API server's words.",
			setup: func(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service) {
				svc.Namespace = testkit.Namespace(ctx, t, kube, "quota-", "")
				quota := &corev1.ResourceQuota{
					ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: "no-pods"},
					Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
				}
				if err := kube.Create(ctx, quota); err != nil {
					t.Fatal(err)
				}
			},
			fault: playact.PodsForbidden("exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0"),
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
			if tc.setup != nil {
				tc.setup(ctx, t, kube, svc)
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

// A crash is what a test compares of a crash-looping container's status as
// the kubelet reports it: why it waits, how it last ended, and what observe
// reads of it but the restart count, which grows with time.
type crash struct {
	Waiting         string
	ExitCode        int32
	Reason, Message string
	Observed        string
}

// restarts is the restart count in what observe reads of a crash loop.
var restarts = regexp.MustCompile(`restarted [0-9]+ times`)

// crashOf is the crash of the pod's container.
func crashOf(pod *corev1.Pod, container string) crash {
	c := crash{Observed: restarts.ReplaceAllString(observe.CrashLoop(pod), "restarted N times")}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		if s.State.Waiting != nil {
			c.Waiting = s.State.Waiting.Reason
		}
		if t := s.LastTerminationState.Terminated; t != nil {
			c.ExitCode, c.Reason, c.Message = t.ExitCode, t.Reason, t.Message
		}
	}
	return c
}

// backingOff waits until a pod of the Service's first Revision has its
// container backing off restarting it, as observe reads a crash loop, and
// returns the pod.
func backingOff(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service) *corev1.Pod {
	t.Helper()
	container := svc.Spec.Template.Spec.Containers[0].Name
	pods := &corev1.PodList{}
	var found *corev1.Pod
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		if err := kube.List(ctx, pods, client.InNamespace(svc.Namespace), client.MatchingLabels{serving.ServiceLabelKey: svc.Name}); err != nil {
			return false, err
		}
		for i := range pods.Items {
			if c := crashOf(&pods.Items[i], container); c.Waiting == "CrashLoopBackOff" && c.Observed != "" {
				found = &pods.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		var statuses []corev1.PodStatus
		for _, p := range pods.Items {
			statuses = append(statuses, p.Status)
		}
		t.Fatalf("no pod of %s backs off restarting its container (%v): %+v", svc.Name, err, statuses)
	}
	return found
}

// exits makes the Service's container exit with code 3 at once, having
// written why.
func exits(svc *servingv1.Service) {
	svc.Spec.Template.Spec.Containers[0].Command = []string{"python", "-c", "import sys; sys.stderr.write('refusing to start'); sys.exit(3)"}
}

// TestCrashLoopingPodAsReal holds playact to the real kubelet: a pod of a
// Revision whose container keeps exiting is reported, while the kubelet
// backs off restarting it, as playact's CrashLoopingPod, and the provider
// reads both alike. Knative's own verdict comes at the Revision's progress
// deadline (TestPlayedRolloutAsReal), after which it scales the pods away;
// until then, the provider and the function read the crash loop from the
// pods.
func TestCrashLoopingPodAsReal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kube := targetClient(t)
	svc := builtService(ctx, t, "crashlooping")
	exits(svc)
	if err := kube.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	real := backingOff(ctx, t, kube, svc)
	container := svc.Spec.Template.Spec.Containers[0].Name
	played := playact.CrashLoopingPod(svc, real.Labels[serving.RevisionLabelKey], 3, "refusing to start")
	if diff := cmp.Diff(crashOf(real, container), crashOf(played, container)); diff != "" {
		t.Errorf("playact's crash-looping pod: -real, +played:\n%s", diff)
	}
}

// builtService is render's Service of the Python function built by real
// Kaniko (builtInline), named name.
func builtService(ctx context.Context, t *testing.T, name string) *servingv1.Service {
	t.Helper()
	svc := builtInline(ctx, t, sharedCluster(t), targetClient(t), runtimes["Python3.11"], nil).Service.DeepCopy()
	svc.Name = name
	return svc
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
