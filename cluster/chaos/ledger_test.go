package chaos

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A jobLedger records every build Job ever created in a namespace, from a
// watch that outlives restarts of kube-apiserver and etcd: a Job deleted and
// created again under the same name has a new UID, and counts twice.
type jobLedger struct {
	mu sync.Mutex
	// uids of the Jobs seen, by build identity.
	uids map[string]sets.Set[string]
}

// watchJobs starts a ledger of namespace ns; it watches until ctx ends.
func watchJobs(ctx context.Context, cfg *rest.Config, ns string) (*jobLedger, error) {
	s, err := kinds.ManagerScheme()
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{Scheme: s, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	inf, err := c.GetInformer(ctx, &batchv1.Job{})
	if err != nil {
		return nil, err
	}
	l := &jobLedger{uids: map[string]sets.Set[string]{}}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return
		}
		id := j.Labels[render.LabelBuildIdentity]
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.uids[id] == nil {
			l.uids[id] = sets.New[string]()
		}
		l.uids[id].Insert(string(j.UID))
	}}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	c.WaitForCacheSync(ctx)
	return l, nil
}

// created is how many Jobs were ever created, and the identities built more
// than once.
func (l *jobLedger) created() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, twice := 0, []string{}
	for id, uids := range l.uids {
		n += uids.Len()
		if uids.Len() != 1 {
			twice = append(twice, fmt.Sprintf("%s: %d Jobs", id, uids.Len()))
		}
	}
	sort.Strings(twice)
	return n, twice
}

// ownedKinds are the kinds of object the provider makes for a function.
func ownedKinds() []client.ObjectList {
	return []client.ObjectList{&servingv1.ServiceList{}, &eventingv1.TriggerList{}, &eventingv1.BrokerList{}, &batchv1.JobList{}, &corev1.ConfigMapList{}}
}

// ourObjects lists every object in ns the provider made, by kind.
func ourObjects(ctx context.Context, c client.Reader, ns string) (map[string][]client.Object, error) {
	got := map[string][]client.Object{}
	for _, l := range ownedKinds() {
		if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{render.LabelManagedBy: render.ManagedBy}); err != nil {
			return nil, err
		}
		kind := strings.TrimSuffix(reflect.TypeOf(l).Elem().Name(), "List")
		err := apimeta.EachListItem(l, func(o runtime.Object) error {
			got[kind] = append(got[kind], o.(client.Object)) //nolint:forcetypeassert // Items of typed lists are.
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// orphans names each object whose function does not exist, and each
// created Broker no function uses.
func orphans(objs map[string][]client.Object, fns []v1alpha1.LambdaFunction) []string {
	exists, brokers := sets.New[string](), sets.New[string]()
	for _, fn := range fns {
		exists.Insert(fn.Name)
		if e := fn.Spec.ForProvider.Eventing; e != nil && e.Broker != nil && e.Broker.Create {
			brokers.Insert(render.BrokerName(e.Broker))
		}
	}
	var found []string
	for kind, l := range objs {
		for _, o := range l {
			owned := exists.Has(o.GetLabels()[render.LabelResource])
			if kind == "Broker" {
				owned = brokers.Has(o.GetName())
			}
			if !owned {
				found = append(found, kind+" "+o.GetName())
			}
		}
	}
	sort.Strings(found)
	return found
}

// count sums objects over kinds.
func count(objs map[string][]client.Object) int {
	n := 0
	for _, l := range objs {
		n += len(l)
	}
	return n
}
