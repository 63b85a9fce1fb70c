package workload

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtGet         = "cannot get %s"
	errFmtGetRevision = "cannot get Revision %s"
	errFmtListPods    = "cannot list the pods of Revision %s"
	errFmtList        = "cannot list %ss"
	errFmtNotOurs     = "the Broker %s exists and was not created by this provider: set eventing.broker.create to false to use it"
	errFmtConfigTaken = "the RabbitmqBrokerConfig %s exists and was not created by this provider: name it in rabbitmq.brokerConfig instead of rabbitmq.cluster, or give the Broker another name"
	errFmtOthers      = "%s %s exists and belongs to %s %s: rename this %s or remove that object"
	errFmtForeign     = "%s %s exists and was not created by this provider: rename this %s or remove that object"
)

// fieldManagerPrefix starts the field manager of every resource.
const fieldManagerPrefix = "provider-knative-lambda/"

// ownedKinds are the kinds of object a resource owns alone, found by its
// labels. Jobs, ConfigMaps and NetworkPolicies are its builds. Brokers and
// their RabbitmqBrokerConfigs are shared, so they are found by name, and
// only a resource that uses one reads its kind: a cluster without
// eventing-rabbitmq has no RabbitmqBrokerConfigs to list. A kind that
// reports has a controller that writes an object's status as soon as it
// exists. Of a named kind a resource owns the objects render names after
// it: its Service, and an agent's relay.
var ownedKinds = []ownedKind{
	{kind: "Service", object: func() client.Object { return &servingv1.Service{} }, reports: true, named: true},
	{kind: "Trigger", object: func() client.Object { return &eventingv1.Trigger{} }, list: func() client.ObjectList { return &eventingv1.TriggerList{} }, reports: true},
	{kind: "PingSource", object: func() client.Object { return &sourcesv1.PingSource{} }, list: func() client.ObjectList { return &sourcesv1.PingSourceList{} }, reports: true},
	{kind: "Job", object: func() client.Object { return &batchv1.Job{} }, list: func() client.ObjectList { return &batchv1.JobList{} }, build: true, reports: true},
	{kind: "ConfigMap", object: func() client.Object { return &corev1.ConfigMap{} }, list: func() client.ObjectList { return &corev1.ConfigMapList{} }, build: true},
	{kind: "NetworkPolicy", object: func() client.Object { return &networkingv1.NetworkPolicy{} }, list: func() client.ObjectList { return &networkingv1.NetworkPolicyList{} }, build: true},
}

// An ownedKind is a kind of object a resource owns alone. A named kind
// has no list: its one object is read by name.
type ownedKind struct {
	kind    string
	object  func() client.Object
	list    func() client.ObjectList
	build   bool
	reports bool
	named   bool
}

// followOwned is what FollowOwned follows of ownedKinds, waking resources
// with wake.
func followOwned(wake clients.WakeFn) clients.Owned {
	o := clients.Owned{Kinds: make(map[string]client.Object, len(ownedKinds)+1), Unindexed: map[string]bool{}, Wake: wake}
	for _, k := range ownedKinds {
		o.Kinds[k.kind] = k.object()
		if k.named {
			o.Unindexed[k.kind] = true
		}
	}
	// A build's pods are its Job's, but the kubelet's report of Kaniko's
	// exit, with the digest, comes a second or two before the Job
	// controller's.
	o.Kinds[kindPod], o.Unindexed[kindPod] = &corev1.Pod{}, true
	o.Changed = map[string]clients.ChangedFn{kindPod: containerEnded}
	return o
}

// kindPod is a build Job's pods' kind.
const kindPod = "Pod"

// containerEnded is true of a pod update in which one more of its
// containers ended.
func containerEnded(was, is client.Object) bool {
	o, okWas := was.(*corev1.Pod)
	n, okIs := is.(*corev1.Pod)
	return okWas && okIs && ended(n) > ended(o)
}

// ended counts a pod's containers that ended.
func ended(p *corev1.Pod) int {
	n := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			n++
		}
	}
	return n
}

// A deployer keeps one resource's objects in a target cluster as render
// wants them.
type deployer struct {
	kube client.Client
	// uncached reads what the informers of kube do not hold (objects that
	// are not the provider's) and what must not lag behind deletions.
	uncached              client.Reader
	kind, namespace, name string
	// followed are the kinds whose informers wake resources, and of those
	// not named, that kube finds by owner (clients.IndexOwner); the others
	// by labels alone.
	followed map[string]bool
	// compared, when set, spare comparing objects that have not changed
	// since they were found up to date.
	compared *compared
}

// wokenBy is true when objs hold an object that will wake the resource: of
// a kind that reports, whose informer wakes resources (see
// clients.FollowOwned).
func (d deployer) wokenBy(objs []kube.Object) bool {
	for _, o := range objs {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		for _, k := range ownedKinds {
			if k.kind == kind && k.reports && d.followed[kind] {
				return true
			}
		}
	}
	return false
}

// fieldManager is the resource's own: each resource owns exactly the fields
// it applies.
func (d deployer) fieldManager() string {
	return fieldManagerPrefix + d.kind + "/" + d.namespace + "/" + d.name
}

