package render

import (
	"context"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"go.uber.org/zap"
	"k8s.io/utils/ptr"
	kneventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/eventing/pkg/eventfilter"
	"knative.dev/eventing/pkg/eventfilter/attributes"
	"knative.dev/eventing/pkg/eventfilter/subscriptionsapi"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
)

// delivers says whether a Broker delivers an event to a Trigger's
// subscriber, deciding as Knative's broker filter does: the Subscriptions
// API filters when there are any, else the attribute filter; only a failed
// filter drops the event.
func delivers(wire *eventingv1.Trigger, e cloudevents.Event) bool {
	var f eventfilter.Filter
	var t *kneventingv1.Trigger
	knativetest.In(wire, func(own *kneventingv1.Trigger) { t = own })
	switch {
	case len(t.Spec.Filters) > 0:
		f = subscriptionsapi.CreateSubscriptionsAPIFilters(zap.NewNop(), t.Spec.Filters)
	case t.Spec.Filter != nil:
		f = attributes.NewAttributesFilter(t.Spec.Filter.Attributes)
	default:
		return true
	}
	return f.Filter(context.Background(), e) != eventfilter.FailFilter
}

// TestNoReplyLoops renders functions and checks, with Knative's own filter
// implementations, that their Triggers never deliver the function's own
// replies, which the Broker ingests like any other event.
func TestNoReplyLoops(t *testing.T) {
	event := func(typ, source string) cloudevents.Event {
		e := cloudevents.NewEvent()
		e.SetID("1")
		e.SetType(typ)
		e.SetSource(source)
		return e
	}
	const other = "/lambda/apps/other"
	cases := map[string]struct {
		reason  string
		filters v1alpha1.Filters
		// sent are events of other senders; own are replies the function
		// sends, as type suffixes of the event it answers.
		delivered, dropped []cloudevents.Event
		ownDropped         []string
	}{
		"CatchAll": {
			reason:     "A Trigger without filters receives every event but the function's own replies and errors.",
			delivered:  []cloudevents.Event{event("com.example.order", "/shop"), event("com.example.order.response", other)},
			ownDropped: []string{"com.example.order.response", "com.example.order.error", "com.example.order.response.response"},
		},
		"ByType": {
			reason:     "A Trigger filtered by type receives that type, nothing else, and never its own replies.",
			filters:    v1alpha1.Filters{"type": "com.example.order"},
			delivered:  []cloudevents.Event{event("com.example.order", "/shop")},
			dropped:    []cloudevents.Event{event("com.example.refund", "/shop")},
			ownDropped: []string{"com.example.order.response", "com.example.order"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := v1alpha1.LambdaFunctionParameters{
				Source:   v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/hello", Tag: ptr.To[v1alpha1.ImageTag]("v1")}},
				Eventing: &v1alpha1.FunctionEventing{Triggers: []v1alpha1.Trigger{{Name: "all", Filters: tc.filters}}},
			}
			out, err := Function(FunctionInput{Namespace: "apps", Name: "hello", Spec: spec, Defaults: testDefaults})
			if err != nil {
				t.Fatal(err)
			}
			// The source the wrapper sets on every reply.
			var source string
			for _, e := range out.Service.Spec.Template.Spec.Containers[0].Env {
				if e.Name == EnvSource {
					source = e.Value
				}
			}
			if source == "" {
				t.Fatalf("the Service has no %s", EnvSource)
			}
			trig := out.Triggers[0]
			for _, e := range tc.delivered {
				if !delivers(trig, e) {
					t.Errorf("%s\nan event of type %s from %s is dropped; want it delivered", tc.reason, e.Type(), e.Source())
				}
			}
			for _, e := range tc.dropped {
				if delivers(trig, e) {
					t.Errorf("%s\nan event of type %s from %s is delivered; want it dropped", tc.reason, e.Type(), e.Source())
				}
			}
			for _, typ := range tc.ownDropped {
				if delivers(trig, event(typ, source)) {
					t.Errorf("%s\nthe function's own %s from %s is delivered back to it: a reply loop", tc.reason, typ, source)
				}
			}
		})
	}
}
