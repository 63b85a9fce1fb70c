// Package s3server runs the Versity S3 gateway, a real S3-compatible server,
// over a folder, for tests that fetch from S3: the provider's source
// resolution against the API server, and builds on the node. The test stops
// it.
package s3server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
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
	ca     []byte
}

// Start runs versitygw from bin, the folder make testservers builds it
// into, on addr over plain HTTP, and makes the bucket.
func Start(t testing.TB, bin, addr string) *Server {
	t.Helper()
	return start(t, bin, addr, nil)
}

// StartTLS runs versitygw as Start does, over HTTPS with a certificate for
// addr's IP signed by a CA of its own, which no system trusts: a server
// that only a client given CA can reach.
func StartTLS(t testing.TB, bin, addr string) *Server {
	t.Helper()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := testca.New("S3 CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueForIP(net.ParseIP(host))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, bin, addr, &tlsFiles{cert: cert, key: key, ca: ca.PEM})
}

// tlsFiles are a server's certificate and key, and the CA that signed them.
type tlsFiles struct {
	cert, key string
	ca        []byte
}

// start runs versitygw, over HTTPS when tf is not nil, and makes the
// bucket.
func start(t testing.TB, bin, addr string, tf *tlsFiles) *Server {
	t.Helper()
	gw := filepath.Join(bin, "versitygw")
	if _, err := os.Stat(gw); err != nil {
		t.Fatalf("no S3 server at %s: run `make testservers` to build it", gw)
	}
	args := []string{"--port", addr, "--access", Access, "--secret", Secret}
	opts := &minio.Options{Creds: credentials.NewStaticV4(Access, Secret, ""), BucketLookup: minio.BucketLookupPath}
	s := &Server{Addr: addr}
	if tf != nil {
		args = append(args, "--cert", tf.cert, "--key", tf.key)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(tf.ca)
		tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The default transport is one.
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		opts.Secure, opts.Transport, s.ca = true, tr, tf.ca
	}
	cmd := exec.Command(gw, append(args, "posix", t.TempDir())...) //nolint:noctx // The test stops it.
	process.ForTest(t, "versitygw", cmd)
	c, err := minio.New(addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait.Until(ctx, t, "the S3 server takes a bucket", func() string {
		return wait.ErrString(c.MakeBucket(ctx, Bucket, minio.MakeBucketOptions{}))
	})
	s.client = c
	return s
}

// Endpoint is the server's URL, as a source's endpoint names it.
func (s *Server) Endpoint() string {
	if s.ca != nil {
		return "https://" + s.Addr
	}
	return "http://" + s.Addr
}

// CA is the PEM certificate a client needs to trust a server StartTLS
// started; nil for one over plain HTTP.
func (s *Server) CA() []byte {
	return s.ca
}

// Put writes an object into the bucket.
func (s *Server) Put(t testing.TB, key string, content []byte) {
	t.Helper()
	if _, err := s.client.PutObject(context.Background(), Bucket, key, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}
