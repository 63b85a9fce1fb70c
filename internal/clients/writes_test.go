package clients

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

func TestWritesSeen(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	wrote := func(version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: version}}
	}
	cases := map[string]struct {
		reason  string
		wrote   string
		after   time.Duration
		cached  string
		want    bool
		another bool
	}{
		"NeverWritten": {
			reason: "An object the provider never wrote has nothing to wait for.",
			cached: "10", want: true, another: true,
		},
		"CacheBehind": {
			reason: "A cache that holds a version older than the last write has not seen it.",
			wrote:  "12", cached: "10", want: false, another: false,
		},
		"CacheCaughtUp": {
			reason: "A cache that holds the written version has seen it, and the write is forgotten.",
			wrote:  "12", cached: "12", want: true, another: true,
		},
		"CacheAhead": {
			reason: "A cache that holds a later version, someone else's write, has seen ours.",
			wrote:  "12", cached: "15", want: true, another: true,
		},
		"NotCached": {
			reason: "An object the cache does not hold (deleted) has nothing to wait for.",
			wrote:  "12", cached: "", want: true, another: true,
		},
		"Incomparable": {
			reason: "Versions that are not etcd's cannot be compared; the reconcile goes ahead.",
			wrote:  "12", cached: "x-1", want: true, another: true,
		},
		"WaitedLongEnough": {
			reason: "A cache that lags beyond the wait is not waited for any longer.",
			wrote:  "12", after: DefaultWriteWait, cached: "10", want: true, another: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := start
			w := NewWrites(DefaultWriteWait)
			w.Follow(gvk)
			w.now = func() time.Time { return now }
			if tc.wrote != "" {
				w.wrote(gvk, wrote(tc.wrote))
			}
			now = now.Add(tc.after)
			if got := w.Seen(gvk, key, tc.cached, nil); got != tc.want {
				t.Errorf("%s\nSeen(%q): got %t, want %t", tc.reason, tc.cached, got, tc.want)
			}
			if got := w.Seen(gvk, key, tc.cached, nil); got != tc.another {
				t.Errorf("%s\nSeen(%q) again: got %t, want %t", tc.reason, tc.cached, got, tc.another)
			}
		})
	}
}

// TestWritesWake follows a reconcile put off until the cache sees the
// provider's write: it is woken once, when the cache delivers the write or
// a later version, and not before.
func TestWritesWake(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	at := func(version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: version}}
	}
	type step struct {
		// One of: the provider writes, a reconcile reads the cache at a
		// version, the cache delivers a version.
		wrote, read, cached string
		// seen is what the read returns.
		seen bool
		// woken is how many wakes there have been after the step.
		woken int
	}
	cases := map[string]struct {
		reason string
		steps  []step
	}{
		"WokenWhenDelivered": {
			reason: "A reconcile put off is woken when the cache delivers the write, not by an older version.",
			steps: []step{
				{wrote: "12"}, {read: "10"}, {cached: "11"}, {cached: "12", woken: 1}, {read: "12", seen: true, woken: 1},
			},
		},
		"WokenByLater": {
			reason: "A later version, someone else's write, holds the provider's too.",
			steps:  []step{{wrote: "12"}, {read: "10"}, {cached: "15", woken: 1}},
		},
		"DeliveredBeforeTheRead": {
			reason: "A cache that delivered the write after the reconcile read its copy, but before it was put off, has seen it: nothing waits for a wake that came.",
			steps:  []step{{wrote: "12"}, {cached: "12"}, {read: "10", seen: true}},
		},
		"AWriteMeanwhile": {
			reason: "A reconcile put off for one write waits for the provider's next one too.",
			steps: []step{
				{wrote: "12"}, {read: "10"}, {wrote: "14"}, {cached: "12"}, {cached: "14", woken: 1},
			},
		},
		"WokenOnce": {
			reason: "A wake is used once; the versions that follow wake nobody.",
			steps:  []step{{wrote: "12"}, {read: "10"}, {cached: "12", woken: 1}, {cached: "13", woken: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := NewWrites(DefaultWriteWait)
			w.Follow(gvk)
			woken := 0
			for i, st := range tc.steps {
				switch {
				case st.wrote != "":
					w.wrote(gvk, at(st.wrote))
				case st.read != "":
					if got := w.Seen(gvk, key, st.read, func() { woken++ }); got != st.seen {
						t.Errorf("%s\nstep %d: Seen(%q): got %t, want %t", tc.reason, i, st.read, got, st.seen)
					}
				default:
					w.Cached(gvk, at(st.cached))
				}
				if woken != st.woken {
					t.Errorf("%s\nstep %d: %d wakes, want %d", tc.reason, i, woken, st.woken)
				}
			}
		})
	}
}

