package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/gitserver"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// A gitServer is functions.git on a real git server, holding a Python
// handler on main.
type gitServer struct{ *gitserver.Server }

func startGitServer(t *testing.T) gitServer {
	t.Helper()
	s := gitServer{gitserver.Start(t, "functions")}
	s.commit(t, "def handler(event, context):\n    return 1\n")
	return s
}

// commit commits new handler code, pushes it and returns its commit.
func (s gitServer) commit(t *testing.T, code string) string {
	t.Helper()
	return s.Commit(t, "change", map[string][]byte{"main.py": []byte(code)})
}

// resolver reaches the server under any host name, verifying its test
// certificate, as a cluster's DNS would send the name to the git server.
func (s gitServer) resolver() *source.GitResolver {
	tr := s.HTTP.Client().Transport.(*http.Transport).Clone() //nolint:forcetypeassert // httptest's client has one.
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs, ServerName: "example.com", MinVersion: tls.VersionTLS12}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.HTTP.Listener.Addr().String())
	}
	return source.NewGitResolver(&http.Client{Transport: tr})
}

// gitCommitOf is the commit a build Job fetches.
func gitCommitOf(j batchv1.Job) string {
	for _, c := range j.Spec.Template.Spec.InitContainers {
		for _, e := range c.Env {
			if e.Name == "GIT_COMMIT" {
				return e.Value
			}
		}
	}
	return ""
}

// TestGitSource checks that a git source builds the commit its ref resolves
// to on a real git server, builds once more for each new commit, and says
// plainly when a ref does not exist.
func TestGitSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := startGitServer(t)
	first := g.Head(t)
	_, c, ns := newScene(ctx, t, "git", func(d *dependencies) { d.Sources.Git = g.resolver() })
	fn := newFunction(ns, "from-git", "")
	fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: "https://git.lambda.test/functions.git", Ref: "main"}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	js := waitJobs(ctx, t, c, ns, "from-git", 1)
	if got := gitCommitOf(js[0]); got != first {
		t.Fatalf("the build fetches commit %q; main is at %s", got, first)
	}

	second := g.commit(t, "def handler(event, context):\n    return 2\n")
	wait.Until(ctx, t, "a build of the new commit", func() string {
		for _, j := range jobs(ctx, t, c, ns, "from-git") {
			if gitCommitOf(j) == second {
				return ""
			}
		}
		return "no Job fetches " + second
	})
	time.Sleep(3 * testPoll)
	if n := len(jobs(ctx, t, c, ns, "from-git")); n != 2 {
		t.Errorf("two commits made %d builds; want 2", n)
	}

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(mg *v1alpha1.LambdaFunction) {
		mg.Spec.ForProvider.Source.Git.Ref = "no-such-branch"
	})
	wait.Until(ctx, t, "the missing ref is named", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		if r.Reason != "SourceUnresolved" || !strings.Contains(r.Message, `no branch or tag "no-such-branch"`) {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})
	for name, lbls := range map[string]map[string]string{
		"lambda_source_resolve_duration_seconds": {"source": "git"},
		"lambda_source_resolve_errors_total":     {"source": "git", "reason": "SourceUnresolved"},
	} {
		if metricValue(t, name, lbls) < 1 {
			t.Errorf("metric %s%v recorded nothing", name, lbls)
		}
	}
}

// TestFetchFailure checks that a build whose source fetch fails in its init
// container says why, in the fetcher's words, rather than only that the Job
// ran out of retries.
func TestFetchFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := startGitServer(t)
	_, c, ns := newScene(ctx, t, "fetch", func(d *dependencies) { d.Sources.Git = g.resolver() })
	fn := newFunction(ns, "unfetched", "")
	fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: "https://git.lambda.test/functions.git", Ref: "main"}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	job := waitJobs(ctx, t, c, ns, "unfetched", 1)[0]
	const denied = "Cloning into '/workspace/src'...\nfatal: could not read Username for 'https://git.lambda.test': terminal prompts disabled"
	playact.EndJob(ctx, t, c, &job, playact.FetchFails(128, denied))
	wait.Until(ctx, t, "BuildFailed with the fetcher's error", func() string {
		mg := &v1alpha1.LambdaFunction{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(fn), mg); err != nil {
			return err.Error()
		}
		r := mg.GetCondition(xpv2.TypeReady)
		if r.Reason != v1alpha1.ReasonBuildFailed || !strings.Contains(r.Message, "fetching the source failed (init container fetch exited with 128)") || !strings.Contains(r.Message, "could not read Username") {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})
}
