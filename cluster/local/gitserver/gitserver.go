// Package gitserver serves a real git repository over HTTPS, on loopback or
// an address of this machine, with git's own http-backend, for tests that
// fetch from git: the provider's source resolution, Flux's
// source-controller and the node's build pods.
package gitserver

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http/cgi" //nolint:gosec // git-http-backend for tests on loopback; Go fixed Httpoxy in 1.6.3.
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// Branch is the branch every commit goes to.
const Branch = "main"

// A Server is one repository, NAME.git, served by git http-backend behind a
// TLS test server.
type Server struct {
	// HTTP serves the repository; tests reach it through its client or
	// close it to play a server that went away.
	HTTP *httptest.Server

	name string
	work string
	ca   []byte
}

// Start serves an empty repository called name on loopback, with a
// certificate for 127.0.0.1 and example.com; the first Commit creates its
// branch. A machine without git cannot run the server, so the test is
// skipped there (CI installs git).
func Start(t testing.TB, name string) *Server {
	t.Helper()
	s := repository(t, name)
	s.HTTP.StartTLS()
	s.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.HTTP.Certificate().Raw})
	return s
}

// StartOn serves an empty repository called name on an address of this
// machine, IP and port, as Start does, with a certificate for that IP
// signed by a CA of its own: what a cluster's build pods reach over the
// host's link.
func StartOn(t testing.TB, name, addr string) *Server {
	t.Helper()
	s := repository(t, name)
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := testca.New(name + " CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueForIP(net.ParseIP(host))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.HTTP.Listener.Close()
	s.HTTP.Listener = ln
	s.HTTP.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.HTTP.StartTLS()
	s.ca = ca.PEM
	return s
}

// repository makes the bare repository and a clone to commit in, and the
// server for them, not yet started.
func repository(t testing.TB, name string) *Server {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed on this machine, so no git server can run here (CI installs it)")
	}
	root := t.TempDir()
	bare := filepath.Join(root, name+".git")
	s := &Server{name: name, work: filepath.Join(root, "work")}
	s.git(t, root, "init", "-q", "--bare", "-b", Branch, bare)
	s.git(t, root, "init", "-q", "-b", Branch, s.work)
	s.git(t, s.work, "remote", "add", "origin", bare)
	s.HTTP = httptest.NewUnstartedServer(&cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	})
	t.Cleanup(s.HTTP.Close)
	return s
}

// URL is the repository's HTTPS URL.
func (s *Server) URL() string {
	return s.HTTP.URL + "/" + s.name + ".git"
}

// CA is the PEM certificate a client needs to trust the server.
func (s *Server) CA() []byte {
	return s.ca
}

// Commit writes files (path relative to the repository: content), removes
// the paths in remove, commits everything and pushes it; it returns the
// commit.
func (s *Server) Commit(t testing.TB, message string, files map[string][]byte, remove ...string) string {
	t.Helper()
	for p, content := range files {
		path := filepath.Join(s.work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range remove {
		if err := os.Remove(filepath.Join(s.work, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	s.git(t, s.work, "add", "--all")
	s.git(t, s.work, "commit", "-q", "-m", message)
	s.git(t, s.work, "push", "-q", "origin", Branch)
	return s.Head(t)
}

// Head is the commit the branch is at.
func (s *Server) Head(t testing.TB) string {
	t.Helper()
	return s.git(t, s.work, "rev-parse", "HEAD")
}

func (s *Server) git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
