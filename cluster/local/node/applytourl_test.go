package node

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

// The benchmarks' provider configs: builds as make run's, and the same
// with Kaniko's layer cache in the node's registry, a repository for each
// namespace.
const (
	configNoCache = "bench"
	configCache   = "bench-cache"
)

// applyTimeout bounds one apply's wait for a reply: a cold build and a
// first Revision, on a node busy with the benchmark's others.
const applyTimeout = 5 * time.Minute

// platform is the shared cluster once Prepare installed Crossplane and
// the packages on it, for the benchmarks that apply what teams apply.
var platform struct {
	sync.Once
	kube client.Client
	seed *v1alpha1.LambdaFunction
	err  error
}

// platformClient prepares the shared cluster as make run does, once, with
// the benchmarks' provider configs, and returns a client of it that knows
// this project's kinds.
func platformClient(ctx context.Context, b *testing.B) client.Client {
	b.Helper()
	c := sharedCluster(b)
	platform.Do(func() {
		platform.err = func() error {
			root, err := local.ModuleRoot(ctx, ".")
			if err != nil {
				return err
			}
			if err := c.Prepare(ctx, root, binDir(b)); err != nil {
				return err
			}
			s, err := kinds.TargetScheme()
			if err != nil {
				return err
			}
			if err := apis.AddToScheme(s); err != nil {
				return err
			}
			if platform.kube, err = client.New(c.Config, client.Options{Scheme: s}); err != nil {
				return err
			}
			cached := ProviderConfig(configCache)
			cached.Spec.Build.CacheRepo = ptr.To(v1alpha1.ImageRepository(Registry + "/cache"))
			for _, pc := range []*v1alpha1.ClusterProviderConfig{ProviderConfig(configNoCache), cached} {
				if err := platform.kube.Create(ctx, pc); err != nil {
					return err
				}
			}
			platform.seed, err = seedFunction(filepath.Join(root, "cluster", "local", "cmd", "run", "first-function.yaml"))
			return err
		}()
	})
	if platform.err != nil {
		b.Fatal(platform.err)
	}
	return platform.kube
}

// seedFunction reads make run's first function: the seed's hello-python,
// inline Python 3.11 with a Broker and a Trigger of its own.
func seedFunction(path string) (*v1alpha1.LambdaFunction, error) {
	objs, err := manifest.Read(path)
	if err != nil {
		return nil, err
	}
	fn := &v1alpha1.LambdaFunction{}
	return fn, kruntime.DefaultUnstructuredConverter.FromUnstructured(objs[len(objs)-1].Object, fn)
}

// An applyTimes is what one apply of a function took: to Ready with a URL,
// and to the first reply.
type applyTimes struct {
	ready, replied time.Duration
}

// BenchmarkApplyToURL measures what a team waits for after applying the
// seed's hello-python, through the provider as Crossplane's package manager
// runs it on the node: Kaniko's build, Knative's first Revision, the
// Broker and the Trigger. The time per operation is from the create to
// the first reply through the node's ingress; ready-s is to Ready with a
// URL. Cold applies it in a new namespace, whose cache repository is empty;
// CacheWarm applies it again under another name beside a built one, whose
// layers the cache holds; NoCache builds with the cache off, as make run's
// provider config does; Prebuilt names the built image, with nothing to
// build; CodeChange edits a running function's code and times the reply of
// the new code.
func BenchmarkApplyToURL(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	kube := platformClient(ctx, b)
	seed := platform.seed

	// each times an apply of the seed per operation with the config, in a
	// namespace of its own when newNamespace; with before, the seed is
	// applied once first, and each operation applies what before returns
	// of it, in that namespace.
	each := func(b *testing.B, config string, newNamespace bool, before func(built builtFunction) *v1alpha1.LambdaFunction) {
		ns := tenant(ctx, b, kube)
		fn := seed
		if before != nil {
			b.StopTimer()
			built, _ := apply(ctx, b, kube, seed, ns, config)
			fn = before(built)
			b.StartTimer()
		}
		var all []applyTimes
		for b.Loop() {
			if newNamespace {
				b.StopTimer()
				ns = tenant(ctx, b, kube)
				b.StartTimer()
			}
			_, took := apply(ctx, b, kube, fn, ns, config)
			all = append(all, took)
		}
		reportApplied(b, all)
	}
	b.Run("Cold", func(b *testing.B) { each(b, configCache, true, nil) })
	b.Run("CacheWarm", func(b *testing.B) {
		each(b, configCache, false, func(builtFunction) *v1alpha1.LambdaFunction { return seed })
	})
	b.Run("NoCache", func(b *testing.B) { each(b, configNoCache, true, nil) })
	b.Run("Prebuilt", func(b *testing.B) {
		each(b, configCache, false, func(built builtFunction) *v1alpha1.LambdaFunction { return built.prebuilt(seed) })
	})
	b.Run("CodeChange", func(b *testing.B) {
		b.StopTimer()
		built, _ := apply(ctx, b, kube, seed, tenant(ctx, b, kube), configCache)
		b.StartTimer()
		version := 0
		for b.Loop() {
			version++
			// A merge patch of the code alone, as kubectl edit sends: an
			// update of the whole object lost to the provider's status
			// writes once.
			fn := built.fn.DeepCopy()
			fn.Spec.ForProvider.Source.Inline.Code = strings.Replace(seed.Spec.ForProvider.Source.Inline.Code,
				`"accepted": order.get("id")`, fmt.Sprintf(`"accepted": order.get("id"), "version": %d`, version), 1)
			if err := kube.Patch(ctx, fn, client.MergeFrom(built.fn)); err != nil {
				b.Fatal(err)
			}
			repliesWith(ctx, b, built.url, fmt.Sprintf(`"version":%d`, version))
		}
	})
}

