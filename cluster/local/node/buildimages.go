package node

import (
	"context"
	"os"
	"path/filepath"

	"k8s.io/utils/ptr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// ExecutorImage is make kaniko's executor, which its tarball names and
// PublishExecutor publishes.
const ExecutorImage = Registry + "/tools/kaniko-executor:v1.24.0"

// StaticImage is the image Go functions run on, a static base as
// distroless's, which make base-images writes and PublishStatic publishes.
const StaticImage = Registry + "/library/static:nonroot"

// RelayImage is make relay's relay, which its tarball names and
// PublishRelay publishes.
const RelayImage = Registry + "/tools/relay-knative-lambda:dev"

// errFmtBaseImage says which base image could not be published.
const errFmtBaseImage = "cannot publish the base image %s: run make base-images"

// A DebianImage is an image on the node's registry made from a root file
// system make base-images wrote from Debian's packages.
type DebianImage struct {
	// Ref is where the image is published.
	Ref string
	// rootfs is the root file system's folder below the cache's rootfs.
	rootfs string
	env    []string
}

// A BaseImage is a runtime's base image.
type BaseImage struct {
	Language v1alpha1.Language
	Version  string
	DebianImage
	// RunImage, when set, is what the build's last stage starts from.
	RunImage string
}

// The runtimes Debian packages in versions the API offers, the only ones
// the node builds for: builds have no network, so a base cannot come from
// elsewhere. Debian 12 has Python 3.11; Node.js 20 is the Node.js
// project's build on Debian 13 (see baseimages.sh), and Go
// 1.25, the API's default, its backports'. Go's builds have no module
// proxy: a function with dependencies vendors them.
var (
	python311 = BaseImage{Language: v1alpha1.LanguagePython, Version: "3.11", DebianImage: DebianImage{
		Ref: Registry + "/library/python:3.11", rootfs: "python-3.11", env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
	}}
	nodejs20 = BaseImage{Language: v1alpha1.LanguageNodeJS, Version: "20", DebianImage: DebianImage{
		Ref: Registry + "/library/node:20", rootfs: "node-20.20.2", env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
	}}
	go125 = BaseImage{Language: v1alpha1.LanguageGo, Version: "1.25", RunImage: StaticImage, DebianImage: DebianImage{
		Ref: Registry + "/library/golang:1.25", rootfs: "go-1.25",
		env: []string{"PATH=/usr/lib/go-1.25/bin:/usr/local/bin:/usr/bin:/bin", "GOTOOLCHAIN=local", "GOPROXY=off"},
	}}
)

// BaseImages are every base image the node's builds can use.
var BaseImages = []BaseImage{python311, nodejs20, go125}

// Fetcher is the image build pods fetch git and S3 sources with: a shell,
// git and the AWS CLI, from Debian 12.
var Fetcher = DebianImage{Ref: Registry + "/library/fetch:bookworm", rootfs: "fetch", env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}}

// DebianImages are every image made from Debian's packages the node's
// builds use.
func DebianImages() []DebianImage {
	imgs := []DebianImage{Fetcher}
	for _, b := range BaseImages {
		imgs = append(imgs, b.DebianImage)
	}
	return imgs
}

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

// PublishStatic publishes make base-images' static image, from bin, on the
// node's registry.
func (c *Cluster) PublishStatic(ctx context.Context, bin string) error {
	return c.Publish(ctx, filepath.Join(bin, "static.tar"), StaticImage)
}

// PublishDebian publishes the image on the node's registry, from the root
// file system in the rootfs folder beside bin.
func (c *Cluster) PublishDebian(ctx context.Context, bin string, b DebianImage) error {
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
// node: Kaniko, the fetcher and the base images as published here, pushing to the
// node's registry, which speaks plain HTTP.
func BuildDefaults() *v1alpha1.BuildDefaults {
	registry, executor, fetcher := v1alpha1.ImageRepository(Registry+"/lambdas"), ExecutorImage, Fetcher.Ref
	d := &v1alpha1.BuildDefaults{
		Registry: &registry, ExecutorImage: &executor, InsecureRegistries: []string{Registry},
		GitFetcherImage: &fetcher, S3FetcherImage: &fetcher,
	}
	for _, b := range BaseImages {
		base := v1alpha1.BaseImage{Language: b.Language, Version: &b.Version, Image: v1alpha1.BaseImageReference(b.Ref)}
		if b.RunImage != "" {
			base.RunImage = ptr.To(v1alpha1.BaseImageReference(b.RunImage))
		}
		d.BaseImages = append(d.BaseImages, base)
	}
	return d
}

// EventingDefaults are a provider config's eventing settings on the node:
// the relay as published here.
func EventingDefaults() *v1alpha1.EventingDefaults {
	relay := RelayImage
	return &v1alpha1.EventingDefaults{RelayImage: &relay}
}
