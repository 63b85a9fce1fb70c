package node

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// labelService is the label Knative gives the pods of a Service's
// Revisions.
const labelService = "serving.knative.dev/service"

// A coldStart is when each step of one cold start was seen, counted from
// the request: the Revision's pod created (the activator asked the
// autoscaler, which scaled the Deployment), the function's container
// running (scheduled, its sandbox and container started), and the reply
// (the wrapper started and answered the readiness probe, the activator
// sent the request on, the handler answered). The pod's steps are when a
// watch saw the kubelet's reports, which it sends as they happen. Its
// report that the pod is ready came later than the reply, up to seconds:
// the activator probes the pod itself.
type coldStart struct {
	created, running, replied time.Duration
}

// BenchmarkColdStart measures a function at zero answering one request,
// for each runtime built by real Kaniko and served by real Knative: the
// time to the reply is the benchmark's time per operation, and the steps
// of coldStart are reported apart: to the pod (knative-ms), to its running
// container (start-ms), and from there to the reply (serve-ms), which holds
// the wrapper's start, measured alone by internal/render's
// BenchmarkWrapperStart. Between cold starts the function idles to zero:
// about 40 s each.
func BenchmarkColdStart(b *testing.B) {
	perRuntime(b, coldStarts)
}

// perRuntime runs bench for each runtime, in the order of their names.
func perRuntime(b *testing.B, bench func(*testing.B, runtime)) {
	for _, name := range slices.Sorted(maps.Keys(runtimes)) {
		b.Run(name, func(b *testing.B) { bench(b, runtimes[name]) })
	}
}

func coldStarts(b *testing.B, rt runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, kube := sharedCluster(b), targetClient(b)
	svc := builtInline(ctx, b, c, kube, rt, nil).Service
	url := deployedIdle(ctx, b, c, kube, svc)
	var all []coldStart
	for b.Loop() {
		b.StopTimer()
		pods, stop := atZero(ctx, b, kube, svc)
		start := time.Now()
		b.StartTimer()
		status, body := invoke(ctx, b, url, `{"id": "order-1"}`)
		b.StopTimer()
		replied := time.Since(start)
		if status != http.StatusOK {
			b.Fatalf("the function at zero answered %d %q", status, body)
		}
		cs := pods.firstRunning(ctx, b, start)
		stop()
		cs.replied = replied
		all = append(all, cs)
		b.StartTimer()
	}
	report(b, all)
}

// report reports the mean of each step of the cold starts.
func report(b *testing.B, all []coldStart) {
	var sum coldStart
	for _, cs := range all {
		sum.created += cs.created
		sum.running += cs.running
		sum.replied += cs.replied
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(len(all)) }
	b.ReportMetric(ms(sum.created), "knative-ms")
	b.ReportMetric(ms(sum.running-sum.created), "start-ms")
	b.ReportMetric(ms(sum.replied-sum.running), "serve-ms")
}

// scaledToZero waits until Knative has removed every pod of the idle
// Service.
func scaledToZero(ctx context.Context, t testing.TB, kube client.Client, svc *servingv1.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, zeroTimeout)
	defer cancel()
	wait.Until(ctx, t, "Knative scaled the idle function to zero", func() string {
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.InNamespace(svc.Namespace), client.MatchingLabels{labelService: svc.Name}); err != nil {
			return err.Error()
		}
		if n := len(pods.Items); n > 0 {
			return fmt.Sprintf("%d pods, %s %s", n, pods.Items[0].Name, pods.Items[0].Status.Phase)
		}
		return ""
	})
}

// deployedIdle creates the built Service with a short autoscaling window,
// so that it idles to zero quickly, and returns its URL once Knative
// reports it Ready.
func deployedIdle(ctx context.Context, t testing.TB, c *Cluster, kube client.Client, svc *servingv1.Service) *apis.URL {
	t.Helper()
	idleQuickly(svc)
	if err := kube.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	return serviceReady(ctx, t, c, kube, svc)
}

// atZero waits until the Service idled to zero, then watches its pods
// until stop is called.
func atZero(ctx context.Context, t testing.TB, kube client.WithWatch, svc *servingv1.Service) (*podWatch, context.CancelFunc) {
	t.Helper()
	scaledToZero(ctx, t, kube, svc)
	ctx, stop := context.WithCancel(ctx)
	return watchPods(ctx, t, kube, svc), stop
}

// A podSeen is when a watch saw a pod created, running the function's
// container, and ready, as the kubelet reported each.
type podSeen struct{ created, running, ready time.Time }

// A podWatch records what a watch sees of the pods of a Service.
type podWatch struct {
	mu    sync.Mutex
	pods  map[string]*podSeen
	first chan podSeen
}

// watchPods watches the pods of the Service until ctx ends.
func watchPods(ctx context.Context, t testing.TB, kube client.WithWatch, svc *servingv1.Service) *podWatch {
	t.Helper()
	w, err := kube.Watch(ctx, &corev1.PodList{}, client.InNamespace(svc.Namespace), client.MatchingLabels{labelService: svc.Name})
	if err != nil {
		t.Fatal(err)
	}
	pw := &podWatch{pods: map[string]*podSeen{}, first: make(chan podSeen, 1)}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted {
				pw.saw(pod, time.Now())
			}
		}
	}()
	return pw
}

// saw records what a pod's report says, seen at now.
func (pw *podWatch) saw(pod *corev1.Pod, now time.Time) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	s, ok := pw.pods[pod.Name]
	if !ok {
		s = &podSeen{created: now}
		pw.pods[pod.Name] = s
	}
	if s.running.IsZero() && running(pod, render.ContainerFunction) {
		s.running = now
		select {
		case pw.first <- *s:
		default: // Not the first.
		}
	}
	if s.ready.IsZero() && podReady(pod) {
		s.ready = now
	}
}

// firstRunning waits for the first pod to run the function's container,
// and says when it was created and when it ran, counted from start.
func (pw *podWatch) firstRunning(ctx context.Context, t testing.TB, start time.Time) coldStart {
	t.Helper()
	select {
	case s := <-pw.first:
		return coldStart{created: s.created.Sub(start), running: s.running.Sub(start)}
	case <-ctx.Done():
		t.Fatalf("no pod ran the function: %v", ctx.Err())
		return coldStart{}
	}
}

// readyTimes are when each pod that was ready became so.
func (pw *podWatch) readyTimes() []time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	var out []time.Time
	for _, s := range pw.pods {
		if !s.ready.IsZero() {
			out = append(out, s.ready)
		}
	}
	return out
}

// running says whether the pod's container of that name runs.
func running(pod *corev1.Pod, container string) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container && s.State.Running != nil {
			return true
		}
	}
	return false
}

// podReady says whether the kubelet reports the pod Ready: the
// queue-proxy's probe of the function's container passed.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
