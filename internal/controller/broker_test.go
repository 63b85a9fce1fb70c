package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestSharedBroker checks that two functions that both create one Broker
// share it quietly, and that it goes only with its last user.
func TestSharedBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "shared", keep)
	var fns []*v1alpha1.LambdaFunction
	for _, name := range []string{"first", "second"} {
		fns = append(fns, brokerUser(ctx, t, c, ns, name, "shared"))
	}
	for _, fn := range fns {
		waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	}

	// Two users of one Broker do not take it from each other at rest.
	before := p.writes.settled(ctx, t, ns)
	time.Sleep(4 * testPoll)
	if n := p.writes.in(ns) - before; n != 0 {
		t.Errorf("two functions sharing a Broker made %d write requests at rest; want 0", n)
	}

	broker := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}
	goesLeaving(ctx, t, c, fns[0], broker, "the second function still uses it")
	if err := c.Delete(ctx, fns[1]); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the Broker goes with its last user", func() string { return gone(ctx, c, broker) })
}

// TestHandedOverBrokerGoes checks that a Broker goes with the last to leave
// of the functions that create it or listen on it, whether it created it
// or not: its creator, which only sends to it, keeps it while a listener
// comes and goes, and when the creator goes before the next listener, that
// listener takes the Broker with it. Before creators said so on the Broker,
// it stayed for good.
func TestHandedOverBrokerGoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "handed", keep)
	listens := &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: "handed"}, Triggers: []v1alpha1.Trigger{{Name: "all"}}}
	maker := eventedFunction(ctx, t, c, ns, "maker", &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: "handed", Create: true}})
	waitCondition(ctx, t, c, maker, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	broker := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "handed"}}

	early := eventedFunction(ctx, t, c, ns, "early", listens)
	waitCondition(ctx, t, c, early, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	goesLeaving(ctx, t, c, early, broker, "its creator still sends to it")

	late := eventedFunction(ctx, t, c, ns, "late", listens)
	waitCondition(ctx, t, c, late, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	goesLeaving(ctx, t, c, maker, broker, "a listener still uses it")
	if got := render.Creators(broker); len(got) > 0 {
		t.Errorf("the creator left, and the Broker still names creators %v", got)
	}
	if err := c.Delete(ctx, late); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the Broker goes with the last listener", func() string { return gone(ctx, c, broker) })
}

// goesLeaving deletes the function and, once it is gone, fails the test
// unless the Broker is left, which it should be because of why.
func goesLeaving(ctx context.Context, t *testing.T, c client.Client, fn *v1alpha1.LambdaFunction, broker *eventingv1.Broker, why string) {
	t.Helper()
	if err := c.Delete(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, fn.Name+" is gone", func() string { return gone(ctx, c, fn) })
	if err := c.Get(ctx, client.ObjectKeyFromObject(broker), broker); err != nil {
		t.Fatalf("the Broker went with %s, while %s: %v", fn.Name, why, err)
	}
}

// TestLastUserWaitsForItsBroker checks that the last user of a Broker it
// created does not go before the Broker, though its own objects went first:
// the API server refuses to delete the Broker for a while (a provider killed
// between the two steps leaves the same state), and the function waits,
// says why, and takes the Broker with it once it may.
func TestLastUserWaitsForItsBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, fn := soleBrokerUser(ctx, t, "held", "only", "held")
	ns := fn.Namespace

	broker := &eventingv1.Broker{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held"}, broker); err != nil {
		t.Fatal(err)
	}
	holdDeletes(ctx, t, c, broker)
	if err := c.Delete(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the function's Service is gone", func() string {
		return gone(ctx, c, &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fn.Name}})
	})
	waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, "cannot delete Broker/held")

	update(ctx, t, c, client.ObjectKeyFromObject(broker), func(b *eventingv1.Broker) { delete(b.Annotations, holdAnnotation) })
	wait.Until(ctx, t, "the Broker goes with its last user", func() string { return gone(ctx, c, broker) })
	wait.Until(ctx, t, "the function is gone", func() string { return gone(ctx, c, fn) })
}

