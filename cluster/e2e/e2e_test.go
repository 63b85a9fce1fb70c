//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestCrossplane drives composites through a platform installed as users
// install it (see platform):
//   - a claim in an application namespace and a v2 XR each compose the build,
//     then the Knative Service, Broker and Trigger in their namespace (Direct),
//     and end Ready with their URL once the test has played the Job
//     controller and Knative; crossplane beta trace shows the whole tree;
//   - a claim of the Managed Composition composes a LambdaFunction that the
//     provider realises;
//   - deleting them removes everything, down to the Service the provider
//     made for the LambdaFunction.
func TestCrossplane(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	p := startPlatform(ctx, t)
	kube, kubeconfig := p.kube, p.kubeconfig
	for _, f := range []string{"platform/xrs/namespace.yaml", "platform/claims/namespace.yaml"} {
		apply(ctx, t, kube, filepath.Join(repo, "examples", f))
	}

	for _, ns := range []string{"apps", "legacy-apps"} {
		appSecret(ctx, t, kube, ns)
	}
	apply(ctx, t, kube, filepath.Join(repo, "examples", "platform", "xrs", "python-inline.yaml"))
	apply(ctx, t, kube, filepath.Join(repo, "examples", "platform", "claims", "python-inline.yaml"))
	xr := object("Lambda", "apps", "hello-python")
	claim := object("LambdaClaim", "legacy-apps", "hello-python")
	for _, o := range []*unstructured.Unstructured{xr, claim} {
		buildAndServe(ctx, t, kube, o.GetNamespace(), "hello-python")
		waitReady(ctx, t, kube, o)
	}
	tree := trace(ctx, t, kubeconfig, "lambdaclaim", "legacy-apps", "hello-python")
	t.Logf("crossplane beta trace:\n%s", tree)
	for _, kind := range []string{"LambdaClaim/hello-python", "XLambda/hello-python-", "Service/hello-python", "Broker/", "Trigger/hello-python-"} {
		if !slices.ContainsFunc(strings.Split(tree, "\n"), func(l string) bool { return strings.Contains(l, kind) && strings.Contains(l, "True") }) {
			t.Errorf("crossplane beta trace shows no Ready %s", kind)
		}
	}

	// Managed mode: the claim composes a LambdaFunction for the provider.
	managed := object("LambdaClaim", "legacy-apps", "prebuilt")
	managed.Object["spec"] = map[string]any{
		"compositionRef": map[string]any{"name": "xlambdas-managed"},
		"source":         map[string]any{"image": map[string]any{"repository": "ghcr.io/acme/hello", "tag": "v1"}},
	}
	create(ctx, t, kube, managed)
	mr := &unstructured.Unstructured{}
	mr.SetAPIVersion("lambda.m.crossplane.io/v1alpha1")
	mr.SetKind("LambdaFunction")
	wait.Until(ctx, t, "the Managed claim composes a LambdaFunction", func() string {
		return wait.ErrString(kube.Get(ctx, client.ObjectKey{Namespace: "legacy-apps", Name: "prebuilt"}, mr))
	})
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the provider creates the LambdaFunction's Service", func() string {
		return wait.ErrString(kube.Get(ctx, client.ObjectKey{Namespace: "legacy-apps", Name: "prebuilt"}, svc))
	})
	playact.MarkServiceReady(ctx, t, kube, svc)
	waitReady(ctx, t, kube, managed)

	// Deletion removes everything: Crossplane deletes the composite resources,
	// Kubernetes' garbage collector what they own, and the provider what the
	// LambdaFunction created.
	composed := composedObjects(ctx, t, kube)
	for _, o := range []*unstructured.Unstructured{xr, claim, managed} {
		if err := kube.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	gone := append(composed, xr, claim, managed, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": map[string]any{"namespace": "legacy-apps", "name": "prebuilt"},
	}})
	gone = append(gone, listOf(ctx, t, kube, "XLambdaList")...)
	waitGone(ctx, t, kube, gone)
}

// waitGone waits until none of the objects exists.
func waitGone(ctx context.Context, t *testing.T, kube client.Client, gone []*unstructured.Unstructured) {
	t.Helper()
	wait.Until(ctx, t, fmt.Sprintf("all %d objects are gone", len(gone)), func() string {
		for _, o := range gone {
			if err := kube.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); err == nil {
				return fmt.Sprintf("%s %s/%s still exists", o.GetKind(), o.GetNamespace(), o.GetName())
			} else if client.IgnoreNotFound(err) != nil {
				return err.Error()
			}
		}
		return ""
	})
}

// composedObjects are the objects Crossplane composed in the application
// namespaces: Knative objects and the provider's managed resources.
func composedObjects(ctx context.Context, t *testing.T, kube client.Client) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, gvk := range []string{"serving.knative.dev/v1/ServiceList", "eventing.knative.dev/v1/BrokerList", "eventing.knative.dev/v1/TriggerList", "lambda.m.crossplane.io/v1alpha1/LambdaFunctionList"} {
		for _, u := range listOf(ctx, t, kube, gvk) {
			if _, ok := u.GetLabels()["crossplane.io/composite"]; ok {
				out = append(out, u)
			}
		}
	}
	if len(out) < 7 {
		t.Fatalf("%d composed objects; want a Service, Broker and Trigger for each of two workloads, and a LambdaFunction", len(out))
	}
	return out
}

