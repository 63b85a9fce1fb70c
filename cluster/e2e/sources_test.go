//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/s3server"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// orderCreated is the type of the events the greeter answers.
const orderCreated = "com.example.order.created"

// resend is how long an event sent to a Broker may take to arrive before it
// is sent again.
const resend = 5 * time.Second

// greeter is a Node.js handler, kept in S3 as a tarball, whose reply says
// where its code came from.
const greeter = "exports.handler = async (event) => ({ accepted: event.data.id, from: \"s3\" });\n"

// fromS3 builds a team's Node.js function from an object on a real S3
// server, which the host serves on its end of the node's link over HTTPS
// with a certificate of a private CA, given in the credentials' Secret: as a
// LambdaFunction through the provider, and as a Lambda through Crossplane
// and the function. Both are resolved by the pod that reconciles them,
// fetched by the platform's fetcher image in the build pod and built by
// Kaniko on the node, and both must answer, also to an order event posted
// to the Broker each creates (brokerDelivers). Each has a schedule, every
// minute in Berlin, whose PingSource must really invoke it; without it,
// Knative scales each to zero, and a call then wakes it. Each then moves to
// another Broker (movesBroker). Its image then serves as a prebuilt agent's
// (agentsServe). Deleting them leaves none of their objects.
func fromS3(ctx context.Context, t *testing.T, kubeconfig string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube, pods := testkit.Client(t, cfg), kubernetes.NewForConfigOrDie(cfg).CoreV1()
	s3 := s3server.StartTLS(t, filepath.Dir(bin(t, "versitygw")), hostAddress(t))
	sink := node.RecordingSink(t)
	deadLetters, backoff := v1alpha1.ServiceURL(sink.URL.String()), v1alpha1.ISO8601Duration("PT0.2S")
	s3.Put(t, "greeter/v1.tar.gz", tarball(t, map[string]string{"index.js": greeter}))
	spec := v1alpha1.LambdaFunctionParameters{
		Source: v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{
			Endpoint:  ptr.To(v1alpha1.ServiceURL(s3.Endpoint())),
			Bucket:    s3server.Bucket,
			Key:       ptr.To(v1alpha1.RelativePath("greeter/v1.tar.gz")),
			SecretRef: &v1alpha1.LocalObjectReference{Name: "s3-credentials"},
		}},
		Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguageNodeJS), Version: ptr.To("20"), Handler: ptr.To("index.handler")},
		// Knative's shortest stable window: idle to zero within a minute.
		Scaling: &v1alpha1.Scaling{Window: ptr.To(v1alpha1.GoDuration("6s"))},
		Eventing: &v1alpha1.FunctionEventing{
			Broker:   &v1alpha1.Broker{Name: "orders", Create: true},
			Triggers: []v1alpha1.Trigger{{Name: "orders", Filters: v1alpha1.Filters{"type": orderCreated}}},
			Delivery: &v1alpha1.Delivery{Retry: ptr.To[int32](2), BackoffDelay: &backoff, DeadLetterSink: &v1alpha1.Sink{URI: &deadLetters}},
			Schedules: []v1alpha1.Schedule{{
				Name: "every-minute", Schedule: "* * * * *", TimeZone: ptr.To("Europe/Berlin"),
				Data: &kruntime.RawExtension{Raw: []byte(`{"id": 7}`)},
			}}},
	}
	fn, xr := managedAndComposite(t, v1alpha1.LambdaFunctionGroupVersionKind, "Lambda", "greeter", &spec)

	appliedAndReady(ctx, t, kube, "from S3", []client.Object{s3Credentials(fn.GetNamespace(), s3.CA()), s3Credentials(xr.GetNamespace(), s3.CA())}, []*unstructured.Unstructured{fn, xr}, func(o *unstructured.Unstructured, url string) {
		replies(ctx, t, url, "the function built from S3 answers", `{"accepted":42,"from":"s3"}`)
		brokerDelivers(ctx, t, kube, o, sink, "orders")
	})
	urls := map[string]string{}
	for _, o := range []*unstructured.Unstructured{fn, xr} {
		fired(ctx, t, pods, o)
		urls[o.GetKind()] = servingURL(ctx, t, kube, o)
		// Without its schedule nothing calls it, and Knative scales it to
		// zero.
		updateSpec(ctx, t, kube, o, func(spec map[string]any) { unstructured.RemoveNestedField(spec, "eventing", "schedules") })
	}
	for _, o := range []*unstructured.Unstructured{fn, xr} {
		scalesToZeroAndBack(ctx, t, pods, o, urls[o.GetKind()])
	}
	for _, o := range []*unstructured.Unstructured{fn, xr} {
		movesBroker(ctx, t, kube, o, sink, "orders", "shop")
	}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(fn), fn); err != nil {
		t.Fatal(err)
	}
	image, _, _ := unstructured.NestedString(fn.Object, "status", "atProvider", "image")
	agentsServe(ctx, t, kube, pods, image)
	for _, o := range []*unstructured.Unstructured{fn, xr} {
		deleted(ctx, t, kube, v1alpha1.LambdaFunctionKind, o, "shop")
	}
}

