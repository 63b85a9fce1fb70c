package node

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// A runtime is a function the build tests build for real, on one of the
// node's base images.
type runtime struct {
	// name of the function.
	name string
	base BaseImage
	code string
}

// runtimes are a function for every base image here.
var runtimes = map[string]runtime{
	"Python3.11": {
		name: "hello-python", base: python311,
		code: "def handler(event, context):\n    order = event.get(\"data\", {})\n    return {\"accepted\": order.get(\"id\")}\n",
	},
	"Go1.25": {
		name: "hello-go", base: go125,
		// It fails on an event without an order, as the others do.
		code: "package function\n\nimport (\n\t\"context\"\n\t\"errors\"\n)\n\nfunc Handle(_ context.Context, event map[string]any) (any, error) {\n\torder, ok := event[\"data\"].(map[string]any)\n\tif !ok {\n\t\treturn nil, errors.New(\"no order\")\n\t}\n\treturn map[string]any{\"accepted\": order[\"id\"]}, nil\n}\n",
	},
	"NodeJS20": {
		name: "hello-nodejs", base: nodejs20,
		code: "exports.handler = async (event, context) => ({ accepted: event.data.id });\n",
	},
}

// TestInlineServes builds the seed's inline function in each language with
// render's own ConfigMap, NetworkPolicy and Job, run as they are by the
// real Job controller, kubelet and Kaniko, pushes it to the node's
// registry, deploys render's Knative Service with the built image on real
// Knative Serving, and sends it a CloudEvent through the node's ingress,
// as a caller outside the cluster would, then through render's Broker and
// Trigger on real Knative Eventing, and once more after Knative scaled it to
// zero. Issue 56's images held links into the ConfigMap's ..data
// folder, which dangled: the wrapper could not be found and the container
// exited.
func TestInlineServes(t *testing.T) {
	t.Parallel()
	for name, rt := range runtimes {
		t.Run(name, func(t *testing.T) {
			// Most of each is waiting: on Kaniko, Knative, and the
			// function to idle to zero.
			t.Parallel()
			inlineServes(t, rt)
		})
	}
}

func inlineServes(t *testing.T, rt runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	sink := RecordingSink(t)
	built := builtInline(ctx, t, c, kube, rt, sink)
	svc := built.Service
	start := time.Now()
	url := deployedIdle(ctx, t, c, kube, svc)
	t.Logf("Knative made %s Ready in %s", url, time.Since(start).Round(time.Second))

	start = time.Now()
	status, body := invoke(ctx, t, url, `{"id": "order-1"}`)
	if status != http.StatusOK || strings.Join(strings.Fields(body), "") != `{"accepted":"order-1"}` {
		t.Errorf("the function answered %d %q; want 200 with the handler's reply", status, body)
	}
	t.Logf("the function replied through the ingress in %s", time.Since(start).Round(time.Millisecond))

	brokerDelivers(ctx, t, kube, built, sink)
	scalesToZeroAndBack(ctx, t, kube, svc, url)
}

// serviceReady waits until Knative reports the Service Ready and returns
// its URL, or fails with what its Revision's pods say.
func serviceReady(ctx context.Context, t testing.TB, c *Cluster, kube client.Client, svc *servingv1.Service) *apis.URL {
	t.Helper()
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(svc), svc)
		ready := svc.Status.ObservedGeneration == svc.Generation && svc.Status.GetCondition(apis.ConditionReady).IsTrue()
		return err == nil && ready && svc.Status.URL != nil, err
	})
	if err == nil {
		return svc.Status.URL
	}
	why := fmt.Sprintf("the Knative Service is not Ready (%v): %+v", err, svc.Status.Conditions)
	pods := &corev1.PodList{}
	_ = kube.List(context.Background(), pods, client.InNamespace(svc.Namespace), client.MatchingLabels{"serving.knative.dev/service": svc.Name})
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if term := cs.LastTerminationState.Terminated; term != nil {
				why += "\n" + cs.Name + " exited: " + previousLog(context.Background(), term, c, &p, cs.Name)
			}
		}
	}
	t.Fatal(why)
	return nil
}

