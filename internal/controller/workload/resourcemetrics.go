package workload

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// collectTimeout bounds how long a scrape waits for the cache.
const collectTimeout = 2 * time.Second

// resourcesDesc is the gauge of resources: its namespace label is bounded
// by the namespaces that hold any, and its phase and reason are enums.
var resourcesDesc = prometheus.NewDesc("lambda_resources",
	"LambdaFunctions and LambdaAgents by namespace, kind, phase and the reason of their Ready condition (Available, Building, SecretMissing, BuildFailed, ...).",
	[]string{"namespace", "kind", "phase", "reason"}, nil)

// A resourceCollector counts the resources as the manager's cache holds
// them at each scrape, so the gauge never drifts from what the API server
// says and a restarted provider reports at once.
type resourceCollector struct {
	mu     sync.RWMutex
	reader client.Reader
}

var resources = &resourceCollector{}

func init() {
	metrics.Registry.MustRegister(resources)
}

// ObserveResources makes the lambda_resources gauge read the resources
// through the reader, the manager's cache.
func ObserveResources(r client.Reader) {
	resources.mu.Lock()
	defer resources.mu.Unlock()
	resources.reader = r
}

// Describe sends the gauge's description.
func (c *resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- resourcesDesc
}

// Collect counts the resources the cache holds. A kind the cache cannot
// list yet, such as before its CRD exists, counts nothing.
func (c *resourceCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	r := c.reader
	c.mu.RUnlock()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	counts := map[[4]string]int{}
	count := func(kind, ns string, phase v1alpha1.Phase, ready xpv2.Condition) {
		counts[[4]string{ns, kind, string(phase), string(ready.Reason)}]++
	}
	// Nothing here writes what it reads: the cache's own objects serve, not
	// copies of every resource at each scrape.
	fns := &lists.LambdaFunctionList{}
	if err := r.List(ctx, fns, client.UnsafeDisableDeepCopy); err == nil {
		for i := range fns.Items {
			f := &fns.Items[i]
			count(v1alpha1.LambdaFunctionKind, f.Namespace, f.Status.AtProvider.Phase, f.GetCondition(xpv2.TypeReady))
		}
	}
	agents := &lists.LambdaAgentList{}
	if err := r.List(ctx, agents, client.UnsafeDisableDeepCopy); err == nil {
		for i := range agents.Items {
			a := &agents.Items[i]
			count(v1alpha1.LambdaAgentKind, a.Namespace, a.Status.AtProvider.Phase, a.GetCondition(xpv2.TypeReady))
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(resourcesDesc, prometheus.GaugeValue, float64(n), k[:]...)
	}
}
