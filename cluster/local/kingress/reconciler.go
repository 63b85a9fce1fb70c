package kingress

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"knative.dev/networking/pkg/apis/networking/v1alpha1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errList   = "cannot list Ingresses"
	errStatus = "cannot update the Ingress's status"
)

// A Reconciler rebuilds the proxies' table from every Ingress whenever one
// changes, then marks the changed one ready: its routes are served by the
// time its status says so.
type Reconciler struct {
	Client  client.Client
	Proxies []*Proxy
	// Public and Private are the in-cluster names of the load balancers
	// the status publishes: Knative points a Route's cluster-local name
	// at Private.
	Public, Private string
}

// SetupWithManager watches Ingresses.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("kingress").For(&v1alpha1.Ingress{}).Complete(r)
}

// Reconcile serves the routes of every Ingress of Class and reports the
// one requested ready.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	l := &v1alpha1.IngressList{}
	if err := r.Client.List(ctx, l); err != nil {
		return reconcile.Result{}, errors.Wrap(err, errList)
	}
	ings := make([]*v1alpha1.Ingress, 0, len(l.Items))
	for i := range l.Items {
		if l.Items[i].DeletionTimestamp.IsZero() {
			ings = append(ings, &l.Items[i])
		}
	}
	t := NewTable(ings)
	for _, p := range r.Proxies {
		p.Set(t)
	}

	// The Ingress is read from the list the table was built from, so the
	// generation its status observes is the one whose routes are served.
	var ing *v1alpha1.Ingress
	for _, i := range ings {
		if i.Namespace == req.Namespace && i.Name == req.Name {
			ing = i
		}
	}
	if ing == nil || !OfClass(ing) {
		return reconcile.Result{}, nil
	}
	want := ing.DeepCopy()
	want.Status.InitializeConditions()
	want.Status.MarkNetworkConfigured()
	want.Status.MarkLoadBalancerReady(
		[]v1alpha1.LoadBalancerIngressStatus{{DomainInternal: r.Public}},
		[]v1alpha1.LoadBalancerIngressStatus{{DomainInternal: r.Private}},
	)
	want.Status.ObservedGeneration = ing.Generation
	// Semantic equality ignores the conditions' transition times, which
	// marking a condition again renews.
	if equality.Semantic.DeepEqual(want.Status, ing.Status) {
		return reconcile.Result{}, nil
	}
	// A conflict is an error too: the controller retries with the newer
	// Ingress, which its watch brings.
	return reconcile.Result{}, errors.Wrap(r.Client.Status().Update(ctx, want), errStatus)
}
