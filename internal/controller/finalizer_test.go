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

// TestCreateWritesTheFunctionOnce checks that the provider writes a new
// function once on its way to creating its objects, the managed
// reconciler's write before a create, which carries the finalizer, and
// that the finalizer then does its work. The finalizer used to take a
// write of its own, and the note that the create succeeded another; in a
// rush every write waits on the client's rate limit. Neither note of the
// create is left on the function.
func TestCreateWritesTheFunctionOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newUnpolledScene(ctx, t, "finalizer-", providerOptions{})
	fn := createRecordedFunction(ctx, t, c, ns, "hello")
	if !slices.Contains(fn.GetFinalizers(), managed.FinalizerName) {
		t.Fatalf("finalizers %v, want %s", fn.GetFinalizers(), managed.FinalizerName)
	}
	if n := p.writes.to(http.MethodPut, ns, "lambdafunctions"); n != 1 {
		t.Errorf("the function was written %d times before its create was recorded, want 1", n)
	}
	for _, k := range createNotes {
		if v, ok := fn.GetAnnotations()[k]; ok {
			t.Errorf("the function carries %s: %s", k, v)
		}
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
// reconciler's notes of the function's create, which an earlier provider
// wrote and its cache drops.
func TestPutBackFinalizerKeepsCreateNotes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "finalizer-back", keep)
	mg := createRecordedFunction(ctx, t, c, ns, "hello")
	key := client.ObjectKeyFromObject(mg)
	was := mg.DeepCopy()
	at := time.Now().Add(-time.Hour)
	meta.SetExternalCreatePending(mg, at)
	meta.SetExternalCreateSucceeded(mg, at)
	notes := mg.GetAnnotations()
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

// createNotes are the managed reconciler's notes of a resource's creates.
var createNotes = []string{meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateSucceeded, meta.AnnotationKeyExternalCreateFailed}

// createRecordedFunction creates an image function and returns it once the
// managed reconciler has recorded that its create succeeded, with the event
// it records after the create's last write.
func createRecordedFunction(ctx context.Context, t *testing.T, c client.Client, ns, name string) *v1alpha1.LambdaFunction {
	t.Helper()
	fn, _ := createImageFunction(ctx, t, c, ns, name)
	fn.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind)
	wait.Until(ctx, t, "the create is recorded", func() string {
		if !eventReasons(ctx, t, c, fn)["CreatedExternalResource"] {
			return "no CreatedExternalResource event"
		}
		return ""
	})
	mg := &v1alpha1.LambdaFunction{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
		t.Fatal(err)
	}
	return mg
}
