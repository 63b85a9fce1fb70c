package node

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// burstClients is how many clients hit the function at zero at once: no
// more than the node's caller keeps connections for.
const burstClients = 50

// burstLength is how long each client sends requests, one after another.
const burstLength = 30 * time.Second

// burstConcurrency is the most requests a pod of the function takes at
// once (scaling.containerConcurrency): the burst needs several pods.
const burstConcurrency = 10

// BenchmarkScaleOut measures the seed's Python function at zero hit by
// burstClients clients at once, each sending requests one after another
// for burstLength, as scaling.containerConcurrency lets each pod take
// burstConcurrency of them: how many pods became ready during the burst,
// when the last of them was (to-n-ms, from the first request), how many
// requests failed, and the requests' p50 and p99 latency.
func BenchmarkScaleOut(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, kube := sharedCluster(b), targetClient(b)
	svc := builtInline(ctx, b, c, kube, runtimes["Python3.11"], nil, func(p *v1alpha1.LambdaFunctionParameters) {
		p.Scaling = &v1alpha1.Scaling{ContainerConcurrency: ptr.To[int64](burstConcurrency)}
	}).Service
	url := deployedIdle(ctx, b, c, kube, svc)
	var pods, failed, toN, requests float64
	var latencies []time.Duration
	for b.Loop() {
		b.StopTimer()
		watched, stop := atZero(ctx, b, kube, svc)
		start := time.Now()
		b.StartTimer()
		got := burst(ctx, url)
		b.StopTimer()
		stop()
		ready := watched.readyTimes()
		pods += float64(len(ready))
		if len(ready) > 0 {
			toN += float64(slices.MaxFunc(ready, time.Time.Compare).Sub(start).Milliseconds())
		}
		failed += float64(got.failed)
		requests += float64(len(got.latencies) + got.failed)
		latencies = append(latencies, got.latencies...)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(pods/n, "pods")
	b.ReportMetric(toN/n, "to-n-ms")
	b.ReportMetric(failed/n, "failed")
	b.ReportMetric(requests/n, "requests")
	reportLatencies(b, latencies)
}

// A burstResult is what the clients of a burst got: the latency of each
// request that succeeded, and how many failed.
type burstResult struct {
	latencies []time.Duration
	failed    int
}

// burst runs burstClients clients at once, each sending requests one after
// another to url for burstLength.
func burst(ctx context.Context, url *apis.URL) burstResult {
	var (
		mu  sync.Mutex
		out burstResult
		wg  sync.WaitGroup
	)
	end := time.Now().Add(burstLength)
	for range burstClients {
		wg.Go(func() {
			var mine burstResult
			for time.Now().Before(end) {
				start := time.Now()
				status, _, err := CallFunction(ctx, url.String(), orderType, `{"id": "order-1"}`)
				if err != nil || status != http.StatusOK {
					mine.failed++
					time.Sleep(time.Second) // As a client backs off.
					continue
				}
				mine.latencies = append(mine.latencies, time.Since(start))
			}
			mu.Lock()
			defer mu.Unlock()
			out.latencies = append(out.latencies, mine.latencies...)
			out.failed += mine.failed
		})
	}
	wg.Wait()
	return out
}

// percentile is the p-th percentile of sorted latencies, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i, 1)-1]
}