// TestWritesHoldOnlyUndelivered checks that a write is held only until a
// cache delivers it, or for the wait at most: after a rush, Writes holds
// nothing for the resources no reconcile has looked at since.
func TestWritesHoldOnlyUndelivered(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	at := func(name, version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, ResourceVersion: version}}
	}
	start := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason string
		// early are delivered before the writes are recorded.
		early  []*corev1.ConfigMap
		cached []*corev1.ConfigMap
		// after is when a reconcile of another resource reads the cache,
		// if one does.
		after time.Duration
		want  []string
	}{
		"NoneDelivered": {
			reason: "Writes no cache has delivered are held.",
			want:   []string{"a", "b"},
		},
		"OneDelivered": {
			reason: "A write the cache delivered is forgotten; the other is held.",
			cached: []*corev1.ConfigMap{at("a", "12")},
			want:   []string{"b"},
		},
		"OlderDelivered": {
			reason: "A version older than the write does not make it forgotten.",
			cached: []*corev1.ConfigMap{at("a", "11")},
			want:   []string{"a", "b"},
		},
		"LaterDelivered": {
			reason: "A later version holds the write too.",
			cached: []*corev1.ConfigMap{at("a", "15"), at("b", "13")},
		},
		"DeliveredFirst": {
			reason: "A write the cache delivered before it was recorded is held, until a reconcile of its resource or the wait.",
			early:  []*corev1.ConfigMap{at("a", "12")},
			cached: []*corev1.ConfigMap{at("b", "13")},
			want:   []string{"a"},
		},
		"WithinTheWait": {
			reason: "A reconcile of another resource within the wait forgets nothing it does not read.",
			early:  []*corev1.ConfigMap{at("a", "12")},
			after:  DefaultWriteWait - time.Second,
			want:   []string{"a", "b"},
		},
		"AfterTheWait": {
			reason: "A reconcile of another resource after the wait forgets every write older than the wait, which nothing waits for any longer.",
			early:  []*corev1.ConfigMap{at("a", "12")},
			after:  DefaultWriteWait,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := start
			w := NewWrites(DefaultWriteWait)
			w.Follow(gvk)
			w.now = func() time.Time { return now }
			// The first read sweeps nothing older than the wait.
			w.Seen(gvk, types.NamespacedName{Namespace: "team", Name: "other"}, "1", nil)
			for _, o := range tc.early {
				w.Cached(gvk, o)
			}
			w.wrote(gvk, at("a", "12"))
			w.wrote(gvk, at("b", "13"))
			for _, o := range tc.cached {
				w.Cached(gvk, o)
			}
			if tc.after > 0 {
				now = now.Add(tc.after)
				w.Seen(gvk, types.NamespacedName{Namespace: "team", Name: "other"}, "1", nil)
			}
			var got []string
			for k := range w.last {
				got = append(got, k.Name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nwrites held: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWriteRecorder checks that each kind of write records the version the
// server returned, and only for the kind written.
func TestWriteRecorder(t *testing.T) {
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}
	base := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&corev1.Pod{}).WithObjects(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}).Build()
	w := NewWrites(DefaultWriteWait)
	c := NewWriteRecorder(base, w)
	cmKind := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	podKind := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	w.Follow(cmKind)
	w.Follow(podKind)
	key := types.NamespacedName{Namespace: "team", Name: "hello"}

	pod := &corev1.Pod{}
	if err := c.Get(ctx, key, pod); err != nil {
		t.Fatal(err)
	}
	// A kind no reconcile waits for is not kept.
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		write func() error
		kind  schema.GroupVersionKind
		obj   func() string
	}{
		{name: "Create", kind: cmKind, write: func() error { return c.Create(ctx, cm) }, obj: cm.GetResourceVersion},
		{name: "Update", kind: cmKind, write: func() error { cm.Data = map[string]string{"a": "b"}; return c.Update(ctx, cm) }, obj: cm.GetResourceVersion},
		{name: "StatusUpdate", kind: podKind, write: func() error { pod.Status.Message = "m"; return c.Status().Update(ctx, pod) }, obj: pod.GetResourceVersion},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := map[writeKey]string{}
		for k, v := range w.last {
			got[k] = v.version
		}
		want := map[writeKey]string{{st.kind, key}: st.obj()}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the versions recorded: -want, +got:\n%s", st.name, diff)
		}
		w.Seen(st.kind, key, st.obj(), nil)
	}
}
