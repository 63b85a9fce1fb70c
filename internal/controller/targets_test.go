package controller_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestTarpitStallsNoOtherTeam plays a team whose kubeconfig names a server
// that completes TLS and never answers, used by three of its functions.
// Before, the target cache held its lock through the first request to it,
// which had no deadline, and every worker ended up waiting: another team's
// function had no Service after a minute, where it took about a second.
// Now another team's function reaches its Service with the tarpit in place
// as it does without it; the test prints both times.
func TestTarpitStallsNoOtherTeam(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	release := make(chan struct{})
	tarpit := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer tarpit.Close()
	defer close(release)

	p := startProvider(t, providerOptions{allowTargets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	c := p.kube
	other := testkit.Namespace(ctx, t, c, "tarpit-other-", "")
	newProviderConfig(ctx, t, c, other)
	timeToService := func(name string) time.Duration {
		t.Helper()
		start := time.Now()
		createImageFunction(ctx, t, c, other, name)
		return time.Since(start)
	}
	before := timeToService("before")

	team := testkit.Namespace(ctx, t, c, "tarpit-team-", "")
	createTargetConfig(ctx, t, c, team, "tarpit", targetKubeconfig(tarpit.URL, "token: t"))
	fns := make([]*v1alpha1.LambdaFunction, 3)
	for i := range fns {
		fns[i] = testkit.ImageFunction(team, "stalled-"+string(rune('a'+i)))
		fns[i].Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "tarpit"}
		if err := c.Create(ctx, fns[i]); err != nil {
			t.Fatal(err)
		}
	}
	// The tarpit's functions are being reconciled: the provider is trying
	// to connect to it.
	waitCondition(ctx, t, c, fns[0], xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, "still connecting to the target cluster at "+tarpit.URL)

	during := timeToService("during")
	t.Logf("another team's function reached its Service in %s without the tarpit, %s with it", before.Round(time.Millisecond), during.Round(time.Millisecond))
}

// targetKubeconfig is a kubeconfig a team could write for a server of its
// own, with user's inline credentials.
func targetKubeconfig(server, user string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: target, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: team, user: {` + user + `}}]
contexts: [{name: target, context: {cluster: target, user: team}}]
current-context: target
`
}

// createTargetConfig creates a ProviderConfig named name in ns that
// targets the cluster of kubeconfig, held in a Secret of the same name.
func createTargetConfig(ctx context.Context, t *testing.T, c client.Client, ns, name, kubeconfig string) {
	t.Helper()
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"kubeconfig": kubeconfig}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.KeySelector{Name: name, Key: "kubeconfig"},
		}}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}
