package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestPrivateRegistry checks a provider config for a cluster that reaches
// only its own registry: the build fetches with the platform's git image,
// starts from its mirrored base image and pulls the rest through its mirror,
// and the built image is served with the platform's pull Secret, held until
// that Secret exists.
func TestPrivateRegistry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := startGitServer(t)
	_, c, ns := newScene(ctx, t, "private", func(d *dependencies) { d.Sources.Git = g.resolver() })
	const (
		gitImage = "registry.private/mirror/git:v2.49.1"
		mirror   = "registry.private/dockerhub"
	)
	// The fetcher image is the platform's choice: a ClusterProviderConfig's.
	pc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "private-" + ns},
		Spec: v1alpha1.ClusterProviderConfigSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			Credentials:       v1alpha1.ClusterProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity},
			Build: &v1alpha1.BuildDefaults{
				Registry:        ptr(v1alpha1.ImageRepository("registry.private/lambdas")),
				GitFetcherImage: ptr(gitImage),
				BaseImages:      []v1alpha1.BaseImage{{Language: v1alpha1.LanguagePython, Image: "registry.private/mirror/python:{version}-slim"}},
				RegistryMirrors: []v1alpha1.ImageRepository{mirror},
				PullSecretRefs:  []v1alpha1.LocalObjectReference{{Name: "registry-pull"}},
			},
		},
	}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pc) })

	fn := newFunction(ns, "private", "")
	fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: pc.Name}
	fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: "https://git.lambda.test/functions.git", Ref: "main"}}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	job := waitJobs(ctx, t, c, ns, "private", 1)[0]
	pod := job.Spec.Template.Spec
	var fetchers []string
	for _, ic := range pod.InitContainers {
		fetchers = append(fetchers, ic.Image)
	}
	if diff := cmp.Diff([]string{gitImage}, fetchers); diff != "" {
		t.Errorf("the build fetches with the platform's git image: -want, +got:\n%s", diff)
	}
	if !slices.Contains(pod.Containers[0].Args, "--registry-mirror="+mirror) {
		t.Errorf("Kaniko does not pull through the mirror: %q", pod.Containers[0].Args)
	}
	var buildContext string
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil {
			buildContext = v.ConfigMap.Name
		}
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: buildContext}, cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["Dockerfile"], "\nFROM registry.private/mirror/python:3.12-slim\n") {
		t.Errorf("the build does not start from the platform's base image:\n%s", cm.Data["Dockerfile"])
	}

	playact.FinishJob(ctx, t, c, &job, 0, digestA)
	// The built image waits for its pull Secret.
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonSecretMissing, "Secret registry-pull (image pull secret) does not exist")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "private"}, &servingv1.Service{}); err == nil {
		t.Error("a Service exists whose pods could not pull their image")
	}

	pull := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry-pull"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	}
	if err := c.Create(ctx, pull); err != nil {
		t.Fatal(err)
	}
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the Service pulls the built image with the Secret", func() string {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "private"}, svc); err != nil {
			return err.Error()
		}
		spec := svc.Spec.Template.Spec
		if len(spec.ImagePullSecrets) != 1 || spec.ImagePullSecrets[0].Name != "registry-pull" || !strings.HasSuffix(spec.Containers[0].Image, "@"+digestA) {
			return fmt.Sprintf("image %s, pull secrets %v", spec.Containers[0].Image, spec.ImagePullSecrets)
		}
		return ""
	})
}
