package controller_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestKubeconfigRefused plays a team that may write ProviderConfigs and
// Secrets in its namespace and aims the provider at a server of its own
// with a kubeconfig that runs a command, sends the provider's token, or
// points at the provider's loopback. Each resource must end not Synced with
// a message naming the refused field or address; the command must never run
// and the server must never see a connection.
func TestKubeconfigRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var accepted atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("the-provider's-own-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := func(user string) string {
		return `apiVersion: v1
kind: Config
clusters: [{name: target, cluster: {server: "` + srv.URL + `", insecure-skip-tls-verify: true}}]
users: [{name: team, user: {` + user + `}}]
contexts: [{name: target, context: {cluster: target, user: team}}]
current-context: target
`
	}
	cases := []struct {
		reason, name, kubeconfig, msg string
	}{
		{
			reason: "A credential plugin would run a command in the provider's pod.", name: "exec",
			kubeconfig: kubeconfig(`exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "touch ` + marker + `; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'"], interactiveMode: Never}`),
			msg:        `user "team" sets exec`,
		},
		{
			reason: "A token file would send the provider's own token to the team's server.", name: "token-file",
			kubeconfig: kubeconfig(`tokenFile: ` + token),
			msg:        `user "team" sets tokenFile`,
		},
		{
			reason: "Inline credentials, but the server is on the provider's loopback.", name: "loopback",
			kubeconfig: kubeconfig(`token: t`),
			msg:        "refusing to connect to 127.0.0.1",
		},
	}

	p := startProviderWith(t, keep)
	c := p.kube
	ns := newNamespace(ctx, t, c, "kubeconfig")
	for _, tc := range cases {
		fn := newFunction(ns, tc.name, "def handler(event, context):\n    return event\n")
		fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: tc.name}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, StringData: map[string]string{"kubeconfig": tc.kubeconfig}},
			&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
				Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.KeySelector{Name: tc.name, Key: "kubeconfig"},
			}}},
			fn,
		} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range cases {
		fn := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}}
		t.Log(tc.reason)
		waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, tc.msg)
	}
	if n := accepted.Load(); n > 0 {
		t.Errorf("the team's server saw %d connections from the provider; want none", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the kubeconfig's credential plugin ran inside the provider")
	}
}
