package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	platform "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/runlocal"
)

const (
	errFmtReadManifest = "cannot read %s"
	errFmtKind         = "%s holds a %s: run takes a LambdaFunction, Lambda, XLambda or LambdaClaim"
	errFmtDecode       = "%s is not a valid %s"
	errImageSource     = "the function runs a prebuilt image, which needs a container engine: run starts code, not images"
	errNoCode          = "the function's code is in git or S3: name its folder on this machine with --dir"
	errFmtStart        = "cannot start %s"
	errFmtExited       = "the function exited before it was ready: %v"
	errFmtEnded        = "the function exited: %v"
	errNotReady        = "the function was not ready in time"
	errFmtLayout       = "cannot lay out the function's files in %s"
)

// stopGrace is how long a stopped function has to finish what it serves,
// as Knative gives a pod's container before it kills it.
const stopGrace = 10 * time.Second

// readyWithin bounds the wait for the wrapper's /ready: Go compiles first.
const readyWithin = 5 * time.Minute

// runOptions are what run starts, and with what.
type runOptions struct {
	manifest string
	// dir holds the code; by default the manifest's folder when it holds
	// the handler's code file, else the manifest's inline code.
	dir    string
	inline bool
	port   int
	// values are files of Secret and ConfigMap manifests the environment
	// reads; fromCluster reads them from the current context instead.
	values      []string
	fromCluster bool
}

// A manifested function is a function's manifest as run reads it.
type manifested struct {
	name, namespace string
	spec            v1alpha1.LambdaFunctionParameters
}

// readManifest reads the function a manifest file declares, decoding it as
// strictly as the API server does.
func readManifest(file string) (manifested, error) {
	b, err := os.ReadFile(file) //nolint:gosec // The file the user names.
	if err != nil {
		return manifested{}, errors.Wrapf(err, errFmtReadManifest, file)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(b, &head); err != nil {
		return manifested{}, errors.Wrapf(err, errFmtReadManifest, file)
	}
	switch head.Kind {
	case v1alpha1.LambdaFunctionKind:
		fn := &v1alpha1.LambdaFunction{}
		if err := yaml.UnmarshalStrict(b, fn); err != nil {
			return manifested{}, errors.Wrapf(err, errFmtDecode, file, head.Kind)
		}
		return manifested{name: fn.Name, namespace: fn.Namespace, spec: fn.Spec.ForProvider}, nil
	case platform.LambdaKind, platform.XLambdaKind, platform.LambdaClaimKind:
		l := &platform.Lambda{}
		if err := yaml.UnmarshalStrict(b, l); err != nil {
			return manifested{}, errors.Wrapf(err, errFmtDecode, file, head.Kind)
		}
		return manifested{name: l.Name, namespace: l.Namespace, spec: l.Spec.LambdaFunctionParameters}, nil
	}
	return manifested{}, errors.Errorf(errFmtKind, file, head.Kind)
}

// runLocal runs the function m, read from o.manifest, on this machine until
// ctx ends: render's Service says its environment, render's runtime its
// wrapper, and the language's own interpreter or toolchain runs it.
func runLocal(ctx context.Context, m manifested, o runOptions, values ValuesFn, out, errOut io.Writer) error {
	if m.spec.Source.Image != nil {
		return errors.New(errImageSource)
	}
	rt, err := render.ResolveRuntime(m.spec.Runtime, render.BuildEnv{})
	if err != nil {
		return err
	}
	container, err := renderedContainer(m)
	if err != nil {
		return err
	}
	env, err := environment(container, values, errOut)
	if err != nil {
		return err
	}
	work, err := workFolder(errOut)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work) //nolint:errcheck // A temporary folder.
	src, err := codeFolder(m, rt, o, work, errOut)
	if err != nil {
		return err
	}
	port := o.port
	if port == 0 {
		if port, err = runlocal.FreePort(ctx); err != nil {
			return err
		}
	}
	p, err := runlocal.Program(work, src, rt)
	if err != nil {
		return err
	}
	if err := runlocal.Install(ctx, p, src, strings.HasPrefix(src, work+string(filepath.Separator)), out, errOut); err != nil {
		return err
	}
	if err := runlocal.Compile(ctx, p, out, errOut); err != nil {
		return err
	}
	if err := runlocal.Tool(p); err != nil {
		return err
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...) //nolint:gosec,noctx // The runtime's own program; stopped by signal, not killed by ctx.
	cmd.Env = append(append(append(os.Environ(), p.Env...), env...), "PORT="+strconv.Itoa(port), "K_SERVICE="+m.name)
	cmd.Stdout, cmd.Stderr = out, errOut
	// The function dies with run, even when run is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return errors.Wrapf(err, errFmtStart, p.Argv[0])
	}
	exited := waitFor(cmd)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := awaitReady(ctx, url, exited); err != nil {
		_ = stop(cmd, exited) // What it logged says more than its exit.
		return err
	}
	fmt.Fprintf(out, "%s runs at %s (Ctrl-C stops it)\n  kubectl lambda invoke --url %s --http --path '/?name=ada'\n  kubectl lambda invoke --url %s --data '{\"name\": \"ada\"}'\n", m.name, url, url, url)
	select {
	case <-exited.done:
		return errors.Errorf(errFmtEnded, exited.err)
	case <-ctx.Done():
		// Stopped by the user: a wrapper ends on SIGTERM, whatever status
		// its language exits with then.
		_ = stop(cmd, exited)
		return nil
	}
}

