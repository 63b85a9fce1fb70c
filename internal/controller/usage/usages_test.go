package usage

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// pcu is a usage in namespace team, named uid, of the config kind/name; a
// resource controls it when controlled.
func pcu(uid, kind, name string, controlled bool) *v1alpha1.ProviderConfigUsage {
	u := &v1alpha1.ProviderConfigUsage{}
	u.SetNamespace("team")
	u.SetName(uid)
	u.ProviderConfigReference = xpv2.ProviderConfigReference{Kind: kind, Name: name}
	if controlled {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "lambda.m.crossplane.io/v1alpha1", Kind: "LambdaFunction", Name: "fn-" + uid, UID: types.UID(uid), Controller: new(true)}})
	}
	return u
}

var (
	team   = Config{Namespace: "team", Kind: v1alpha1.ProviderConfigKind, Name: "default"}
	other  = Config{Namespace: "team", Kind: v1alpha1.ProviderConfigKind, Name: "other"}
	shared = Config{Kind: v1alpha1.ClusterProviderConfigKind, Name: "shared"}
)

// counted is what Users says of a config.
type counted struct {
	Users int64
	Stale []types.NamespacedName
}

func TestUsagesCount(t *testing.T) {
	cases := map[string]struct {
		reason string
		// listed are the usages of the first list; then what the
		// reflector tells after it.
		listed []any
		then   func(r reflected)
		want   map[Config]counted
		// woken are the configs whose controllers are asked to count
		// after the first list.
		woken []string
	}{
		"Listed": {
			reason: "A list counts each config's usages; a ClusterProviderConfig's are counted across namespaces, a usage no resource controls is named, not counted.",
			listed: []any{
				pcu("a", v1alpha1.ProviderConfigKind, "default", true),
				pcu("b", v1alpha1.ProviderConfigKind, "default", true),
				pcu("c", v1alpha1.ClusterProviderConfigKind, "shared", true),
				pcu("d", v1alpha1.ProviderConfigKind, "default", false),
			},
			want: map[Config]counted{
				team:   {Users: 2, Stale: []types.NamespacedName{{Namespace: "team", Name: "d"}}},
				shared: {Users: 1},
				other:  {},
			},
		},
		"Watched": {
			reason: "Usages added, moved to another config and deleted change the counts, and ask the configs they leave and join to count.",
			listed: []any{pcu("a", v1alpha1.ProviderConfigKind, "default", true), pcu("b", v1alpha1.ProviderConfigKind, "default", true)},
			then: func(r reflected) {
				_ = r.Add(pcu("c", v1alpha1.ProviderConfigKind, "default", true))
				_ = r.Update(pcu("a", v1alpha1.ProviderConfigKind, "other", true))
				_ = r.Delete(pcu("b", v1alpha1.ProviderConfigKind, "default", true))
			},
			want:  map[Config]counted{team: {Users: 1}, other: {Users: 1}},
			woken: []string{"team/default", "team/default", "team/default", "team/other"},
		},
		"Unchanged": {
			reason: "An update that changes nothing the record holds, and a list of what it holds, ask for no count.",
			listed: []any{pcu("a", v1alpha1.ProviderConfigKind, "default", true)},
			then: func(r reflected) {
				_ = r.Update(pcu("a", v1alpha1.ProviderConfigKind, "default", true))
				_ = r.Replace([]any{pcu("a", v1alpha1.ProviderConfigKind, "default", true)}, "2")
			},
			want: map[Config]counted{team: {Users: 1}},
		},
		"Relisted": {
			reason: "A new list forgets the usages deleted while the watch was down, and asks their configs to count.",
			listed: []any{pcu("a", v1alpha1.ProviderConfigKind, "default", true), pcu("b", v1alpha1.ProviderConfigKind, "other", false)},
			then: func(r reflected) {
				_ = r.Replace([]any{pcu("c", v1alpha1.ClusterProviderConfigKind, "shared", true)}, "2")
			},
			want:  map[Config]counted{team: {}, other: {}, shared: {Users: 1}},
			woken: []string{"/shared", "team/default", "team/other"},
		},
		"Stripped": {
			reason: "A usage that loses its controller is no longer counted but named, and its config is asked to count.",
			listed: []any{pcu("a", v1alpha1.ProviderConfigKind, "default", true)},
			then: func(r reflected) {
				_ = r.Update(pcu("a", v1alpha1.ProviderConfigKind, "default", false))
			},
			want:  map[Config]counted{team: {Stale: []types.NamespacedName{{Namespace: "team", Name: "a"}}}},
			woken: []string{"team/default"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := New(0)
			var woken []string
			for _, kind := range []string{v1alpha1.ProviderConfigKind, v1alpha1.ClusterProviderConfigKind} {
				q := &recordingQueue{added: func(r reconcile.Request) { woken = append(woken, r.String()) }}
				if err := u.Woken(kind).Start(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			r := reflected{u}
			_ = r.Replace(tc.listed, "1")
			woken = nil
			if tc.then != nil {
				tc.then(r)
			}
			got := map[Config]counted{}
			for cfg := range tc.want {
				users, stale, err := u.Users(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got[cfg] = counted{Users: users, Stale: stale}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUsers: -want, +got:\n%s", tc.reason, diff)
			}
			slices.Sort(woken)
			if diff := cmp.Diff(tc.woken, woken); diff != "" {
				t.Errorf("%s\nconfigs asked to count: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUsersWaitForTheList(t *testing.T) {
	u := New(0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := u.Users(ctx, team); err == nil {
		t.Error("Users counted before the usages were listed; a deleted config would lose its finalizer while in use")
	}
	_ = reflected{u}.Replace(nil, "1")
	if _, _, err := u.Users(context.Background(), team); err != nil {
		t.Errorf("Users after the list: %v", err)
	}
}

// recordingQueue is a queue that tells added what is added to it.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added func(reconcile.Request)
}

func (q *recordingQueue) AddAfter(r reconcile.Request, _ time.Duration) { q.added(r) }
