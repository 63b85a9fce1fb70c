// Package s3server runs the Versity S3 gateway, a real S3-compatible server,
// over a folder, for tests that fetch from S3: the provider's source
// resolution against the API server, and builds on the node. The test stops
// it.
package s3server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
)

// The server's credentials, and the bucket it holds.
const (
	Access = "lambda-test-access"
	Secret = "lambda-test-secret-key"
	Bucket = "functions"
)

// A Server is one versitygw with the bucket Bucket.
type Server struct {
	// Addr is where it listens, host:port.
	Addr string

	client *minio.Client
}

// Start runs versitygw from bin, the folder make testservers builds it
// into, on addr, and makes the bucket.
func Start(t testing.TB, bin, addr string) *Server {
	t.Helper()
	gw := filepath.Join(bin, "versitygw")
	if _, err := os.Stat(gw); err != nil {
		t.Fatalf("no S3 server at %s: run `make testservers` to build it", gw)
	}
	cmd := exec.Command(gw, "--port", addr, "--access", Access, "--secret", Secret, "posix", t.TempDir()) //nolint:noctx // The test stops it.
	process.ForTest(t, "versitygw", cmd)
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(Access, Secret, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait.Until(ctx, t, "the S3 server takes a bucket", func() string {
		return wait.ErrString(c.MakeBucket(ctx, Bucket, minio.MakeBucketOptions{}))
	})
	return &Server{Addr: addr, client: c}
}

// Put writes an object into the bucket.
func (s *Server) Put(t testing.TB, key string, content []byte) {
	t.Helper()
	if _, err := s.client.PutObject(context.Background(), Bucket, key, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}
