package controller_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	s3Access = "lambda-test-access"
	s3Secret = "lambda-test-secret-key"
)

// An s3Server is the Versity S3 gateway, a real S3-compatible server, over a
// folder, on loopback.
type s3Server struct {
	addr   string
	client *minio.Client
}

// startS3Server runs versitygw from the folder make testservers builds it
// into, beside etcd and kube-apiserver.
func startS3Server(t *testing.T) *s3Server {
	t.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "versitygw")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no S3 server at %s: run `make testservers` to build it", bin)
	}
	addr := loopback.Address(t)
	cmd := exec.Command(bin, "--port", addr, "--access", s3Access, "--secret", s3Secret, "posix", t.TempDir()) //nolint:noctx // The test stops it.
	process.ForTest(t, "versitygw", cmd)
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	s := &s3Server{addr: addr, client: c}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait.Until(ctx, t, "the S3 server takes a bucket", func() string {
		return wait.ErrString(c.MakeBucket(ctx, "functions", minio.MakeBucketOptions{}))
	})
	return s
}

// put writes an object.
func (s *s3Server) put(t *testing.T, key, content string) {
	t.Helper()
	if _, err := s.client.PutObject(context.Background(), "functions", key, strings.NewReader(content), int64(len(content)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

// resolver reaches the server under any host name, as a cluster's DNS would
// send the endpoint's name to it.
func (s *s3Server) resolver() *source.S3Resolver {
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The default transport is one.
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.addr)
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
		"AWS_ACCESS_KEY_ID": s3Access, "AWS_SECRET_ACCESS_KEY": s3Secret,
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