// listOf lists every object of a list kind, given as group/version/ListKind
// or, for the platform API, as ListKind alone.
func listOf(ctx context.Context, t *testing.T, kube client.Client, list string) []*unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	i := strings.LastIndex(list, "/")
	if i < 0 {
		l.SetAPIVersion("platform.lambda.crossplane.io/v1alpha1")
	} else {
		l.SetAPIVersion(list[:i])
	}
	l.SetKind(list[i+1:])
	if err := kube.List(ctx, l); err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// buildAndServe plays the Job controller and Knative for one workload: its
// running build succeeds, its Service runs the image built and it, the
// Broker and the Trigger are Ready.
func buildAndServe(ctx context.Context, t *testing.T, kube client.Client, ns, name string) {
	t.Helper()
	job := runningBuild(ctx, t, kube, ns, name)
	// Each build pushes an image of its own.
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(job.Name)))
	playact.FinishJob(ctx, t, kube, job, 0, digest)
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the Service in "+ns+" runs the built digest", func() string {
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			return err.Error()
		}
		if img := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, "@"+digest) {
			return "image " + img
		}
		return ""
	})
	serve(ctx, t, kube, svc)
}

// runningBuild waits for a build Job of a workload that has not ended.
func runningBuild(ctx context.Context, t *testing.T, kube client.Client, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	wait.Until(ctx, t, "a running build Job of "+ns+"/"+name, func() string {
		l := &batchv1.JobList{}
		if err := kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		for _, j := range l.Items {
			ended := slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
				return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
			})
			if strings.HasPrefix(j.Name, name+"-build-") && !ended {
				*job = j
				return ""
			}
		}
		return "none yet"
	})
	return job
}

// serve plays Knative for a workload's Service, and for the Brokers and
// Triggers of its namespace.
func serve(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service) {
	t.Helper()
	playact.MarkServiceReady(ctx, t, kube, svc)
	ns := svc.Namespace
	for _, list := range []string{"eventing.knative.dev/v1/BrokerList", "eventing.knative.dev/v1/TriggerList"} {
		wait.Until(ctx, t, list+" in "+ns, func() string {
			n := 0
			for _, o := range listOf(ctx, t, kube, list) {
				if o.GetNamespace() == ns {
					playact.MarkEventingReady(ctx, t, kube, o)
					n++
				}
			}
			if n == 0 {
				return "none yet"
			}
			return ""
		})
	}
}

// waitReady waits for a claim or XR to be Ready with a URL.
func waitReady(ctx context.Context, t *testing.T, kube client.Client, o *unstructured.Unstructured) {
	t.Helper()
	wait.Until(ctx, t, o.GetKind()+" "+o.GetName()+" Ready with a URL", func() string {
		u := o.DeepCopy()
		if err := kube.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
			return err.Error()
		}
		url, _, _ := unstructured.NestedString(u.Object, "status", "url")
		if !conditionTrue(u, "Ready") || url == "" {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			return fmt.Sprintf("url %q, conditions %v", url, conds)
		}
		return ""
	})
}

// trace is what crossplane beta trace prints of a resource.
func trace(ctx context.Context, t *testing.T, kubeconfig, kind, ns, name string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin(t, "crossplane"), "beta", "trace", kind, name, "-n", ns)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("crossplane beta trace: %v\n%s", err, out)
	}
	return string(out)
}

func object(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("platform.lambda.crossplane.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	c, ok := manifest.Condition(u, typ)
	return ok && c["status"] == "True"
}

// apply creates the objects of a file once the API server serves their
// kinds: the packages install some of them.
func apply(ctx context.Context, t *testing.T, kube client.Client, path string) {
	t.Helper()
	objs, err := manifest.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		wait.Until(ctx, t, gvk.Kind+" is served", func() string {
			_, err := kube.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			return wait.ErrString(err)
		})
		create(ctx, t, kube, o)
	}
}

// appSecret creates the Secret the python example reads, as its team does
// before applying it (README); until it exists the workload is held. The
// namespace may still be on its way from git.
func appSecret(ctx context.Context, t *testing.T, kube client.Client, ns string) {
	t.Helper()
	wait.Until(ctx, t, "the Secret hello-python in "+ns, func() string {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-python"}, StringData: map[string]string{"token": "change-me"}}
		return wait.ErrString(client.IgnoreAlreadyExists(kube.Create(ctx, s)))
	})
}

func create(ctx context.Context, t *testing.T, kube client.Client, o client.Object) {
	t.Helper()
	if err := kube.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
		t.Fatalf("cannot create %T %s: %v", o, o.GetName(), err)
	}
}
