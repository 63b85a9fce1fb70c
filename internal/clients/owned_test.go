package clients

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// informers record which indexes and handlers are added; kinds in refuse
// are not served.
type informers struct {
	refuse   map[string]bool
	indexes  map[string]toolscache.IndexFunc
	handlers map[string]toolscache.ResourceEventHandler
}

func kindOf(o client.Object) string { return o.GetAnnotations()["kind"] }

func (f *informers) GetInformer(_ context.Context, o client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	if f.refuse[kindOf(o)] {
		return nil, errors.New("no matches for kind " + kindOf(o))
	}
	return informer{
		index: func(ix toolscache.Indexers) {
			for name, fn := range ix {
				f.indexes[kindOf(o)+" "+name] = fn
			}
		},
		add: func(h toolscache.ResourceEventHandler) { f.handlers[kindOf(o)] = h },
	}, nil
}

// An informer takes indexes and event handlers; nothing else of it is used.
type informer struct {
	cache.Informer
	index func(toolscache.Indexers)
	add   func(toolscache.ResourceEventHandler)
}

func (i informer) AddIndexers(ix toolscache.Indexers) error {
	i.index(ix)
	return nil
}

func (i informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.add(h)
	return nil, nil
}

// followed are two kinds that are served, one of them named after its
// resource, and one that is not served, as FollowOwned leaves them.
func followed(t *testing.T, wake WakeFn) *informers {
	t.Helper()
	kind := func(k string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kind": k}}}
	}
	f := &informers{refuse: map[string]bool{"PingSource": true}, indexes: map[string]toolscache.IndexFunc{}, handlers: map[string]toolscache.ResourceEventHandler{}}
	got := FollowOwned(context.Background(), f, Owned{
		Kinds:     map[string]client.Object{"Service": kind("Service"), "Trigger": kind("Trigger"), "PingSource": kind("PingSource")},
		Unindexed: map[string]bool{"Service": true},
		Wake:      wake,
	})
	if diff := cmp.Diff(map[string]bool{"Service": true, "Trigger": true, "PingSource": false}, got); diff != "" {
		t.Errorf("FollowOwned(): a kind the cluster does not serve is listed by labels: -want, +got:\n%s", diff)
	}
	return f
}

func TestFollowOwnedIndexes(t *testing.T) {
	f := followed(t, nil)
	if _, ok := f.indexes["Service field:"+IndexOwner]; ok {
		t.Errorf("FollowOwned(): a %s index on Services, which are read by name", IndexOwner)
	}
	fn := f.indexes["Trigger field:"+IndexOwner]
	if fn == nil {
		t.Fatalf("FollowOwned(): no %s index on Triggers", IndexOwner)
	}
	labelled := func(l map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Labels: l}}
	}
	cases := map[string]struct {
		reason string
		o      client.Object
		want   []string
	}{
		"Owned": {
			reason: "An object render made is indexed under its namespace and its resource's kind and name, and not again for a List across namespaces, which the provider never makes.",
			o:      labelled(map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: "LambdaFunction", render.LabelResource: "hello"}),
			want:   []string{"team/" + OwnerKey("LambdaFunction", "hello")},
		},
		"NotOurs": {
			reason: "An object another manager labelled alike is not indexed.",
			o:      labelled(map[string]string{render.LabelManagedBy: "someone-else", render.LabelKind: "LambdaFunction", render.LabelResource: "hello"}),
		},
		"NoResource": {
			reason: "An object without its resource's name is not indexed.",
			o:      labelled(map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: "LambdaFunction"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := fn(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nthe index's keys: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCacheFollowsLocalOnFirstUse checks that the provider's own cluster
// gets its informers only once a resource uses it.
func TestCacheFollowsLocalOnFirstUse(t *testing.T) {
	calls := 0
	c := NewCache(Target{}, newClientLog().newClient, nil, WithLocalFollow(func() map[string]bool {
		calls++
		return map[string]bool{"Service": true}
	}))
	if calls != 0 {
		t.Fatalf("the local target was followed %d times before anyone asked for it", calls)
	}
	for range 2 {
		got, err := c.For(context.Background(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]bool{"Service": true}, got.Followed); diff != "" {
			t.Errorf("For(local): followed kinds: -want, +got:\n%s", diff)
		}
	}
	if calls != 1 {
		t.Errorf("the local target was followed %d times; want once", calls)
	}
}

func TestFollowOwnedWakes(t *testing.T) {
	var woken []string
	f := followed(t, func(kind, namespace, name string) { woken = append(woken, kind+" "+namespace+"/"+name) })
	if _, ok := f.handlers["PingSource"]; ok {
		t.Errorf("FollowOwned(): a kind the cluster does not serve got an event handler")
	}
	if f.handlers["Trigger"] == nil {
		t.Error("FollowOwned(): no event handler on Triggers")
	}
	h := f.handlers["Service"]
	if h == nil {
		t.Fatal("FollowOwned(): no event handler on Services, which are read by name")
	}
	ours := map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: "LambdaFunction", render.LabelResource: "hello"}
	svc := func(l map[string]string, generation int64, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", Labels: l, Generation: generation, ResourceVersion: rv}}
	}
	cases := map[string]wakeCase{
		"StatusChanged": {
			reason: "A new resource version of the same generation is a status change, such as Knative's Ready: the owner is woken.",
			event:  func() { h.OnUpdate(svc(ours, 1, "10"), svc(ours, 1, "11")) },
			want:   []string{"LambdaFunction team/hello"},
		},
		"SpecChanged": {
			reason: "A new generation is most often the provider's own apply, which its reconcile already follows.",
			event:  func() { h.OnUpdate(svc(ours, 1, "10"), svc(ours, 2, "11")) },
		},
		"Resync": {
			reason: "A resync repeats the same resource version: nothing changed.",
			event:  func() { h.OnUpdate(svc(ours, 1, "10"), svc(ours, 1, "10")) },
		},
		"Deleted": {
			reason: "An object someone deleted wakes its owner, which makes it again.",
			event:  func() { h.OnDelete(svc(ours, 1, "10")) },
			want:   []string{"LambdaFunction team/hello"},
		},
		"DeletedUnseen": {
			reason: "A deletion the watch missed arrives as a tombstone, and wakes the owner too.",
			event:  func() { h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "team/hello", Obj: svc(ours, 1, "10")}) },
			want:   []string{"LambdaFunction team/hello"},
		},
		"NotOurs": {
			reason: "An object render did not make wakes no one.",
			event:  func() { h.OnUpdate(svc(nil, 1, "10"), svc(nil, 1, "11")) },
		},
		"Created": {
			reason: "A create is the provider's own; its reconcile already follows it.",
			event:  func() { h.OnAdd(svc(ours, 1, "10"), false) },
		},
	}
	wakes(t, &woken, cases)
}