// invoke sends an order event to url through the node's public ingress,
// as a caller outside the cluster would, and returns the status and body of
// the reply.
func invoke(ctx context.Context, t testing.TB, url *apis.URL, data string) (int, string) {
	t.Helper()
	status, body, err := CallFunction(ctx, url.String(), orderType, data)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// previousLog is what the kubelet says of a container that exited, and
// what it logged, read through the API server as kubectl logs --previous
// does.
func previousLog(ctx context.Context, t *corev1.ContainerStateTerminated, c *Cluster, pod *corev1.Pod, container string) string {
	why := fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason)
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return why + ": " + err.Error()
	}
	log, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Previous: true, Container: container}).DoRaw(ctx)
	if err != nil {
		return why + ": " + err.Error()
	}
	return why + ": " + strings.TrimSpace(string(log))
}

// targetClient is a client of the shared cluster, which can watch, that
// knows every kind render writes.
func targetClient(t testing.TB) client.WithWatch {
	t.Helper()
	s, err := kinds.TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.NewWithWatch(sharedCluster(t).Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// publishing keeps tests that run in parallel from importing one image
// into containerd at once, which it refuses (its ref is locked).
var publishing sync.Mutex

// publishBase publishes make kaniko's executor and the runtime's base image,
// and its run image if it has one, on the node's registry, and returns the
// base image's reference.
func publishBase(ctx context.Context, t testing.TB, c *Cluster, rt runtime) string {
	t.Helper()
	publishing.Lock()
	defer publishing.Unlock()
	bin := binDir(t)
	if err := c.PublishExecutor(ctx, bin); err != nil {
		t.Fatalf("%v: run make kaniko", err)
	}
	if err := c.PublishDebian(ctx, bin, rt.base.DebianImage); err != nil {
		t.Fatal(err)
	}
	if rt.base.RunImage != "" {
		if err := c.PublishStatic(ctx, bin); err != nil {
			t.Fatalf("%v: run make base-images", err)
		}
	}
	return rt.base.Ref
}

// publishFetcher publishes the image build pods fetch git and S3 sources
// with on the node's registry.
func publishFetcher(ctx context.Context, t testing.TB, c *Cluster) {
	t.Helper()
	publishing.Lock()
	defer publishing.Unlock()
	if err := c.PublishDebian(ctx, binDir(t), Fetcher); err != nil {
		t.Fatal(err)
	}
}

// renderInline renders the runtime's inline function in a namespace of
// its own (renderInlineIn).
func renderInline(ctx context.Context, t testing.TB, kube client.Client, rt runtime, baseRef string, deadLetter *Sink, changes ...func(*v1alpha1.LambdaFunctionParameters)) *render.Objects {
	t.Helper()
	return renderInlineIn(t, testkit.Namespace(ctx, t, kube, "functions-", ""), rt, baseRef, deadLetter, changes...)
}

// renderInlineIn renders the runtime's inline function in the namespace,
// to build on baseRef and push to the node's registry, with a Broker of
// its own that a Trigger subscribes it to, and events it fails on sent,
// after one retry, to the dead-letter sink, if one is given; each change
// then changes its spec.
func renderInlineIn(t testing.TB, ns string, rt runtime, baseRef string, deadLetter *Sink, changes ...func(*v1alpha1.LambdaFunctionParameters)) *render.Objects {
	t.Helper()
	return renderIn(t, ns, rt, baseRef, nil, deadLetter, changes...)
}

// renderIn is renderInlineIn with the node's build defaults changed by
// defaults, if given. A function changed to fetch its code from git is
// rendered at a commit no server has, as the provider would have resolved
// its ref to one.
func renderIn(t testing.TB, ns string, rt runtime, baseRef string, defaults func(*render.Defaults), deadLetter *Sink, changes ...func(*v1alpha1.LambdaFunctionParameters)) *render.Objects {
	t.Helper()
	fn := testkit.InlineFunction(ns, rt.name, rt.code)
	fn.Spec.ForProvider.Runtime = &v1alpha1.Runtime{Language: &rt.base.Language, Version: &rt.base.Version}
	// A Trigger that filters nothing: every event of the Broker but the
	// function's own replies.
	fn.Spec.ForProvider.Eventing = &v1alpha1.FunctionEventing{
		Broker:   &v1alpha1.Broker{Create: true},
		Triggers: []v1alpha1.Trigger{{Name: "all"}},
	}
	if deadLetter != nil {
		uri, delay := v1alpha1.ServiceURL(deadLetter.URL.String()), v1alpha1.ISO8601Duration("PT0.2S")
		fn.Spec.ForProvider.Eventing.Delivery = &v1alpha1.Delivery{Retry: ptr.To[int32](1), BackoffDelay: &delay, DeadLetterSink: &v1alpha1.Sink{URI: &uri}}
	}
	for _, change := range changes {
		change(&fn.Spec.ForProvider)
	}
	d := render.BuildDefaults(BuildDefaults())
	base := v1alpha1.BaseImage{Language: rt.base.Language, Image: v1alpha1.BaseImageReference(baseRef)}
	if rt.base.RunImage != "" {
		base.RunImage = ptr.To(v1alpha1.BaseImageReference(rt.base.RunImage))
	}
	d.BaseImages = []v1alpha1.BaseImage{base}
	if defaults != nil {
		defaults(&d)
	}
	var observed render.Observed
	if fn.Spec.ForProvider.Source.Git != nil {
		observed.SourceIdentity = strings.Repeat("0", 40)
	}
	objs, err := render.Function(render.FunctionInput{Namespace: ns, Name: fn.Name, Spec: fn.Spec.ForProvider, Defaults: d, Observed: observed})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// builtInline builds the runtime's inline function (renderInline) with
// real Kaniko, logging how long it took, and returns its objects as built.
func builtInline(ctx context.Context, t testing.TB, c *Cluster, kube client.Client, rt runtime, deadLetter *Sink, changes ...func(*v1alpha1.LambdaFunctionParameters)) *render.Objects {
	t.Helper()
	objs := renderInline(ctx, t, kube, rt, publishBase(ctx, t, c, rt), deadLetter, changes...)
	start := time.Now()
	createBuild(ctx, t, kube, objs)
	job, pods := awaitBuild(ctx, t, kube, objs.BuildJob, buildEnded)
	outcome := observe.OutcomeOf(job, pods)
	if !outcome.Done {
		t.Fatalf("the build failed (%s): %s", outcome.Cause, outcome.Message)
	}
	t.Logf("Kaniko built and pushed %s in %s", outcome.Digest, time.Since(start).Round(time.Second))
	built, err := objs.Built(outcome.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return built
}

// buildTimeout bounds a build: the package's builds run at once, on two
// cores, and Go's compiled the standard library into an empty build cache
// for more than two minutes before its base image carried it compiled.
const buildTimeout = 8 * time.Minute

// createBuild creates the build's objects.
func createBuild(ctx context.Context, t testing.TB, kube client.Client, objs *render.Objects) {
	t.Helper()
	for _, o := range objs.Build() {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitBuild polls a build's Job and its pods until until says so of
// them, and returns them as the cluster then has them.
func awaitBuild(ctx context.Context, t testing.TB, kube client.Client, job *batchv1.Job, until func(*batchv1.Job, []corev1.Pod) bool) (*batchv1.Job, []corev1.Pod) {
	t.Helper()
	pods := &corev1.PodList{}
	err := pollFor(ctx, buildTimeout, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		if err := kube.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{observe.LabelJobName: job.Name}); err != nil {
			return false, err
		}
		return until(job, pods.Items), nil
	})
	if err != nil {
		t.Fatalf("the build did not end (%v): Job %+v, %d pods: %+v", err, job.Status, len(pods.Items), endingOf(job, pods.Items))
	}
	return job, pods.Items
}

// jobFinished is true once the Job controller has ended the Job.
func jobFinished(job *batchv1.Job, _ []corev1.Pod) bool { return observe.Finished(job) }

// buildEnded is true once the build is done or failed as the provider
// reads it, which for a build that pushed its image is the kubelet's report
// of Kaniko's exit.
func buildEnded(job *batchv1.Job, pods []corev1.Pod) bool {
	o := observe.OutcomeOf(job, pods)
	return o.Done || o.Failed
}
