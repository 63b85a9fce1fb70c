// Package workload reconciles LambdaFunctions and LambdaAgents: each one's
// desired objects come from the render core and are kept in the target
// cluster its provider config names.
package workload

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/gated"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/usage"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	errTrackUsage  = "cannot track provider config usage"
	errResolvePC   = "cannot use the provider config"
	errTarget      = "cannot connect to the target cluster"
	errCount       = "cannot count the resources whose polls are spread"
	errCountStates = "cannot count the resources' states"
	errInformer    = "cannot follow the resources' informer"
)

// DefaultBusyPoll is how often a resource that waits for what may not wake
// it (see unwoken) is observed. Polls spend the reconcile rate all
// resources share, and when every building or deploying resource was
// polled every 5 s, 50 of them took all of the default 10 a second, and new
// resources waited behind them; Polls now spread the busy polls too.
const DefaultBusyPoll = 10 * time.Second

// A Kind is one managed resource kind this package reconciles.
type Kind[T resource.ModernManaged] struct {
	GVK     schema.GroupVersionKind
	New     func() T
	NewList func() resource.ManagedList
	// external makes the kind's external client for one reconcile.
	external func(c connection) managed.TypedExternalClient[T]
}

// Kinds reconciled by this provider.
var (
	LambdaFunction = Kind[*v1alpha1.LambdaFunction]{
		GVK:     v1alpha1.LambdaFunctionGroupVersionKind,
		New:     func() *v1alpha1.LambdaFunction { return &v1alpha1.LambdaFunction{} },
		NewList: func() resource.ManagedList { return &lists.LambdaFunctionList{} },
		external: func(c connection) managed.TypedExternalClient[*v1alpha1.LambdaFunction] {
			return &functionClient{connection: c}
		},
	}
	LambdaAgent = Kind[*v1alpha1.LambdaAgent]{
		GVK:     v1alpha1.LambdaAgentGroupVersionKind,
		New:     func() *v1alpha1.LambdaAgent { return &v1alpha1.LambdaAgent{} },
		NewList: func() resource.ManagedList { return &lists.LambdaAgentList{} },
		external: func(c connection) managed.TypedExternalClient[*v1alpha1.LambdaAgent] {
			return &agentClient{connection: c}
		},
	}
)

// unwoken is true while a resource waits for what may not wake it: a
// Broker, shared by name, to be Ready, what its Ready condition lists as
// pending, or a Revision Knative has yet to judge. A Revision whose
// container keeps exiting changes no object the provider follows until
// Knative's progress deadline, 10 minutes by default, so only a poll reads
// its pods (observe.CrashLoop). A build Job wakes its resource when it ends.
func unwoken(ready xpv2.Condition) bool {
	return ready.Reason == v1alpha1.ReasonWaiting || ready.Reason == v1alpha1.ReasonDeploying
}

// Dependencies are what every reconcile shares.
type Dependencies struct {
	// Configs reads provider configs and the Secrets they name.
	Configs client.Reader
	// Targets hands out target cluster clients.
	Targets *clients.Cache
	// Sources resolves git and S3 sources to their identity.
	Sources source.Resolver
	// BuildDeny are networks build pods may not reach, besides what render
	// always refuses.
	BuildDeny []string
	// BusyPoll is how often a resource that waits for what wakes nothing
	// is observed; never more seldom than the poll.
	BusyPoll time.Duration
	// Writes are the manager client's writes, which a reconcile waits for
	// its cache to have seen.
	Writes *clients.Writes
	// Polls spread the polls of many resources; nil polls each at the
	// poll interval.
	Polls *Polls
	// Usages record which provider config each resource uses; the
	// provider configs' controllers fill them.
	Usages *usage.Usages
	// wakes reconciles a resource when one of its objects changes.
	wakes *wakes
}

// DefaultDependencies are the provider's: target clients cached per
// credential set, and git and S3 servers and target clusters reached only
// through the safe dialer, which also refuses the networks in deny, and for
// target clusters the cluster's own networks (TargetPolicy). Target
// clusters may be in allowTargets even where the dialer refuses them. The
// manager's client records its writes in writes; what goes wrong outside a
// reconcile is logged in log.
func DefaultDependencies(mgr ctrl.Manager, writes *clients.Writes, deny, allowTargets []netip.Prefix, log logging.Logger) Dependencies {
	w := newWakes()
	owned := followOwned(w.wake)
	return Dependencies{
		Configs: clients.NewSecretCache(mgr.GetClient(), clients.DefaultSecretFreshness),
		Targets: clients.NewCache(
			clients.Target{Client: mgr.GetClient(), Uncached: mgr.GetAPIReader()},
			clients.TargetClients(mgr, owned, log), source.SafeDialer(TargetPolicy(deny, allowTargets)),
			clients.WithLocalFollow(func() map[string]bool {
				return clients.FollowOwned(context.Background(), mgr.GetCache(), owned)
			})),
		Sources:   source.NewResolver(source.HTTPClient(source.SafeDialer(source.Policy{Deny: deny}))),
		BuildDeny: source.BuildDeny(deny),
		BusyPoll:  DefaultBusyPoll,
		Writes:    writes,
		Usages:    usage.New(usage.DefaultSettle),
		wakes:     w,
	}
}

