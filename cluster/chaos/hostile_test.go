package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
)

// TestEndlessSourceListing runs the provider as its own process against an
// S3 server that answers every listing with a page of new keys and "there
// is more", for ever. Before, the provider listed on and grew to 547 MiB in
// 8 s; it must stay under 100 MiB and say SourceUnresolved, naming the
// limit, within 35 s of the function's creation. The server listens on this
// machine's own routable address, which the provider's dialer, unlike
// loopback, admits.
func TestEndlessSourceListing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctrllog.SetLogger(logr.Discard())
	addr := routableAddress(t)
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var pages atomic.Int64
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := pages.Add(1)
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>functions</Name><Prefix>fns/</Prefix>`)
		fmt.Fprintf(&b, `<KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>page-%d</NextContinuationToken>`, n)
		for i := range 1000 {
			fmt.Fprintf(&b, `<Contents><Key>fns/%d/%s-%d.py</Key><ETag>"e"</ETag><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>`, n, strings.Repeat("k", 200), i)
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(b.String()))
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close() //nolint:errcheck // Best effort at the end of a test.

	dir := t.TempDir()
	_, kubeconfig, kube := newStage(ctx, t, dir, "hostile")
	const ns = "hostile"
	prov := startProvider(ctx, t, kubeconfig, dir)

	endpoint := v1alpha1.ServiceURL("http://" + l.Addr().String())
	prefix := v1alpha1.RelativePath("fns/")
	python := v1alpha1.LanguagePython
	fn := &v1alpha1.LambdaFunction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "endless"},
		Spec: v1alpha1.LambdaFunctionSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}},
			ForProvider: v1alpha1.LambdaFunctionParameters{
				Source:  v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{Endpoint: &endpoint, Bucket: "functions", Prefix: &prefix, Region: "us-east-1"}},
				Runtime: &v1alpha1.Runtime{Language: &python},
			},
		},
	}
	if err := kube.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	rctx, rcancel := context.WithTimeout(ctx, 35*time.Second)
	defer rcancel()
	wait.Until(rctx, t, "the function says SourceUnresolved, naming the limit", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		if r := mg.GetCondition(xpv2.TypeReady); r.Reason != v1alpha1.ReasonSourceUnresolved || !strings.Contains(r.Message, "more than") {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})
	took := time.Since(created)
	u, err := prov.p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SourceUnresolved %.1f s after creation; the server served %d pages; the provider's peak RSS %d MiB", took.Seconds(), pages.Load(), u.PeakRSS>>20)
	if u.PeakRSS > 100<<20 {
		t.Errorf("the provider's peak RSS is %d MiB; want under 100", u.PeakRSS>>20)
	}
}

// routableAddress is an IPv4 address of this machine that is neither
// loopback nor link-local.
func routableAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatal("this machine has no routable IPv4 address for the hostile server; the provider's dialer refuses loopback")
	return ""
}