// appliedAndReady creates what the workloads need, then the workloads, and
// waits until each is Ready, logging how long after it was applied, with
// what it is, then checks it with serves, given its URL.
func appliedAndReady(ctx context.Context, t *testing.T, kube client.Client, what string, needs []client.Object, workloads []*unstructured.Unstructured, serves func(o *unstructured.Unstructured, url string)) {
	t.Helper()
	start := time.Now()
	for _, o := range needs {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range workloads {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range workloads {
		url := servingURL(ctx, t, kube, o)
		t.Logf("%s %s/%s, %s, was Ready %s after it was applied", o.GetKind(), o.GetNamespace(), o.GetName(), what, time.Since(start).Round(time.Second))
		serves(o, url)
	}
}

// managedAndComposite are one spec twice, both called name: as a managed
// resource of gvk in the namespace functions, which the provider
// reconciles, and as the platform's composite of xrKind in apps, which
// Crossplane and the function compose.
func managedAndComposite(t *testing.T, gvk schema.GroupVersionKind, xrKind, name string, spec any) (mr, xr *unstructured.Unstructured) {
	t.Helper()
	u, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		t.Fatal(err)
	}
	mr = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": u}}}
	mr.SetGroupVersionKind(gvk)
	mr.SetNamespace("functions")
	mr.SetName(name)
	xr = &unstructured.Unstructured{Object: map[string]any{"spec": u}}
	xr.SetAPIVersion(lambda().GetAPIVersion())
	xr.SetKind(xrKind)
	xr.SetNamespace("apps")
	xr.SetName(name)
	return mr, xr
}

// deleted deletes a workload of a kind, or a composite that composes one,
// waits until it is gone and checks that none of its objects is left, nor
// the Broker it created.
func deleted(ctx context.Context, t *testing.T, kube client.Client, kind string, o client.Object, broker string) {
	t.Helper()
	if err := kube.Delete(ctx, o); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wait.Until(ctx, t, o.GetName()+" is gone", func() string { return absent(ctx, kube, client.ObjectKeyFromObject(o), o) })
	t.Logf("%s/%s was gone %s after it was deleted", o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Second))
	nothingLeft(ctx, t, kube, kind, client.ObjectKeyFromObject(o), broker)
}

// absent says, unless the object key names is gone, what a Get of it into
// o found.
func absent(ctx context.Context, kube client.Client, key client.ObjectKey, o client.Object) string {
	if err := kube.Get(ctx, key, o); !kerrors.IsNotFound(err) {
		return fmt.Sprintf("Get: %v", err)
	}
	return ""
}

// fired waits until a function's log says its schedule invoked it.
func fired(ctx context.Context, t *testing.T, pods typedcorev1.CoreV1Interface, o *unstructured.Unstructured) {
	t.Helper()
	start := time.Now()
	wait.Until(ctx, t, o.GetName()+"'s schedule invokes it", func() string {
		return invokedWith(ctx, pods, o, render.ContainerFunction, "dev.knative.sources.ping")
	})
	t.Logf("%s %s/%s was invoked by its schedule %s after it served", o.GetKind(), o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Second))
}

// invokedWith says, unless the log of the container of one of the
// workload's pods says it was invoked with an event of eventType, what it
// found: the wrappers log every invocation with its event's type.
func invokedWith(ctx context.Context, pods typedcorev1.CoreV1Interface, o *unstructured.Unstructured, container, eventType string) string {
	l, err := servicePods(ctx, pods, o)
	if err != nil {
		return err.Error()
	}
	for _, p := range l.Items {
		log, err := pods.Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
		if err == nil && bytes.Contains(log, []byte(`"type":"`+eventType+`"`)) {
			return ""
		}
	}
	return fmt.Sprintf("no %s event in the logs of %d pods", eventType, len(l.Items))
}

