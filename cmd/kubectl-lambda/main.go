// Command kubectl-lambda is the kubectl plugin for provider-knative-lambda:
// on the PATH, kubectl runs it as kubectl lambda.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/knative-lambda/provider-knative-lambda/internal/cli"
)

func main() {
	// kubectl lambda run stops its function on any of these, as a
	// terminal's Ctrl-C, a closed terminal or a supervisor's stop send them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, time.Now)
	if err := cmd.ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}
