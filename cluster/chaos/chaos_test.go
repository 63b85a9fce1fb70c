package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
)

// The size of the run. go test's defaults are the fast subset make test
// runs; make chaos runs 300 functions through 10 kills.
var (
	functions   = flag.Int("chaos.functions", 24, "LambdaFunctions to converge and then delete; half of them build an image")
	kills       = flag.Int("chaos.kills", 3, "times the provider is killed while the functions converge")
	deleteKills = flag.Int("chaos.delete-kills", 1, "times the provider is killed while they are deleted")
	restarts    = flag.Bool("chaos.restarts", true, "restart kube-apiserver once and etcd once while the functions converge")
	seed        = flag.Uint64("chaos.seed", 0, "seed of the fault schedule; 0 picks one from the clock")
	settle      = flag.Duration("chaos.settle", 5*time.Minute, "how long after the last fault everything must take to settle")
)

// namespace is where the functions live.
const namespace = "chaos"

// TestChaos converges functions while the provider is killed and the
// control plane restarts, then deletes them while the provider is killed
// again, and checks: every function Ready, one Job per build identity ever,
// no object without its function, nothing left after deletion, no crash.
func TestChaos(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The test's own informers would log through controller-runtime.
	ctrllog.SetLogger(logr.Discard())
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(s, 0)) //nolint:gosec // A fault schedule, not a secret.
	fig := &figures{seed: s, functions: *functions}

	dir := t.TempDir()
	cp, kubeconfig, kube := newStage(ctx, t, dir, namespace)
	// The garbage collector deletes a deleted function's usage of its
	// provider config, and a deleted Job's pods, as in a cluster.
	gcLog, err := os.Create(filepath.Join(dir, "kube-controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := local.StartGarbageCollector("", kubeconfig, gcLog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gc.Stop)
	ledger, err := watchJobs(ctx, cp.Config, namespace)
	if err != nil {
		t.Fatal(err)
	}
	act := &actor{kube: kube, ns: namespace}
	go act.run(ctx)
	prov := startProvider(ctx, t, kubeconfig, dir)

	// Converge through faults.
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(8)
	for i := range *functions {
		if builds(i) {
			fig.builds++
		}
		g.Go(func() error { return kube.Create(ctx, newFunction(namespace, i)) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	faults := converging(rng, *kills, *restarts)
	for _, f := range faults {
		time.Sleep(f.after)
		fig.readyAtFault = append(fig.readyAtFault, ready(ctx, kube))
		f.do(t, prov, cp)
	}
	fig.kills, fig.apiRestarts, fig.etcdRestarts = tally(faults)
	lastFault := time.Now()
	settleCtx, done := context.WithTimeout(ctx, *settle)
	defer done()
	wait.Until(settleCtx, t, "every function Ready and Synced", func() string { return notReady(ctx, kube) })
	fig.converged, fig.settled = time.Since(start), time.Since(lastFault)

	fig.jobsCreated, fig.builtTwice = ledger.created()
	jobs := &batchv1.JobList{}
	if err := kube.List(ctx, jobs, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	if fig.jobsCreated != fig.builds || len(fig.builtTwice) > 0 || len(jobs.Items) != fig.builds {
		t.Errorf("%d functions build; %d Jobs were ever created and %d exist; built more than once: %v", fig.builds, fig.jobsCreated, len(jobs.Items), fig.builtTwice)
	}
	fns := &lists.LambdaFunctionList{}
	if err := kube.List(ctx, fns, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	objs, err := ourObjects(ctx, kube, namespace)
	if err != nil {
		t.Fatal(err)
	}
	fig.objectsHeld = count(objs)
	if fig.orphans = orphans(objs, fns.Items); len(fig.orphans) > 0 {
		t.Errorf("objects without their function: %v", fig.orphans)
	}

	// Delete through faults.
	start = time.Now()
	if err := kube.DeleteAllOf(ctx, &v1alpha1.LambdaFunction{}, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	for range *deleteKills {
		time.Sleep(gap(rng, 500*time.Millisecond, 2*time.Second))
		fig.deleteKills++
		if err := prov.kill(); err != nil {
			t.Fatal(err)
		}
	}
	settleCtx, done = context.WithTimeout(ctx, *settle)
	defer done()
	wait.Until(settleCtx, t, "nothing left of any function", func() string {
		left, err := leftovers(ctx, kube)
		if err != nil {
			return err.Error()
		}
		return strings.Join(left, ", ")
	})
	fig.deleted = time.Since(start)
	left, err := leftovers(ctx, kube)
	if err != nil {
		t.Fatal(err)
	}
	fig.leftovers = len(left)
	// The provider config is released once nothing uses it.
	if err := kube.Delete(ctx, newProviderConfig(namespace)); err != nil {
		t.Fatal(err)
	}
	wait.Until(settleCtx, t, "the ProviderConfig is gone", func() string {
		return wait.ErrString(client.IgnoreNotFound(kube.Get(ctx, client.ObjectKeyFromObject(newProviderConfig(namespace)), &v1alpha1.ProviderConfig{})))
	})

	fig.crashes = prov.check()
	if len(fig.crashes) > 0 {
		t.Errorf("the provider crashed: %v", fig.crashes)
	}
	fig.failedWrites = act.failed.Load()
	t.Log(fig)
}

// ready counts functions that are Ready; a list that fails counts -1.
func ready(ctx context.Context, c client.Client) int {
	l := &lists.LambdaFunctionList{}
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return -1
	}
	n := 0
	for _, fn := range l.Items {
		if fn.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			n++
		}
	}
	return n
}

// notReady names the functions not Ready and Synced, with why, or says
// how many are missing.
func notReady(ctx context.Context, c client.Client) string {
	l := &lists.LambdaFunctionList{}
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return err.Error()
	}
	if len(l.Items) != *functions {
		return fmt.Sprintf("%d functions, want %d", len(l.Items), *functions)
	}
	var stuck []string
	for _, fn := range l.Items {
		r, s := fn.GetCondition(xpv2.TypeReady), fn.GetCondition(xpv2.TypeSynced)
		if r.Status != corev1.ConditionTrue || s.Status != corev1.ConditionTrue {
			stuck = append(stuck, fmt.Sprintf("%s (Ready %s %s %q, Synced %s %q)", fn.Name, r.Status, r.Reason, r.Message, s.Status, s.Message))
		}
	}
	sort.Strings(stuck)
	if len(stuck) > 5 {
		stuck = append(stuck[:5], fmt.Sprintf("and %d more", len(stuck)-5))
	}
	return strings.Join(stuck, "; ")
}

// leftovers names what is left after every function was deleted: the
// functions themselves, their usages of the provider config, and any object
// the provider made.
func leftovers(ctx context.Context, c client.Client) ([]string, error) {
	var left []string
	for _, l := range []client.ObjectList{&lists.LambdaFunctionList{}, &lists.ProviderConfigUsageList{}} {
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		if n := apimeta.LenList(l); n > 0 {
			left = append(left, fmt.Sprintf("%d %T", n, l))
		}
	}
	objs, err := ourObjects(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	for kind, l := range objs {
		left = append(left, fmt.Sprintf("%d %s", len(l), kind))
	}
	sort.Strings(left)
	return left, nil
}