// workPrefix names run's folders below the system's temporary folder.
const workPrefix = "kubectl-lambda-run-"

// pidFile, in a run's folder, names the run's process.
const pidFile = "run.pid"

// workFolder makes this run's folder, after removing those of runs that
// were killed before they could.
func workFolder(errOut io.Writer) (string, error) {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), workPrefix+"*"))
	for _, dir := range old {
		b, err := os.ReadFile(filepath.Join(dir, pidFile)) //nolint:gosec // run's own file.
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || perr != nil || syscall.Kill(pid, 0) == nil {
			continue
		}
		if os.RemoveAll(dir) == nil {
			fmt.Fprintf(errOut, "Removed %s, left by a run that was killed.\n", dir)
		}
	}
	work, err := os.MkdirTemp("", workPrefix)
	if err != nil {
		return "", errors.Wrapf(err, errFmtLayout, os.TempDir())
	}
	return work, errors.Wrapf(os.WriteFile(filepath.Join(work, pidFile), []byte(strconv.Itoa(os.Getpid())), 0o600), errFmtLayout, work)
}

// renderedContainer renders the function's Service as the provider would
// and returns its container: what run gives the wrapper is what Knative
// would. The source is replaced by a stand-in: the Service does not
// depend on it, and git and S3 are not resolved here.
func renderedContainer(m manifested) (corev1.Container, error) {
	spec := *m.spec.DeepCopy()
	spec.Source = v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "-"}}
	ns := m.namespace
	if ns == "" {
		ns = "default"
	}
	objs, err := render.Function(render.FunctionInput{Namespace: ns, Name: m.name, Spec: spec, Defaults: render.Defaults{Registry: "run.local/lambdas"}})
	if err != nil {
		return corev1.Container{}, err
	}
	if objs, err = objs.Built("sha256:" + strings.Repeat("0", 64)); err != nil {
		return corev1.Container{}, err
	}
	return objs.Service.Spec.Template.Spec.Containers[0], nil
}

// codeFolder is the folder run serves the code from: --dir, the manifest's
// folder when it holds the handler's code file (as init lays it out), or
// the manifest's inline code laid out as its build does. Go's build writes
// into its folder, so Go's code is always copied below work.
func codeFolder(m manifested, rt render.Runtime, o runOptions, work string, errOut io.Writer) (string, error) {
	dir := o.dir
	if dir == "" && !o.inline {
		beside := filepath.Dir(o.manifest)
		if _, err := os.Stat(filepath.Join(beside, rt.CodeFile)); err == nil {
			dir = beside
			if in := m.spec.Source.Inline; in != nil && !sameCode(filepath.Join(beside, rt.CodeFile), in.Code) {
				fmt.Fprintf(errOut, "Running %s of %s, which the manifest's inline code differs from: kubectl apply deploys the manifest's (--inline runs it).\n", rt.CodeFile, beside)
			}
		}
	}
	if dir == "" {
		files, err := render.InlineFiles(m.spec.Source.Inline, rt)
		if err != nil {
			return "", err
		}
		if files == nil {
			return "", errors.New(errNoCode)
		}
		return runlocal.Inline(work, files)
	}
	if rt.Language != v1alpha1.LanguageGo {
		return filepath.Abs(dir)
	}
	src := filepath.Join(work, "src")
	return src, errors.Wrapf(os.CopyFS(src, os.DirFS(dir)), errFmtLayout, src)
}

// sameCode says whether a file holds code.
func sameCode(file, code string) bool {
	b, err := os.ReadFile(file) //nolint:gosec // The function's own file.
	return err == nil && string(b) == code
}

// awaitReady polls the wrapper's /ready until it answers 200.
func awaitReady(ctx context.Context, url string, exited *exit) error {
	ctx, cancel := context.WithTimeout(ctx, readyWithin)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited.done:
			return errors.Errorf(errFmtExited, exited.err)
		case <-ctx.Done():
			return errors.New(errNotReady)
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+render.PathReady, http.NoBody)
		if r, err := http.DefaultClient.Do(req); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
}

// stop ends the function as the kubelet ends a container: SIGTERM to its
// process group, which lets the wrapper finish what it serves, then SIGKILL
// after the grace period. It returns how the function exited.
func stop(cmd *exec.Cmd, exited *exit) error {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited.done
	}
	return exited.err
}

// An exit is how the function's process ended, once it has, for every
// step that waits for it: one that saw it end must not leave the next
// waiting for ever.
type exit struct {
	done chan struct{}
	err  error
}

// waitFor waits for cmd, started, to end.
func waitFor(cmd *exec.Cmd) *exit {
	e := &exit{done: make(chan struct{})}
	go func() {
		e.err = cmd.Wait()
		close(e.done)
	}()
	return e
}
