package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

const digestA = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// ours selects a function's objects in the target cluster.
func ours(ns, name string) []client.ListOption {
	return []client.ListOption{client.InNamespace(ns), client.MatchingLabels{render.LabelKind: v1alpha1.LambdaFunctionKind, render.LabelResource: name}}
}

func jobs(ctx context.Context, t *testing.T, c client.Client, ns, name string) []batchv1.Job {
	t.Helper()
	l := &batchv1.JobList{}
	if err := c.List(ctx, l, ours(ns, name)...); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// newFunction is testkit's inline function, scaled to at most five
// replicas, with the Broker "default" it creates and a Trigger on it.
func newFunction(ns, name, code string) *v1alpha1.LambdaFunction {
	return withEvents(testkit.InlineFunction(ns, name, code))
}

// newImageFunction is newFunction with testkit's prebuilt image: nothing to
// build.
func newImageFunction(ns, name string) *v1alpha1.LambdaFunction {
	return withEvents(testkit.ImageFunction(ns, name))
}

func withEvents(fn *v1alpha1.LambdaFunction) *v1alpha1.LambdaFunction {
	fn.Spec.ForProvider.Scaling = &v1alpha1.Scaling{MaxReplicas: ptr[int32](5)}
	fn.Spec.ForProvider.Eventing = &v1alpha1.FunctionEventing{
		Broker:   &v1alpha1.Broker{Name: "default", Create: true},
		Triggers: []v1alpha1.Trigger{{Name: "orders", Filters: v1alpha1.Filters{"type": "com.example.order"}}},
	}
	return fn
}

// newProviderConfig creates the namespace's ProviderConfig, targeting the
// provider's own cluster with a registry for builds.
func newProviderConfig(ctx context.Context, t testing.TB, c client.Client, ns string) {
	t.Helper()
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity},
			Build:       &v1alpha1.BuildDefaults{Registry: ptr(v1alpha1.ImageRepository("registry.local:5000/lambdas"))},
		},
	}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
}

