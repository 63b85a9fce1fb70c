package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/diff"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestEventingFailures plays Knative Eventing reporting a Trigger that
// cannot deliver, with the reasons and messages its trigger reconciler
// writes, and checks that the function is not Ready while it cannot, says
// which Trigger and why, and is Ready again once Knative is.
func TestEventingFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "eventing", keep)
	fn := newImageFunction(ns, "listener")
	fn.Spec.ForProvider.Eventing.Delivery = &v1alpha1.Delivery{DeadLetterSink: &v1alpha1.Sink{Ref: &v1alpha1.SinkReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "dlq"}}}
	trigger := render.TriggerName(v1alpha1.LambdaFunctionKind, "listener", "orders", "trigger/orders")
	p.eventing.Leave(trigger)
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	svc := &servingv1.Service{}
	tr := &eventingv1.Trigger{}
	wait.Until(ctx, t, "the Service and the Trigger exist", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), svc); err != nil {
			return err.Error()
		}
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: trigger}, tr))
	})
	playact.MarkServiceReady(ctx, t, c, svc)
	mg := &v1alpha1.LambdaFunction{}
	readyIs := func(status corev1.ConditionStatus, reason xpv2.ConditionReason, phase v1alpha1.Phase, says ...string) func() string {
		return func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
				return err.Error()
			}
			r := mg.GetCondition(xpv2.TypeReady)
			got := fmt.Sprintf("phase %s, Ready %s %s %q", mg.Status.AtProvider.Phase, r.Status, r.Reason, r.Message)
			if r.Status != status || r.Reason != reason || mg.Status.AtProvider.Phase != phase {
				return got
			}
			for _, s := range says {
				if !strings.Contains(r.Message, s) {
					return got + "; lacks " + s
				}
			}
			return ""
		}
	}
	wait.Until(ctx, t, "a Trigger Knative has not reported on keeps the function from Ready", readyIs(corev1.ConditionFalse, v1alpha1.ReasonDeploying, v1alpha1.PhaseDeploying, "waiting for Knative Eventing", "Trigger "+trigger))

	steps := []struct {
		reason string
		fault  playact.TriggerFault
		want   func() string
	}{
		{
			reason: "A dead-letter sink Knative cannot resolve fails the function, naming the Trigger and the resolver's error.",
			fault:  playact.DeadLetterSinkUnresolved(`failed to get object ` + ns + `/dlq: services.serving.knative.dev "dlq" not found`),
			want: readyIs(corev1.ConditionFalse, v1alpha1.ReasonEventingFailed, v1alpha1.PhaseFailed,
				"Trigger "+trigger, "Unable to get the dead letter sink's URI", `"dlq" not found`),
		},
		{
			reason: "Once Knative resolves it, the function is Ready without anything else changing.",
			want:   readyIs(corev1.ConditionTrue, xpv2.ReasonAvailable, v1alpha1.PhaseReady),
		},
	}
	for _, s := range steps {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: trigger}, tr); err != nil {
			t.Fatal(err)
		}
		playact.FailTrigger(ctx, t, c, tr, s.fault)
		reported := time.Now()
		wait.Until(ctx, t, s.reason, s.want)
		t.Logf("read %s after Knative reported it (poll interval %s)", time.Since(reported).Round(time.Millisecond), testPoll)
	}
}

// TestDeadLetterSinkDefault checks that a ProviderConfig's dead-letter sink
// reaches the Triggers of a function that names none.
func TestDeadLetterSinkDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "dead-letters", keep)
	const sink = "http://dead-letters.platform.svc.cluster.local"
	// The provider's own ProviderConfig controller writes it too.
	wait.Until(ctx, t, "the ProviderConfig names a dead-letter sink", func() string {
		pc := &v1alpha1.ProviderConfig{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pc); err != nil {
			return err.Error()
		}
		pc.Spec.Eventing = &v1alpha1.EventingDefaults{DeadLetterSink: &v1alpha1.Sink{URI: ptr[v1alpha1.ServiceURL](sink)}}
		return wait.ErrString(c.Update(ctx, pc))
	})
	fn := newImageFunction(ns, "forgetful")
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	name := render.TriggerName(v1alpha1.LambdaFunctionKind, "forgetful", "orders", "trigger/orders")
	wait.Until(ctx, t, "the Trigger sends what it cannot deliver to the provider config's sink", func() string {
		tr := &eventingv1.Trigger{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tr); err != nil {
			return err.Error()
		}
		if d := tr.Spec.Delivery; d == nil || d.DeadLetterSink == nil || d.DeadLetterSink.URI.String() != sink {
			return fmt.Sprintf("delivery %+v", d)
		}
		return ""
	})
}

