package render

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestBuildLimits checks what of a build a team may choose: the executor
// only among the platform's images, the timeout only up to its maximum,
// the fetchers never; and that its layer cache is its namespace's own.
func TestBuildLimits(t *testing.T) {
	const allowed = "registry.local/kaniko/executor:v1.28.2"
	base := func(build *v1alpha1.Build, src v1alpha1.FunctionSource) FunctionInput {
		return FunctionInput{
			Namespace: "apps", Name: "hello",
			Spec:     v1alpha1.LambdaFunctionParameters{Source: src, Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)}, Build: build},
			Defaults: Defaults{Registry: "registry.local/lambdas", AllowedExecutorImages: []string{allowed}, GitFetcherImage: "registry.local/tools/git:2.49", MaxTimeout: time.Hour},
			Observed: Observed{SourceIdentity: strings.Repeat("a", 40)},
		}
	}
	inline := v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}}
	git := v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: "https://git.example.com/fns.git", Ref: "main"}}
	cases := map[string]struct {
		reason string
		in     FunctionInput
		err    string
	}{
		"ForeignExecutor": {
			reason: "An executor the platform did not choose.",
			in:     base(&v1alpha1.Build{ExecutorImage: ptr.To("attacker.example/kaniko:latest")}, inline),
			err:    "build.executorImage attacker.example/kaniko:latest is not an executor the provider config allows",
		},
		"AllowedExecutor": {
			reason: "An executor among the allowed ones.",
			in:     base(&v1alpha1.Build{ExecutorImage: ptr.To(allowed)}, inline),
		},
		"LongTimeout": {
			reason: "A timeout over the provider config's maximum.",
			in:     base(&v1alpha1.Build{Timeout: ptr.To(v1alpha1.GoDuration("2h"))}, inline),
			err:    "build.timeout 2h0m0s is longer than the 1h0m0s the provider config allows",
		},
		"DefaultMaximum": {
			reason: "Without a maximum, 30 minutes.",
			in: func() FunctionInput {
				in := base(&v1alpha1.Build{Timeout: ptr.To(v1alpha1.GoDuration("45m"))}, inline)
				in.Defaults.MaxTimeout = 0
				return in
			}(),
			err: "longer than the 30m0s",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Function(tc.in)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("\n%s\nFunction(...): %v; want an error with %q", tc.reason, err, tc.err)
			}
		})
	}

	objs, err := Function(base(nil, git))
	if err != nil {
		t.Fatal(err)
	}
	if got := objs.BuildJob.Spec.Template.Spec.InitContainers[0].Image; got != "registry.local/tools/git:2.49" {
		t.Errorf("the git fetcher is %s; want the provider config's", got)
	}

	cache := func(cacheRepo, ns string) string {
		t.Helper()
		in := base(&v1alpha1.Build{Cache: ptr.To(true)}, inline)
		in.Namespace, in.Defaults.CacheRepo = ns, cacheRepo
		objs, err := Function(in)
		if err != nil {
			t.Fatal(err)
		}
		args := objs.BuildJob.Spec.Template.Spec.Containers[0].Args
		i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--cache-repo=") })
		if i < 0 {
			t.Fatalf("no --cache-repo in %v", args)
		}
		return strings.TrimPrefix(args[i], "--cache-repo=")
	}
	for _, tc := range []struct{ repo, ns, want string }{
		{"", "apps", "registry.local/lambdas/apps/cache"},
		{"registry.local/cache", "apps", "registry.local/cache/apps"},
		{"registry.local/cache", "payments", "registry.local/cache/payments"},
	} {
		if got := cache(tc.repo, tc.ns); got != tc.want {
			t.Errorf("cache repository of namespace %s with cacheRepo %q: %s; want %s", tc.ns, tc.repo, got, tc.want)
		}
	}
}