// servicePods are the pods of a workload's Knative Service, named after it.
func servicePods(ctx context.Context, pods typedcorev1.CoreV1Interface, o *unstructured.Unstructured) (*corev1.PodList, error) {
	return pods.Pods(o.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: "serving.knative.dev/service=" + o.GetName()})
}

// scalesToZeroAndBack waits until Knative has removed every pod of the
// idle function, after its stable window (scaling.window) and the
// cluster's grace period of 30 s, then calls it: the activator holds the request
// until a new pod is ready, and the reply is the handler's. It logs the cold
// start, the time from the request to its reply.
func scalesToZeroAndBack(ctx context.Context, t *testing.T, pods typedcorev1.CoreV1Interface, o *unstructured.Unstructured, url string) {
	t.Helper()
	start := time.Now()
	wait.Until(ctx, t, o.GetName()+" scales to zero", func() string {
		l, err := servicePods(ctx, pods, o)
		if err != nil {
			return err.Error()
		}
		if n := len(l.Items); n > 0 {
			return fmt.Sprintf("%d pods", n)
		}
		return ""
	})
	t.Logf("%s %s/%s had no pod %s after it was last called", o.GetKind(), o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Second))
	start = time.Now()
	status, body, err := node.CallFunction(ctx, url, "com.example.order.created", `{"id": 42}`)
	if got := strings.Join(strings.Fields(body), ""); err != nil || status != http.StatusOK || got != `{"accepted":42,"from":"s3"}` {
		t.Errorf("%s answered its first call from zero with %d %q (%v); want the handler's reply", o.GetName(), status, body, err)
	}
	t.Logf("%s %s/%s answered from zero in %s", o.GetKind(), o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Millisecond))
}

// updateSpec changes a LambdaFunction's forProvider or a Lambda's spec,
// as kubectl edit does.
func updateSpec(ctx context.Context, t *testing.T, kube client.Client, o *unstructured.Unstructured, change func(spec map[string]any)) {
	t.Helper()
	path := []string{"spec"}
	if o.GetKind() == v1alpha1.LambdaFunctionKind {
		path = append(path, "forProvider")
	}
	wait.Until(ctx, t, "the change to "+o.GetName()+" is applied", func() string {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
			return err.Error()
		}
		spec, _, _ := unstructured.NestedMap(u.Object, path...)
		change(spec)
		if err := unstructured.SetNestedMap(u.Object, spec, path...); err != nil {
			return err.Error()
		}
		return wait.ErrString(kube.Update(ctx, u))
	})
}

// movesBroker renames the Broker the function creates and listens on. Its
// Trigger must move to the new one, which Knative's webhook allows only by
// replacing the Trigger, the events must reach it through the new Broker
// (brokerDelivers), and the old Broker must go: the function was its last
// user.
func movesBroker(ctx context.Context, t *testing.T, kube client.Client, o *unstructured.Unstructured, sink *node.Sink, from, to string) {
	t.Helper()
	start := time.Now()
	updateSpec(ctx, t, kube, o, func(spec map[string]any) {
		if err := unstructured.SetNestedField(spec, to, "eventing", "broker", "name"); err != nil {
			t.Fatal(err)
		}
	})
	brokerDelivers(ctx, t, kube, o, sink, to)
	wait.Until(ctx, t, fmt.Sprintf("%s's Broker %s is gone", o.GetName(), from), func() string {
		return absent(ctx, kube, client.ObjectKey{Namespace: o.GetNamespace(), Name: from}, &eventingv1.Broker{})
	})
	t.Logf("%s %s/%s moved from Broker %s to %s in %s", o.GetKind(), o.GetNamespace(), o.GetName(), from, to, time.Since(start).Round(time.Millisecond))
}

