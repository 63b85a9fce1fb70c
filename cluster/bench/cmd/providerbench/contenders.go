package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// A contender is a provider the benchmark runs: how to start it, what to
// create for each function, and how to read its reconciles.
type contender struct {
	name string
	bin  string
	// args besides the poll interval and reconcile rate.
	args       func(dir string) ([]string, []string, error)
	metricsURL string
	// pprofURL serves the contender's Go profiles; empty when it has none.
	pprofURL string
	// controller is part of the name of the controller that reconciles the
	// managed kind, as its reconcile metrics label it.
	controller string
	crds       []*extv1.CustomResourceDefinition
	managed    schema.GroupVersionKind
	config     client.Object
	// function is the managed resource for function i.
	function func(ns string, i int, inline bool) (client.Object, error)
}

const (
	targetSecret = "target-kubeconfig"
	targetKey    = "kubeconfig"
	benchImage   = "ghcr.io/acme/fn"
)

// functionName names function i alike for every contender, so each manages
// a Knative Service of the same name.
func functionName(i int) string { return fmt.Sprintf("fn-%05d", i) }

// spec is function i's: a prebuilt image, or inline Python to build.
func spec(inline bool) v1alpha1.LambdaFunctionParameters {
	if !inline {
		tag := v1alpha1.ImageTag("v1")
		return v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: benchImage, Tag: &tag}}}
	}
	return v1alpha1.LambdaFunctionParameters{
		Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}},
		Runtime: &v1alpha1.Runtime{Language: ptr(v1alpha1.LanguagePython), Version: ptr("3.12"), Handler: ptr("main.handler")},
	}
}

// The contenders' names, as the summary tells them apart.
const (
	oursName = "provider-knative-lambda"
	peerName = "provider-kubernetes"
)

// ours is this provider, built from this module.
func ours(bin, metricsAddr string) contender {
	return contender{
		name: oursName,
		bin:  bin,
		args: func(string) ([]string, []string, error) {
			// The target cluster is the local control plane, on loopback.
			return []string{"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=127.0.0.1:0", "--profile", "--allow-target-cidr=127.0.0.0/8"}, nil, nil
		},
		metricsURL: "http://" + metricsAddr + "/metrics",
		pprofURL:   "http://" + metricsAddr + "/debug/pprof/",
		controller: "lambdafunction",
		managed:    v1alpha1.LambdaFunctionGroupVersionKind,
		config: &v1alpha1.ClusterProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: v1alpha1.ClusterProviderConfigSpec{
				// The bench's namespaces are its own; every one may use it.
				NamespaceSelector: metav1.LabelSelector{},
				Credentials: v1alpha1.ClusterProviderCredentials{
					Source:    v1alpha1.CredentialsSourceSecret,
					SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: benchNamespace, Name: targetSecret}, Key: targetKey},
				},
				Build: &v1alpha1.BuildDefaults{Registry: ptr(v1alpha1.ImageRepository("registry.bench:5000/lambdas"))},
			},
		},
		function: func(ns string, i int, inline bool) (client.Object, error) {
			return &v1alpha1.LambdaFunction{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: functionName(i)},
				Spec: v1alpha1.LambdaFunctionSpec{
					ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}},
					ForProvider:         spec(inline),
				},
			}, nil
		},
	}
}

var objectGVK = schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "Object"}

// providerKubernetes manages the Knative Service our render core makes of
// the same image-source function as an Object, Ready when the Service is.
func providerKubernetes(ctx context.Context, root, bin string) (contender, error) {
	src := local.CRDSource{Module: "github.com/crossplane-contrib/provider-kubernetes", Dir: "package/crds"}
	dir, err := src.Path(ctx, filepath.Join(root, peerModule))
	if err != nil {
		return contender{}, err
	}
	all, err := local.LoadCRDs(dir)
	if err != nil {
		return contender{}, err
	}
	// Only its namespaced API, as ours is. Its cluster-scoped Object CRD
	// converts through a webhook Service, which no cluster here has; the
	// provider starts that controller only once the CRD exists.
	crds := make([]*extv1.CustomResourceDefinition, 0, len(all))
	for _, crd := range all {
		if crd.Spec.Group == objectGVK.Group {
			crds = append(crds, crd)
		}
	}
	config := &unstructured.Unstructured{}
	config.SetGroupVersionKind(objectGVK.GroupVersion().WithKind("ClusterProviderConfig"))
	config.SetName("default")
	config.Object["spec"] = map[string]any{"credentials": map[string]any{
		"source":    "Secret",
		"secretRef": map[string]any{"namespace": benchNamespace, "name": targetSecret, "key": targetKey},
	}}
	return contender{
		name: peerName,
		bin:  bin,
		// It serves a conversion webhook, whose server will not start
		// without a certificate; nothing calls it here. Its metrics address
		// has no flag: controller-runtime's default.
		args: func(dir string) ([]string, []string, error) {
			certs := filepath.Join(dir, "webhook-certs")
			if err := writeSelfSigned(certs); err != nil {
				return nil, nil, err
			}
			return []string{"--health-probe-bind-addr=127.0.0.1:0"}, []string{"TLS_SERVER_CERTS_DIR=" + certs}, nil
		},
		metricsURL: "http://127.0.0.1:8080/metrics",
		controller: "object",
		crds:       crds,
		managed:    objectGVK,
		config:     config,
		function: func(ns string, i int, inline bool) (client.Object, error) {
			objs, err := render.Function(render.FunctionInput{Namespace: ns, Name: functionName(i), Spec: spec(inline)})
			if err != nil {
				return nil, err
			}
			svc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(objs.Service)
			if err != nil {
				return nil, err
			}
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(objectGVK)
			o.SetNamespace(ns)
			o.SetName(functionName(i))
			o.Object["spec"] = map[string]any{
				"forProvider":       map[string]any{"manifest": svc},
				"readiness":         map[string]any{"policy": "DeriveFromObject"},
				"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
			}
			return o, nil
		},
	}, nil
}

// targetKubeconfig is the Secret both contenders reach the control plane
// through, as they would a remote cluster.
func targetKubeconfig(path string) (*corev1.Secret, error) {
	kc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: targetSecret},
		Data:       map[string][]byte{targetKey: kc},
	}, nil
}

func ptr[T any](v T) *T { return &v }