// An owned object is one of the resource's objects in the target cluster.
type owned struct {
	obj   client.Object
	build bool
}

// A liveState is what observe found.
type liveState struct {
	// exists is true when any object of the resource exists.
	exists bool
	// upToDate is true when every desired object holds what render wants
	// and nothing but builds is left over.
	upToDate bool
	// differences say what is not up to date, one line each.
	differences []string
	// objects are the resource's objects, by "Kind/name".
	objects map[string]owned
	// live are the live copies of the desired objects, by "Kind/name",
	// among them a shared Broker (and its RabbitmqBrokerConfig) the
	// resource did not create.
	live map[string]client.Object
	// conflicts say which desired objects exist but are not the
	// resource's own, one line each. Nothing is applied while there are any.
	conflicts []string
	// failedRevision is the latest Revision of the resource's Service when
	// Knative reports it failed; it says why in the kubelet's words.
	failedRevision *servingv1.Revision
	// crashLoop says why the latest Revision's pod cannot start while it
	// does not serve (observe.CrashLoop).
	crashLoop string
	// retiring names the Brokers the resource created or listened on
	// before, has stopped creating or listening on and has yet to leave.
	retiring []string
	// listening is the Broker the resource still listens on: of those
	// retiring, it is only taken off its creators.
	listening string
}

// observe reads the resource's objects, found by its labels, and compares the
// desired ones with them on the fields render sets.
func (d deployer) observe(ctx context.Context, desired []kube.Object) (liveState, error) {
	st := liveState{upToDate: true, objects: map[string]owned{}, live: map[string]client.Object{}}
	ours := labels.SelectorFromValidatedSet(labels.Set{render.LabelKind: d.kind, render.LabelResource: d.name, render.LabelManagedBy: render.ManagedBy})
	for _, k := range ownedKinds {
		objs, err := d.owned(ctx, k, ours)
		if err != nil {
			return st, err
		}
		for _, o := range objs {
			st.objects[k.kind+"/"+o.GetName()] = owned{obj: o, build: k.build}
		}
	}
	st.exists = len(st.objects) > 0
	if err := d.revision(ctx, &st); err != nil {
		return st, err
	}
	for _, o := range desired {
		live, err := d.live(ctx, o, st)
		if err != nil {
			return st, err
		}
		if live == nil {
			conflict, err := d.foreign(ctx, o)
			if err != nil {
				return st, err
			}
			if conflict != "" {
				st.conflicts = append(st.conflicts, conflict)
			}
			st.differences = append(st.differences, render.Key(o)+": missing")
			continue
		}
		st.live[render.Key(o)] = live
		if msg := notOurs(o, live); msg != "" {
			st.conflicts = append(st.conflicts, msg)
		}
	}
	st.differences = append(st.differences, d.compare(desired, st.live)...)
	want := map[string]bool{}
	for _, o := range desired {
		want[render.Key(o)] = true
	}
	for k, o := range st.objects {
		if !want[k] && !o.build {
			st.differences = append(st.differences, k+": left over")
		}
	}
	slices.Sort(st.differences)
	st.upToDate = len(st.differences) == 0
	return st, nil
}

// owned reads the resource's objects of a kind, whose labels ours
// matches: for a named kind those named after the resource, and for
// another those ours finds.
func (d deployer) owned(ctx context.Context, k ownedKind, ours labels.Selector) ([]client.Object, error) {
	if k.named {
		var objs []client.Object
		for _, name := range render.ServiceNames(d.kind, d.name) {
			o := k.object()
			err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.namespace, Name: name}, o)
			switch {
			case kerrors.IsNotFound(err):
			case err != nil:
				return nil, errors.Wrapf(err, errFmtGet, k.kind+"/"+name)
			case ours.Matches(labels.Set(o.GetLabels())):
				// Not another's, which foreign tells of.
				objs = append(objs, o)
			}
		}
		return objs, nil
	}
	l := k.list()
	opts := []client.ListOption{client.InNamespace(d.namespace), client.MatchingLabelsSelector{Selector: ours}}
	if d.followed[k.kind] {
		opts = append(opts, client.MatchingFields{clients.IndexOwner: clients.OwnerKey(d.kind, d.name)})
	}
	if err := d.kube.List(ctx, l, opts...); err != nil {
		return nil, errors.Wrapf(err, errFmtList, k.kind)
	}
	items, err := apimeta.ExtractList(l)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtList, k.kind)
	}
	objs := make([]client.Object, len(items))
	for i, item := range items {
		objs[i] = item.(client.Object) //nolint:forcetypeassert // Items of these lists are objects.
	}
	return objs, nil
}