// TestRabbitMQBrokerFailure plays eventing-rabbitmq failing to find the
// RabbitmqCluster a Broker's spec.config names, as its broker reconciler
// reports it, and checks that the function names the Broker and why.
func TestRabbitMQBrokerFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newScene(ctx, t, "rabbitmq", keep)
	p.eventing.Leave("orders")
	fn := newImageFunction(ns, "router")
	fn.Spec.ForProvider.Eventing.Broker = &v1alpha1.Broker{Name: "orders", Create: true, Class: v1alpha1.BrokerClassRabbitMQ,
		RabbitMQ: &v1alpha1.RabbitMQBroker{Cluster: ptr[v1alpha1.DNSSubdomain]("orders-rabbitmq")}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	svc, b := &servingv1.Service{}, &eventingv1.Broker{}
	wait.Until(ctx, t, "the Service and the Broker exist", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), svc); err != nil {
			return err.Error()
		}
		return wait.ErrString(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, b))
	})
	if b.Spec.Config == nil || b.Spec.Config.Kind != render.RabbitMQBrokerConfigKind || b.Spec.Config.Name != "orders" {
		t.Errorf("the Broker's spec.config is %+v, want its own RabbitmqBrokerConfig orders", b.Spec.Config)
	}
	playact.MarkServiceReady(ctx, t, c, svc)
	playact.FailRabbitMQBroker(ctx, t, c, b, `rabbitmqclusters.rabbitmq.com "orders-rabbitmq" not found`)
	wait.Until(ctx, t, "EventingFailed naming the Broker and eventing-rabbitmq's reason", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		want := `Broker orders: ExchangeCredentialsUnavailable: Failed to get arguments for creating exchange: rabbitmqclusters.rabbitmq.com "orders-rabbitmq" not found`
		if r.Reason != v1alpha1.ReasonEventingFailed || r.Message != want || mg.Status.AtProvider.Phase != v1alpha1.PhaseFailed {
			return fmt.Sprintf("phase %s, Ready %s %s %q", mg.Status.AtProvider.Phase, r.Status, r.Reason, r.Message)
		}
		return ""
	})
}

// TestRabbitMQBrokerConfig runs the provider as its service account with
// the generated roles and checks the RabbitmqBrokerConfig a RabbitMQ Broker
// gets: created with the Broker, with the cluster and queue type asked for,
// left alone at rest, never taken over from someone else, and deleted with
// the Broker's last user.
func TestRabbitMQBrokerConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := adminClient(t)
	ns := testkit.Namespace(ctx, t, c, "rabbitmq-config-", "")
	grantProvider(ctx, t, c, ns)
	newProviderConfig(ctx, t, c, ns)
	playEventing(ctx, c, ns)
	p := startProvider(t, providerOptions{as: providerIdentity})

	// The platform's own RabbitmqBrokerConfig, of the name a Broker would
	// give its own.
	theirs := rabbitmqBrokerConfig(ns, "platform", "platform-rabbitmq", "quorum")
	theirs.SetLabels(nil)
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	rabbitFunction := func(name, broker string) *v1alpha1.LambdaFunction {
		fn := newImageFunction(ns, name)
		fn.Spec.ForProvider.Eventing.Broker = &v1alpha1.Broker{Name: v1alpha1.DNSLabel(broker), Create: true, Class: v1alpha1.BrokerClassRabbitMQ,
			RabbitMQ: &v1alpha1.RabbitMQBroker{Cluster: ptr[v1alpha1.DNSSubdomain]("orders-rabbitmq"), QueueType: v1alpha1.RabbitMQQueueClassic}}
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
		return fn
	}
	taker := rabbitFunction("taker", "platform")
	fn := rabbitFunction("router", "orders")

	waitCondition(ctx, t, c, taker, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonNameConflict,
		"the RabbitmqBrokerConfig platform exists and was not created by this provider: name it in rabbitmq.brokerConfig instead of rabbitmq.cluster, or give the Broker another name; nothing is applied until the name is free")

	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the router's Service", func() string { return wait.ErrString(c.Get(ctx, client.ObjectKeyFromObject(fn), svc)) })
	playact.MarkServiceReady(ctx, t, c, svc)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, xpv2.ReasonAvailable, "")

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(theirs.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, got); err != nil {
		t.Fatal(err)
	}
	want := rabbitmqBrokerConfig(ns, "orders", "orders-rabbitmq", "classic")
	if m := diff.Missing(want.Object, got.Object); len(m) > 0 {
		t.Errorf("the Broker's RabbitmqBrokerConfig is not as asked:\n%s", strings.Join(m, "\n"))
	}
	b := &eventingv1.Broker{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, b); err != nil {
		t.Fatal(err)
	}
	if b.Spec.Config == nil || b.Spec.Config.Kind != render.RabbitMQBrokerConfigKind || b.Spec.Config.Name != "orders" || b.Spec.Config.Namespace != ns {
		t.Errorf("the Broker's spec.config is %+v, want its RabbitmqBrokerConfig orders", b.Spec.Config)
	}

	// The shared objects read back as applied: nothing is written at rest.
	before := p.writes.settled(ctx, t, ns)
	time.Sleep(4 * testPoll)
	if n := p.writes.in(ns) - before; n != 0 {
		t.Errorf("a function on a RabbitMQ Broker made %d write requests at rest; want 0", n)
	}

	for _, mg := range []*v1alpha1.LambdaFunction{fn, taker} {
		if err := c.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
		wait.Until(ctx, t, mg.Name+" is gone", func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(mg), mg); err == nil {
				return "it still exists"
			}
			return ""
		})
	}
	for _, o := range []client.Object{b, got} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); !kerrors.IsNotFound(err) {
			t.Errorf("%s %s outlives its last user: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), theirs); err != nil || theirs.GetLabels() != nil {
		t.Errorf("the platform's RabbitmqBrokerConfig was changed or deleted: %v, labels %v", err, theirs.GetLabels())
	}
}

