package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestMissing(t *testing.T) {
	cases := map[string]struct {
		reason  string
		desired any
		live    any
		want    []string
	}{
		"ExtraLiveFields": {
			reason:  "Fields only live has, such as server defaults, never count.",
			desired: map[string]any{"spec": map[string]any{"replicas": 1}},
			live:    map[string]any{"spec": map[string]any{"replicas": 1.0, "paused": false}, "status": map[string]any{}},
		},
		"ChangedValue": {
			reason:  "A value someone changed is missing.",
			desired: map[string]any{"spec": map[string]any{"image": "a"}},
			live:    map[string]any{"spec": map[string]any{"image": "b"}},
			want:    []string{".spec.image: want a, got b"},
		},
		"MissingField": {
			reason:  "A field removed from live is missing.",
			desired: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}},
			live:    map[string]any{"metadata": map[string]any{}},
			want:    []string{".metadata.labels: want an object, got <nil>"},
		},
		"NamedListByName": {
			reason:  "Named list elements match by name, wherever another manager put its own.",
			desired: map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}},
			live:    map[string]any{"env": []any{map[string]any{"name": "INJECTED", "value": "x"}, map[string]any{"name": "A", "value": "1"}}},
		},
		"NamedElementGone": {
			reason:  "A named element removed from live is missing.",
			desired: map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}},
			live:    map[string]any{"env": []any{}},
			want:    []string{".env: missing name=A"},
		},
		"PlainListByPosition": {
			reason:  "Lists without names compare by position.",
			desired: map[string]any{"args": []any{"--a", "--b"}},
			live:    map[string]any{"args": []any{"--a", "--c"}},
			want:    []string{".args[1]: want --b, got --c"},
		},
		"TypedAgainstMap": {
			reason: "A typed struct compares with its JSON form.",
			desired: struct {
				Port int32 `json:"port"`
			}{Port: 8080},
			live: map[string]any{"port": 8080, "protocol": "TCP"},
		},
		"TypedObjects": {
			reason:  "Typed objects compare in their JSON form, numbers by value, whatever their Go types.",
			desired: &corev1.ContainerPort{Name: "http1", ContainerPort: 8080},
			live:    &unstructured.Unstructured{Object: map[string]any{"name": "http1", "containerPort": 8080.0, "protocol": "TCP"}},
		},
		"TypedObjectChanged": {
			reason:  "A typed object's value someone changed is missing.",
			desired: &corev1.ContainerPort{Name: "http1", ContainerPort: 8080},
			live:    &corev1.ContainerPort{Name: "http1", ContainerPort: 9090},
			want:    []string{".containerPort: want 8080, got 9090"},
		},
		"NumberAgainstString": {
			reason:  "A number and a string are not the same value.",
			desired: map[string]any{"port": 8080},
			live:    map[string]any{"port": "8080"},
			want:    []string{".port: want 8080, got 8080"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Missing(tc.desired, tc.live)); diff != "" {
				t.Errorf("\n%s\nMissing(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// BenchmarkMissing compares a Pod's content with a typed live copy, as
// observe compares what it applies of each object it renders with the
// cache's copy.
func BenchmarkMissing(b *testing.B) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "function", Image: "ghcr.io/acme/fn:v1",
		Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
		Ports: []corev1.ContainerPort{{Name: "http1", ContainerPort: 8080}},
	}}}}
	pod.Labels = map[string]string{"app.kubernetes.io/name": "fn", "app.kubernetes.io/managed-by": "provider-knative-lambda"}
	desired, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		b.Fatal(err)
	}
	live := pod.DeepCopy()
	live.Status.Phase = corev1.PodRunning
	b.ReportAllocs()
	for b.Loop() {
		if m := Missing(desired, live); len(m) > 0 {
			b.Fatal(m)
		}
	}
}
