package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// A revisionWant is what a LambdaFunction must say after a rollout.
type revisionWant struct {
	phase          v1alpha1.Phase
	ready          xpv2.Condition
	latest         xpv2.Condition
	failedRevision string
	servingRev     string
	// says are texts the failing condition's message must hold.
	says []string
}

// TestRevisionFailures plays Knative reporting Revisions that cannot serve,
// with the conditions and messages its reconcilers write, and checks what
// the LambdaFunction says of each: a first Revision that crash-loops, a fix
// that serves, a new Revision whose image cannot be pulled while the one
// before still serves, and a fix again. Each failure is read within a poll
// of Knative reporting it; the times are printed.
func TestRevisionFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "revision", keep)
	fn := newImageFunction(ns, "shaky")
	fn.Spec.ForProvider.Eventing = nil
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(fn)

	rollouts := []struct {
		reason string
		tag    v1alpha1.ImageTag
		fault  playact.RevisionFault
		want   revisionWant
	}{
		{
			reason: "A first Revision that crash-loops fails the function, with the exit code and the container's last words.",
			tag:    "v1",
			fault:  playact.CrashLoop(1, "ModuleNotFoundError: No module named 'requests'"),
			want: revisionWant{
				phase:          v1alpha1.PhaseFailed,
				ready:          xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
				latest:         xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
				failedRevision: "shaky-00001",
				says:           []string{"Revision shaky-00001", "ExitCode1", "Container failed with: ModuleNotFoundError: No module named 'requests'"},
			},
		},
		{
			reason: "A fixed image serves, and nothing fails any more, without the user touching anything else.",
			tag:    "v2",
			want: revisionWant{
				phase:      v1alpha1.PhaseReady,
				ready:      xpv2.Condition{Status: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable},
				latest:     xpv2.Condition{Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonRevisionReady},
				servingRev: "shaky-00002",
			},
		},
		{
			reason: "A new Revision that cannot pull its image fails while the one before serves: Ready stays with it, LatestRevisionReady names the failing one.",
			tag:    "v3",
			fault:  playact.ImagePullBackOff("ghcr.io/acme/shaky:v3", `failed to pull and unpack image "ghcr.io/acme/shaky:v3": not found`),
			want: revisionWant{
				phase:          v1alpha1.PhaseReady,
				ready:          xpv2.Condition{Status: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable},
				latest:         xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
				failedRevision: "shaky-00003",
				servingRev:     "shaky-00002",
				says:           []string{"Revision shaky-00003", "ImagePullBackOff", `Back-off pulling image "ghcr.io/acme/shaky:v3"`, "Revision shaky-00002 still serves"},
			},
		},
		{
			reason: "Fixing the image again clears the failure.",
			tag:    "v4",
			want: revisionWant{
				phase:      v1alpha1.PhaseReady,
				ready:      xpv2.Condition{Status: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable},
				latest:     xpv2.Condition{Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonRevisionReady},
				servingRev: "shaky-00004",
			},
		},
	}
	svc := &servingv1.Service{}
	for _, r := range rollouts {
		if r.tag != "v1" {
			update(ctx, t, c, key, func(mg *v1alpha1.LambdaFunction) { mg.Spec.ForProvider.Source.Image.Tag = ptr(r.tag) })
		}
		wait.Until(ctx, t, "the Service runs "+string(r.tag), func() string {
			if err := c.Get(ctx, key, svc); err != nil {
				return err.Error()
			}
			if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+string(r.tag)) {
				return "image " + img
			}
			return ""
		})
		playact.RollOut(ctx, t, c, svc, r.fault)
		reported := time.Now()
		mg := &v1alpha1.LambdaFunction{}
		wait.Until(ctx, t, r.reason, func() string {
			if err := c.Get(ctx, key, mg); err != nil {
				return err.Error()
			}
			return r.want.differs(mg)
		})
		t.Logf("%s: read %s after Knative reported it (poll interval %s)", r.tag, time.Since(reported).Round(time.Millisecond), testPoll)
		if r.fault != nil {
			mg.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind)
			wait.Until(ctx, t, "a RevisionFailed event", func() string {
				if !eventReasons(ctx, t, c, mg)["RevisionFailed"] {
					return "none yet"
				}
				return ""
			})
		}
	}
}