func TestFollowOwnedWakesWhenChanged(t *testing.T) {
	var woken []string
	f := &informers{refuse: map[string]bool{}, indexes: map[string]toolscache.IndexFunc{}, handlers: map[string]toolscache.ResourceEventHandler{}}
	// Only an update to a ConfigMap that says "ended" is worth a wake.
	ended := func(_, is client.Object) bool { return is.GetAnnotations()["ended"] == "true" }
	FollowOwned(context.Background(), f, Owned{
		Kinds:     map[string]client.Object{"Pod": &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kind": "Pod"}}}},
		Unindexed: map[string]bool{"Pod": true},
		Changed:   map[string]ChangedFn{"Pod": ended},
		Wake:      func(kind, namespace, name string) { woken = append(woken, kind+" "+namespace+"/"+name) },
	})
	if _, ok := f.indexes["Pod field:"+IndexOwner]; ok {
		t.Errorf("FollowOwned(): a %s index on an unindexed kind", IndexOwner)
	}
	h := f.handlers["Pod"]
	if h == nil {
		t.Fatal("FollowOwned(): no event handler on a kind with its own changes")
	}
	ours := map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: "LambdaFunction", render.LabelResource: "hello"}
	pod := func(ended, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello-build-x", Labels: ours, ResourceVersion: rv, Annotations: map[string]string{"ended": ended}}}
	}
	cases := map[string]wakeCase{
		"Changed": {
			reason: "An update the kind's own test finds worth it wakes the owner.",
			event:  func() { h.OnUpdate(pod("false", "10"), pod("true", "11")) },
			want:   []string{"LambdaFunction team/hello"},
		},
		"StatusChanged": {
			reason: "Any other change of status wakes no one: the kind's own test replaces it.",
			event:  func() { h.OnUpdate(pod("false", "10"), pod("false", "11")) },
		},
		"Deleted": {
			reason: "A deletion wakes no one: the owner does not make such objects again.",
			event:  func() { h.OnDelete(pod("true", "11")) },
		},
	}
	wakes(t, &woken, cases)
}

// A wakeCase is an informer's event and the resources it must wake.
type wakeCase struct {
	reason string
	event  func()
	want   []string
}

// wakes runs each case's event and checks whom it woke, as woken records.
func wakes(t *testing.T, woken *[]string, cases map[string]wakeCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			*woken = nil
			tc.event()
			if diff := cmp.Diff(tc.want, *woken); diff != "" {
				t.Errorf("%s\nwoken: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
