package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestRebuild asks for rebuilds with kubectl lambda rebuild: a built
// function gets the rebuild annotation the provider and the function read,
// with the time it was asked; what is not built is refused.
func TestRebuild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newScene(ctx, t)
	image := newFunction(s.namespace, "prebuilt")
	image.Spec.ForProvider.Source = v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/prebuilt", Tag: ptr.To[v1alpha1.ImageTag]("v1")}}
	image.Spec.ForProvider.Runtime = nil
	for _, fn := range []*v1alpha1.LambdaFunction{newFunction(s.namespace, "greeter"), image} {
		if err := s.kube.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	agent := &v1alpha1.LambdaAgent{}
	agent.Namespace, agent.Name = s.namespace, "helper"
	agent.Spec.ForProvider.Image = v1alpha1.AgentImage{Repository: "ghcr.io/acme/helper", Tag: ptr.To[v1alpha1.ImageTag]("v1")}
	agent.Spec.ForProvider.AI = v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"}
	if err := s.kube.Create(ctx, agent); err != nil {
		t.Fatal(err)
	}

	asked := time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC)
	if _, err := s.kubectlLambda(ctx, asked, "rebuild", "greeter"); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.LambdaFunction{}
	if err := s.kube.Get(ctx, types.NamespacedName{Namespace: s.namespace, Name: "greeter"}, got); err != nil {
		t.Fatal(err)
	}
	if v := got.GetAnnotations()[v1alpha1.AnnotationRebuild]; v != "2026-11-24T12:30:00Z" {
		t.Errorf("rebuild greeter: annotation %s=%q, want the time it was asked, 2026-11-24T12:30:00Z", v1alpha1.AnnotationRebuild, v)
	}
	for name, wantErr := range map[string]string{
		"prebuilt": "its source is an image: there is nothing to rebuild",
		"helper":   "agents run a prebuilt image: there is nothing to rebuild",
	} {
		if _, err := s.kubectlLambda(ctx, asked, "rebuild", name); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("rebuild %s: error %v, want %q", name, err, wantErr)
		}
	}
}
