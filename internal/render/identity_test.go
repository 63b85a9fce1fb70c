package render

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// baseSpec is an inline Python function that each case changes in one way.
func baseSpec() v1alpha1.LambdaFunctionParameters {
	return v1alpha1.LambdaFunctionParameters{
		Source: v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{
			Code:         "def handler(event, context):\n    return event\n",
			Dependencies: "requests==2.32.3\n",
			Files:        []v1alpha1.SourceFile{{Path: "util.py", Content: "X = 1\n"}},
		}},
		Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython), Version: ptr.To("3.12"), Handler: ptr.To("main.handler")},
		Build:   &v1alpha1.Build{BuildArgs: map[string]string{"PIP_INDEX_URL": "https://pypi.local/simple"}},
	}
}

func TestBuildIdentity(t *testing.T) {
	cases := map[string]struct {
		reason  string
		change  func(*FunctionInput)
		rebuild bool
	}{
		"Code":         {reason: "New code is a new image.", change: func(in *FunctionInput) { s := &in.Spec; s.Source.Inline.Code += "# v2\n" }, rebuild: true},
		"Dependencies": {reason: "New dependencies are a new image.", change: func(in *FunctionInput) { s := &in.Spec; s.Source.Inline.Dependencies = "requests==2.32.4\n" }, rebuild: true},
		"FileContent":  {reason: "A changed file is a new image.", change: func(in *FunctionInput) { s := &in.Spec; s.Source.Inline.Files[0].Content = "X = 2\n" }, rebuild: true},
		"FilePath":     {reason: "A moved file is a new image.", change: func(in *FunctionInput) { s := &in.Spec; s.Source.Inline.Files[0].Path = "lib/util.py" }, rebuild: true},
		"Language": {reason: "Another language is another build.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Runtime.Language = ptr.To(v1alpha1.LanguageNodeJS)
			s.Runtime.Version = nil
			s.Runtime.Handler = ptr.To("index.handler")
		}, rebuild: true},
		"Version":  {reason: "Another language version is another base image.", change: func(in *FunctionInput) { s := &in.Spec; s.Runtime.Version = ptr.To("3.11") }, rebuild: true},
		"Handler":  {reason: "The handler is baked into the image's environment.", change: func(in *FunctionInput) { s := &in.Spec; s.Runtime.Handler = ptr.To("main.other") }, rebuild: true},
		"Port":     {reason: "The port is baked into the image's environment.", change: func(in *FunctionInput) { s := &in.Spec; s.Runtime.Port = 9000 }, rebuild: true},
		"BuildArg": {reason: "Build arguments change what the build does.", change: func(in *FunctionInput) { s := &in.Spec; s.Build.BuildArgs["EXTRA"] = "1" }, rebuild: true},
		"Registry": {reason: "An image pushed elsewhere must be built there.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Build.Registry = ptr.To(v1alpha1.ImageRepository("other.local/fns"))
		}, rebuild: true},
		"Scaling": {reason: "Scaling is Service configuration.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Scaling = &v1alpha1.Scaling{MinReplicas: ptr.To[int32](2)}
		}},
		"Env": {reason: "Env is Service configuration.", change: func(in *FunctionInput) { s := &in.Spec; s.Env = []v1alpha1.EnvVar{{Name: "A", Value: ptr.To("b")}} }},
		"Eventing": {reason: "Triggers are eventing configuration.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Eventing = &v1alpha1.FunctionEventing{Triggers: []v1alpha1.Trigger{{Name: "t"}}}
		}},
		"Resources": {reason: "Resources are Service configuration.", change: func(in *FunctionInput) { s := &in.Spec; s.Resources = &v1alpha1.Resources{} }},
		"Timeout":   {reason: "The request timeout is Service configuration.", change: func(in *FunctionInput) { s := &in.Spec; s.TimeoutSeconds = ptr.To[int64](30) }},
		"Workload": {reason: "Labels are Service metadata.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Workload = &v1alpha1.WorkloadSettings{Labels: map[string]string{"a": "b"}}
		}},
		"ServiceAccount": {reason: "The service account is Service configuration.", change: func(in *FunctionInput) { s := &in.Spec; s.ServiceAccountName = ptr.To(v1alpha1.DNSSubdomain("fn")) }},
		"BuildTimeout":   {reason: "How long a build may take does not change its output.", change: func(in *FunctionInput) { s := &in.Spec; s.Build.Timeout = ptr.To(v1alpha1.GoDuration("1h")) }},
		"Cache":          {reason: "Layer caching does not change the output.", change: func(in *FunctionInput) { s := &in.Spec; s.Build.Cache = ptr.To(true) }},
		"ExecutorImage":  {reason: "Another Kaniko release builds the same Dockerfile.", change: func(in *FunctionInput) { s := &in.Spec; s.Build.ExecutorImage = ptr.To("registry.local/kaniko:v2") }},
		"PushSecret": {reason: "Push credentials do not change the output.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Build.PushSecretRef = &v1alpha1.LocalObjectReference{Name: "other"}
		}},
		"FileAdded": {reason: "Another file is a new image.", change: func(in *FunctionInput) {
			s := &in.Spec
			s.Source.Inline.Files = append([]v1alpha1.SourceFile{{Path: "a.py"}}, s.Source.Inline.Files...)
		}, rebuild: true},
		"RebuildAsked":    {reason: "A rebuild token asks for a new build of the same code.", change: func(in *FunctionInput) { in.Rebuild = "1" }, rebuild: true},
		"DefaultsSpelled": {reason: "Spelling out the default version changes nothing.", change: func(in *FunctionInput) { s := &in.Spec; s.Runtime.Version = nil }},
	}
	input := func() FunctionInput {
		return FunctionInput{Namespace: "apps", Name: "fn", Spec: baseSpec(), Defaults: testDefaults}
	}
	identity := func(t *testing.T, in FunctionInput) string {
		t.Helper()
		out, err := Function(in)
		if err != nil {
			t.Fatal(err)
		}
		return out.BuildIdentity
	}
	base := identity(t, input())
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input()
			tc.change(&in)
			if rebuilt := identity(t, in) != base; rebuilt != tc.rebuild {
				t.Errorf("\n%s\nidentity changed: %t, want %t", tc.reason, rebuilt, tc.rebuild)
			}
		})
	}

	// The order files are listed in is not content.
	s, r := input(), input()
	s.Spec.Source.Inline.Files = append(s.Spec.Source.Inline.Files, v1alpha1.SourceFile{Path: "b.py"})
	r.Spec.Source.Inline.Files = append([]v1alpha1.SourceFile{{Path: "b.py"}}, r.Spec.Source.Inline.Files...)
	if identity(t, s) != identity(t, r) {
		t.Error("the same files listed in another order changed the build identity")
	}
}

