package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// orderType is the type of the event the event tests send; the function's
// reply is of orderType.response.
const orderType = "com.example.order.created"

// quiet is how long a sink must get nothing more for a delivery to be
// judged as the only one: the Broker delivered the first within it.
const quiet = 3 * time.Second

// sendTimeout bounds a producer's tries to deliver an event.
const sendTimeout = 30 * time.Second

// resend is how long a producer waits for a reply to an accepted event
// before it sends the event again.
const resend = 5 * time.Second

// brokerDelivers sends an event to the function's Broker, as a producer in
// the cluster would, and checks that the function's reply reaches a second
// subscriber, the sink, once: the function's Trigger filters nothing, and
// only its filter of the function's own source keeps real Eventing from
// delivering the reply back to the function, which would reply again. Then
// an event the handler fails on reaches the sink as the function's dead
// letter, after its retry.
func brokerDelivers(ctx context.Context, t *testing.T, kube client.Client, built *render.Objects, sink *Sink) {
	t.Helper()
	got := sink.Got
	source := render.FunctionSource(built.Service.Namespace, built.Service.Name)
	ingress := repliesTo(ctx, t, kube, built, sink)

	start := time.Now()
	r := firstDelivery(ctx, t, ingress, got, `{"id": "order-2"}`)
	want := Received{Type: orderType + ".response", Source: source, Body: `{"accepted":"order-2"}`}
	r.Body = string(bytes.Join(bytes.Fields([]byte(r.Body)), nil))
	if r != want {
		t.Errorf("the reply's subscriber got %+v; want %+v", r, want)
	}
	t.Logf("the reply reached its subscriber through the Broker in %s", time.Since(start).Round(time.Millisecond))
	// A reply delivered back to the function is answered with a reply of
	// its own, of type <reply's type>.response.
	var looped []Received
	for end := time.After(quiet); end != nil; {
		select {
		case r := <-got:
			if r.Type != want.Type {
				looped = append(looped, r)
			}
		case <-end:
			end = nil
		}
	}
	if len(looped) > 0 {
		t.Errorf("the reply's subscriber got %d replies to replies, the first %+v: the Broker delivered the function's reply back to it", len(looped), looped[0])
	}
	deadLetters(ctx, t, ingress, got)
}

// repliesTo creates the function's Broker and Triggers, and a Trigger that
// sends the function's replies to the sink, waits until Knative reports
// them Ready, and returns the Broker's ingress address (brokerReady).
func repliesTo(ctx context.Context, t testing.TB, kube client.Client, built *render.Objects, sink *Sink) string {
	t.Helper()
	ns := built.Service.Namespace
	source := render.FunctionSource(ns, built.Service.Name)
	replies := &eventingv1.Trigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "replies"},
		Spec: eventingv1.TriggerSpec{
			Broker:     built.Broker.Name,
			Filter:     &eventingv1.TriggerFilter{Attributes: eventingv1.TriggerFilterAttributes{"source": source}},
			Subscriber: duckv1.Destination{URI: sink.URL},
		},
	}
	objs := []client.Object{built.Broker, replies}
	for _, tr := range built.Triggers {
		objs = append(objs, tr)
	}
	for _, o := range objs {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	ingress := brokerReady(ctx, t, kube, built.Broker)
	for _, tr := range append(built.Triggers, replies) {
		triggerReady(ctx, t, kube, tr)
	}
	t.Logf("Knative made the Broker and its Triggers Ready in %s", time.Since(start).Round(time.Second))
	return ingress
}

// deadLetters sends an event without data, which the handler fails on (it
// reads the order's id), and checks that the event reaches the dead-letter
// sink with the function's status once Knative gave up on the function.
func deadLetters(ctx context.Context, t *testing.T, ingress string, got <-chan Received) {
	t.Helper()
	start := time.Now()
	status, body, err := post(ctx, ingress, "null")
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("the Broker's ingress answered %d %q (%v); want 202", status, body, err)
	}
	select {
	case r := <-got:
		r.Body = string(bytes.Join(bytes.Fields([]byte(r.Body)), nil))
		want := Received{Type: orderType, Source: eventSource, Body: "null", ErrorCode: "500"}
		if r != want {
			t.Errorf("the dead-letter sink got %+v; want %+v", r, want)
		}
		t.Logf("the failed event reached the dead-letter sink in %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(sendTimeout):
		t.Error("the event the function failed on never reached the dead-letter sink")
	}
}

