package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	eventingduckv1 "knative.dev/eventing/pkg/apis/duck/v1"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestDeadLetterSinkDefault checks that a provider config's dead-letter
// sink fills in where neither a Trigger nor its workload names one, for
// functions and agents, and never replaces one they name.
func TestDeadLetterSinkDefault(t *testing.T) {
	platform := &v1alpha1.Sink{URI: ptr.To[v1alpha1.ServiceURL]("http://dead-letters.platform.svc.cluster.local")}
	own := &v1alpha1.Sink{Ref: &v1alpha1.SinkReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "my-dlq"}}
	platformURI := &duckv1.Destination{URI: &apis.URL{Scheme: "http", Host: "dead-letters.platform.svc.cluster.local"}}
	ownRef := &duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "my-dlq"}}
	image := v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/hello", Tag: ptr.To[v1alpha1.ImageTag]("v1")}}

	cases := map[string]struct {
		reason   string
		defaults Defaults
		trigger  *v1alpha1.Delivery
		workload *v1alpha1.Delivery
		want     *eventingduckv1.DeliverySpec
	}{
		"NoDefault": {
			reason: "Without a default, a Trigger without delivery has none.",
		},
		"Default": {
			reason:   "A Trigger without delivery gets the provider config's sink.",
			defaults: Defaults{DeadLetterSink: platform},
			want:     &eventingduckv1.DeliverySpec{DeadLetterSink: platformURI},
		},
		"WorkloadRetryKept": {
			reason:   "The workload's delivery keeps its retries and gains the sink.",
			defaults: Defaults{DeadLetterSink: platform},
			workload: &v1alpha1.Delivery{Retry: ptr.To[int32](5)},
			want:     &eventingduckv1.DeliverySpec{Retry: ptr.To[int32](5), DeadLetterSink: platformURI},
		},
		"OwnSinkWins": {
			reason:   "A sink the Trigger names wins over the default.",
			defaults: Defaults{DeadLetterSink: platform},
			trigger:  &v1alpha1.Delivery{DeadLetterSink: own},
			want:     &eventingduckv1.DeliverySpec{DeadLetterSink: ownRef},
		},
		"WorkloadSinkWins": {
			reason:   "A sink the workload names wins over the default.",
			defaults: Defaults{DeadLetterSink: platform},
			workload: &v1alpha1.Delivery{DeadLetterSink: own},
			want:     &eventingduckv1.DeliverySpec{DeadLetterSink: ownRef},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fn, err := Function(FunctionInput{Namespace: "apps", Name: "hello", Defaults: tc.defaults, Spec: v1alpha1.LambdaFunctionParameters{
				Source:   image,
				Eventing: &v1alpha1.FunctionEventing{Delivery: tc.workload, Triggers: []v1alpha1.Trigger{{Name: "all", Delivery: tc.trigger}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, fn.Triggers[0].Spec.Delivery); diff != "" {
				t.Errorf("%s\nfunction Trigger delivery: -want, +got:\n%s", tc.reason, diff)
			}
			agent, err := Agent(AgentInput{Namespace: "apps", Name: "helper", Defaults: tc.defaults, Spec: v1alpha1.LambdaAgentParameters{
				Image:    v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1")},
				AI:       v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
				Eventing: &v1alpha1.AgentEventing{Delivery: tc.workload, Subscriptions: []v1alpha1.Subscription{{Name: "all", EventType: "com.example.ask", Delivery: tc.trigger}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, agent.Triggers[0].Spec.Delivery); diff != "" {
				t.Errorf("%s\nagent Trigger delivery: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