// TestFunctionLifecycle follows one LambdaFunction from create to delete
// against a real API server, with the test playing the Job controller and
// Knative.
func TestFunctionLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "lifecycle", keep)
	fn := newFunction(ns, "hello", "def handler(event, context):\n    return {'v': 1}\n")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	mg := &v1alpha1.LambdaFunction{}
	get := func() {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			t.Fatal(err)
		}
	}

	// A build starts; nothing is served yet.
	var job batchv1.Job
	wait.Until(ctx, t, "one build Job", func() string {
		js := jobs(ctx, t, c, ns, "hello")
		if len(js) != 1 {
			return fmt.Sprintf("%d Jobs", len(js))
		}
		job = js[0]
		return ""
	})
	wait.Until(ctx, t, "the function says it is building", func() string {
		get()
		if mg.Status.AtProvider.Phase != v1alpha1.PhaseBuilding {
			return "phase " + string(mg.Status.AtProvider.Phase) + ": " + mg.GetCondition(xpv2.TypeReady).Message
		}
		return ""
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, &servingv1.Service{}); err == nil {
		t.Fatal("a Service exists before its image was built")
	}

	// The build succeeds: the Service runs the built image by digest.
	playact.FinishJob(ctx, t, c, &job, 0, digestA)
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the Service runs the built image", func() string {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, svc); err != nil {
			return err.Error()
		}
		if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digestA) {
			return "image " + img
		}
		return ""
	})
	for _, o := range []client.Object{&eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}, &eventingv1.Trigger{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: render.TriggerName(v1alpha1.LambdaFunctionKind, "hello", "orders", "trigger/orders")}}} {
		wait.Until(ctx, t, "the "+o.GetName()+" eventing object exists", func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err.Error()
			}
			return ""
		})
	}

	// Knative says the Service is Ready: so is the function, with its URL.
	url := playact.MarkServiceReady(ctx, t, c, svc)
	wait.Until(ctx, t, "the function is Ready with its URL and digest", func() string {
		get()
		at := mg.Status.AtProvider
		if mg.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue || at.URL != url || at.Phase != v1alpha1.PhaseReady || at.Build == nil || at.Build.Digest != digestA {
			return fmt.Sprintf("Ready %s (%s), phase %s, url %q, build %+v", mg.GetCondition(xpv2.TypeReady).Status, mg.GetCondition(xpv2.TypeReady).Message, at.Phase, at.URL, at.Build)
		}
		return ""
	})

	// Once the built image is deployed, its build context is not kept.
	wait.Until(ctx, t, "the build-context ConfigMap is gone", func() string {
		l := &corev1.ConfigMapList{}
		if err := c.List(ctx, l, ours(ns, "hello")...); err != nil {
			return err.Error()
		}
		if len(l.Items) > 0 {
			return fmt.Sprintf("%d ConfigMaps", len(l.Items))
		}
		return ""
	})

	// The function records that it uses its provider config.
	usages := &lists.ProviderConfigUsageList{}
	if err := c.List(ctx, usages, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(usages.Items) != 1 || usages.Items[0].ResourceReference.Name != "hello" || usages.Items[0].ProviderConfigReference.Name != "default" {
		t.Errorf("provider config usages: %+v; want one, of hello using default", usages.Items)
	}

	// The function's events and the provider's metrics tell the same story.
	mg.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind)
	wait.Until(ctx, t, "events for the build and the Ready Service", func() string {
		got := eventReasons(ctx, t, c, mg)
		for _, r := range []string{"BuildStarted", "BuildSucceeded", "ServiceReady"} {
			if !got[r] {
				return fmt.Sprintf("no %s event among %v", r, got)
			}
		}
		return ""
	})
	for name, lbls := range map[string]map[string]string{
		"lambda_builds_started_total":   {"runtime": "python"},
		"lambda_builds_total":           {"outcome": "succeeded", "runtime": "python"},
		"lambda_build_duration_seconds": {"outcome": "succeeded"},
		"lambda_time_to_ready_seconds":  {"kind": "LambdaFunction"},
	} {
		if metricValue(t, name, lbls) < 1 {
			t.Errorf("metric %s%v recorded nothing", name, lbls)
		}
	}

	// At rest, the provider writes nothing, poll after poll. It did write to
	// get here, so the counter is known to count.
	before := p.writes.settled(ctx, t, ns)
	if before == 0 {
		t.Fatal("no write request was counted while creating the function; the count below would prove nothing")
	}
	time.Sleep(5 * testPoll)
	if n := p.writes.in(ns) - before; n != 0 {
		t.Errorf("the provider made %d write requests over 5 polls of a resource at rest; want 0", n)
	}

	// A scaling change updates the Service and builds nothing.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Scaling.MaxReplicas = ptr[int32](9)
	})
	wait.Until(ctx, t, "the Service takes the new max-scale", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err.Error()
		}
		if v := svc.Spec.Template.Annotations["autoscaling.knative.dev/max-scale"]; v != "9" {
			return "max-scale " + v
		}
		return ""
	})
	if n := len(jobs(ctx, t, c, ns, "hello")); n != 1 {
		t.Errorf("a scaling change made %d Jobs in all; want the 1 build from before", n)
	}

	// Visibility is a label of the Service: cluster-local adds Knative's,
	// public takes it away again, and neither builds (the Job count below
	// says so).
	for _, v := range []v1alpha1.Visibility{v1alpha1.VisibilityClusterLocal, v1alpha1.VisibilityPublic} {
		update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
			mg.Spec.ForProvider.Workload = &v1alpha1.WorkloadSettings{Visibility: &v}
		})
		want := map[v1alpha1.Visibility]string{v1alpha1.VisibilityClusterLocal: "cluster-local"}[v]
		wait.Until(ctx, t, "the Service is "+string(v), func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
				return err.Error()
			}
			if got := svc.Labels["networking.knative.dev/visibility"]; got != want {
				return fmt.Sprintf("visibility label %q", got)
			}
			return ""
		})
	}

	// Someone edits a field the provider owns: it is put back. A field only
	// someone else set is left alone.
	drift := svc.DeepCopy()
	drift.Spec.Template.Annotations["autoscaling.knative.dev/max-scale"] = "99"
	if drift.Annotations == nil {
		drift.Annotations = map[string]string{}
	}
	drift.Annotations["example.com/note"] = "added by someone else"
	if err := c.Update(ctx, drift); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the owned field is reverted", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err.Error()
		}
		if v := svc.Spec.Template.Annotations["autoscaling.knative.dev/max-scale"]; v != "9" {
			return "max-scale " + v
		}
		return ""
	})
	if svc.Annotations["example.com/note"] != "added by someone else" {
		t.Errorf("an annotation only someone else set was removed: %v", svc.Annotations)
	}

	// A bound taken out of the spec is taken off the Service. The live
	// Service still holds every field the new render sets, so only the
	// render's hash says it is out of date; the apply then removes the field
	// it no longer sets, and leaves what someone else set.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Scaling.MaxReplicas = nil
	})
	wait.Until(ctx, t, "the Service loses its max-scale", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err.Error()
		}
		if v, ok := svc.Spec.Template.Annotations["autoscaling.knative.dev/max-scale"]; ok {
			return "max-scale " + v
		}
		return ""
	})
	if svc.Annotations["example.com/note"] != "added by someone else" {
		t.Errorf("an annotation only someone else set was removed with the bound: %v", svc.Annotations)
	}

	// A code change builds exactly once more, and the Service keeps its
	// image until that build is done.
	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Inline.Code = "def handler(event, context):\n    return {'v': 2}\n"
	})
	wait.Until(ctx, t, "exactly one new Job", func() string {
		if n := len(jobs(ctx, t, c, ns, "hello")); n != 2 {
			return fmt.Sprintf("%d Jobs", n)
		}
		return ""
	})
	time.Sleep(3 * testPoll)
	if n := len(jobs(ctx, t, c, ns, "hello")); n != 2 {
		t.Errorf("a code change made %d Jobs in all; want 2", n)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digestA) {
		t.Errorf("the Service changed image to %s while the new build runs", img)
	}

	// Delete removes everything that was made for the function.
	if err := c.Delete(ctx, mg); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "every object of the function is gone", func() string {
		left := objectsLeft(ctx, c, ns, "hello")
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &eventingv1.Broker{}); err == nil {
			left += ", the Broker it created"
		}
		return strings.TrimPrefix(left, ", ")
	})
}

// objectsLeft names what is left of a function: the resource itself and the
// objects made for it. Empty means nothing is.
func objectsLeft(ctx context.Context, c client.Client, ns, name string) string {
	var left []string
	for _, l := range []client.ObjectList{&servingv1.ServiceList{}, &eventingv1.TriggerList{}, &batchv1.JobList{}, &corev1.ConfigMapList{}} {
		if err := c.List(ctx, l, ours(ns, name)...); err != nil {
			return err.Error()
		}
		if n := apimeta.LenList(l); n > 0 {
			left = append(left, fmt.Sprintf("%d %T", n, l))
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.LambdaFunction{}); err == nil {
		left = append(left, "the LambdaFunction")
	}
	return strings.Join(left, ", ")
}
