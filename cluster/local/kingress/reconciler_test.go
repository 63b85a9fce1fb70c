package kingress

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"knative.dev/networking/pkg/apis/networking/v1alpha1"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

// controlPlane is a real API server with Knative's networking CRDs, whose
// Ingress status the reconciler writes.
var controlPlane local.Shared

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	root, err := local.ModuleRoot(ctx, ".")
	if err == nil {
		controlPlane.Options.CRDs, err = local.SourceCRDs(ctx, root, local.CRDSource{Module: "knative.dev/networking", Dir: "config"})
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(controlPlane.Run(m))
}

// A reported is what an Ingress's status says after a reconcile.
type reported struct {
	Observed          int64
	Ready, Configured corev1.ConditionStatus
	Public, Private   string
}

func report(ing *v1alpha1.Ingress) reported {
	r := reported{Observed: ing.Status.ObservedGeneration}
	if c := ing.Status.GetCondition(v1alpha1.IngressConditionReady); c != nil {
		r.Ready = c.Status
	}
	if c := ing.Status.GetCondition(v1alpha1.IngressConditionNetworkConfigured); c != nil {
		r.Configured = c.Status
	}
	if lb := ing.Status.PublicLoadBalancer; lb != nil && len(lb.Ingress) == 1 {
		r.Public = lb.Ingress[0].DomainInternal
	}
	if lb := ing.Status.PrivateLoadBalancer; lb != nil && len(lb.Ingress) == 1 {
		r.Private = lb.Ingress[0].DomainInternal
	}
	return r
}

func TestReconcileMarksOwnClass(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(controlPlane.Config(t), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	ours, theirs := route(Class), route("kourier.ingress.networking.knative.dev")
	theirs.Name = "theirs"
	for _, ing := range []*v1alpha1.Ingress{ours, theirs} {
		if err := kube.Create(ctx, ing); err != nil {
			t.Fatal(err)
		}
	}

	p := NewProxy(false, nil)
	r := &Reconciler{Client: kube, Proxies: []*Proxy{p}, Public: "kingress.knative-serving.svc.cluster.local", Private: "kingress-internal.knative-serving.svc.cluster.local"}
	reconcileAll := func() {
		for _, ing := range []*v1alpha1.Ingress{ours, theirs} {
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	reconcileAll()
	got := map[string]reported{}
	versions := map[string]string{}
	for _, ing := range []*v1alpha1.Ingress{ours, theirs} {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(ing), ing); err != nil {
			t.Fatal(err)
		}
		got[ing.Name], versions[ing.Name] = report(ing), ing.ResourceVersion
	}
	want := map[string]reported{
		"hello":  {Observed: ours.Generation, Ready: "True", Configured: "True", Public: r.Public, Private: r.Private},
		"theirs": {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("An Ingress of this class is reported ready on both load balancers at the generation served; another class's is left alone: -want, +got:\n%s", diff)
	}
	if _, ok := p.table.Load().public["hello.team.example.com"]; !ok {
		t.Error("the proxy does not serve the ready Ingress's host")
	}

	reconcileAll()
	for _, ing := range []*v1alpha1.Ingress{ours, theirs} {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(ing), ing); err != nil {
			t.Fatal(err)
		}
		if ing.ResourceVersion != versions[ing.Name] {
			t.Errorf("a second reconcile wrote %s again, though nothing changed", ing.Name)
		}
	}
}
