// Command run starts provider-knative-lambda for development: against the
// current kube context when a cluster answers, or else against a local
// control plane it starts itself. It installs the CRDs, runs the provider,
// applies the examples, and stops everything it started on Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

const (
	errBuildProvider = "cannot build the provider"
	errStartProvider = "cannot start the provider"
	errReadExamples  = "cannot read the examples"
	errApplyExamples = "cannot apply the examples"
)

func main() {
	var (
		app        = kingpin.New("run", "Run provider-knative-lambda against the current kube context or a local control plane.")
		forceLocal = app.Flag("local", "Start a local control plane even when the current kube context answers.").Bool()
		port       = app.Flag("port", "Port of the local kube-apiserver on 127.0.0.1; 0 picks a free one.").Default("0").Int()
		examples   = app.Flag("examples", "Folder of manifests to apply once the provider runs; empty applies none.").Default("examples").String()
		debug      = app.Flag("debug", "Run the provider with debug logging.").Bool()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *forceLocal, *port, *examples, *debug); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, forceLocal bool, port int, examples string, debug bool) error {
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return err
	}
	cacheDir := filepath.Join(root, ".cache")

	cfg, kubeconfig := currentContext(ctx)
	if forceLocal || cfg == nil {
		fmt.Println("No cluster answers on the current kube context: starting a local control plane (etcd and kube-apiserver).")
		cp, err := local.StartWithAllCRDs(ctx, local.Options{Port: port, DataDir: cacheDir})
		if err != nil {
			return err
		}
		defer func() {
			fmt.Println("Stopping the local control plane.")
			if err := cp.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
		kubeconfig = filepath.Join(cacheDir, "local", "kubeconfig")
		if err := cp.WriteKubeconfig(kubeconfig); err != nil {
			return err
		}
		cfg = cp.Config
		fmt.Printf("Local control plane at %s\nReach it with:\n  export KUBECONFIG=%s\n", cfg.Host, kubeconfig)
	} else {
		fmt.Printf("Using the current kube context (%s).\n", cfg.Host)
		crds, err := local.LoadCRDs(local.OwnCRDsDir(root))
		if err != nil {
			return err
		}
		if err := local.InstallCRDs(cfg, crds); err != nil {
			return err
		}
	}

	provider, err := startProvider(ctx, root, kubeconfig, debug)
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- provider.Wait() }()

	if examples != "" {
		objs, err := local.ReadManifests(filepath.Join(root, examples))
		if err != nil {
			stopProvider(provider, exited)
			return errors.Wrap(err, errReadExamples)
		}
		if err := local.Apply(ctx, cfg, objs); err != nil {
			stopProvider(provider, exited)
			return errors.Wrap(err, errApplyExamples)
		}
		fmt.Printf("Applied %d example objects from %s. Try: kubectl get lambda -A\n", len(objs), examples)
	}
	fmt.Println("Provider running. Press Ctrl-C to stop everything this command started.")

	select {
	case <-ctx.Done():
		stopProvider(provider, exited)
		return nil
	case err := <-exited:
		return errors.Wrap(err, "the provider exited")
	}
}

// currentContext returns the REST config and kubeconfig path of the current
// kube context when its API server answers, or nil.
func currentContext(ctx context.Context) (*rest.Config, string) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, ""
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 3 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return nil, ""
	}
	if _, err := dc.ServerVersion(); err != nil || ctx.Err() != nil {
		return nil, ""
	}
	return cfg, rules.GetDefaultFilename()
}

// startProvider builds the provider and starts it as a child process that
// dies with this one.
func startProvider(ctx context.Context, root, kubeconfig string, debug bool) (*exec.Cmd, error) {
	bin := filepath.Join(root, ".cache", "bin", "provider")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/provider")
	build.Dir, build.Stdout, build.Stderr = root, os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return nil, errors.Wrap(err, errBuildProvider)
	}
	args := []string{"--metrics-bind-address=127.0.0.1:8085", "--health-probe-bind-address=127.0.0.1:8086"}
	if debug {
		args = append(args, "--debug")
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // Our own binary, just built.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, errors.Wrap(cmd.Start(), errStartProvider)
}

// stopProvider asks the provider to stop and kills it if it does not.
func stopProvider(cmd *exec.Cmd, exited <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}
