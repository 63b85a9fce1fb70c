package workload

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// writtenFinalizer records which resources it wrote the finalizer of.
type writtenFinalizer struct{ added, removed []string }

func (w *writtenFinalizer) AddFinalizer(_ context.Context, obj resource.Object) error {
	w.added = append(w.added, obj.GetName())
	return nil
}

func (w *writtenFinalizer) RemoveFinalizer(_ context.Context, obj resource.Object) error {
	w.removed = append(w.removed, obj.GetName())
	return nil
}

// observation is an external client whose Observe says what it is given.
type observation struct {
	managed.TypedExternalClient[*v1alpha1.LambdaFunction]
	exists bool
	err    error
}

func (o observation) Observe(context.Context, *v1alpha1.LambdaFunction) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: o.exists}, o.err
}

func TestCreateFinalizer(t *testing.T) {
	type want struct {
		finalizers []string
		written    []string
	}
	cases := map[string]struct {
		reason string
		// observations are what the resource's reconciles observed, in
		// order, before the last adds the finalizer.
		observations []observation
		want         want
	}{
		"Absent": {
			reason:       "A resource found absent gets the finalizer for the managed reconciler's write before its create, and none of its own.",
			observations: []observation{{}},
			want:         want{finalizers: []string{managed.FinalizerName}},
		},
		"Exists": {
			reason:       "A resource whose objects exist gets the finalizer written.",
			observations: []observation{{exists: true}},
			want:         want{written: []string{"hello"}},
		},
		"AbsentThenExists": {
			reason:       "A note left by a reconcile that stopped before adding the finalizer does not stand for the next one's Observe.",
			observations: []observation{{}, {exists: true}},
			want:         want{written: []string{"hello"}},
		},
		"ObserveFailed": {
			reason:       "A failed Observe clears the note too.",
			observations: []observation{{}, {err: errors.New("boom")}},
			want:         want{written: []string{"hello"}},
		},
		"NotObserved": {
			reason: "A resource never observed gets the finalizer written.",
			want:   want{written: []string{"hello"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &writtenFinalizer{}
			f := newCreateFinalizer(w, nil)
			mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}
			for _, o := range tc.observations {
				_, _ = absentNoter[*v1alpha1.LambdaFunction]{TypedExternalClient: o, absent: f.absent}.Observe(context.Background(), mg)
			}
			if err := f.AddFinalizer(context.Background(), mg); err != nil {
				t.Fatal(err)
			}
			got := want{finalizers: mg.GetFinalizers(), written: w.added}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nAddFinalizer(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCreateFinalizerRemoves(t *testing.T) {
	w := &writtenFinalizer{}
	f := newCreateFinalizer(w, nil)
	mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}
	f.absent.add(client.ObjectKeyFromObject(mg), struct{}{})
	if err := f.RemoveFinalizer(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hello"}, w.removed); diff != "" {
		t.Errorf("RemoveFinalizer(...): a resource whose objects are gone has its finalizer removed by the API: -want, +got:\n%s", diff)
	}
	if _, noted := f.absent.take(client.ObjectKeyFromObject(mg)); noted {
		t.Errorf("RemoveFinalizer(...): the resource is still noted once it is finalized")
	}
}
