package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	lambdacontroller "github.com/knative-lambda/provider-knative-lambda/internal/controller"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/workload"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var controlPlane local.Shared

func TestMain(m *testing.M) {
	// The provider's own logs go where each test's providerOptions say;
	// controller-runtime's would otherwise warn, with a stack, that none
	// was set.
	ctrl.SetLogger(logr.Discard())
	os.Exit(controlPlane.Run(m))
}

// testPoll is the provider's poll interval in these tests.
const testPoll = time.Second

// testRate is the provider's reconcile rate in these tests.
const testRate = 100

// A provider is the provider's controllers running in the test process,
// wired as cmd/provider wires them, with its API requests counted.
type provider struct {
	// kube is the test's own client, which acts as the Job controller,
	// Knative and the user.
	kube client.Client
	// writes counts the provider's write requests by namespace, and reads
	// its reads of objects by name.
	writes, reads *requestCounter
	// eventing plays Knative Eventing in the scene's namespace.
	eventing *playact.Eventing
}

// dependencies are what a test may replace of the provider's.
type dependencies = workload.Dependencies

// A requestCounter counts requests by the namespace in their path, so a
// test measures what concerns its own resources, not what other tests left.
type requestCounter struct {
	mu sync.Mutex
	n  map[request]int
}

// A request is what a requestCounter counts by: a method, and the path from
// the namespace on without the object's name, such as PUT of "status" of
// "lambdafunctions" in "team".
type request struct {
	method, namespace, resource string
}

// requestOf is what a request is counted as, and whether it names one
// object; path is its URL path.
func requestOf(method, path string) (r request, named bool) {
	_, rest, _ := strings.Cut(path, "/namespaces/")
	// Namespace, resource, name, subresource.
	p := append(strings.SplitN(rest, "/", 4), "", "", "")
	resource := p[1]
	if p[3] != "" {
		resource += "/" + p[3]
	}
	return request{method: method, namespace: p[0], resource: resource}, p[2] != ""
}

// add counts one request.
func (w *requestCounter) add(r request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n[r]++
}

// to is the number of requests so far with a method to one resource, or
// resource/subresource, of a namespace.
func (w *requestCounter) to(method, ns, resource string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[request{method: method, namespace: ns, resource: resource}]
}

// in is the number of requests so far to objects in a namespace.
func (w *requestCounter) in(ns string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	sum := 0
	for k, n := range w.n {
		if k.namespace == ns {
			sum += n
		}
	}
	return sum
}

// settled waits until nothing was written in ns for two polls, and returns
// the writes so far. The writes that led a resource to rest land a little
// after it reads Ready: its events, and its config's count of users a
// second after its usage. A provider that never stops writing fails it.
func (w *requestCounter) settled(ctx context.Context, t *testing.T, ns string) int {
	t.Helper()
	n := w.in(ns)
	wait.Until(ctx, t, "the provider's writes settle", func() string {
		time.Sleep(2 * testPoll)
		was := n
		if n = w.in(ns); n != was {
			return fmt.Sprintf("%d more writes in two polls", n-was)
		}
		return ""
	})
	return n
}

// countingTransport counts requests that write, and reads of one object by
// name (lists and watches are left out: the informers make those).
type countingTransport struct {
	next          http.RoundTripper
	writes, reads *requestCounter
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	req, named := requestOf(r.Method, r.URL.Path)
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		c.writes.add(req)
	case named:
		c.reads.add(req)
	}
	return c.next.RoundTrip(r)
}

// startProviderWith runs the provider with dependencies a test changed, such
// as a resolver that reaches the test's own git or S3 server.
func startProviderWith(t testing.TB, change func(*dependencies)) *provider {
	t.Helper()
	return startProvider(t, providerOptions{change: change})
}

// providerOptions are what a test may set of the provider it runs.
type providerOptions struct {
	// as is whom the provider acts as; empty means a cluster administrator.
	as rest.ImpersonationConfig
	// log receives the provider's logs; nil discards them.
	log logging.Logger
	// change changes the provider's dependencies; nil keeps them.
	change func(*dependencies)
	// allowTargets are networks target clusters may be in despite the
	// dialer, as --allow-target-cidr sets them.
	allowTargets []netip.Prefix
	// poll is the provider's poll interval; zero means testPoll.
	poll time.Duration
	// stateMetrics, when set, receive Crossplane's managed resource state
	// metrics, as the provider's registry does.
	stateMetrics *statemetrics.MRStateMetrics
	// mapper, when set, stands between the manager and its REST mapper.
	mapper func(meta.RESTMapper) meta.RESTMapper
	// limiter, when set, is the reconcile rate all controllers share, in
	// place of a bucket of testRate.
	limiter *ratelimiter.BucketRateLimiter
}

