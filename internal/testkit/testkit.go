// Package testkit holds what the tests of several packages share: a client
// of a local control plane that knows every kind the provider and the
// function write, namespaces, and a LambdaFunction or LambdaAgent of each
// kind. Nothing outside tests and benchmarks imports it.
package testkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/relay"
)

// Client is a client of cfg's API server whose scheme knows every kind the
// provider reads or writes, CRDs and the provider's own APIs included.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Namespace creates a namespace and returns its name: name itself, or a
// generated one when name ends in "-". It enforces a Pod Security level when
// one is given. A namespace that exists is used as it is.
func Namespace(ctx context.Context, t testing.TB, c client.Client, name, level string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if strings.HasSuffix(name, "-") {
		ns.Name, ns.GenerateName = "", name
	}
	if level != "" {
		ns.Labels = map[string]string{observe.LabelEnforce: level}
	}
	if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// DefaultProviderConfig names the ProviderConfig "default" of a resource's
// own namespace, which the tests create.
var DefaultProviderConfig = xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}

// InlineFunction is a LambdaFunction of inline Python code, using its
// namespace's default ProviderConfig.
func InlineFunction(ns, name, code string) *v1alpha1.LambdaFunction {
	python := v1alpha1.LanguagePython
	return function(ns, name, v1alpha1.LambdaFunctionParameters{
		Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: code}},
		Runtime: &v1alpha1.Runtime{Language: &python},
	})
}

// ImageFunction is a LambdaFunction of the prebuilt image
// ghcr.io/acme/<name>:v1, which has nothing to build, using its namespace's
// default ProviderConfig.
func ImageFunction(ns, name string) *v1alpha1.LambdaFunction {
	tag := v1alpha1.ImageTag("v1")
	return function(ns, name, v1alpha1.LambdaFunctionParameters{
		Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: v1alpha1.ImageRepository("ghcr.io/acme/" + name), Tag: &tag}},
	})
}

func function(ns, name string, p v1alpha1.LambdaFunctionParameters) *v1alpha1.LambdaFunction {
	pc := DefaultProviderConfig
	return &v1alpha1.LambdaFunction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.LambdaFunctionSpec{ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &pc}, ForProvider: p},
	}
}

// Agent is a LambdaAgent of the image ghcr.io/acme/agent:v1 with a local
// Ollama model, which needs no API key, using pc.
func Agent(ns, name string, pc xpv2.ProviderConfigReference) *v1alpha1.LambdaAgent {
	tag, endpoint := v1alpha1.ImageTag("v1"), v1alpha1.HTTPURL("http://ollama.ai:11434")
	return &v1alpha1.LambdaAgent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.LambdaAgentSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &pc},
			ForProvider: v1alpha1.LambdaAgentParameters{
				Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: &tag},
				AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: &endpoint, Model: "llama3.2:3b"},
			},
		},
	}
}

// ForwardedTo is the Broker address a forward's Trigger sends events to
// through the agent's relay: the relay's target for the Trigger's path.
// It is empty when the Trigger does not deliver to the relay, or the relay
// has no target for it.
func ForwardedTo(r *servingv1.Service, t *eventingv1.Trigger) string {
	s := t.Spec.Subscriber
	if r == nil || s.Ref == nil || s.Ref.Kind != "Service" || s.Ref.Name != r.Name || s.URI == nil {
		return ""
	}
	forward, ok := strings.CutPrefix(s.URI.Path, relay.PathPrefix)
	if !ok || len(r.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	for _, e := range r.Spec.Template.Spec.Containers[0].Env {
		targets := map[string]string{}
		if e.Name == relay.EnvTargets && json.Unmarshal([]byte(e.Value), &targets) == nil {
			return targets[forward]
		}
	}
	return ""
}
