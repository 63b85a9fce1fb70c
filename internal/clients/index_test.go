package clients

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// fieldIndexer records what is indexed; kinds in refuse are not served.
type fieldIndexer struct {
	refuse map[string]bool
	fns    map[string]client.IndexerFunc
}

func (f *fieldIndexer) IndexField(_ context.Context, o client.Object, field string, fn client.IndexerFunc) error {
	kind := o.GetAnnotations()["kind"]
	if f.refuse[kind] {
		return errors.New("no matches for kind " + kind)
	}
	f.fns[kind+" "+field] = fn
	return nil
}

func TestIndexOwned(t *testing.T) {
	kind := func(k string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kind": k}}}
	}
	fi := &fieldIndexer{refuse: map[string]bool{"PingSource": true}, fns: map[string]client.IndexerFunc{}}
	got := IndexOwned(context.Background(), fi, map[string]client.Object{"Service": kind("Service"), "PingSource": kind("PingSource")})
	if diff := cmp.Diff(map[string]bool{"Service": true, "PingSource": false}, got); diff != "" {
		t.Errorf("IndexOwned(): a kind the cluster does not serve is listed by labels: -want, +got:\n%s", diff)
	}
	fn := fi.fns["Service "+IndexOwner]
	if fn == nil {
		t.Fatalf("IndexOwned(): no %s index on Services", IndexOwner)
	}
	labelled := func(l map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	}
	cases := map[string]struct {
		reason string
		o      client.Object
		want   []string
	}{
		"Owned": {
			reason: "An object render made is indexed under its resource's kind and name.",
			o:      labelled(map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: "LambdaFunction", render.LabelResource: "hello"}),
			want:   []string{OwnerKey("LambdaFunction", "hello")},
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
			if diff := cmp.Diff(tc.want, fn(tc.o)); diff != "" {
				t.Errorf("%s\nthe index's keys: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCacheIndexesLocalOnFirstUse checks that the provider's own cluster
// gets its index, and with it informers, only once a resource uses it.
func TestCacheIndexesLocalOnFirstUse(t *testing.T) {
	calls := 0
	c := NewCache(Target{}, newClientLog().newClient, nil, WithLocalIndex(func() map[string]bool {
		calls++
		return map[string]bool{"Service": true}
	}))
	if calls != 0 {
		t.Fatalf("the local target was indexed %d times before anyone asked for it", calls)
	}
	for range 2 {
		got, err := c.For(Config{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]bool{"Service": true}, got.Indexed); diff != "" {
			t.Errorf("For(local): indexed kinds: -want, +got:\n%s", diff)
		}
	}
	if calls != 1 {
		t.Errorf("the local target was indexed %d times; want once", calls)
	}
}