// brokerDelivers posts an order event to the function's Broker, from this
// machine through Eventing's broker-ingress, and waits until the function's
// reply reaches the sink through a Trigger on the function's source; then
// an event the handler fails on, which reaches the sink as the function's
// dead letter after its two retries, with the handler's status.
func brokerDelivers(ctx context.Context, t *testing.T, kube client.Client, o *unstructured.Unstructured, sink *node.Sink, broker string) {
	t.Helper()
	source := render.FunctionSource(o.GetNamespace(), o.GetName())
	replies := &eventingv1.Trigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: "replies"},
		Spec: eventingv1.TriggerSpec{
			Broker:     broker,
			Filter:     &eventingv1.TriggerFilter{Attributes: eventingv1.TriggerFilterAttributes{"source": source}},
			Subscriber: duckv1.Destination{URI: sink.URL},
		},
	}
	if err := kube.Create(ctx, replies); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := kube.Delete(ctx, replies); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	for _, want := range []node.Received{
		{Type: orderCreated + ".response", Source: source, Body: `{"accepted":42,"from":"s3"}`},
		{Type: orderCreated, Source: "/manual", Body: "null", ErrorCode: "500"},
	} {
		data := `{"id": 42}`
		if want.ErrorCode != "" {
			data = "null"
		}
		got, sent := "nothing", time.Time{}
		wait.Until(ctx, t, fmt.Sprintf("%s gets %+v through its Broker", o.GetName(), want), func() string {
			// A Trigger Knative reports Ready may not be delivering yet:
			// an event the Broker took before is lost, so it is sent again.
			if time.Since(sent) > resend {
				status, body, err := postToBroker(ctx, kube, o.GetNamespace(), broker, orderCreated, data)
				if err != nil || status != http.StatusAccepted {
					return fmt.Sprintf("the Broker answered %d %q (%v)", status, body, err)
				}
				sent = time.Now()
			}
			for {
				select {
				case r := <-sink.Got:
					r.Body, r.Hops = strings.Join(strings.Fields(r.Body), ""), ""
					if r == want {
						return ""
					}
					got = fmt.Sprintf("%+v", r)
				default:
					return "last got " + got
				}
			}
		})
	}
	t.Logf("%s %s/%s replied through its Broker and dead-lettered a failing event %s after the first was posted", o.GetKind(), o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Millisecond))
}

// postToBroker posts an event of eventType with data to a Broker from this
// machine, through Eventing's broker-ingress at its cluster IP.
func postToBroker(ctx context.Context, kube client.Client, namespace, broker, eventType, data string) (int, string, error) {
	b := &eventingv1.Broker{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: broker}, b); err != nil {
		return 0, "", err
	}
	if b.Status.Address == nil || b.Status.Address.URL == nil {
		return 0, "", fmt.Errorf("the Broker %s has no address yet", broker)
	}
	ingress := &corev1.Service{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "knative-eventing", Name: "broker-ingress"}, ingress); err != nil {
		return 0, "", err
	}
	return node.PostToBroker(ctx, ingress.Spec.ClusterIP, b.Status.Address.URL.String(), eventType, data)
}

// servingURL waits until a managed resource or a composite of the platform
// API is Ready with a URL, and returns it.
func servingURL(ctx context.Context, t *testing.T, kube client.Client, o *unstructured.Unstructured) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	at := []string{"status"}
	if k := o.GetKind(); k == v1alpha1.LambdaFunctionKind || k == v1alpha1.LambdaAgentKind {
		at = append(at, "atProvider")
	}
	var url string
	wait.Until(ctx, t, o.GetName()+" is Ready with a URL", func() string {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
			return err.Error()
		}
		phase, _, _ := unstructured.NestedString(u.Object, append(at, "phase")...)
		url, _, _ = unstructured.NestedString(u.Object, append(at, "url")...)
		if phase != string(v1alpha1.PhaseReady) || url == "" {
			c, _ := manifest.Condition(u, "Ready")
			return fmt.Sprintf("phase %s: %v", phase, c["message"])
		}
		return ""
	})
	return url
}

// s3Credentials is the Secret the functions read the S3 server's
// credentials and CA from.
func s3Credentials(namespace string, ca []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "s3-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": s3server.Access, "AWS_SECRET_ACCESS_KEY": s3server.Secret, source.KeyCA: string(ca)},
	}
}

// hostAddress is a free port on the host's end of the node's link, which
// pods reach.
func hostAddress(t *testing.T) string {
	t.Helper()
	a, err := loopback.FreeOn(node.HostIP)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tarball is a gzipped tar of files, by name.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