// tenant creates a namespace the benchmarks' provider configs serve, which
// goes, with what it holds, when the benchmark ends.
func tenant(ctx context.Context, b *testing.B, kube client.Client) string {
	b.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-", Labels: map[string]string{TenantLabel: "true"}}}
	if err := kube.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = kube.Delete(context.Background(), ns) })
	return ns.Name
}

// A builtFunction is a function the provider reported Ready, where it
// answers, and the image it serves.
type builtFunction struct {
	fn                      *v1alpha1.LambdaFunction
	url, repository, digest string
}

// prebuilt is fn serving the built image: nothing to build, and no
// runtime, which only built sources take.
func (b builtFunction) prebuilt(fn *v1alpha1.LambdaFunction) *v1alpha1.LambdaFunction {
	fn = fn.DeepCopy()
	fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{
		Repository: v1alpha1.ImageRepository(b.repository),
		Digest:     ptr.To(v1alpha1.ImageDigest(b.digest)),
	}}
	fn.Spec.ForProvider.Runtime = nil
	return fn
}

// apply creates fn under a new name in the namespace, with the provider
// config, and returns it once it answered, with how long it took to Ready
// with a URL and to the first reply.
func apply(ctx context.Context, b *testing.B, kube client.Client, fn *v1alpha1.LambdaFunction, ns, config string) (builtFunction, applyTimes) {
	b.Helper()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	fn = fn.DeepCopy()
	fn.ObjectMeta = metav1.ObjectMeta{Namespace: ns, GenerateName: fn.Name + "-"}
	fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: config}
	start := time.Now()
	if err := kube.Create(ctx, fn); err != nil {
		b.Fatal(err)
	}
	wait.Until(ctx, b, "the function is Ready with a URL", func() string {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(fn), fn); err != nil {
			return err.Error()
		}
		if c := fn.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue || fn.Status.AtProvider.URL == "" {
			return fmt.Sprintf("%s: %s", fn.Status.AtProvider.Phase, c.Message)
		}
		return ""
	})
	took := applyTimes{ready: time.Since(start)}
	repliesWith(ctx, b, fn.Status.AtProvider.URL, `"accepted":42`)
	took.replied = time.Since(start)
	repo, digest, _ := strings.Cut(fn.Status.AtProvider.Image, "@")
	return builtFunction{fn: fn, url: fn.Status.AtProvider.URL, repository: repo, digest: digest}, took
}

// repliesWith sends an order through the node's ingress to the function at
// url until it answers 200 with a reply holding want.
func repliesWith(ctx context.Context, b *testing.B, url, want string) {
	b.Helper()
	wait.Until(ctx, b, "the function replies with "+want, func() string {
		status, body, err := CallFunction(ctx, url, orderType, `{"id": 42}`)
		if err != nil {
			return err.Error()
		}
		if status != http.StatusOK || !strings.Contains(strings.Join(strings.Fields(body), ""), want) {
			return fmt.Sprintf("%d %s", status, body)
		}
		return ""
	})
}

// reportApplied reports the mean time to Ready and to the first reply.
func reportApplied(b *testing.B, all []applyTimes) {
	var sum applyTimes
	for _, a := range all {
		sum.ready += a.ready
		sum.replied += a.replied
	}
	n := float64(len(all))
	b.ReportMetric(sum.ready.Seconds()/n, "ready-s")
	b.ReportMetric(sum.replied.Seconds()/n, "reply-s")
}
