package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
)

func TestSent(t *testing.T) {
	cases := map[string]struct {
		reason   string
		observed map[string]any
		want     map[string]any
	}{
		"KnativeService": {
			reason: "A Service kept while a build runs is sent without what the server wrote: status, its metadata, and the creator and last modifier Knative's webhook records. " +
				"Crossplane applied them on the node, so its apply owned them, and the next one, of the rendered Service, left the immutable creator out and was refused.",
			observed: map[string]any{
				"apiVersion": "serving.knative.dev/v1", "kind": "Service",
				"metadata": map[string]any{
					"name": "hello", "namespace": "apps", "uid": "1234", "resourceVersion": "7", "generation": 2.0,
					"labels": map[string]any{"app": "hello"},
					"annotations": map[string]any{
						"serving.knative.dev/creator":      "system:serviceaccount:crossplane-system:crossplane",
						"serving.knative.dev/lastModifier": "system:serviceaccount:crossplane-system:crossplane",
						"team.example.com/owner":           "payments",
					},
				},
				"spec":   map[string]any{"template": map[string]any{}},
				"status": map[string]any{"url": "http://hello.apps.example.com"},
			},
			want: map[string]any{
				"apiVersion": "serving.knative.dev/v1", "kind": "Service",
				"metadata": map[string]any{
					"name": "hello", "namespace": "apps",
					"labels":      map[string]any{"app": "hello"},
					"annotations": map[string]any{"team.example.com/owner": "payments"},
				},
				"spec": map[string]any{"template": map[string]any{}},
			},
		},
		"EventingTrigger": {
			reason: "Eventing's webhook records them under its own group.",
			observed: map[string]any{
				"apiVersion": "eventing.knative.dev/v1", "kind": "Trigger",
				"metadata": map[string]any{"name": "hello-orders", "annotations": map[string]any{
					"eventing.knative.dev/creator": "someone", "eventing.knative.dev/lastModifier": "someone",
				}},
			},
			want: map[string]any{
				"apiVersion": "eventing.knative.dev/v1", "kind": "Trigger",
				"metadata": map[string]any{"name": "hello-orders", "annotations": map[string]any{}},
			},
		},
		"NoAnnotations": {
			reason: "An object without annotations is sent without.",
			observed: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "hello-build"},
				"data":     map[string]any{"main.py": "x"},
			},
			want: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "hello-build"},
				"data":     map[string]any{"main.py": "x"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := structpb.NewStruct(tc.observed)
			if err != nil {
				t.Fatal(err)
			}
			ob, err := codec.ObjectOf(s)
			if err != nil {
				t.Fatal(err)
			}
			got := &structpb.Struct{}
			if err := proto.Unmarshal(sent(ob), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.AsMap()); diff != "" {
				t.Errorf("%s\nsent(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