// firstDelivery sends an order event of data to the Broker's ingress as a
// producer that delivers at least once does (send), and returns the first
// event the sink got.
func firstDelivery(ctx context.Context, t testing.TB, ingress string, got <-chan Received, data string) Received {
	t.Helper()
	sent, replied := make(chan error, 1), make(chan struct{})
	go func() { sent <- send(ctx, t, ingress, data, replied) }()
	r, err := firstReply(got, sent)
	close(replied)
	if err == nil {
		err = <-sent
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// firstReply is the first event the sink got, or why none came: the
// producer's error, or nothing within the time the producer tries.
func firstReply(got <-chan Received, sent chan error) (Received, error) {
	select {
	case r := <-got:
		return r, nil
	case err := <-sent:
		sent <- err // for the caller, which reads it at the end
		return Received{}, err
	case <-time.After(sendTimeout + quiet):
		return Received{}, errors.New("the function's reply never reached its subscriber through the Broker")
	}
}

// brokerReady waits until Knative reports the Broker Ready and returns its
// ingress's address as the host reaches it: the ingress Service's cluster
// IP, with the path of the Broker's address.
func brokerReady(ctx context.Context, t testing.TB, kube client.Client, b *eventingv1.Broker) string {
	t.Helper()
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(b), b)
		return err == nil && b.Status.GetCondition(apis.ConditionReady).IsTrue() && b.Status.Address != nil && b.Status.Address.URL != nil, err
	})
	if err != nil {
		t.Fatalf("the Broker is not Ready (%v): %+v", err, b.Status.Conditions)
	}
	svc := &corev1.Service{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: eventingNamespace, Name: "broker-ingress"}, svc); err != nil {
		t.Fatal(err)
	}
	return "http://" + svc.Spec.ClusterIP + b.Status.Address.URL.Path
}

// triggerReady waits until Knative reports the Trigger Ready.
func triggerReady(ctx context.Context, t testing.TB, kube client.Client, tr *eventingv1.Trigger) {
	t.Helper()
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(tr), tr)
		return err == nil && tr.Status.GetCondition(apis.ConditionReady).IsTrue(), err
	})
	if err != nil {
		t.Fatalf("the Trigger %s is not Ready (%v): %+v", tr.Name, err, tr.Status.Conditions)
	}
}

// send posts an order event to the Broker's ingress until a reply came, as
// a producer that delivers at least once does. For a moment after Knative
// reports a Broker and its Triggers Ready, its ingress may not know the
// Broker yet (it answers 404), or the channel's dispatcher the Triggers'
// subscriptions (it accepts the event and delivers it to no one). The
// in-memory channel answers the ingress once its subscribers have answered,
// and the Broker's filter once a reply is sent on: post returns after the
// whole chain, and never if the reply loops.
func send(ctx context.Context, t testing.TB, ingress, data string, replied <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	for {
		status, body, err := post(ctx, ingress, data)
		if err != nil {
			return fmt.Errorf("the Broker's ingress did not answer: %w", err)
		}
		if status == http.StatusAccepted {
			select {
			case <-replied:
				return nil
			case <-ctx.Done():
				return nil // firstReply says no reply came.
			case <-time.After(resend):
			}
		}
		t.Logf("the Broker's ingress answered %d %q, and no reply came: sending the event again", status, body)
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Broker's ingress answered %d %q; want 202", status, body)
		case <-time.After(time.Second):
		}
	}
}

// post posts an order event to the Broker's ingress once.
func post(ctx context.Context, ingress, data string) (int, string, error) {
	return postEvent(ctx, ingress, "", orderType, data)
}