// TestPlainHTTPRebuildsEveryBuild checks that every function built from
// source, inline, git or S3, in every language, builds once more since its
// wrapper serves plain HTTP requests, which the images built before refuse.
// The identities are what b213a8f rendered for the golden functions.
func TestPlainHTTPRebuildsEveryBuild(t *testing.T) {
	before := map[string]string{
		"function-hello-python": "63deee88291f998952181b9203943da03348248134ca627d86c337aeab167975",
		"function-everything":   "0e0d8ad8ce6829d551d721f1233bb516fdae565d035469c38cef1a51e1133ea2",
		"function-invoices":     "d086a9bfbf04b82d3100bba23513006727c30407c2404756001a19acc8f3fdde",
		"function-thumbnails":   "a285370fb1d26ba0d223cf4cf0a980a87415b964c6c486ca7750d4f887db857f",
		"function-private-git":  "c3cc3db23ae2fc285e4072a23ad1b8144c5ee575ccaa174759b4890bdf1856c5",
	}
	seen := 0
	for _, tc := range goldenCases(t) {
		identity, ok := before[tc.name]
		if !ok {
			continue
		}
		seen++
		if tc.objects.BuildIdentity == identity {
			t.Errorf("%s: the build identity is still %s: the image built before would keep a wrapper that refuses plain HTTP", tc.name, identity)
		}
	}
	if seen != len(before) {
		t.Fatalf("found %d of the %d golden functions", seen, len(before))
	}
}
