package controller_test

import (
	"context"
	"net/netip"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

// loopbackNet is where the remote API servers of these tests listen, which
// only a provider told so may reach.
var loopbackNet = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// A remote is a second, real API server standing in for a target cluster
// that a ProviderConfig reaches through a kubeconfig Secret.
type remote struct {
	// kube is an administrator's client of the remote.
	kube       client.Client
	config     *local.ControlPlane
	kubeconfig []byte
}

// startRemote starts a remote with every CRD but those of the kinds left
// out, and stops it when the test ends.
func startRemote(ctx context.Context, t *testing.T, leaveOut ...string) *remote {
	t.Helper()
	crds, err := local.CRDsWhere(ctx, ".", func(crd *extv1.CustomResourceDefinition) bool { return !slices.Contains(leaveOut, crd.Spec.Names.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	cp, err := local.Start(ctx, local.Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	r := &remote{config: cp}
	if r.kubeconfig, err = os.ReadFile(cp.ForTest(t, t.TempDir())); err != nil {
		t.Fatal(err)
	}
	s, err := kinds.TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	if r.kube, err = client.New(cp.Config, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	return r
}

// target creates the namespace ns in the remote, and in the provider's
// cluster the kubeconfig Secret and the ProviderConfig named name of ns
// that send its resources there. It returns the reference to it.
func (r *remote) target(ctx context.Context, t *testing.T, c client.Client, ns, name string) xpv2.ProviderConfigReference {
	t.Helper()
	if err := r.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"kubeconfig": r.kubeconfig}}
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.KeySelector{Name: name, Key: "kubeconfig"},
		}},
	}
	for _, o := range []client.Object{secret, pc} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: name}
}