// clusterNetworks are the networks a cluster's pods, Services and nodes are
// in unless its platform says otherwise: render's for builds.
var clusterNetworks = func() []netip.Prefix {
	p, err := source.ParseCIDRs(render.DefaultClusterCIDRs)
	if err != nil {
		panic(err)
	}
	return p
}()

// TargetPolicy is where target clusters may be: not in deny, nor in the
// cluster's own networks, from where the provider's requests would reach
// its cluster's services with a team's choice of path, unless allow holds
// them.
func TargetPolicy(deny, allow []netip.Prefix) source.Policy {
	return source.Policy{Deny: append(slices.Clip(deny), clusterNetworks...), Allow: allow}
}

// A connection is what one reconcile's external client works with.
type connection struct {
	deployer
	defaults render.Defaults
	// local reads the provider's own cluster.
	local   client.Reader
	record  event.Recorder
	sources source.Resolver
	// creates, when set, are told of a create that applied an object
	// that will wake the resource.
	creates *creates
}

// created tells the reconcile that mg's create applied objs, when one of
// them will wake it.
func (c connection) created(mg resource.Managed, objs []kube.Object) {
	if c.creates != nil && c.wokenBy(objs) {
		c.creates.created(mg)
	}
}

// A connector resolves a resource's provider config and connects to its
// target cluster through the client cache.
type connector[T resource.ModernManaged] struct {
	kind   Kind[T]
	local  client.Client
	record event.Recorder
	usage  *usage.Tracker
	deps   Dependencies
	// creates, when set, note the creates whose requeue is dropped.
	creates *creates
	// absent note the resources Observe found nothing of.
	absent *notes[struct{}]
	// times, when set, record how long resources take.
	times *resourceTimes
	// compared remember the resources found up to date.
	compared *compared
}

// Connect resolves the resource's provider config, records its usage, then
// hands out its external client. A config the resource may not use is
// refused before its usage is recorded: a usage would keep it from being
// deleted.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	c.times.reconciled(mg)
	cfg, err := clients.Resolve(ctx, c.deps.Configs, mg)
	if err != nil {
		return nil, errors.Wrap(err, errResolvePC)
	}
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, errors.Wrap(err, errTrackUsage)
	}
	cfg.Defaults.Network.Deny = c.deps.BuildDeny
	kube, err := c.deps.Targets.For(ctx, cfg)
	if err != nil {
		return nil, errors.Wrap(err, errTarget)
	}
	return timedClient[T]{times: c.times, TypedExternalClient: absentNoter[T]{absent: c.absent, TypedExternalClient: c.kind.external(connection{
		deployer: deployer{kube: kube.Client, uncached: kube.Uncached, followed: kube.Followed, compared: c.compared, kind: c.kind.GVK.Kind, namespace: mg.GetNamespace(), name: mg.GetName()},
		defaults: cfg.Defaults, local: c.local, record: c.record, sources: c.deps.Sources, creates: c.creates,
	})}}, nil
}

