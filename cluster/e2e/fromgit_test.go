//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/gitserver"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// goGreeter is a Go handler that answers an order, and fails on an event
// without one, as the other languages' greeters do.
const goGreeter = `package function

import (
	"context"
	"errors"
)

func Handle(_ context.Context, event map[string]any) (any, error) {
	order, ok := event["data"].(map[string]any)
	if !ok {
		return nil, errors.New("no order")
	}
	return map[string]any{"accepted": order["id"], "from": "git"}, nil
}
`

// fromGit builds a team's Go function from a folder of a commit on a real
// git server, over HTTPS: as a LambdaFunction through the provider, and as
// a Lambda through Crossplane and the function. The host serves the
// repository on its end of the node's link with a certificate of a CA no
// system trusts; the function's Secret holds that CA as ca.crt and nothing
// else. The pod that resolves the branch and the build pod that clones the
// commit must both trust it, and both functions must answer; deleting them
// leaves none of their objects.
func fromGit(ctx context.Context, t *testing.T, kubeconfig string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := testkit.Client(t, cfg)
	g := gitserver.StartOn(t, "functions", hostAddress(t))
	g.Commit(t, "a greeter in Go", map[string][]byte{"greeter/handler.go": []byte(goGreeter)})
	secret := func(namespace string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "git-ca"}, Data: map[string][]byte{source.KeyCA: g.CA()}}
	}
	fn, xr := managedAndComposite(t, v1alpha1.LambdaFunctionGroupVersionKind, "Lambda", "go-greeter", &v1alpha1.LambdaFunctionParameters{
		Source: v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{
			URL: g.URL(), Ref: gitserver.Branch, Path: ptr.To(v1alpha1.RelativePath("greeter")),
			SecretRef: &v1alpha1.LocalObjectReference{Name: "git-ca"},
		}},
		// The API's default version.
		Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguageGo)},
	})

	appliedAndReady(ctx, t, kube, "Go from git", []client.Object{secret(fn.GetNamespace()), secret(xr.GetNamespace())}, []*unstructured.Unstructured{fn, xr}, func(_ *unstructured.Unstructured, url string) {
		replies(ctx, t, url, "the Go function built from git answers", `{"accepted":42,"from":"git"}`)
	})
	for _, o := range []*unstructured.Unstructured{fn, xr} {
		deleted(ctx, t, kube, v1alpha1.LambdaFunctionKind, o, "")
	}
}
