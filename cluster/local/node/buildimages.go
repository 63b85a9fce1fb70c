package node

import (
	"context"
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// ExecutorImage is make kaniko's executor, which its tarball names and
// PublishExecutor publishes.
const ExecutorImage = Registry + "/tools/kaniko-executor:v1.24.0"

// RelayImage is make relay's relay, which its tarball names and
// PublishRelay publishes.
const RelayImage = Registry + "/tools/relay-knative-lambda:dev"

// errFmtBaseImage says which base image could not be published.
const errFmtBaseImage = "cannot publish the base image %s: run make base-images"

// A BaseImage is a runtime's base image on the node's registry, made from
// a root file system make base-images wrote.
type BaseImage struct {
	Language v1alpha1.Language
	Version  string
	// Ref is where the image is published.
	Ref string
	// rootfs is the root file system's folder below the cache's rootfs.
	rootfs string
	env    []string
}

// The runtimes Debian 12 packages, the only versions the node builds for:
// builds have no network, so a base cannot come from elsewhere.
var (
	python311 = BaseImage{
		Language: v1alpha1.LanguagePython, Version: "3.11", Ref: Registry + "/library/python:3.11",
		rootfs: "python-3.11", env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
	}
	nodejs18 = BaseImage{
		Language: v1alpha1.LanguageNodeJS, Version: "18", Ref: Registry + "/library/node:18",
		rootfs: "nodejs-18", env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
	}
)

// BaseImages are every base image the node's builds can use.
var BaseImages = []BaseImage{python311, nodejs18}

// PublishExecutor publishes make kaniko's executor, from bin, on the
// node's registry.
func (c *Cluster) PublishExecutor(ctx context.Context, bin string) error {
	return c.Publish(ctx, filepath.Join(bin, "kaniko.tar"), ExecutorImage)
}

// PublishRelay publishes make relay's relay, from bin, on the node's
// registry.
func (c *Cluster) PublishRelay(ctx context.Context, bin string) error {
	return c.Publish(ctx, filepath.Join(bin, "relay.tar"), RelayImage)
}

// PublishBase publishes the base image on the node's registry, from the
// root file system in the rootfs folder beside bin.
func (c *Cluster) PublishBase(ctx context.Context, bin string, b BaseImage) error {
	img, err := RootFSImage(filepath.Join(bin, "..", "rootfs", b.rootfs), b.env)
	if err != nil {
		return errors.Wrapf(err, errFmtBaseImage, b.Ref)
	}
	dir, err := os.MkdirTemp("", "base-")
	if err != nil {
		return errors.Wrapf(err, errFmtBaseImage, b.Ref)
	}
	defer os.RemoveAll(dir) //nolint:errcheck // A temporary folder.
	tarball := filepath.Join(dir, "image.tar")
	if err := WriteImage(img, b.Ref, tarball); err != nil {
		return err
	}
	return c.Publish(ctx, tarball, b.Ref)
}

// BuildDefaults are a provider config's build settings for builds on the
// node: Kaniko and the base images as published here, pushing to the
// node's registry, which speaks plain HTTP.
func BuildDefaults() *v1alpha1.BuildDefaults {
	registry, executor := v1alpha1.ImageRepository(Registry+"/lambdas"), ExecutorImage
	d := &v1alpha1.BuildDefaults{Registry: &registry, ExecutorImage: &executor, InsecureRegistries: []string{Registry}}
	for _, b := range BaseImages {
		d.BaseImages = append(d.BaseImages, v1alpha1.BaseImage{Language: b.Language, Version: &b.Version, Image: v1alpha1.BaseImageReference(b.Ref)})
	}
	return d
}

// EventingDefaults are a provider config's eventing settings on the node:
// the relay as published here.
func EventingDefaults() *v1alpha1.EventingDefaults {
	relay := RelayImage
	return &v1alpha1.EventingDefaults{RelayImage: &relay}
}