// differs says how a LambdaFunction differs from what is wanted, or nothing.
func (w revisionWant) differs(mg *v1alpha1.LambdaFunction) string {
	at := mg.Status.AtProvider
	ready, latest := mg.GetCondition(xpv2.TypeReady), mg.GetCondition(v1alpha1.TypeLatestRevisionReady)
	got := fmt.Sprintf("phase %s, Ready %s/%s, LatestRevisionReady %s/%s, failedRevision %q, latestReadyRevision %q",
		at.Phase, ready.Status, ready.Reason, latest.Status, latest.Reason, at.FailedRevision, at.LatestReadyRevision)
	if at.Phase != w.phase || ready.Status != w.ready.Status || ready.Reason != w.ready.Reason ||
		latest.Status != w.latest.Status || latest.Reason != w.latest.Reason ||
		at.FailedRevision != w.failedRevision || (w.servingRev != "" && at.LatestReadyRevision != w.servingRev) {
		return got
	}
	msg := latest.Message
	if w.phase == v1alpha1.PhaseFailed {
		msg = ready.Message
	}
	for _, s := range w.says {
		if !strings.Contains(msg, s) {
			return fmt.Sprintf("%s; message %q lacks %q", got, msg, s)
		}
	}
	return ""
}

// TestCrashLoopPolled plays a first Revision whose container keeps exiting
// while no object the provider follows changes, and checks that the
// provider reads the kubelet's words in the Revision's pod at its poll:
// while Knative has yet to say (it waits for its progress deadline), at its
// busy poll, and after Knative failed the Revision Unschedulable, which it
// does not revisit once the pod is scheduled (TestUnschedulableGoesStale).
func TestCrashLoopPolled(t *testing.T) {
	const unschedulable = "0/1 nodes are available: 1 Insufficient example.com/room. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	cases := map[string]struct {
		reason  string
		options providerOptions
		fault   playact.RevisionFault
		// before says how the function differs from what it says of
		// Knative's word, served at url, before the pod crash-loops.
		before func(url string, mg *v1alpha1.LambdaFunction) string
	}{
		"KnativeYetToSay": {
			reason:  "A deploying resource is polled at the busy poll, which reads the crash loop though the provider polls hourly.",
			options: providerOptions{poll: time.Hour, change: func(d *dependencies) { d.BusyPoll = testPoll }},
			fault:   playact.Deploying(),
			before: func(url string, mg *v1alpha1.LambdaFunction) string {
				if at := mg.Status.AtProvider; at.URL != url || at.Phase != v1alpha1.PhaseDeploying {
					return fmt.Sprintf("phase %s at %q", at.Phase, at.URL)
				}
				return ""
			},
		},
		"KnativeSaidUnschedulable": {
			reason:  "A Revision Knative failed Unschedulable fails for its crash loop once its pod is scheduled and keeps exiting.",
			options: providerOptions{poll: testPoll},
			fault:   playact.Unschedulable(unschedulable),
			before: func(_ string, mg *v1alpha1.LambdaFunction) string {
				return revisionWant{
					phase:          v1alpha1.PhaseFailed,
					ready:          xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
					latest:         xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
					failedRevision: "crashy-00001",
					says:           []string{"Unschedulable", unschedulable},
				}.differs(mg)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := startProvider(t, tc.options)
			c := p.kube
			ns := testkit.Namespace(ctx, t, c, "crashpoll-", "")
			newProviderConfig(ctx, t, c, ns)
			fn := newImageFunction(ns, "crashy")
			fn.Spec.ForProvider.Eventing = nil
			if err := c.Create(ctx, fn); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(fn)
			svc := serviceWhen(ctx, t, c, key, "is created", func(*servingv1.Service) bool { return true })
			url := playact.RollOut(ctx, t, c, svc, tc.fault)
			mg := &v1alpha1.LambdaFunction{}
			wait.Until(ctx, t, "the function says what Knative reported", func() string {
				if err := c.Get(ctx, key, mg); err != nil {
					return err.Error()
				}
				return tc.before(url, mg)
			})
			playact.CrashLooping(ctx, t, c, svc, svc.Status.LatestCreatedRevisionName, 1, "RuntimeError: refusing to start")
			want := revisionWant{
				phase:          v1alpha1.PhaseFailed,
				ready:          xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
				latest:         xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonRevisionFailed},
				failedRevision: svc.Status.LatestCreatedRevisionName,
				says:           []string{"container function keeps exiting: code 1", "RuntimeError: refusing to start"},
			}
			wait.Until(ctx, t, tc.reason, func() string {
				if err := c.Get(ctx, key, mg); err != nil {
					return err.Error()
				}
				return want.differs(mg)
			})
		})
	}
}