// TestRetiredBrokerGoes checks that a function whose spec stops naming a
// Broker it created deletes it, as its last user, and that its status keeps
// naming the Broker until it is gone: the API server refuses the deletion
// for a while, the function is deleted meanwhile, and both its Brokers go
// with it once they may.
func TestRetiredBrokerGoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, fn := soleBrokerUser(ctx, t, "retired", "mover", "before")
	ns := fn.Namespace
	before := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}}
	holdDeletes(ctx, t, c, before)

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(f *v1alpha1.LambdaFunction) { f.Spec.ForProvider.Eventing.Broker.Name = "after" })
	waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, "cannot delete Broker/before")
	createdBrokers(ctx, t, c, fn, "after", "before")

	if err := c.Delete(ctx, fn); err != nil {
		t.Fatal(err)
	}
	update(ctx, t, c, client.ObjectKeyFromObject(before), func(b *eventingv1.Broker) { delete(b.Annotations, holdAnnotation) })
	for _, o := range []client.Object{before, &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}}, fn} {
		wait.Until(ctx, t, o.GetName()+" goes with the function", func() string { return gone(ctx, c, o) })
	}
}

// TestDroppedBrokerGoes checks that a function whose spec stops creating a
// Broker, and names no other, deletes the one it created.
func TestDroppedBrokerGoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, fn := soleBrokerUser(ctx, t, "dropped", "dropper", "dropped")
	ns := fn.Namespace
	createdBrokers(ctx, t, c, fn, "dropped")

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(f *v1alpha1.LambdaFunction) { f.Spec.ForProvider.Eventing = nil })
	wait.Until(ctx, t, "the dropped Broker is gone", func() string {
		return gone(ctx, c, &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dropped"}})
	})
	createdBrokers(ctx, t, c, fn)
}

// TestTriggerMovesToAnotherBroker checks that a function whose Trigger is to
// listen on another Broker gets it: Knative's webhook refuses to change a
// Trigger's Broker, played here by an admission policy in its words (the
// node's e2e meets the real one), so the old Trigger goes and a new one
// comes.
func TestTriggerMovesToAnotherBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, fn := soleBrokerUser(ctx, t, "moved", "mover", "before")
	ns := fn.Namespace
	key := client.ObjectKey{Namespace: ns, Name: render.TriggerName(v1alpha1.LambdaFunctionKind, "mover", "all", "trigger/all")}
	immutableBroker(ctx, t, c, key)

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(f *v1alpha1.LambdaFunction) { f.Spec.ForProvider.Eventing.Broker.Name = "after" })
	wait.Until(ctx, t, "the Trigger listens on the Broker after", func() string {
		tr := &eventingv1.Trigger{}
		if err := c.Get(ctx, key, tr); err != nil {
			return err.Error()
		}
		if tr.Spec.Broker != "after" {
			return "it listens on " + tr.Spec.Broker
		}
		return ""
	})
	waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionTrue, "", "")
}

// immutableBroker has the API server refuse to change the Broker of the
// namespace's Triggers, as Knative's webhook does, and returns once it
// refuses to change the Trigger's.
func immutableBroker(ctx context.Context, t *testing.T, c client.Client, trigger client.ObjectKey) {
	t.Helper()
	testkit.Admit(ctx, t, c, "immutable-"+trigger.Namespace, trigger.Namespace, admissionregistrationv1.Update, admissionregistrationv1.Rule{APIGroups: []string{eventingv1.SchemeGroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"triggers"}},
		admissionregistrationv1.Validation{Expression: "object.spec.broker == oldObject.spec.broker", Message: "Immutable fields changed (-old +new): spec.broker"})
	wait.Until(ctx, t, "the API server refuses to change the Broker of "+trigger.Name, func() string {
		tr := &eventingv1.Trigger{}
		if err := c.Get(ctx, trigger, tr); err != nil {
			return err.Error()
		}
		tr.Spec.Broker += "-moved"
		err := c.Update(ctx, tr, client.DryRunAll)
		if kerrors.IsForbidden(err) || kerrors.IsInvalid(err) {
			return ""
		}
		return fmt.Sprintf("a dry run of the change: %v", err)
	})
}

