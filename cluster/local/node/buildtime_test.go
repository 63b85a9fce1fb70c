package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// BenchmarkBuild measures real Kaniko building each runtime's inline
// function on the node and pushing it to the node's registry, with the
// layer cache on, from the Job's create to the kubelet's report of
// Kaniko's exit with the digest, where the provider deploys it: the first
// build of a namespace, whose cache is empty (first-s), and the builds
// after it, each of changed code, which may use it (cached-s). The time per
// operation is their mean. Each is split by phase as splitBuild does
// (first-pull-s, cached-pull-s, ...), and job is how much later the Job
// controller ended the Job.
func BenchmarkBuild(b *testing.B) {
	perRuntime(b, builds)
}

func builds(b *testing.B, rt runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, kube := sharedCluster(b), targetClient(b)
	base := publishBase(ctx, b, c, rt)
	ns := testkit.Namespace(ctx, b, kube, "builds-", "")
	var took []time.Duration
	var splits []map[string]time.Duration
	for b.Loop() {
		b.StopTimer()
		changed := rt
		changed.name = fmt.Sprintf("%s-%d", rt.name, len(took))
		// Trailing lines change the code's layer in every language.
		changed.code += strings.Repeat("\n", len(took))
		objs := renderInlineIn(b, ns, changed, base, nil, func(p *v1alpha1.LambdaFunctionParameters) {
			p.Build = &v1alpha1.Build{Cache: ptr.To(true)}
		})
		start := time.Now()
		b.StartTimer()
		createBuild(ctx, b, kube, objs)
		job, pods := awaitBuild(ctx, b, kube, objs.BuildJob, buildEnded)
		b.StopTimer()
		took = append(took, time.Since(start))
		if out := observe.OutcomeOf(job, pods); !out.Done {
			b.Fatalf("the build of %s failed (%s): %s", changed.name, out.Cause, out.Message)
		}
		split := buildSplit(ctx, b, c, job, pods, took[len(took)-1])
		awaitBuild(ctx, b, kube, job, jobFinished)
		split[phaseJob] = time.Since(start) - took[len(took)-1]
		splits = append(splits, split)
		b.StartTimer()
	}
	reportBuilds(b, "first-", took[:1], splits[:1])
	reportBuilds(b, "cached-", took[1:], splits[1:])
}

// reportBuilds reports the mean time of the builds, and of each phase of
// them, as metrics named with the prefix; nothing without builds.
func reportBuilds(b *testing.B, prefix string, took []time.Duration, splits []map[string]time.Duration) {
	if len(took) == 0 {
		return
	}
	mean := func(of func(int) time.Duration) float64 {
		var sum time.Duration
		for i := range took {
			sum += of(i)
		}
		return sum.Seconds() / float64(len(took))
	}
	b.ReportMetric(mean(func(i int) time.Duration { return took[i] }), prefix+"s")
	for _, p := range buildPhases {
		b.ReportMetric(mean(func(i int) time.Duration { return splits[i][p] }), prefix+p+"-s")
	}
}
