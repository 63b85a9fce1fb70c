package workload

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

const errPatchFinalizers = "cannot patch the resource's finalizers"

// A createFinalizer is the managed reconciler's finalizer, except that it
// only adds the finalizer to a resource whose objects its reconcile just
// found absent, and leaves the write to the managed reconciler: when it goes
// on to create them, it first writes the resource, finalizer and all, with
// the note that a create is pending (which clients.CreateNotesDropper leaves
// out), and creates nothing should that write fail. A resource it does not
// create has nothing to finalize yet. That spares each new resource one of
// the six writes of its first reconcile, which in a rush all wait on the
// client's rate limit.
type createFinalizer struct {
	resource.Finalizer
	// absent are the resources whose Observe found none of their objects
	// in this reconcile.
	absent *notes[struct{}]
	// times, when set, note each resource whose finalizer goes as deleted.
	times *resourceTimes
}

func newCreateFinalizer(f resource.Finalizer, times *resourceTimes) *createFinalizer {
	return &createFinalizer{Finalizer: f, absent: newNotes[struct{}](), times: times}
}

// AddFinalizer adds the finalizer to a resource about to be created, and
// writes it to any other that lacks it.
func (f *createFinalizer) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if _, absent := f.absent.take(client.ObjectKeyFromObject(obj)); absent {
		meta.AddFinalizer(obj, managed.FinalizerName)
		return nil
	}
	return f.Finalizer.AddFinalizer(ctx, obj)
}

// RemoveFinalizer removes the finalizer of a resource, which the managed
// reconciler does once its objects are gone: then the resource is deleted.
func (f *createFinalizer) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	f.absent.take(client.ObjectKeyFromObject(obj))
	if err := f.Finalizer.RemoveFinalizer(ctx, obj); err != nil {
		return err
	}
	if mg, ok := obj.(resource.Managed); ok {
		f.times.deleted(mg)
	}
	return nil
}

// A patchingFinalizer adds and removes the managed reconciler's finalizer
// with a patch of the finalizers alone, where crossplane-runtime's
// APIFinalizer writes the whole object. The caches drop the notes the
// managed reconciler keeps of its creates (clients.TransformCompact), and a
// whole cached copy written back would drop those an earlier provider wrote
// on the API server too. The patch carries the resource version, so a stale
// copy meets a conflict as an update would.
type patchingFinalizer struct {
	client client.Client
}

// AddFinalizer adds the finalizer to a resource that lacks it.
func (f patchingFinalizer) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if meta.FinalizerExists(obj, managed.FinalizerName) {
		return nil
	}
	return f.patch(ctx, obj, meta.AddFinalizer)
}

// RemoveFinalizer removes the finalizer from a resource that has it.
func (f patchingFinalizer) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	if !meta.FinalizerExists(obj, managed.FinalizerName) {
		return nil
	}
	return resource.IgnoreNotFound(f.patch(ctx, obj, meta.RemoveFinalizer))
}

// patch writes what change does to obj's finalizers.
func (f patchingFinalizer) patch(ctx context.Context, obj resource.Object, change func(metav1.Object, string)) error {
	was := obj.DeepCopyObject().(client.Object) //nolint:forcetypeassert // A copy of an object is one.
	change(obj, managed.FinalizerName)
	return errors.Wrap(f.client.Patch(ctx, obj, client.MergeFromWithOptions(was, client.MergeFromWithOptimisticLock{})), errPatchFinalizers)
}

// An absentNoter tells a createFinalizer which resources its Observe found
// none of the objects of.
type absentNoter[T resource.Managed] struct {
	managed.TypedExternalClient[T]
	absent *notes[struct{}]
}

// Observe observes the resource and notes whether nothing of it exists. A
// note left by a reconcile that ended before adding the finalizer is
// replaced, so that it never stands for another reconcile's Observe.
func (a absentNoter[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	obs, err := a.TypedExternalClient.Observe(ctx, mg)
	if err == nil && !obs.ResourceExists {
		a.absent.add(client.ObjectKeyFromObject(mg), struct{}{})
	} else {
		a.absent.take(client.ObjectKeyFromObject(mg))
	}
	return obs, err
}
