package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// fromImages are the images a Dockerfile's first and last stages start from.
func fromImages(t *testing.T, dockerfile string) (first, last string) {
	t.Helper()
	for _, n := range instructions(t, dockerfile) {
		if !strings.EqualFold(n.Value, "from") {
			continue
		}
		if first == "" {
			first = n.Next.Value
		}
		last = n.Next.Value
	}
	return first, last
}

// TestBaseImages checks which image a build starts from under a platform's
// base images: the entry for the function's version, else the language's
// entry for any version with {version} replaced, else the public image.
func TestBaseImages(t *testing.T) {
	const pinned = "mirror.local/python@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	platform := []v1alpha1.BaseImage{
		{Language: v1alpha1.LanguagePython, Image: "mirror.local/library/python:{version}-slim"},
		{Language: v1alpha1.LanguagePython, Version: ptr.To("3.11"), Image: pinned},
		{Language: v1alpha1.LanguageGo, Image: "mirror.local/golang:{version}", RunImage: ptr.To[v1alpha1.BaseImageReference]("mirror.local/static:nonroot")},
	}
	cases := map[string]struct {
		reason         string
		lang           v1alpha1.Language
		version        string
		images         []v1alpha1.BaseImage
		wantFrom, want string
	}{
		"Public": {
			reason: "Without the platform's images, the public ones.",
			lang:   v1alpha1.LanguagePython, version: "3.12",
			wantFrom: "python:3.12-slim", want: "python:3.12-slim",
		},
		"AnyVersion": {
			reason: "The language's entry without a version serves every version without its own, with the version in its tag.",
			lang:   v1alpha1.LanguagePython, version: "3.12", images: platform,
			wantFrom: "mirror.local/library/python:3.12-slim", want: "mirror.local/library/python:3.12-slim",
		},
		"ExactVersion": {
			reason: "A version's own entry wins over the language's, whatever their order.",
			lang:   v1alpha1.LanguagePython, version: "3.11", images: platform,
			wantFrom: pinned, want: pinned,
		},
		"OtherLanguage": {
			reason: "A language without an entry keeps the public image.",
			lang:   v1alpha1.LanguageNodeJS, version: "22", images: platform,
			wantFrom: "node:22-slim", want: "node:22-slim",
		},
		"GoRunImage": {
			reason: "Go builds in one image and runs in another; both come from the platform.",
			lang:   v1alpha1.LanguageGo, version: "1.25", images: platform,
			wantFrom: "mirror.local/golang:1.25", want: "mirror.local/static:nonroot",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rt, err := ResolveRuntime(&v1alpha1.Runtime{Language: ptr.To(tc.lang), Version: ptr.To(tc.version)}, BuildEnv{BaseImages: tc.images})
			if err != nil {
				t.Fatal(err)
			}
			from, last := fromImages(t, rt.Dockerfile)
			if diff := cmp.Diff([]string{tc.wantFrom, tc.want}, []string{from, last}); diff != "" {
				t.Errorf("%s\nthe Dockerfile's first and last FROM: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPrivateRegistry checks what a provider config for a private registry
// adds to a build and to the Service of its image: Kaniko's mirrors, and
// the pull Secrets, which a prebuilt image replaces with its own.
func TestPrivateRegistry(t *testing.T) {
	defaults := Defaults{
		Registry:        "registry.private/lambdas",
		RegistryMirrors: []string{"mirror.local/dockerhub", "mirror.backup"},
		PullSecrets:     []v1alpha1.LocalObjectReference{{Name: "registry-pull"}},
	}
	in := FunctionInput{Namespace: "apps", Name: "hello", Defaults: defaults, Spec: v1alpha1.LambdaFunctionParameters{
		Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}},
		Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)},
	}}
	building, err := Function(in)
	if err != nil {
		t.Fatal(err)
	}
	var mirrors []string
	for _, a := range building.BuildJob.Spec.Template.Spec.Containers[0].Args {
		if m, ok := strings.CutPrefix(a, "--registry-mirror="); ok {
			mirrors = append(mirrors, m)
		}
	}
	if diff := cmp.Diff(defaults.RegistryMirrors, mirrors); diff != "" {
		t.Errorf("Kaniko's registry mirrors, in the platform's order: -want, +got:\n%s", diff)
	}

	in.Observed.Build = &Pushed{Identity: building.BuildIdentity, Digest: testDigest}
	built, err := Function(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.LocalObjectReference{{Name: "registry-pull"}}
	if diff := cmp.Diff(want, built.Service.Spec.Template.Spec.ImagePullSecrets); diff != "" {
		t.Errorf("a built image is pulled with the platform's Secrets: -want, +got:\n%s", diff)
	}

	in.Spec = v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{
		Repository: "ghcr.io/acme/hello", Tag: ptr.To[v1alpha1.ImageTag]("v1"), PullSecrets: []v1alpha1.LocalObjectReference{{Name: "ghcr"}},
	}}}
	prebuilt, err := Function(in)
	if err != nil {
		t.Fatal(err)
	}
	want = []corev1.LocalObjectReference{{Name: "ghcr"}}
	if diff := cmp.Diff(want, prebuilt.Service.Spec.Template.Spec.ImagePullSecrets); diff != "" {
		t.Errorf("a prebuilt image is pulled with its own Secrets, not the registry's: -want, +got:\n%s", diff)
	}
}