// revision reads the latest Revision of the resource's Service when Knative
// reports that it failed, and one of its pods while it does not serve
// (observe.Unready). Both are read uncached, and only then: a provider that
// watched every Revision and its pods would hold all of a cluster's history.
func (d deployer) revision(ctx context.Context, st *liveState) error {
	l, ok := st.objects["Service/"+d.name]
	if !ok {
		return nil
	}
	svc := l.obj.(*servingv1.Service) //nolint:forcetypeassert // Listed as a Service.
	name := observe.Unready(svc)
	if name == "" {
		return nil
	}
	if svc.Status.GetCondition(servingv1.ServiceConditionConfigurationsReady).IsFalse() {
		rev := &servingv1.Revision{}
		err := d.uncached.Get(ctx, types.NamespacedName{Namespace: d.namespace, Name: name}, rev)
		switch {
		case kerrors.IsNotFound(err) || kerrors.IsForbidden(err):
			// The Service's own message still says why.
		case err != nil:
			return errors.Wrapf(err, errFmtGetRevision, name)
		default:
			st.failedRevision = rev
		}
	}
	return d.crashLoop(ctx, st, name)
}

// crashLoop reads one pod of a Revision that does not serve, and says
// whether the container that runs the workload's code keeps exiting.
func (d deployer) crashLoop(ctx context.Context, st *liveState, revision string) error {
	pods := &corev1.PodList{}
	err := d.uncached.List(ctx, pods, client.InNamespace(d.namespace), client.MatchingLabels{observe.LabelRevision: revision}, client.Limit(1))
	switch {
	case kerrors.IsForbidden(err):
		// Knative's own report comes at its progress deadline.
		return nil
	case err != nil:
		return errors.Wrapf(err, errFmtListPods, revision)
	}
	if len(pods.Items) > 0 {
		st.crashLoop = observe.CrashLoop(&pods.Items[0])
	}
	return nil
}

// live finds the live copy of a desired object: one of the resource's own,
// or the shared object of the namespace it names.
func (d deployer) live(ctx context.Context, o client.Object, st liveState) (client.Object, error) {
	if l, ok := st.objects[render.Key(o)]; ok {
		return l.obj, nil
	}
	if !shared(o) {
		return nil, nil
	}
	l := observe.Blank(o)
	if err := d.kube.Get(ctx, client.ObjectKeyFromObject(o), l); err != nil {
		return nil, errors.Wrapf(client.IgnoreNotFound(err), errFmtGet, render.Key(o))
	}
	return l, nil
}

// shared is true of a Broker and its RabbitmqBrokerConfig: every resource
// that uses the Broker renders them alike, so none owns them alone.
func shared(o client.Object) bool {
	switch o.GetObjectKind().GroupVersionKind().Kind {
	case "Broker", render.RabbitMQBrokerConfigKind:
		return true
	}
	return false
}

// notOurs says why a shared object's live copy may not be applied onto: the
// provider did not create it.
func notOurs(o, live client.Object) string {
	if !shared(o) || live.GetLabels()[render.LabelManagedBy] == render.ManagedBy {
		return ""
	}
	if _, isBroker := o.(*eventingv1.Broker); isBroker {
		return fmt.Sprintf(errFmtNotOurs, o.GetName())
	}
	return fmt.Sprintf(errFmtConfigTaken, o.GetName())
}

// fresh reads the live copy of a desired object from the API server, not
// the informers; nil when it does not exist. The copy keeps the desired
// object's kind, which a typed read drops, so errors about it can name it.
func (d deployer) fresh(ctx context.Context, o client.Object) (client.Object, error) {
	live := observe.Blank(o)
	err := d.uncached.Get(ctx, client.ObjectKeyFromObject(o), live)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, errFmtGet, render.Key(o))
	}
	live.GetObjectKind().SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	return live, nil
}

// foreign says which resource, if any, holds a desired object's name that
// is not among this resource's objects. It reads the API server, not the
// informers, which hold only the provider's Jobs, ConfigMaps and
// NetworkPolicies; it is called only for objects about to be created.
func (d deployer) foreign(ctx context.Context, o client.Object) (string, error) {
	if shared(o) {
		return "", nil
	}
	live, err := d.fresh(ctx, o)
	if err != nil || live == nil {
		return "", err
	}
	l, kind := live.GetLabels(), o.GetObjectKind().GroupVersionKind().Kind
	if l[render.LabelManagedBy] == render.ManagedBy && l[render.LabelKind] != "" {
		return fmt.Sprintf(errFmtOthers, kind, o.GetName(), l[render.LabelKind], l[render.LabelResource], d.kind), nil
	}
	return fmt.Sprintf(errFmtForeign, kind, o.GetName(), d.kind), nil
}

// deleting is the observation of a resource on its way out: whether any of
// its objects is left, or anything to do about a Broker it created or
// listened on, and nothing else. What holds a live resource (a missing Secret, a taken
// name) must not keep it from going: the managed reconciler calls Delete
// until Observe says that nothing exists. The shared objects count because
// the reconciler never calls Delete again once nothing exists: a Delete cut
// short after the resource's own objects went (a provider killed, a refused
// request) would otherwise leave its Broker behind for good.
func (d deployer) deleting(ctx context.Context, brokers []string) (managed.ExternalObservation, error) {
	st, err := d.observe(ctx, nil)
	if err != nil || st.exists {
		return managed.ExternalObservation{ResourceExists: st.exists}, err
	}
	left, _, err := d.brokersLeft(ctx, brokers, "")
	return managed.ExternalObservation{ResourceExists: len(left) > 0}, err
}
