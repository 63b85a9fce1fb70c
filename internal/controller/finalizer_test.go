package controller_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestCreateWritesTheFunctionTwice checks that the provider writes a new
// function twice on its way to creating its objects, the managed
// reconciler's notes that a create is pending and that it succeeded, and
// that the first carries the finalizer, which then does its work: the
// finalizer used to take a write of its own, and in a rush every write
// waits on the client's rate limit.
func TestCreateWritesTheFunctionTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newUnpolledScene(ctx, t, "finalizer-", providerOptions{})
	fn := createRecordedFunction(ctx, t, c, ns, "hello")
	if !slices.Contains(fn.GetFinalizers(), managed.FinalizerName) {
		t.Fatalf("finalizers %v, want %s", fn.GetFinalizers(), managed.FinalizerName)
	}
	if n := p.writes.to(http.MethodPut, ns, "lambdafunctions"); n != 2 {
		t.Errorf("the function was written %d times before its create was recorded, want 2", n)
	}

	if err := c.Delete(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the function and its Service are gone", func() string {
		if msg := gone(ctx, c, &v1alpha1.LambdaFunction{ObjectMeta: fn.ObjectMeta}); msg != "" {
			return msg
		}
		return gone(ctx, c, &servingv1.Service{ObjectMeta: fn.ObjectMeta})
	})
}

// TestPutBackFinalizerKeepsCreateNotes removes a function's finalizer and
// checks that the provider puts it back without writing away the managed
// reconciler's notes of the function's create, which its cache drops.
func TestPutBackFinalizerKeepsCreateNotes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "finalizer-back", keep)
	mg := createRecordedFunction(ctx, t, c, ns, "hello")
	key := client.ObjectKeyFromObject(mg)
	notes := mg.GetAnnotations()
	was := mg.DeepCopy()
	mg.SetFinalizers(nil)
	if err := c.Patch(ctx, mg, client.MergeFrom(was)); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the finalizer is back", func() string {
		if err := c.Get(ctx, key, mg); err != nil {
			return err.Error()
		}
		if !slices.Contains(mg.GetFinalizers(), managed.FinalizerName) {
			return "no finalizer"
		}
		return ""
	})
	if diff := cmp.Diff(notes, mg.GetAnnotations()); diff != "" {
		t.Errorf("annotations once the finalizer is back: -want, +got:\n%s", diff)
	}
}

// createRecordedFunction creates an image function and returns it once the
// managed reconciler has recorded that its create succeeded.
func createRecordedFunction(ctx context.Context, t *testing.T, c client.Client, ns, name string) *v1alpha1.LambdaFunction {
	t.Helper()
	fn, _ := createImageFunction(ctx, t, c, ns, name)
	mg := &v1alpha1.LambdaFunction{}
	wait.Until(ctx, t, "the create is recorded", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		if _, ok := mg.GetAnnotations()[meta.AnnotationKeyExternalCreateSucceeded]; !ok {
			return "no " + meta.AnnotationKeyExternalCreateSucceeded
		}
		return ""
	})
	return mg
}
