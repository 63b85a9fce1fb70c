package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// room is an extended resource the node has only while the test advertises
// it, so that a pod that asks for it waits for the scheduler until then,
// and no other test's pod is held up.
const room corev1.ResourceName = "example.com/room"

// reasonDeadline is the Deployment controller's reason for a Deployment
// that stopped progressing.
const reasonDeadline = "ProgressDeadlineExceeded"

// settle is how long Knative is given to reconcile a Deployment's change.
const settle = 5 * time.Second

// TestUnschedulableGoesStale holds playact and observe to real Knative on a
// Revision whose pod first finds no room: Knative fails it Unschedulable in
// the scheduler's words, as playact writes it, and does not look again when
// the pod is scheduled later and its container keeps exiting. What observe
// makes of the Service and the pod, as the provider and the function read
// them, is the crash loop.
func TestUnschedulableGoesStale(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	advertise(ctx, t, kube, nil) // What a killed run left.
	built := builtInline(ctx, t, c, kube, runtimes["Python3.11"], nil)

	svc := built.Service.DeepCopy()
	svc.Name = "unschedulable"
	// Knative scales a Revision that has not served to zero at its
	// progress deadline and 30 s more (kpa's activationTimeoutBuffer),
	// min-scale or not, and the pod goes with it: room that comes in
	// those 30 s is what this test is about, and on CI's busy node they
	// passed before the pod had crash-looped. The API server refuses that
	// scale-down here, as if the room had come sooner.
	testkit.Admit(ctx, t, kube, "keep-"+svc.Namespace, svc.Namespace, admissionregistrationv1.Update,
		admissionregistrationv1.Rule{APIGroups: []string{appsv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"deployments/scale"}},
		admissionregistrationv1.Validation{Expression: "object.spec.replicas > 0", Message: "the test keeps the Revision's pod"})
	metav1.SetMetaDataAnnotation(&svc.Spec.Template.ObjectMeta, annotationProgressDeadline, "20s")
	ctr := &svc.Spec.Template.Spec.Containers[0]
	ctr.Command = []string{"python", "-c", "import sys; sys.stderr.write('refusing to start'); sys.exit(3)"}
	one := resource.MustParse("1")
	ctr.Resources.Requests, ctr.Resources.Limits = withRoom(ctr.Resources.Requests, one), withRoom(ctr.Resources.Limits, one)
	if err := kube.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	rev := reported(ctx, t, kube, svc)
	real := rolloutOf(svc, rev)
	said := rev.Status.GetCondition(knservingv1.RevisionConditionResourcesAvailable)
	if said.GetReason() != corev1.PodReasonUnschedulable {
		t.Fatalf("Knative reported %+v; want the Revision's resources Unschedulable", real)
	}
	t.Logf("Knative failed the Revision: %s", said.Message)
	played := svc.DeepCopy()
	played.Status = servingv1.ServiceStatus{}
	if diff := cmp.Diff(real, rolloutOf(played, playact.Roll(played, playact.Unschedulable(said.Message)))); diff != "" {
		t.Errorf("playact's Unschedulable rollout: -real, +played:\n%s", diff)
	}

	// Once the Deployment has given up, its status stays as it is while
	// the pod is scheduled and keeps exiting, and Knative has no cause to
	// look again.
	wait.Until(ctx, t, "the Revision's Deployment passed its progress deadline", func() string {
		d := &appsv1.Deployment{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: rev.Name + "-deployment"}, d); err != nil {
			return err.Error()
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == reasonDeadline {
				return ""
			}
		}
		return fmt.Sprintf("%+v", d.Status.Conditions)
	})
	time.Sleep(settle)
	advertise(ctx, t, kube, &one)
	t.Cleanup(func() { advertise(context.Background(), t, kube, nil) })
	var crash string
	wait.Until(ctx, t, "the scheduled pod's container keeps exiting", func() string {
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(svc.Namespace), client.MatchingLabels{observe.LabelRevision: rev.Name}); err != nil {
			return err.Error()
		}
		for i := range pods.Items {
			if crash = observe.CrashLoop(&pods.Items[i]); crash != "" {
				return ""
			}
		}
		return fmt.Sprintf("%d pods, none crash-looping", len(pods.Items))
	})
	if err := kube.Get(ctx, client.ObjectKeyFromObject(rev), rev); err != nil {
		t.Fatal(err)
	}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	// Knative looks again only if the Deployment changed after all.
	t.Logf("Knative says of the Revision whose pod keeps exiting: %+v", conditions(rev.Status.Conditions))
	if got, want := observe.Service(svc, rev).WithCrashLoop(crash).Message, "Revision "+rev.Name+": "+crash; got != want {
		t.Errorf("observe says %q of the Revision whose pod keeps exiting; want %q", got, want)
	}
	if got := observe.Unready(svc); got != rev.Name {
		t.Errorf("observe reads the pods of Revision %q; want %q", got, rev.Name)
	}
}

// withRoom is a resource list with n of the room resource.
func withRoom(l corev1.ResourceList, n resource.Quantity) corev1.ResourceList {
	out := corev1.ResourceList{room: n}
	for k, v := range l {
		out[k] = v
	}
	return out
}

// advertise sets how much room the node has, as a device's owner does by
// the node's status; nil removes it. The kubelet keeps what it did not
// write, and counts it into what the node can allocate.
func advertise(ctx context.Context, t *testing.T, kube client.Client, n *resource.Quantity) {
	t.Helper()
	value := "null"
	if n != nil {
		value = fmt.Sprintf("%q", n.String())
	}
	patch := fmt.Appendf(nil, `{"status":{"capacity":{%q:%s}}}`, room, value)
	node := &corev1.Node{}
	node.Name = NodeName
	if err := kube.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
