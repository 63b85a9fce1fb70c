// Command runtimebench measures the runtime wrappers that serve every
// function built from source against their language's bare HTTP server,
// the floor, and against the runtimes users would pick instead: Knative
// Functions' faas-js-runtime (Node.js) and func-go (Go), and AWS Lambda's
// aws-lambda-go behind the Lambda runtime interface emulator. Each serves
// the same trivial handler, which echoes a request's JSON body, on loopback
// here, started by the language's own interpreter as kubectl lambda run
// starts ours. It prints, side by side: cold start (process spawn to the
// first 2xx), latency percentiles at concurrency 1 and 16, requests per
// second at 16 (two cores are saturated), and resident memory after the
// load, each the median of the rounds.
package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func main() {
	var (
		app      = kingpin.New("runtimebench", "Measure the runtime wrappers against bare servers and peer runtimes.")
		rounds   = app.Flag("rounds", "Rounds, each of every contender started afresh; the table gives medians.").Default("3").Int()
		duration = app.Flag("duration", "How long each concurrency is measured per round.").Default("3s").Duration()
		colds    = app.Flag("cold-starts", "Cold starts per contender and round.").Default("5").Int()
		peers    = app.Flag("peers", "Folder of the peer runtimes (make runtime-peers).").Default(".cache/peers").String()
		only     = app.Flag("language", "Only this language: python, nodejs or go.").String()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, settings{rounds: *rounds, duration: *duration, colds: *colds, peers: *peers, only: *only}); err != nil {
		fmt.Fprintln(os.Stderr, "runtimebench:", err)
		os.Exit(1)
	}
}

// settings are how much runtimebench measures.
type settings struct {
	rounds   int
	duration time.Duration
	colds    int
	peers    string
	only     string
}

// languages are measured in this order.
var languages = []v1alpha1.Language{v1alpha1.LanguagePython, v1alpha1.LanguageNodeJS, v1alpha1.LanguageGo}

func measure(ctx context.Context, s settings) error {
	peerDir, err := filepath.Abs(s.peers)
	if err != nil {
		return errors.Wrap(err, errWork)
	}
	work, err := os.MkdirTemp("", "runtimebench-")
	if err != nil {
		return errors.Wrap(err, errWork)
	}
	defer os.RemoveAll(work) //nolint:errcheck // A temporary folder.
	var all []*contender
	for _, lang := range languages {
		o, err := ours(ctx, lang, work)
		if err != nil {
			return err
		}
		all = append(all, o...)
	}
	f, err := floors(ctx, work)
	if err != nil {
		return err
	}
	p, err := peers(work, peerDir)
	if err != nil {
		return err
	}
	all = append(all, append(f, p...)...)
	var measuredHere []*contender
	for _, c := range all {
		if s.only == "" || s.only == c.language {
			measuredHere = append(measuredHere, c)
		}
	}
	// Languages together, ours first, then the floor, then the peers.
	slices.SortStableFunc(measuredHere, func(a, b *contender) int {
		return cmp.Or(cmp.Compare(slices.Index(languages, v1alpha1.Language(a.language)), slices.Index(languages, v1alpha1.Language(b.language))),
			cmp.Compare(roleOrder[a.role], roleOrder[b.role]))
	})
	for round := range s.rounds {
		for _, c := range measuredHere {
			if c.missing != "" {
				continue
			}
			fmt.Fprintf(os.Stderr, "round %d/%d: %s %s\n", round+1, s.rounds, c.language, c.name)
			m, err := c.measureRound(ctx, s)
			if err != nil {
				return errors.Wrapf(err, "%s %s", c.language, c.name)
			}
			c.rounds = append(c.rounds, m)
		}
	}
	report(os.Stdout, measuredHere, s)
	return nil
}

var roleOrder = map[string]int{roleOurs: 0, roleFloor: 1, rolePeer: 2}

// sortedKeys are a map's keys in order.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
