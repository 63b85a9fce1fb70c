package workload

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xperrors "github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

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

// patchRecorder records the patches it is given and answers with err.
type patchRecorder struct {
	client.Client
	patches []string
	err     error
}

func (p *patchRecorder) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	p.patches = append(p.patches, string(patch.Type())+" "+string(data))
	return p.err
}

func TestPatchingFinalizer(t *testing.T) {
	const (
		mergePatch = "application/merge-patch+json "
		other      = "team.example.org/other"
	)
	type want struct {
		patches []string
		err     error
	}
	cases := map[string]struct {
		reason     string
		finalizers []string
		remove     bool
		err        error
		want       want
	}{
		"Add": {
			reason: "A missing finalizer is added by a patch of the finalizers alone, at the resource's version, so no annotation the cache dropped is written away.",
			want:   want{patches: []string{mergePatch + `{"metadata":{"finalizers":["` + managed.FinalizerName + `"],"resourceVersion":"7"}}`}},
		},
		"AddBesideOthers": {
			reason:     "A merge patch replaces the whole list, so it carries the others' finalizers too.",
			finalizers: []string{other},
			want:       want{patches: []string{mergePatch + `{"metadata":{"finalizers":["` + other + `","` + managed.FinalizerName + `"],"resourceVersion":"7"}}`}},
		},
		"AddPresent": {
			reason:     "A finalizer that is there is not written.",
			finalizers: []string{managed.FinalizerName},
		},
		"AddConflict": {
			reason: "A stale copy's conflict is returned, for the managed reconciler to requeue.",
			err:    kerrors.NewConflict(schema.GroupResource{Resource: "lambdafunctions"}, "hello", errors.New("stale")),
			want: want{
				patches: []string{mergePatch + `{"metadata":{"finalizers":["` + managed.FinalizerName + `"],"resourceVersion":"7"}}`},
				err:     xperrors.Wrap(kerrors.NewConflict(schema.GroupResource{Resource: "lambdafunctions"}, "hello", errors.New("stale")), errPatchFinalizers),
			},
		},
		"Remove": {
			reason:     "The finalizer is removed by a patch of the finalizers alone.",
			finalizers: []string{other, managed.FinalizerName},
			remove:     true,
			want:       want{patches: []string{mergePatch + `{"metadata":{"finalizers":["` + other + `"],"resourceVersion":"7"}}`}},
		},
		"RemoveGone": {
			reason:     "A resource already gone has nothing left to finalize.",
			finalizers: []string{managed.FinalizerName},
			remove:     true,
			err:        kerrors.NewNotFound(schema.GroupResource{Resource: "lambdafunctions"}, "hello"),
			want:       want{patches: []string{mergePatch + `{"metadata":{"finalizers":null,"resourceVersion":"7"}}`}},
		},
		"RemoveAbsent": {
			reason: "A finalizer that is not there is not written.",
			remove: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &patchRecorder{err: tc.err}
			mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", ResourceVersion: "7", Finalizers: tc.finalizers}}
			f := patchingFinalizer{client: c}
			write := f.AddFinalizer
			if tc.remove {
				write = f.RemoveFinalizer
			}
			err := write(context.Background(), mg)
			got := want{patches: c.patches, err: err}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), test.EquateErrors()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