// Setup adds a controller that reconciles one kind of managed resource.
func Setup[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, deps Dependencies, k Kind[T]) error {
	name := managed.ControllerName(k.GVK.GroupKind().String())
	record := event.NewAPIRecorder(mgr.GetEventRecorderFor(name)) //nolint:staticcheck // crossplane-runtime's recorder takes the old events API's.
	// own is a resource's poll interval before Polls spread it over all
	// resources, next its poll interval.
	own := func(mg resource.Managed, poll time.Duration) time.Duration {
		if unwoken(mg.GetCondition(xpv2.TypeReady)) && deps.BusyPoll > 0 && deps.BusyPoll < poll {
			return deps.BusyPoll
		}
		return poll
	}
	next := func(mg resource.Managed, poll time.Duration) time.Duration { return deps.Polls.Interval(own(mg, poll)) }
	// Without wakes, the requeue after a create is what looks again soon.
	var created *creates
	if deps.wakes != nil {
		created = newCreates(o.PollInterval, own)
	}
	// resourceTimes record crossplane-runtime's managed resource metrics
	// in place of its MRMetricRecorder, which the reconciler is not given.
	var times *resourceTimes
	if o.MetricOptions != nil {
		times = newResourceTimes(k.GVK, served)
	}
	finalizer := newCreateFinalizer(patchingFinalizer{client: mgr.GetClient()}, times)
	compared := newCompared()
	if err := compared.forgetDeleted(context.Background(), mgr.GetCache(), k.New()); err != nil {
		return errors.Wrap(err, errInformer)
	}
	opts := []managed.ReconcilerOption{
		managed.WithFinalizer(finalizer),
		managed.WithTypedExternalConnector[T](&connector[T]{
			kind:     k,
			local:    mgr.GetClient(),
			record:   record,
			usage:    usage.NewTracker(deps.Usages, mgr.GetClient(), mgr.GetAPIReader()),
			deps:     deps,
			creates:  created,
			absent:   finalizer.absent,
			times:    times,
			compared: compared,
		}),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(record),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(next),
		managed.WithManagementPolicies(),
		// Every object is named after the resource, never by the target
		// cluster: no external-name annotation to write, and a create cut
		// short can safely be tried again. With this and no grace period
		// the reconciler never reads its notes of creates: the manager's
		// client writes none (clients.CreateNotesDropper) and the caches
		// keep none (clients.TransformCompact), so neither is there a
		// critical annotation to write after a create.
		managed.WithInitializers(),
		managed.WithDeterministicExternalName(true),
		managed.WithCriticalAnnotationUpdater(managed.CriticalAnnotationUpdateFn(func(context.Context, client.Object) error { return nil })),
		// The grace period guards APIs that create under a new name each
		// time; here a second create applies the same objects again, which
		// changes nothing. Without it a resource deleted within 30 s of its
		// last create (a build started) waits out the rest.
		managed.WithCreationGracePeriod(0),
	}
	if o.MetricOptions != nil {
		if err := countStates(context.Background(), mgr.GetCache(), k.New(), k.GVK, o.MetricOptions.MRStateMetrics); err != nil {
			return errors.Wrap(err, errCountStates)
		}
	}
	if deps.Polls != nil {
		if err := deps.Polls.count(context.Background(), mgr.GetCache(), k.New()); err != nil {
			return errors.Wrap(err, errCount)
		}
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(k.GVK), opts...)
	spare := newPollSpare(o, deps)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		// The note that a create succeeded, which this predicate passes,
		// is neither written nor cached (clients.CreateNotesDropper,
		// clients.TransformCompact), so it never wakes a resource: the
		// objects its create applied do (see createdReconciler).
		WithEventFilter(spare.filter(resource.DesiredStateChanged())).
		For(k.New())
	if deps.wakes != nil {
		b = b.WatchesRawSource(deps.wakes.source(k.GVK.Kind, spare.changed))
	}
	var inner reconcile.Reconciler = r
	if created != nil {
		inner = &createdReconciler{inner: r, creates: created, spread: deps.Polls.Interval, spare: spare}
	}
	rr := spare.polls(ratelimiter.NewReconciler(name, spare.ran(inner), o.GlobalRateLimiter))
	if deps.Writes != nil {
		// Before the rate limiter: a reconcile put off spends no token.
		deps.Writes.Follow(k.GVK)
		fresh := &freshReconciler[T]{kind: k, cache: mgr.GetClient(), writes: deps.Writes, inner: rr}
		if deps.wakes != nil {
			inf, err := mgr.GetCache().GetInformer(context.Background(), k.New(), cache.BlockUntilSynced(false))
			if err != nil {
				return errors.Wrap(err, errInformer)
			}
			if _, err := inf.AddEventHandler(deps.Writes.Handler(k.GVK)); err != nil {
				return errors.Wrap(err, errInformer)
			}
			fresh.wake = func(r reconcile.Request) { deps.wakes.wake(k.GVK.Kind, r.Namespace, r.Name) }
		}
		rr = fresh
	}
	return b.Complete(rr)
}

// newPollSpare lets polls take only the spare reconcile rate, when changes
// and wakes are what reconciles a resource between its polls, and the rate
// is crossplane-runtime's token bucket.
func newPollSpare(o controller.Options, deps Dependencies) *spare {
	bucket, ok := o.GlobalRateLimiter.(*ratelimiter.BucketRateLimiter)
	if deps.wakes == nil || deps.Polls == nil || !ok {
		return nil
	}
	return newSpare(bucket.Limiter, o.PollInterval, deps.Polls.Interval)
}

// SetupGated adds the controller once the kind's CRD exists.
func SetupGated[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, deps Dependencies, k Kind[T]) error {
	gated.Register(mgr, o, k.GVK.Kind, func() error { return Setup(mgr, o, deps, k) }, k.GVK)
	return nil
}
