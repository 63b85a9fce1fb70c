package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// The packages as make xpkg builds and the README publishes them: the
// configuration depends on the provider and the function by this path.
const (
	PackagePath    = "xpkg.crossplane.io/knative-lambda"
	PackageVersion = "v0.1.0"
)

// The objects the package manager names after the packages' repositories.
const (
	providerName      = "knative-lambda-provider-knative-lambda"
	functionName      = "knative-lambda-function-knative-lambda"
	configurationName = "configuration-knative-lambda"
	// runtimeConfig is the DeploymentRuntimeConfig of
	// examples/provider-rbac.yaml.
	runtimeConfig = "provider-knative-lambda"
)

// platformManifests are what the README has a platform apply beside the
// configuration, relative to the repository: the provider's ClusterRoles,
// its service account and bindings, Direct mode's ClusterRole, and the
// namespace the bindings name.
var platformManifests = []string{"package/rbac", "examples/provider-rbac.yaml", "package/configuration/rbac/clusterrole.yaml", "examples/namespace.yaml"}

const (
	errFmtPackage   = "cannot push the package %s: run make xpkg"
	errPlatform     = "cannot apply the platform"
	errRuntimeCfg   = "cannot name the provider's runtime config"
	errFmtUnhealthy = "the packages did not become healthy: %s"
)

// Prepare publishes the Kaniko executor, the base images, Go's run image,
// the source fetcher and the relay on the node's registry, and installs
// Crossplane and the packages as a platform does: what make run and the
// benchmarks of the platform start from.
func (c *Cluster) Prepare(ctx context.Context, root, bin string) error {
	publish := []func(context.Context, string) error{c.PublishExecutor, c.PublishRelay, c.PublishStatic}
	for _, img := range DebianImages() {
		publish = append(publish, func(ctx context.Context, bin string) error { return c.PublishDebian(ctx, bin, img) })
	}
	for _, p := range publish {
		if err := p(ctx, bin); err != nil {
			return err
		}
	}
	if err := c.InstallCrossplane(ctx, bin); err != nil {
		return err
	}
	return c.InstallPlatform(ctx, root, bin)
}

// TenantLabel marks the namespaces the node's provider configs serve, as
// examples/namespace.yaml does.
const TenantLabel = "lambda.crossplane.io/tenant"

// ProviderConfig is a ClusterProviderConfig for workloads on the node:
// builds and relays from what Prepare published, for the namespaces with
// TenantLabel, with the provider's own identity.
func ProviderConfig(name string) *v1alpha1.ClusterProviderConfig {
	return &v1alpha1.ClusterProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterProviderConfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterProviderConfigSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{TenantLabel: "true"}},
			Credentials:       v1alpha1.ClusterProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity},
			Build:             BuildDefaults(),
			Eventing:          EventingDefaults(),
		},
	}
}

// InstallPlatform installs this project the way the README has a platform
// engineer do it, on a cluster that runs Crossplane (InstallCrossplane):
// it pushes the packages make xpkg built from root with the Crossplane CLI
// in bin to the node's registry, points their published path at it with an
// ImageConfig, applies the Configuration alone, whose dependencies bring the
// provider and the function, and the RBAC the provider needs to deploy here,
// and waits until every package is installed and healthy. The provider and
// the function then run as pods in CrossplaneNamespace, from the images the
// packages carry.
func (c *Cluster) InstallPlatform(ctx context.Context, root, bin string) error {
	for name, file := range PackageFiles(root) {
		if err := pushPackage(ctx, bin, file, Registry+"/knative-lambda/"+name+":"+PackageVersion); err != nil {
			return err
		}
	}
	var objs []*unstructured.Unstructured
	for _, m := range platformManifests {
		o, err := manifest.Read(filepath.Join(root, m))
		if err != nil {
			return errors.Wrap(err, errPlatform)
		}
		objs = append(objs, o...)
	}
	objs = append(objs, Mirror(Registry+"/knative-lambda"), Configuration())
	if err := local.Apply(ctx, c.Config, objs); err != nil {
		return errors.Wrap(err, errPlatform)
	}
	// The package manager creates the Provider as the configuration's
	// dependency; the README then names its runtime config.
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"runtimeConfigRef":{"name":%q}}}`, runtimeConfig))
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		p := pkg("Provider", providerName)
		err := c.kube.Patch(ctx, p, patch)
		return err == nil, err
	})
	if err != nil {
		return errors.Wrap(err, errRuntimeCfg)
	}
	return c.packagesHealthy(ctx)
}

// PackageFiles are the files make xpkg builds from root for this
// machine's architecture, by the name they are published under.
func PackageFiles(root string) map[string]string {
	out := filepath.Join(root, "_output")
	return map[string]string{
		"provider-knative-lambda": filepath.Join(out, "linux_"+goruntime.GOARCH, "provider-knative-lambda.xpkg"),
		"function-knative-lambda": filepath.Join(out, "linux_"+goruntime.GOARCH, "function-knative-lambda.xpkg"),
		configurationName:         filepath.Join(out, configurationName+".xpkg"),
	}
}

// pushPackage pushes a package file to ref with the Crossplane CLI, as the
// README does.
func pushPackage(ctx context.Context, bin, file, ref string) error {
	if _, err := os.Stat(file); err != nil {
		return errors.Wrapf(err, errFmtPackage, filepath.Base(file))
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "crossplane"), "xpkg", "push", "-f", file, ref)
	// No credentials: the node's registry takes anyone's push.
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+os.DevNull)
	b, err := cmd.CombinedOutput()
	return errors.Wrapf(errors.Wrap(err, strings.TrimSpace(string(b))), errFmtPush, ref)
}

// Mirror is the README's ImageConfig, pointing the packages' published
// path at a registry's path prefix.
func Mirror(prefix string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "ImageConfig",
		"metadata": map[string]any{"name": "knative-lambda-mirror"},
		"spec": map[string]any{
			"matchImages":  []any{map[string]any{"type": "Prefix", "prefix": PackagePath}},
			"rewriteImage": map[string]any{"prefix": prefix},
		},
	}}
}

// Configuration is the Configuration the README installs.
func Configuration() *unstructured.Unstructured {
	c := pkg("Configuration", configurationName)
	c.Object["spec"] = map[string]any{"package": PackagePath + "/" + configurationName + ":" + PackageVersion}
	return c
}

// pkg is a package object of pkg.crossplane.io/v1, by kind and name.
func pkg(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("pkg.crossplane.io/v1")
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// packagesHealthy waits until the Configuration, the Provider and the
// Function each say Installed and Healthy, and says which did not.
func (c *Cluster) packagesHealthy(ctx context.Context) error {
	said := ""
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		for _, kind := range []string{"Configuration", "Provider", "Function"} {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("pkg.crossplane.io/v1")
			l.SetKind(kind + "List")
			if err := c.kube.List(ctx, l); err != nil {
				return false, err
			}
			if len(l.Items) == 0 {
				said = "no " + kind + " yet"
				return false, nil
			}
			for _, p := range l.Items {
				for _, t := range []string{"Installed", "Healthy"} {
					if c, _ := manifest.Condition(&p, t); c["status"] != "True" {
						said = fmt.Sprintf("%s %s is not %s: %v", kind, p.GetName(), t, c["message"])
						return false, nil
					}
				}
			}
		}
		return true, nil
	})
	return errors.Wrapf(err, errFmtUnhealthy, said)
}
