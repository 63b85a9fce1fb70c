package controller_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/s3server"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// startS3Server runs versitygw from the folder make testservers builds it
// into, beside etcd and kube-apiserver, on loopback.
func startS3Server(t *testing.T) *s3Server {
	t.Helper()
	return &s3Server{s3server.Start(t, local.BinDir(), loopback.Address(t))}
}

// An s3Server is the real S3 server on loopback.
type s3Server struct{ *s3server.Server }

// put writes an object.
func (s *s3Server) put(t *testing.T, key, content string) {
	t.Helper()
	s.Put(t, key, []byte(content))
}

// resolver reaches the server under any host name, as a cluster's DNS would
// send the endpoint's name to it.
func (s *s3Server) resolver() *source.S3Resolver {
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The default transport is one.
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.Addr)
	}
	return source.NewS3Resolver(&http.Client{Transport: tr})
}

// TestS3Source checks that an S3 source builds when its objects exist on a
// real S3 server, builds once more when an object changes, and says plainly
// when a key does not exist.
func TestS3Source(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s3 := startS3Server(t)
	s3.put(t, "hello/main.py", "def handler(event, context):\n    return 1\n")
	s3.put(t, "hello/requirements.txt", "")
	_, c, ns := newScene(ctx, t, "s3", func(d *dependencies) { d.Sources.S3 = s3.resolver() })
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-creds"}, StringData: map[string]string{
		"AWS_ACCESS_KEY_ID": s3server.Access, "AWS_SECRET_ACCESS_KEY": s3server.Secret,
	}}
	if err := c.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	fn := newFunction(ns, "from-s3", "")
	fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{
		Endpoint: ptr(v1alpha1.ServiceURL("http://s3.lambda.test:9000")),
		Bucket:   "functions", Prefix: ptr(v1alpha1.RelativePath("hello/")),
		SecretRef: &v1alpha1.LocalObjectReference{Name: "s3-creds"},
	}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	waitJobs(ctx, t, c, ns, "from-s3", 1)

	s3.put(t, "hello/main.py", "def handler(event, context):\n    return 2\n")
	waitJobs(ctx, t, c, ns, "from-s3", 2)
	time.Sleep(3 * testPoll)
	if n := len(jobs(ctx, t, c, ns, "from-s3")); n != 2 {
		t.Errorf("one changed object made %d builds in all; want 2", n)
	}

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.S3.Prefix = nil
		mg.Spec.ForProvider.Source.S3.Key = ptr(v1alpha1.RelativePath("missing.tar.gz"))
	})
	wait.Until(ctx, t, "the missing key is named", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		if r.Reason != "SourceUnresolved" || !strings.Contains(r.Message, "s3://functions/missing.tar.gz does not exist") {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})
}
