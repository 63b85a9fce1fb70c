package workload

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The buckets of crossplane-runtime's histograms: from 10 ns up in tenfold
// steps for what takes a reconcile, and from a second to an hour for what
// takes a resource's life.
var (
	reconcileBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)
	lifeBuckets      = []float64{1, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600}
)

// The histograms crossplane-runtime's MRMetricRecorder serves, under its
// names, help, labels and buckets, so that what reads them for any provider
// reads them here. resourceTimes record them in its place.
var (
	firstTimeToReconcile = managedHistogram("managed_resource_first_time_to_reconcile_seconds",
		"The time it took for a managed resource to be detected by the controller", reconcileBuckets)
	firstTimeToReadiness = managedHistogram("managed_resource_first_time_to_readiness_seconds",
		"The time it took for a managed resource to become ready first time after creation", lifeBuckets)
	deletionTime = managedHistogram("managed_resource_deletion_seconds",
		"The time it took for a managed resource to be deleted", lifeBuckets)
	driftTime = managedHistogram("managed_resource_drift_seconds",
		"ALPHA: How long since the previous successful reconcile when a resource was found to be out of sync; excludes restart of the provider", reconcileBuckets)
)

// managedHistogram is one of crossplane-runtime's managed resource
// histograms: in its subsystem, by gvk.
func managedHistogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "crossplane", Name: name, Help: help, Buckets: buckets}, []string{"gvk"})
}

// timeHistograms are the four histograms resourceTimes observe.
type timeHistograms struct {
	firstReconcile, firstReady, deletion, drift *prometheus.HistogramVec
}

// served are the histograms the provider's metrics endpoint serves.
var served = timeHistograms{firstReconcile: firstTimeToReconcile, firstReady: firstTimeToReadiness, deletion: deletionTime, drift: driftTime}

// resourceTimes record, for one kind of managed resource, how long its
// resources took to be first reconciled, to be first Ready and to be
// deleted, and how long a drift had been there when an update reverted it:
// what crossplane-runtime's MRMetricRecorder records. That recorder keeps
// the time each resource was last found up to date under the resource's
// name alone, for every resource it ever saw, in a sync.Map: two functions
// of one name in two namespaces share one time, and a deleted resource's
// stays. Here a time is kept under namespace and name until its resource
// is gone, in a plain map: 78 bytes a resource against the sync.Map's 150,
// and no allocation at each poll.
type resourceTimes struct {
	gvk prometheus.Labels
	h   timeHistograms
	now func() time.Time
	// fresh are the resources this process reconciled from their first
	// reconcile on, until it finds them Ready.
	fresh *notes[struct{}]
	// upToDate is when each resource was last found up to date, in Unix
	// nanoseconds.
	upToDate *notes[int64]
}

func newResourceTimes(gvk schema.GroupVersionKind, h timeHistograms) *resourceTimes {
	return &resourceTimes{
		gvk: prometheus.Labels{"gvk": gvk.String()}, h: h, now: time.Now,
		fresh: newNotes[struct{}](), upToDate: newNotes[int64](),
	}
}

// reconciled notes a reconcile of mg. Before its first, which writes its
// Synced condition, it observes how long mg waited since its creation.
func (t *resourceTimes) reconciled(mg resource.Managed) {
	if t == nil || mg.GetCondition(xpv2.TypeSynced).Status != corev1.ConditionUnknown {
		return
	}
	t.h.firstReconcile.With(t.gvk).Observe(t.since(mg.GetCreationTimestamp().Time))
	t.fresh.add(client.ObjectKeyFromObject(mg), struct{}{})
}

// unchanged notes an Observe that found mg up to date: the first time a
// fresh resource is Ready, how long it took since its creation.
func (t *resourceTimes) unchanged(mg resource.Managed) {
	if t == nil {
		return
	}
	k := client.ObjectKeyFromObject(mg)
	if mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
		if _, first := t.fresh.take(k); first {
			t.h.firstReady.With(t.gvk).Observe(t.since(mg.GetCreationTimestamp().Time))
		}
	}
	t.upToDate.add(k, t.now().UnixNano())
}

// drifted notes an update that made mg up to date again: how long since it
// was last found up to date, when this process found it so.
func (t *resourceTimes) drifted(mg resource.Managed) {
	if t == nil {
		return
	}
	k := client.ObjectKeyFromObject(mg)
	last, ok := t.upToDate.take(k)
	if !ok {
		return
	}
	now := t.now()
	t.h.drift.With(t.gvk).Observe(now.Sub(time.Unix(0, last)).Seconds())
	t.upToDate.add(k, now.UnixNano())
}

// deleted notes that mg is gone, how long its deletion took, and forgets it.
func (t *resourceTimes) deleted(mg resource.Managed) {
	if t == nil {
		return
	}
	if ts := mg.GetDeletionTimestamp(); ts != nil {
		t.h.deletion.With(t.gvk).Observe(t.since(ts.Time))
	}
	k := client.ObjectKeyFromObject(mg)
	t.fresh.take(k)
	t.upToDate.take(k)
}

func (t *resourceTimes) since(then time.Time) float64 { return t.now().Sub(then).Seconds() }

// A timedClient tells resourceTimes what the managed reconciler does after
// its Observe: nothing, when it found the resource up to date, or an update.
type timedClient[T resource.Managed] struct {
	managed.TypedExternalClient[T]
	times *resourceTimes
}

// Observe observes the resource, and notes it unchanged when it exists, is
// up to date and is not being deleted.
func (c timedClient[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	obs, err := c.TypedExternalClient.Observe(ctx, mg)
	if err == nil && obs.ResourceExists && obs.ResourceUpToDate && !meta.WasDeleted(mg) {
		c.times.unchanged(mg)
	}
	return obs, err
}

// Update updates the resource, and notes the drift it reverted.
func (c timedClient[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	u, err := c.TypedExternalClient.Update(ctx, mg)
	if err == nil {
		c.times.drifted(mg)
	}
	return u, err
}
