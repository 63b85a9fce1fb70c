package cli

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	errConfig    = "cannot read the kubeconfig"
	errNamespace = "cannot tell the namespace"
	errClient    = "cannot make a client of the API server"
	errNameOrURL = "name the function or agent, or give --url"
)

// A session is what every command reads through: the kubeconfig, context
// and namespace as kubectl picks them, and the clients made of them.
type session struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	now     func() time.Time
}

// clients makes the API server's clients and finds the namespace.
func (s *session) clients() (client.Client, kubernetes.Interface, string, error) {
	cfg, err := s.flags.ToRESTConfig()
	if err != nil {
		return nil, nil, "", errors.Wrap(err, errConfig)
	}
	ns, _, err := s.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, nil, "", errors.Wrap(err, errNamespace)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, nil, "", errors.Wrap(err, errClient)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", errors.Wrap(err, errClient)
	}
	return c, kube, ns, nil
}

// find reads the workload a command names.
func (s *session) find(ctx context.Context, name string) (*workload, client.Client, kubernetes.Interface, error) {
	c, kube, ns, err := s.clients()
	if err != nil {
		return nil, nil, nil, err
	}
	w, err := find(ctx, c, ns, name)
	return w, c, kube, err
}

// NewCommand is kubectl-lambda: kubectl's kubeconfig, context and namespace
// flags, and a command for each thing a function's author does from a
// terminal. now tells the time, for the ages status shows.
func NewCommand(streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	s := &session{flags: genericclioptions.NewConfigFlags(true), streams: streams, now: now}
	root := &cobra.Command{
		Use:   "kubectl-lambda",
		Short: "Start functions and run them on this machine, invoke LambdaFunctions, LambdaAgents, Lambdas and Agents, read their logs and status, and rebuild them",
		Long: "NAME is looked up among LambdaFunctions, LambdaAgents, Lambdas and Agents in the namespace;\n" +
			"KIND/NAME (lambdafunction/hello, la/helper, lambda/hello, agent/helper) says which.",
		SilenceUsage: true,
		// kubectl runs it as a plugin: its help says so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl lambda"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	s.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(s.initCommand(), s.runCommand(), s.invokeCommand(), s.logsCommand(), s.statusCommand(), s.rebuildCommand())
	return root
}

// A runFn does what a command does to the workload it names.
type runFn func(ctx context.Context, w *workload, c client.Client, kube kubernetes.Interface) error

// workloadCommand is a command on the one workload its argument names.
func (s *session) workloadCommand(use, short string, run runFn) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, c, kube, err := s.find(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return run(cmd.Context(), w, c, kube)
		},
	}
}

func (s *session) invokeCommand() *cobra.Command {
	o := invokeOptions{}
	timeout := 30 * time.Second
	send := func(ctx context.Context, w *workload, c client.Client, _ kubernetes.Interface) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return invoke(ctx, c, w, o, s.streams.Out)
	}
	cmd := s.workloadCommand("invoke [NAME]", "Send a CloudEvent, or a plain HTTP request, to a function or agent and print its reply", send)
	// With --url, such as kubectl lambda run's, no cluster is read.
	cmd.Args = cobra.RangeArgs(0, 1)
	workloadRun := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if o.url != "" && !o.broker {
			return send(cmd.Context(), nil, nil, nil)
		}
		if len(args) == 0 {
			return errors.New(errNameOrURL)
		}
		return workloadRun(cmd, args)
	}
	f := cmd.Flags()
	f.StringVar(&o.eventType, "type", DefaultEventType, "The event's type.")
	f.StringVar(&o.data, "data", "", "The event's data, or with --http the request's body: JSON (sent as application/json), other text, or @FILE (@- for standard input).")
	f.StringVar(&o.url, "url", "", "Send here instead of the workload's URL, such as kubectl lambda run's or through a port-forward; NAME is not needed, and no cluster is read.")
	f.BoolVar(&o.broker, "broker", false, "Send through the workload's Broker, as its Triggers deliver; a Broker answers without the reply.")
	f.StringVar(&o.ingress, "ingress", "", "Connect to this address (host or host:port) whatever host the URL names, which stays the Host header: an ingress no name resolves to, such as the local cluster's 10.96.0.80.")
	f.BoolVar(&o.http, "http", false, "Send a plain HTTP request instead of an event, as curl does, and print the response's status, headers and body.")
	f.StringVar(&o.method, "method", "", "With --http, the request's method: GET, or POST with --data, unless given.")
	f.StringVar(&o.path, "path", "/", "With --http, the path and query below the URL, such as /orders?id=42.")
	f.DurationVar(&timeout, "timeout", timeout, "How long to wait for the reply.")
	return cmd
}

func (s *session) logsCommand() *cobra.Command {
	o := logsOptions{}
	cmd := s.workloadCommand("logs NAME", "Print the logs of a function's or agent's pods, or of its current build",
		func(ctx context.Context, w *workload, _ client.Client, kube kubernetes.Interface) error {
			return logs(ctx, kube, w, o, s.streams.Out)
		})
	cmd.Flags().BoolVar(&o.build, "build", false, "The current build's fetch and Kaniko containers instead.")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "Keep streaming the logs.")
	return cmd
}

func (s *session) statusCommand() *cobra.Command {
	return s.workloadCommand("status NAME", "Show a function's or agent's phase, build, image, URL, revisions, traffic and conditions",
		func(_ context.Context, w *workload, _ client.Client, _ kubernetes.Interface) error {
			return printStatus(s.streams.Out, w, s.now())
		})
}

func (s *session) rebuildCommand() *cobra.Command {
	return s.workloadCommand("rebuild NAME", "Build a function's code again, even unchanged",
		func(ctx context.Context, w *workload, c client.Client, _ kubernetes.Interface) error {
			return rebuild(ctx, c, w, s.now(), s.streams.Out)
		})
}
