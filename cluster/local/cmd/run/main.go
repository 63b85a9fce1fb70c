// Command run starts provider-knative-lambda and function-knative-lambda for
// development: the provider against the current kube context when a cluster
// answers, or else against the local cluster it starts itself (a real node
// with Kaniko and Knative, or with --api-server-only an API server alone),
// and the function where crossplane render's Development runtime looks for
// it. It installs the CRDs, applies the first function (on the node) or the
// examples (on the API server alone), and stops everything it started on
// Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

const (
	errReadExamples  = "cannot read the examples"
	errApplyExamples = "cannot apply the examples"
	errFmtExited     = "%s exited"
)

// functionAddress is where crossplane render's Development runtime finds a
// function by default.
const functionAddress = "localhost:9443"

func main() {
	var (
		app        = kingpin.New("run", "Run provider-knative-lambda against the current kube context or a local control plane.")
		forceLocal = app.Flag("local", "Start the local cluster even when the current kube context answers.").Bool()
		apiOnly    = app.Flag("api-server-only", "Start a local API server alone (etcd and kube-apiserver on loopback, with every CRD), not the node: nothing runs what the provider writes.").Bool()
		port       = app.Flag("port", "Port of the local kube-apiserver on 127.0.0.1 with --api-server-only; 0 picks a free one.").Default("0").Int()
		examples   = app.Flag("examples", "Folder of manifests to apply to an API server alone once the provider runs; empty applies none.").Default("examples").String()
		debug      = app.Flag("debug", "Run the provider and the function processes with debug logging (not the node's pods).").Bool()
		toCurrent  = app.Flag("apply-examples-to-current-context", "Apply the examples to the current kube context too; without it they go only to a local control plane this command started.").Bool()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	// The clients' own logs say nothing run's output does not.
	ctrllog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, options{forceLocal: *forceLocal, apiOnly: *apiOnly, port: *port, examples: *examples, debug: *debug, examplesToCurrent: *toCurrent}); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

// options of a run.
type options struct {
	forceLocal bool
	apiOnly    bool
	port       int
	examples   string
	debug      bool
	// examplesToCurrent applies the examples to a cluster this command did
	// not start: they create namespaces and workloads there.
	examplesToCurrent bool
}

func run(ctx context.Context, o options) error {
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return err
	}
	cacheDir := filepath.Join(root, ".cache")

	cfg, kubeconfig := currentContext(ctx)
	isLocal := o.forceLocal || o.apiOnly || cfg == nil
	var cluster *node.Cluster
	switch {
	case isLocal && !o.apiOnly:
		cluster, err = startNode(ctx, root, filepath.Join(cacheDir, "bin"))
		if err != nil {
			return err
		}
		defer stopping("the local cluster", cluster.Stop)
		cfg, kubeconfig = cluster.Config, cluster.Kubeconfig
		fmt.Printf("Local cluster at %s\nReach it with:\n  export KUBECONFIG=%s\n", cfg.Host, kubeconfig)
	case isLocal:
		fmt.Println("Starting a local API server alone (etcd and kube-apiserver): nothing runs what the provider writes.")
		cp, err := local.StartWithAllCRDs(ctx, local.Options{Port: o.port, DataDir: cacheDir})
		if err != nil {
			return err
		}
		defer stopping("the local control plane", cp.Stop)
		kubeconfig = filepath.Join(cacheDir, "local", "kubeconfig")
		if err := cp.WriteKubeconfig(kubeconfig); err != nil {
			return err
		}
		cfg = cp.Config
		fmt.Printf("Local control plane at %s\nReach it with:\n  export KUBECONFIG=%s\n", cfg.Host, kubeconfig)
	default:
		fmt.Printf("Using the current kube context (%s).\n", cfg.Host)
		crds, err := local.LoadCRDs(local.OwnCRDsDir(root))
		if err != nil {
			return err
		}
		if err := local.InstallCRDs(cfg, crds); err != nil {
			return err
		}
	}

	args := []string{"--metrics-bind-address=127.0.0.1:8085", "--health-probe-bind-address=127.0.0.1:8086"}
	fnArgs := []string{"--insecure", "--address=" + functionAddress, "--metrics-address=127.0.0.1:8087"}
	if o.debug {
		args, fnArgs = append(args, "--debug"), append(fnArgs, "--debug")
	}
	// On the node the package manager runs the provider, as a pod; a
	// Process that was never started never exits (its Exited is nil).
	provider := &process.Process{Name: "provider"}
	if cluster == nil {
		if provider, err = startBuilt(ctx, root, "provider", "./cmd/provider", []string{"KUBECONFIG=" + kubeconfig}, args...); err != nil {
			return err
		}
		defer provider.Stop()
	}
	fn, err := startBuilt(ctx, root, "function-knative-lambda", "./fn", nil, fnArgs...)
	if err != nil {
		return err
	}
	defer fn.Stop()

	switch {
	case cluster != nil:
		objs, err := nodeObjects()
		if err != nil {
			return err
		}
		if err := local.Apply(ctx, cfg, objs); err != nil {
			return errors.Wrap(err, errApplyExamples)
		}
		if err := awaitFirst(ctx, cfg, objs); err != nil {
			return err
		}
	case o.examples == "":
	case !isLocal && !o.examplesToCurrent:
		fmt.Printf("Not applying %s to %s, which this command did not start: pass --apply-examples-to-current-context to apply them there.\n", o.examples, cfg.Host)
	default:
		objs, err := local.Examples(filepath.Join(root, o.examples))
		if err != nil {
			return errors.Wrap(err, errReadExamples)
		}
		if err := local.Apply(ctx, cfg, objs); err != nil {
			return errors.Wrap(err, errApplyExamples)
		}
		fmt.Printf("Applied %d example objects from %s. Try: kubectl get knative-lambda -A\n", len(objs), o.examples)
	}
	if cluster != nil {
		fmt.Printf("The provider and the function run as pods in %s, installed by Crossplane's package manager from the node's registry: kubectl -n %s get pods\n", node.CrossplaneNamespace, node.CrossplaneNamespace)
	} else {
		fmt.Println("Provider running.")
	}
	fmt.Printf("Function serving crossplane render at %s; try:\n"+
		"  .cache/bin/crossplane render examples/platform/xrs/python-inline.yaml package/configuration/composition-lambdas-direct.yaml cluster/local/functions.yaml --required-resources=examples/clusterproviderconfig.yaml\n"+
		"Press Ctrl-C to stop everything this command started.\n", functionAddress)

	select {
	case <-ctx.Done():
		return nil
	case err := <-provider.Exited:
		return errors.Wrapf(err, errFmtExited, provider.Name)
	case err := <-fn.Exited:
		return errors.Wrapf(err, errFmtExited, fn.Name)
	}
}

// startBuilt builds the command pkg of this module and starts it.
func startBuilt(ctx context.Context, root, name, pkg string, env []string, args ...string) (*process.Process, error) {
	bin, err := process.Build(ctx, root, name, pkg)
	if err != nil {
		return nil, err
	}
	return process.Start(name, bin, process.Options{Env: env}, args...)
}

// stopping stops what run started, saying so.
func stopping(what string, stop func() error) {
	fmt.Println("Stopping " + what + ".")
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
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
