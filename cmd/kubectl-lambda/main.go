// Command kubectl-lambda is the kubectl plugin for provider-knative-lambda:
// on the PATH, kubectl runs it as kubectl lambda.
package main

import (
	"context"
	"os"
	"os/signal"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/knative-lambda/provider-knative-lambda/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cmd := cli.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, time.Now)
	if err := cmd.ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}