// TestRabbitMQWithoutEventingRabbitMQ targets a cluster without
// eventing-rabbitmq: a function on a RabbitMQ Broker is held, saying so,
// and nothing of it is applied; once eventing-rabbitmq's CRD is installed
// it deploys without anyone touching it.
func TestRabbitMQWithoutEventingRabbitMQ(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := startRemote(ctx, t, render.RabbitMQBrokerConfigKind)
	p := startProvider(t, providerOptions{allowTargets: loopbackNet})
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "no-rabbitmq-", "")
	fn := newImageFunction(ns, "router")
	fn.Spec.ProviderConfigReference = ptr(r.target(ctx, t, c, ns, "edge"))
	fn.Spec.ForProvider.Eventing.Broker = &v1alpha1.Broker{Name: "orders", Create: true, Class: v1alpha1.BrokerClassRabbitMQ,
		RabbitMQ: &v1alpha1.RabbitMQBroker{Cluster: ptr[v1alpha1.DNSSubdomain]("orders-rabbitmq")}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonBrokerMissing,
		"Broker orders is of class RabbitMQBroker, but the cluster serves no RabbitmqBrokerConfigs for it: install eventing-rabbitmq; nothing is deployed or changed until it does")
	for _, l := range []client.ObjectList{&servingv1.ServiceList{}, &eventingv1.BrokerList{}, &eventingv1.TriggerList{}} {
		if err := r.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(l); n > 0 {
			t.Errorf("%d %T applied while the cluster lacks eventing-rabbitmq", n, l)
		}
	}

	crds, err := local.CRDsWhere(ctx, ".", func(crd *extv1.CustomResourceDefinition) bool {
		return crd.Spec.Names.Kind == render.RabbitMQBrokerConfigKind
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.InstallCRDs(r.config.Config, crds); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the Service and the RabbitmqBrokerConfig exist in the remote", func() string {
		if err := r.kube.Get(ctx, client.ObjectKeyFromObject(fn), &servingv1.Service{}); err != nil {
			return err.Error()
		}
		cfg := &unstructured.Unstructured{}
		cfg.SetGroupVersionKind(schema.GroupVersionKind{Group: "eventing.knative.dev", Version: "v1alpha1", Kind: render.RabbitMQBrokerConfigKind})
		return wait.ErrString(r.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders"}, cfg))
	})
}

// rabbitmqBrokerConfig is a RabbitmqBrokerConfig as a platform writes one.
func rabbitmqBrokerConfig(ns, name, cluster, queueType string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": render.RabbitMQBrokerConfigAPIVersion,
		"kind":       render.RabbitMQBrokerConfigKind,
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{
			render.LabelManagedBy: render.ManagedBy, render.LabelComponent: render.ComponentEventing,
		}},
		"spec": map[string]any{"rabbitmqClusterReference": map[string]any{"name": cluster, "namespace": ns}, "queueType": queueType},
	}}
	return u
}
