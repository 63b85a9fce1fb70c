package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestExamplesApply applies the examples to a control plane as make run
// does, and checks that every object they hold is then there.
func TestExamplesApply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := StartWithAllCRDs(ctx, Options{})
	if err != nil {
		t.Fatalf("StartWithAllCRDs(...): %v", err)
	}
	defer func() { _ = cp.Stop() }()

	objs, err := Examples(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatalf("Examples(...): %v", err)
	}
	if err := Apply(ctx, cp.Config, objs); err != nil {
		t.Fatalf("Apply(examples): %v", err)
	}
	kube, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s is not there after Apply: %v", o.GetKind(), client.ObjectKeyFromObject(o), err)
		}
	}
}
