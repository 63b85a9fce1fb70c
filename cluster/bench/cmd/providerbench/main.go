// Command providerbench measures this provider against provider-kubernetes
// at scale on the local control plane: N LambdaFunctions against N Objects
// managing the same Knative Services, with the same poll interval and
// reconcile rate, one after the other in one run. It prints what it measured.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/knative-lambda/provider-knative-lambda/apis"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// peerModule is the wrapper module provider-kubernetes is built from.
const peerModule = "cluster/bench/build/provider-kubernetes"

var scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, servingv1.AddToScheme, apis.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

func main() {
	var (
		app          = kingpin.New("providerbench", "Measure provider-knative-lambda against provider-kubernetes at scale.")
		sizes        = app.Flag("n", "Numbers of functions, each a run per contender.").Default("2000", "10000").Ints()
		inlineSizes  = app.Flag("inline-n", "Numbers of inline-built functions, each a run of this provider only, which also time create to build Job; 0 runs none.").Default("1000").Ints()
		profileSizes = app.Flag("profile-n", "Numbers of functions, each a run of this provider only under Go's CPU profiler through the rush, whose profiles it saves; these runs are left out of the summary, since the profiler costs memory and CPU that the peer does not pay; 0 runs none.").Default("2000").Ints()
		repeat       = app.Flag("repeat", "Runs of each setting; the summary gives medians.").Default("1").Int()
		poll         = app.Flag("poll", "Poll interval of both providers.").Default("30s").Duration()
		rate         = app.Flag("rate", "Max reconcile rate of both providers.").Default("100").Int()
		peer         = app.Flag("peer", "The provider-kubernetes binary; empty runs this provider only.").Default(".cache/peers/provider-kubernetes").String()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	ctrl.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, *sizes, *inlineSizes, *profileSizes, *repeat, *poll, *rate, *peer); err != nil {
		fmt.Fprintln(os.Stderr, "providerbench:", err)
		os.Exit(1)
	}
}

func measure(ctx context.Context, sizes, inlineSizes, profileSizes []int, repeat int, poll time.Duration, rate int, peer string) error {
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return err
	}
	bin, err := process.Build(ctx, root, "provider", "./cmd/provider")
	if err != nil {
		return err
	}
	contenders := []contender{ours(bin, "127.0.0.1:8095")}
	if peer != "" {
		pk, err := providerKubernetes(ctx, root, peer)
		if err != nil {
			return err
		}
		contenders = append(contenders, pk)
	}
	dir := filepath.Join(root, ".cache", "bench", time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	fmt.Printf("providerbench: poll %s, max reconcile rate %d, %d run(s) each; logs in %s\n", poll, rate, repeat, dir)
	var results []*result
	runs := 0
	runOne := func(c contender, s setting) error {
		runDir := filepath.Join(dir, fmt.Sprintf("%s-%d-%v-%d", c.name, s.n, s.inline, runs))
		runs++
		if err := os.MkdirAll(runDir, 0o750); err != nil {
			return err
		}
		r, err := run(ctx, runDir, c, s)
		if err != nil {
			return fmt.Errorf("%s, n=%d: %w", c.name, s.n, err)
		}
		r.print(os.Stdout)
		if !s.profiled {
			results = append(results, r)
		}
		return nil
	}
	window := 2 * poll
	for range repeat {
		for _, n := range sizes {
			// Contenders take turns, so a slow spell of the machine does
			// not land on one of them only.
			for _, c := range contenders {
				if err := runOne(c, setting{n: n, poll: poll, rate: rate, window: window}); err != nil {
					return err
				}
			}
		}
		for _, n := range slices.DeleteFunc(inlineSizes, func(n int) bool { return n <= 0 }) {
			if err := runOne(contenders[0], setting{n: n, inline: true, poll: poll, rate: rate, window: window}); err != nil {
				return err
			}
		}
	}
	for _, n := range slices.DeleteFunc(profileSizes, func(n int) bool { return n <= 0 }) {
		if err := runOne(contenders[0], setting{n: n, profiled: true, poll: poll, rate: rate, window: window}); err != nil {
			return err
		}
	}
	summarise(os.Stdout, results)
	return nil
}
