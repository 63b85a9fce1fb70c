package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
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

// kanikoRef is where the build tests publish make kaniko's executor.
const kanikoRef = Registry + "/tools/kaniko-executor:v1.24.0"

// A runtime is a language and version the build tests build for real, on
// a base image make base-images made from Debian's packages.
type runtime struct {
	// name of the function; image of the base image on the registry.
	name, image string
	language    v1alpha1.Language
	version     string
	rootfs      string
	env         []string
	code        string
}

// runtimes are every language and version with a real base image here.
var runtimes = map[string]runtime{
	"Python3.11": {
		name: "hello-python", image: "python:3.11",
		language: v1alpha1.LanguagePython, version: "3.11", rootfs: "python-3.11",
		env:  []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		code: "def handler(event, context):\n    order = event.get(\"data\", {})\n    return {\"accepted\": order.get(\"id\")}\n",
	},
	"NodeJS18": {
		name: "hello-nodejs", image: "node:18",
		language: v1alpha1.LanguageNodeJS, version: "18", rootfs: "nodejs-18",
		env:  []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		code: "exports.handler = async (event, context) => ({ accepted: event.data.id });\n",
	},
}

// TestInlineServes builds the seed's inline function in each language with
// render's own ConfigMap, NetworkPolicy and Job, run as they are by the
// real Job controller, kubelet and Kaniko, pushes it to the node's
// registry, deploys render's Knative Service with the built image on real
// Knative Serving, and sends it a CloudEvent through the node's ingress,
// as a caller outside the cluster would. Issue 56's images held links into the ConfigMap's ..data
// folder, which dangled: the wrapper could not be found and the container
// exited.
func TestInlineServes(t *testing.T) {
	for name, rt := range runtimes {
		t.Run(name, func(t *testing.T) { inlineServes(t, rt) })
	}
}

func inlineServes(t *testing.T, rt runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	baseRef := publishBase(ctx, t, c, rt)
	objs := renderInline(ctx, t, kube, rt, baseRef)
	start := time.Now()
	job, pods := runBuild(ctx, t, kube, objs)
	outcome := observe.Build(job, pods)
	if !outcome.Done {
		t.Fatalf("the build failed (%s): %s", outcome.Cause, outcome.Message)
	}
	t.Logf("Kaniko built and pushed %s in %s", outcome.Digest, time.Since(start).Round(time.Second))

	built, err := objs.Built(outcome.Digest)
	if err != nil {
		t.Fatal(err)
	}
	svc := built.Service
	if err := kube.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	url := serviceReady(ctx, t, c, kube, svc)
	t.Logf("Knative made %s Ready in %s", url, time.Since(start).Round(time.Second))

	start = time.Now()
	status, body := invoke(ctx, t, url, `{"id": "order-1"}`)
	if status != http.StatusOK || strings.Join(strings.Fields(body), "") != `{"accepted":"order-1"}` {
		t.Errorf("the function answered %d %q; want 200 with the handler's reply", status, body)
	}
	t.Logf("the function replied through the ingress in %s", time.Since(start).Round(time.Millisecond))
}

// serviceReady waits until Knative reports the Service Ready and returns
// its URL, or fails with what its Revision's pods say.
func serviceReady(ctx context.Context, t *testing.T, c *Cluster, kube client.Client, svc *servingv1.Service) *apis.URL {
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

// invoke sends a CloudEvent to url through the node's public ingress, as
// a caller outside the cluster would, and returns the status and body of
// the reply.
func invoke(ctx context.Context, t *testing.T, url *apis.URL, data string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+IngressIP+url.Path+"/", bytes.NewBufferString(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = url.Host
	for k, v := range map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "1", "Ce-Source": "test", "Ce-Type": "com.example.order.created", "Content-Type": "application/json"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck // Only read.
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
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

// targetClient is a client of the shared cluster that knows every kind
// render writes.
func targetClient(t *testing.T) client.Client {
	t.Helper()
	s, err := kinds.TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(sharedCluster(t).Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// publishBase publishes make kaniko's executor and the runtime's base image
// on the node's registry, and returns the base image's reference.
func publishBase(ctx context.Context, t *testing.T, c *Cluster, rt runtime) string {
	t.Helper()
	bin := binDir(t)
	publish(ctx, t, c, filepath.Join(bin, "kaniko.tar"), kanikoRef)
	base, err := RootFSImage(filepath.Join(bin, "..", "rootfs", rt.rootfs), rt.env)
	if err != nil {
		t.Fatalf("%v: run make base-images", err)
	}
	ref := Registry + "/library/" + rt.image
	tarball := filepath.Join(t.TempDir(), "base.tar")
	if err := WriteImage(base, ref, tarball); err != nil {
		t.Fatal(err)
	}
	publish(ctx, t, c, tarball, ref)
	return ref
}

// renderInline renders the runtime's inline function in a namespace of
// its own, to build on baseRef and push to the node's registry.
func renderInline(ctx context.Context, t *testing.T, kube client.Client, rt runtime, baseRef string) *render.Objects {
	t.Helper()
	ns := testkit.Namespace(ctx, t, kube, "functions-", "")
	fn := testkit.InlineFunction(ns, rt.name, rt.code)
	fn.Spec.ForProvider.Runtime = &v1alpha1.Runtime{Language: &rt.language, Version: &rt.version}
	objs, err := render.Function(render.FunctionInput{
		Namespace: ns, Name: fn.Name, Spec: fn.Spec.ForProvider,
		Defaults: render.Defaults{
			Registry: Registry + "/lambdas", ExecutorImage: kanikoRef, InsecureRegistries: []string{Registry},
			BaseImages: []v1alpha1.BaseImage{{Language: rt.language, Image: v1alpha1.BaseImageReference(baseRef)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// runBuild creates the build's objects and waits until its Job has
// finished; it returns the Job and its pods as the cluster then has them.
func runBuild(ctx context.Context, t *testing.T, kube client.Client, objs *render.Objects) (*batchv1.Job, []corev1.Pod) {
	t.Helper()
	for _, o := range objs.Build() {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	job, pods := objs.BuildJob, &corev1.PodList{}
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil || !observe.Finished(job) {
			return false, err
		}
		err := kube.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{observe.LabelJobName: job.Name})
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("the build Job did not finish: %v", err)
	}
	return job, pods.Items
}

// publish publishes an image tarball of the project's cache on the node.
func publish(ctx context.Context, t *testing.T, c *Cluster, tarball, ref string) {
	t.Helper()
	if _, err := os.Stat(tarball); err != nil {
		t.Fatalf("%v: run make kaniko", err)
	}
	if err := c.Publish(ctx, tarball, ref); err != nil {
		t.Fatal(err)
	}
}
