package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// The repository, from this folder.
const repo = "../.."

// labelXpkg prefixes the config label that names a package's layers.
const labelXpkg = "io.crossplane.xpkg:"

// TestPackages opens every package make xpkg built, as Crossplane's package
// manager would, and checks what is inside: the meta file of the right kind,
// every CRD, XRD and Composition that belongs in it and nothing else, and,
// for the provider and the function, the runtime image of the right
// architecture, non-root, with the image's own layers.
func TestPackages(t *testing.T) {
	out := filepath.Join(repo, "_output")
	// make xpkg builds this machine's architecture, make release every one;
	// each built is checked.
	dirs, err := filepath.Glob(filepath.Join(out, "linux_*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs, filepath.Join(out, "linux_"+goruntime.GOARCH)) {
		t.Fatalf("no packages for this machine's architecture in %s: run make xpkg (make test does)", out)
	}
	for _, dir := range dirs {
		arch := strings.TrimPrefix(filepath.Base(dir), "linux_")
		t.Run("provider-"+arch, func(t *testing.T) {
			img := open(t, filepath.Join(dir, "provider-knative-lambda.xpkg"))
			meta, objs := packageYAML(t, img)
			want := append([]string{"Provider/provider-knative-lambda"}, names(t, filepath.Join(repo, "package", "crds"))...)
			if diff := cmp.Diff(sorted(want), sorted(append([]string{meta}, objs...))); diff != "" {
				t.Errorf("package.yaml: -want, +got:\n%s", diff)
			}
			runtime(t, img, filepath.Join(dir, "provider-image.tar"), arch, "/usr/local/bin/provider")
		})
		t.Run("function-"+arch, func(t *testing.T) {
			img := open(t, filepath.Join(dir, "function-knative-lambda.xpkg"))
			meta, objs := packageYAML(t, img)
			want := append([]string{"Function/function-knative-lambda"}, names(t, filepath.Join(repo, "package", "function", "input"))...)
			if diff := cmp.Diff(sorted(want), sorted(append([]string{meta}, objs...))); diff != "" {
				t.Errorf("package.yaml: -want, +got:\n%s", diff)
			}
			runtime(t, img, filepath.Join(dir, "function-image.tar"), arch, "/usr/local/bin/function")
		})
	}
	t.Run("configuration", func(t *testing.T) {
		img := open(t, filepath.Join(out, "configuration-knative-lambda.xpkg"))
		meta, objs := packageYAML(t, img)
		// The folder holds the meta file too.
		want := names(t, filepath.Join(repo, "package", "configuration"))
		if diff := cmp.Diff(sorted(want), sorted(append([]string{meta}, objs...))); diff != "" {
			t.Errorf("package.yaml: -want, +got:\n%s", diff)
		}
		if slices.ContainsFunc(objs, func(s string) bool { return strings.HasPrefix(s, "ClusterRole/") }) {
			t.Error("the configuration package carries a ClusterRole; packages cannot")
		}
	})
}

func open(t *testing.T, path string) v1.Image {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v: run make xpkg (make test does) to build the packages", err)
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// packageYAML reads the package's base layer, which holds package.yaml, and
// returns its meta object and every other object as Kind/name.
func packageYAML(t *testing.T, img v1.Image) (string, []string) {
	t.Helper()
	base := layerLabelled(t, img, "base")
	rc, err := base.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close() //nolint:errcheck // Read only.
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("the base layer holds no package.yaml")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "package.yaml" {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		objs := decode(t, b)
		if len(objs) == 0 {
			t.Fatal("package.yaml is empty")
		}
		return objs[0], objs[1:]
	}
}

// layerLabelled finds the layer the image's config labels as a package
// layer of a kind.
func layerLabelled(t *testing.T, img v1.Image, kind string) v1.Layer {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range cfg.Config.Labels {
		if v != kind || !strings.HasPrefix(k, labelXpkg) {
			continue
		}
		h, err := v1.NewHash(strings.TrimPrefix(k, labelXpkg))
		if err != nil {
			t.Fatal(err)
		}
		l, err := img.LayerByDigest(h)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	t.Fatalf("no layer is labelled %q", kind)
	return nil
}

// runtime checks that a package embeds its runtime image: the image's
// layers come first, in order, and the package keeps its config.
func runtime(t *testing.T, pkg v1.Image, imagePath, arch, entrypoint string) {
	t.Helper()
	img, err := tarball.ImageFromPath(imagePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, got := digests(t, img), digests(t, pkg)
	if len(got) < len(want) || !slices.Equal(want, got[:len(want)]) {
		t.Errorf("the package's layers %v do not start with the runtime image's %v", got, want)
	}
	cfg, err := pkg.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != arch {
		t.Errorf("the runtime is %s/%s, want linux/%s", cfg.OS, cfg.Architecture, arch)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("the runtime runs as %q, want the non-root 65532:65532", cfg.Config.User)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{entrypoint}) {
		t.Errorf("the runtime's entrypoint is %v, want %s", cfg.Config.Entrypoint, entrypoint)
	}
}

func digests(t *testing.T, img v1.Image) []string {
	t.Helper()
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

// names are the Kind/name of every object in a folder's YAML files.
func names(t *testing.T, dir string) []string {
	t.Helper()
	objs, err := manifest.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func decode(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := d.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u.GetKind()+"/"+u.GetName())
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
