//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
)

// What run says: where the local cluster's kubeconfig is, and that the
// first function is Ready.
var (
	kubeconfigLine = regexp.MustCompile(`export KUBECONFIG=(\S+)`)
	readyLine      = regexp.MustCompile(`is Ready at (\S+),`)
)

// TestRunServesFirstFunction runs the README's first command as a new
// user does on a machine without a cluster: make run's program starts the
// local cluster, installs Crossplane and the packages, whose pods run the
// provider and the function, and applies the first function, which Kaniko
// builds and Knative serves; the curls it prints, an event and a plain
// GET, must answer with the handler's replies. Then the function goes
// through what a team does next, through the provider (lifecycle.run) and
// as a platform XR (xrLifecycle.run), a Node.js function with a schedule is
// built from S3 both ways (fromS3) and a Go function from git (fromGit),
// all at once. Ctrl-C then leaves nothing behind. It logs the times users
// judge it by: apply to Ready, and to the first reply.
func TestRunServesFirstFunction(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "run")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cluster/local/cmd/run")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build run: %v: %s", err, out)
	}
	// --local: the node, even where a kube context answers.
	cmd := exec.CommandContext(ctx, bin, "--local")
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := <-exited; err != nil {
			t.Logf("run ended: %v", err)
		}
	}()

	lines := bufio.NewScanner(out)
	var applied time.Time
	var fnURL, kubeconfig string
	for fnURL == "" && lines.Scan() {
		line := lines.Text()
		t.Log(line)
		if m := kubeconfigLine.FindStringSubmatch(line); m != nil {
			kubeconfig = m[1]
		}
		switch m := readyLine.FindStringSubmatch(line); {
		case strings.HasPrefix(line, "Applied the first function"):
			applied = time.Now()
		case m != nil:
			fnURL = m[1]
		}
	}
	// The rest of run's output, until it exits.
	go func() {
		for lines.Scan() {
			t.Log(lines.Text())
		}
		exited <- cmd.Wait()
	}()
	if fnURL == "" {
		t.Fatal("run never said the first function is Ready")
	}
	t.Logf("the first function was Ready %s after run applied it", time.Since(applied).Round(time.Second))

	status, body := order(ctx, t, fnURL)
	if status != http.StatusOK || strings.Join(strings.Fields(body), "") != `{"accepted":42}` {
		t.Errorf("the first function answered %d %q; want 200 with the handler's reply", status, body)
	}
	t.Logf("the first reply came %s after run applied the function", time.Since(applied).Round(time.Second))
	// The plain curl run prints: the handler answers from the query.
	if status, body, err := node.GetFunction(ctx, fnURL, "id=42"); err != nil || status != http.StatusOK || strings.Join(strings.Fields(body), "") != `{"accepted":"42"}` {
		t.Errorf("a plain GET of the first function got %d %q (%v); want 200 with the handler's answer to the query", status, body, err)
	}
	invokes(ctx, t, kubeconfig)
	logsInvocations(ctx, t, kubeconfig)
	// What teams do next, at once, as teams do: each stage has its own
	// workloads and Brokers, and most of each is waiting on Kaniko and
	// Knative. The group ends when every stage has.
	t.Run("Teams", func(t *testing.T) {
		for name, stage := range map[string]func(context.Context, *testing.T){
			"Lifecycle":   newLifecycle(t, kubeconfig, fnURL).run,
			"XRLifecycle": newXRLifecycle(t, kubeconfig).run,
			"FromS3":      func(ctx context.Context, t *testing.T) { fromS3(ctx, t, kubeconfig) },
			"FromGit":     func(ctx context.Context, t *testing.T) { fromGit(ctx, t, kubeconfig) },
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				stage(ctx, t)
			})
		}
	})

	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("run did not end cleanly on Ctrl-C: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("run did not end within 2 minutes of Ctrl-C")
	}
	if ns, _ := exec.CommandContext(ctx, "ip", "netns", "list").Output(); bytes.Contains(ns, []byte(node.NetNS)) {
		t.Errorf("run left the network namespace %s", node.NetNS)
	}
}

// order sends the order event run's curl line sends, through the node's
// ingress as curl does, and returns the reply's status and body.
func order(ctx context.Context, t *testing.T, fnURL string) (int, string) {
	t.Helper()
	status, body, err := node.CallFunction(ctx, fnURL, "com.example.order.created", `{"id": 42}`)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// invokes runs the kubectl plugin's invoke as run's output says, through
// the node's ingress, and checks the handler's reply event.
func invokes(ctx context.Context, t *testing.T, kubeconfig string) {
	t.Helper()
	out := plugin(ctx, t, kubeconfig, "invoke", "hello", "-n", "functions",
		"--ingress", node.IngressIP, "--type", "com.example.order.created", "--data", `{"id": 42}`)
	var reply struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(out, &reply); err != nil || reply.Type != "com.example.order.created.response" || reply.Data["accepted"] != float64(42) {
		t.Errorf("kubectl lambda invoke printed %s (%v); want the handler's reply event", out, err)
	}
}

// logsInvocations runs the kubectl plugin's logs, which reads the real
// kubelet's container log through kube-apiserver, and checks that it prints
// the invocation line of the event invokes sent.
func logsInvocations(ctx context.Context, t *testing.T, kubeconfig string) {
	t.Helper()
	out := plugin(ctx, t, kubeconfig, "logs", "hello", "-n", "functions")
	if !bytes.Contains(out, []byte(`"msg":"invocation"`)) {
		t.Errorf("kubectl lambda logs printed %s; want the function's invocation lines", out)
	}
}

// plugin runs the kubectl plugin with args against the cluster of
// kubeconfig and returns what it printed.
func plugin(ctx context.Context, t *testing.T, kubeconfig string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/kubectl-lambda"}, args...)...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl lambda %s: %v: %s", args[0], err, out)
	}
	return out
}
