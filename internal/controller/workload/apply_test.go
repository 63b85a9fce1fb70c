package workload

import (
	"context"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/diff"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A laggingCache is the provider's cached client while its informers have
// not yet seen what the API server holds: reads come from what they have
// seen, writes go to the API server.
type laggingCache struct {
	client.Client
	seen client.Reader
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	return c.seen.Get(ctx, key, o, opts...)
}

func (c laggingCache) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	return c.seen.List(ctx, l, opts...)
}

// TestRemoveDeletesBrokerTheCacheHasNotSeen checks that the last user of a
// shared Broker deletes it even when the informers have not seen it yet,
// as when another user re-applied it just before: the leftover Broker a
// chaos run once found.
func TestRemoveDeletesBrokerTheCacheHasNotSeen(t *testing.T) {
	ctx := context.Background()
	s, err := kinds.TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	b := createdBroker("events", "hello")
	apiServer := fake.NewClientBuilder().WithScheme(s).WithObjects(b).Build()
	d := deployer{
		kube:     laggingCache{Client: apiServer, seen: fake.NewClientBuilder().WithScheme(s).Build()},
		uncached: apiServer,
		kind:     v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello",
	}
	if err := d.remove(ctx, []string{"events"}); err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Get(ctx, client.ObjectKeyFromObject(b), b); !kerrors.IsNotFound(err) {
		t.Errorf("the last user's remove left Broker %s behind: Get: %v", b.GetName(), err)
	}
}

// createdBroker is a Broker of the namespace apps the provider created, as
// the functions of the names say that create it.
func createdBroker(name string, creators ...string) *eventingv1.Broker {
	b := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{
		Namespace: "apps", Name: name,
		Labels: map[string]string{render.LabelManagedBy: render.ManagedBy},
	}}
	for _, c := range creators {
		metav1.SetMetaDataAnnotation(&b.ObjectMeta, render.CreatorAnnotation(v1alpha1.LambdaFunctionKind, c), "true")
	}
	return b
}

// BenchmarkCompare is what observe does for each object it renders at
// every reconcile: take what an apply would send of it, and compare that
// with the cache's copy.
func BenchmarkCompare(b *testing.B) {
	svc := imageFunction(b).Service
	live := svc.DeepCopy()
	live.Status.URL = &apis.URL{Scheme: "http", Host: "hello.apps.example.com"}
	b.ReportAllocs()
	for b.Loop() {
		if m := diff.Missing(applied(svc), live); len(m) > 0 {
			b.Fatal(m)
		}
	}
}