// createdBrokers waits until the function's status names the Brokers it
// created.
func createdBrokers(ctx context.Context, t *testing.T, c client.Client, fn *v1alpha1.LambdaFunction, want ...string) {
	t.Helper()
	wait.Until(ctx, t, fmt.Sprintf("%s's status names the Brokers %v", fn.Name, want), func() string {
		live := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), live); err != nil {
			return err.Error()
		}
		if got := live.Status.AtProvider.Eventing.GetCreatedBrokers(); !slices.Equal(got, want) {
			return fmt.Sprintf("it names %v", got)
		}
		return ""
	})
}

// soleBrokerUser starts a scene and creates in it a function that creates
// the Broker it subscribes to, as brokerUser does, and returns once it is
// Ready.
func soleBrokerUser(ctx context.Context, t *testing.T, scene, name, broker string) (client.Client, *v1alpha1.LambdaFunction) {
	t.Helper()
	_, c, ns := newScene(ctx, t, scene, keep)
	fn := brokerUser(ctx, t, c, ns, name, broker)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	return c, fn
}

// brokerUser creates a function of a prebuilt image that creates the Broker
// it subscribes to, and plays its Service Ready.
func brokerUser(ctx context.Context, t *testing.T, c client.Client, ns, name, broker string) *v1alpha1.LambdaFunction {
	t.Helper()
	return eventedFunction(ctx, t, c, ns, name, &v1alpha1.FunctionEventing{Broker: &v1alpha1.Broker{Name: v1alpha1.DNSLabel(broker), Create: true}, Triggers: []v1alpha1.Trigger{{Name: "all"}}})
}

// eventedFunction creates a function of a prebuilt image with the
// eventing, and plays its Service Ready.
func eventedFunction(ctx context.Context, t *testing.T, c client.Client, ns, name string, e *v1alpha1.FunctionEventing) *v1alpha1.LambdaFunction {
	t.Helper()
	tag := v1alpha1.ImageTag("v1")
	fn := &v1alpha1.LambdaFunction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.LambdaFunctionSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}},
			ForProvider: v1alpha1.LambdaFunctionParameters{
				Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}},
				Eventing: e,
			},
		},
	}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	playact.MarkServiceReady(ctx, t, c, serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), name+"'s Service exists", anyService))
	return fn
}

// holdAnnotation marks an object the API server refuses to delete, by the
// admission policy holdDeletes installs.
const holdAnnotation = "test.lambda.knative.dev/hold"

// holdDeletes has the API server refuse to delete objects of the Broker's
// namespace that carry holdAnnotation, by a ValidatingAdmissionPolicy, and
// annotates the Broker. It returns once the policy is in force.
func holdDeletes(ctx context.Context, t *testing.T, c client.Client, o *eventingv1.Broker) {
	t.Helper()
	testkit.Admit(ctx, t, c, "hold-"+o.GetNamespace(), o.GetNamespace(), admissionregistrationv1.Delete, admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
		admissionregistrationv1.Validation{
			Expression: `!has(oldObject.metadata.annotations) || !("` + holdAnnotation + `" in oldObject.metadata.annotations)`,
			Message:    "held by the test",
		})
	update(ctx, t, c, client.ObjectKeyFromObject(o), func(b *eventingv1.Broker) { metav1.SetMetaDataAnnotation(&b.ObjectMeta, holdAnnotation, "true") })
	// The API server loads a new policy a moment after it is created.
	wait.Until(ctx, t, "the API server refuses to delete "+o.GetName(), func() string {
		err := c.Delete(ctx, o, client.DryRunAll)
		if kerrors.IsForbidden(err) || kerrors.IsInvalid(err) {
			return ""
		}
		return fmt.Sprintf("a dry run of its deletion: %v", err)
	})
}
