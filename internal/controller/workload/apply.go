package workload

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
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
	return d.deleteShared(ctx, d.brokersNamed(st.retiring, "")...)
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

// remove deletes every object of the resource and then the shared objects
// it created (each Broker, then the Broker's RabbitmqBrokerConfig), once no
// Trigger of another resource uses the Broker. A shared object the provider
// did not create stays.
func (d deployer) remove(ctx context.Context, brokers [][]kube.Object) error {
	st, err := d.observe(ctx, nil)
	if err != nil {
		return err
	}
	for k, o := range st.objects {
		if err := d.kube.Delete(ctx, o.obj, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errFmtDelete, k)
		}
	}
	return d.deleteShared(ctx, brokers...)
}

// deleteShared deletes what sharedLeft returns of the Brokers.
func (d deployer) deleteShared(ctx context.Context, brokers ...[]kube.Object) error {
	left, err := d.sharedLeft(ctx, brokers...)
	if err != nil {
		return err
	}
	for _, o := range left {
		if err := d.kube.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errFmtDelete, render.Key(o))
		}
	}
	return nil
}

// sharedLeft returns the live copies of the shared objects the resource
// created that it must still delete, of each Broker given as CreatedBroker
// returns it, the Broker first (it refers to its RabbitmqBrokerConfig): none
// of a Broker a Trigger of another resource uses, and none the provider did
// not create or already deletes. Each is read from the API server: one
// another user applied a moment ago may not be in the informers yet, and the
// last user skipping it would leave it behind for good.
func (d deployer) sharedLeft(ctx context.Context, brokers ...[]kube.Object) ([]kube.Object, error) {
	var left []kube.Object
	for _, objs := range brokers {
		if len(objs) == 0 {
			continue
		}
		used, err := d.brokerInUse(ctx, objs[len(objs)-1].GetName())
		if err != nil {
			return nil, err
		}
		if used {
			continue
		}
		for _, o := range slices.Backward(objs) {
			live, err := d.fresh(ctx, o)
			if apimeta.IsNoMatchError(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if live == nil || live.GetDeletionTimestamp() != nil || notOurs(o, live) != "" {
				continue
			}
			left = append(left, live)
		}
	}
	return left, nil
}

// brokerInUse is true when a Trigger of another resource, not itself on its
// way out, uses the Broker. It reads the API server, not the informers:
// when several users go at once, each deletes its Triggers before it asks,
// so the last to ask sees none left, where a lagging cache would show each
// the others' and leave the Broker behind.
func (d deployer) brokerInUse(ctx context.Context, broker string) (bool, error) {
	l := &eventingv1.TriggerList{}
	if err := d.uncached.List(ctx, l, client.InNamespace(d.namespace)); err != nil {
		return false, errors.Wrapf(err, errFmtList, "Trigger")
	}
	for _, t := range l.Items {
		if t.Spec.Broker == broker && t.DeletionTimestamp == nil && (t.Labels[render.LabelKind] != d.kind || t.Labels[render.LabelResource] != d.name) {
			return true, nil
		}
	}
	return false, nil
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
