package workload

import (
	"context"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtApply   = "cannot apply %s"
	errFmtDelete  = "cannot delete %s"
	errFmtConvert = "cannot convert %s for apply"
	errConflict   = "refusing to apply onto objects this resource does not own"
)

// A plan is what a reconcile's Observe compared, for its Create or Update
// to act on: the desired objects and what Observe found of them. Acting on
// what Observe found, instead of looking again, spares a read of the API
// server for each object about to be created. The read that found the
// object's name free is then as old as Observe, milliseconds in the same
// reconcile, where it was a read right before the apply; either way another
// writer could take the name in between.
type plan struct {
	desired []kube.Object
	found   liveState
	// prune deletes what is no longer desired; a build starts without.
	prune bool
}

// apply server-side applies the plan's desired objects. With prune it also
// deletes the resource's objects that are no longer desired, and the
// build-context ConfigMaps, which nothing reads once a built image is
// deployed; Jobs stay until their TTL, and the NetworkPolicy of a build as
// long as its Job. A build starts without prune, so the Service keeps
// serving meanwhile. It never takes over an object that is not the
// resource's own, nor a Broker that the provider did not create.
func (d deployer) apply(ctx context.Context, p plan) error {
	st := p.found
	if len(st.conflicts) > 0 {
		return errors.Wrap(errors.New(strings.Join(st.conflicts, "; ")), errConflict)
	}
	want := map[string]bool{}
	for _, o := range p.desired {
		want[render.Key(o)] = true
		u := &unstructured.Unstructured{Object: applied(o)}
		if u.Object == nil {
			return errors.Errorf(errFmtConvert, render.Key(o))
		}
		if err := d.kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(d.fieldManager()), client.ForceOwnership); err != nil {
			return errors.Wrapf(err, errFmtApply, render.Key(o))
		}
	}
	if !p.prune {
		return nil
	}
	for k, o := range st.objects {
		if want[k] || o.build && !buildDone(o.obj, st) {
			continue
		}
		if err := d.kube.Delete(ctx, o.obj); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errFmtDelete, k)
		}
	}
	return d.leave(ctx, st.retiring, st.listening)
}

// buildDone is true of a build's object nothing needs any more: its
// ConfigMap once the build is over, its NetworkPolicy once its Job is gone.
// A Job is never done: its TTL removes it.
func buildDone(o client.Object, st liveState) bool {
	switch o.(type) {
	case *corev1.ConfigMap:
		return true
	case *networkingv1.NetworkPolicy:
		_, running := st.objects["Job/"+o.GetName()]
		return !running
	}
	return false
}

// remove deletes every object of the resource and then leaves the Brokers
// it created or listened on.
func (d deployer) remove(ctx context.Context, brokers []string) error {
	st, err := d.observe(ctx, nil)
	if err != nil {
		return err
	}
	for k, o := range st.objects {
		if err := d.kube.Delete(ctx, o.obj, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errFmtDelete, k)
		}
	}
	return d.leave(ctx, brokers, "")
}

// applied is what an apply of o sets: the fields render.Sent says a client
// sends.
func applied(o client.Object) map[string]any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil
	}
	maps.DeleteFunc(u, func(field string, _ any) bool { return !render.Sent(field) })
	return u
}
