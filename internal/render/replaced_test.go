package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

func TestReplaceable(t *testing.T) {
	trigger := func(name, broker string) *eventingv1.Trigger {
		return &eventingv1.Trigger{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: eventingv1.TriggerSpec{Broker: broker}}
	}
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
	cases := map[string]struct {
		reason  string
		desired []kube.Object
		live    map[string]kube.Object
		want    []string
	}{
		"New": {
			reason:  "A Trigger with no live copy is applied.",
			desired: []kube.Object{svc, trigger("orders", "events")},
			want:    []string{"hello", "orders"},
		},
		"SameBroker": {
			reason:  "A Trigger whose live copy listens on its Broker is applied, whatever else changed.",
			desired: []kube.Object{svc, trigger("orders", "events")},
			live:    map[string]kube.Object{"orders": trigger("orders", "events"), "hello": &servingv1.Service{}},
			want:    []string{"hello", "orders"},
		},
		"OtherBroker": {
			reason:  "A Trigger whose live copy listens on another Broker is left out, so it goes before it comes back; the rest is applied.",
			desired: []kube.Object{trigger("orders", "payments"), svc, trigger("refunds", "payments")},
			live:    map[string]kube.Object{"orders": trigger("orders", "events"), "refunds": trigger("refunds", "payments")},
			want:    []string{"hello", "refunds"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Replaceable(tc.desired, func(o kube.Object) kube.Object { return tc.live[o.GetName()] })
			var names []string
			for _, o := range got {
				names = append(names, o.GetName())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("%s\nReplaceable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