// startProvider runs the provider in the test process, wired as cmd/provider
// wires it.
func startProvider(t testing.TB, po providerOptions) *provider {
	t.Helper()
	p := &provider{writes: &requestCounter{n: map[request]int{}}, reads: &requestCounter{n: map[request]int{}}}
	cfg := rest.CopyConfig(controlPlane.Config(t))
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	if p.kube, err = client.New(cfg, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = po.as
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, writes: p.writes, reads: p.reads}
	})
	writes := clients.NewWrites(clients.DefaultWriteWait)
	mo := ctrl.Options{
		Scheme:    s,
		NewClient: clients.ManagerClient(writes),
		Client:    clients.ClientOptions(),
		Cache:     clients.ManagerCacheOptions(),
		Metrics:   metricsserver.Options{BindAddress: "0"},
		// Each test runs its own provider in this one process.
		Controller: config.Controller{SkipNameValidation: ptr(true)},
	}
	if po.mapper != nil {
		mo.MapperProvider = func(c *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
			m, err := apiutil.NewDynamicRESTMapper(c, hc)
			if err != nil {
				return nil, err
			}
			return po.mapper(m), nil
		}
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		t.Fatal(err)
	}
	if po.log == nil {
		po.log = logging.NewNopLogger()
	}
	if po.poll == 0 {
		po.poll = testPoll
	}
	if po.limiter == nil {
		po.limiter = ratelimiter.NewGlobal(testRate)
	}
	o := controller.Options{
		Logger:                  po.log,
		GlobalRateLimiter:       po.limiter,
		PollInterval:            po.poll,
		MaxConcurrentReconciles: 2,
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
	}
	if po.stateMetrics != nil {
		o.MetricOptions = &controller.MetricOptions{MRStateMetrics: po.stateMetrics}
	}
	if err := customresourcesgate.Setup(mgr, o); err != nil {
		t.Fatal(err)
	}
	deps := workload.DefaultDependencies(mgr, writes, nil, po.allowTargets, po.log)
	deps.Polls = workload.NewPolls(po.poll, testRate, workload.DefaultPollShare)
	if po.change != nil {
		po.change(&deps)
	}
	if err := lambdacontroller.SetupGated(mgr, o, deps); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return p
}

// newScene starts a provider whose dependencies a test may change, and a
// namespace for the test with a ProviderConfig named default, in which
// Knative Eventing is played until ctx ends: Brokers and Triggers become
// Ready unless the test leaves them to itself.
func newScene(ctx context.Context, t testing.TB, prefix string, change func(*dependencies)) (*provider, client.Client, string) {
	t.Helper()
	p := startProviderWith(t, change)
	ns := testkit.Namespace(ctx, t, p.kube, prefix+"-", "")
	newProviderConfig(ctx, t, p.kube, ns)
	p.eventing = playEventing(ctx, p.kube, ns)
	return p, p.kube, ns
}

// newUnpolledScene starts a provider with po that polls hourly, busy or
// not, so that only wakes move its resources, and makes a namespace and its
// ProviderConfig.
func newUnpolledScene(ctx context.Context, t testing.TB, prefix string, po providerOptions) (*provider, client.Client, string) {
	t.Helper()
	po.poll, po.change = time.Hour, func(d *dependencies) { d.BusyPoll = time.Hour }
	p := startProvider(t, po)
	ns := testkit.Namespace(ctx, t, p.kube, prefix, "")
	newProviderConfig(ctx, t, p.kube, ns)
	return p, p.kube, ns
}

// createImageFunction creates an image function with nothing else and
// returns it with its Service once the provider made it.
func createImageFunction(ctx context.Context, t *testing.T, c client.Client, ns, name string) (*v1alpha1.LambdaFunction, *servingv1.Service) {
	t.Helper()
	fn := testkit.ImageFunction(ns, name)
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	return fn, serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), "is created", func(*servingv1.Service) bool { return true })
}

// playEventing plays Knative Eventing in a namespace until ctx ends.
func playEventing(ctx context.Context, c client.Client, ns string) *playact.Eventing {
	e := &playact.Eventing{}
	go e.Run(ctx, c, ns, 100*time.Millisecond)
	return e
}

// keep leaves the provider's dependencies as they are.
func keep(*dependencies) {}

func ptr[T any](v T) *T { return &v }

// eventReasons lists the reasons of the events about an object.
func eventReasons(ctx context.Context, t *testing.T, c client.Client, obj client.Object) map[string]bool {
	t.Helper()
	l := &corev1.EventList{}
	if err := c.List(ctx, l, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, e := range l.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.InvolvedObject.Kind == obj.GetObjectKind().GroupVersionKind().Kind {
			reasons[e.Reason] = true
		}
	}
	return reasons
}

// metricValue sums a counter or histogram count of the provider's metrics
// registry over the series whose labels include the given ones.
func metricValue(t *testing.T, name string, lbls map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := lbls[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			sum += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// update changes an object as a user would: read, change, write, and again
// if the provider wrote its status in between.
func update[T any, O interface {
	*T
	client.Object
}](ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, change func(O)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o := O(new(T))
		if err := c.Get(ctx, key, o); err != nil {
			return err
		}
		change(o)
		return c.Update(ctx, o)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serviceWhen waits until the function's Service is as ready says, and
// returns it.
func serviceWhen(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, what string, ready func(*servingv1.Service) bool) *servingv1.Service {
	t.Helper()
	svc := &servingv1.Service{}
	wait.Until(ctx, t, what, func() string {
		if err := c.Get(ctx, key, svc); err != nil {
			return err.Error()
		}
		if !ready(svc) {
			return fmt.Sprintf("image %s, traffic %+v", svc.Spec.Template.Spec.Containers[0].Image, svc.Spec.Traffic)
		}
		return ""
	})
	return svc
}

// gone says what is still there of o; nothing once it is gone.
func gone(ctx context.Context, c client.Client, o client.Object) string {
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); !kerrors.IsNotFound(err) {
		return fmt.Sprintf("%s is still there (%v)", o.GetName(), err)
	}
	return ""
}

// anyService is true of every Service: serviceWhen then waits until the
// Service exists.
func anyService(*servingv1.Service) bool { return true }
