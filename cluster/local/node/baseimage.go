package node

import (
	"archive/tar"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtRootFS = "cannot make an image of %s"
	errFmtWrite  = "cannot write the image tarball of %s"
	errFmtPush   = "cannot push %s to the node's registry"
)

// epoch dates the image, so one root file system makes one digest.
var epoch = time.Unix(0, 0).UTC()

// RootFSImage is an image of one layer holding the file system below dir,
// as debootstrap made it (baseimages.sh): owners, modes and links kept,
// device files left out, since the runtime makes /dev. The layer is written
// beside dir, once, as dir.tar.
func RootFSImage(dir string, env []string) (v1.Image, error) {
	layerFile := filepath.Clean(dir) + ".tar"
	if _, err := os.Stat(layerFile); err != nil {
		if err := writeLayer(dir, layerFile); err != nil {
			return nil, errors.Wrapf(err, errFmtRootFS, dir)
		}
	}
	l, err := tarball.LayerFromFile(layerFile, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, errors.Wrapf(err, errFmtRootFS, dir)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), l)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtRootFS, dir)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, errors.Wrapf(err, errFmtRootFS, dir)
	}
	cfg = cfg.DeepCopy()
	// debootstrap made the file system for this machine's architecture.
	cfg.OS, cfg.Architecture, cfg.Created = "linux", goruntime.GOARCH, v1.Time{Time: epoch}
	cfg.Config.Env = env
	img, err = mutate.ConfigFile(img, cfg)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), errors.Wrapf(err, errFmtRootFS, dir)
}

// writeLayer writes the tar of the file system below dir to file.
func writeLayer(dir, file string) (err error) {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, file)
		}
	}()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
			return nil
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		src, err := os.Open(p) //nolint:gosec // Below the project's cache.
		if err != nil {
			return err
		}
		defer src.Close() //nolint:errcheck // Only read.
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// WriteImage writes img to file as a tarball naming it ref, for Publish.
func WriteImage(img v1.Image, ref, file string) error {
	t, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return errors.Wrapf(err, errFmtWrite, ref)
	}
	return errors.Wrapf(tarball.WriteToFile(file, t, img), errFmtWrite, ref)
}

// pushTimeout bounds the pushes of one image: right after the cluster
// starts, ctr's push of the Kaniko executor to the node's registry has
// ended with "unexpected EOF" (twice, in CI), and the next went through.
const pushTimeout = 30 * time.Second

// Publish imports the image tarball that names ref into containerd and
// pushes it to the node's registry, which ref must name, trying again
// until pushTimeout: pods may then run it, and Kaniko build on it.
func (c *Cluster) Publish(ctx context.Context, tarball, ref string) error {
	if err := c.importImage(ctx, tarball); err != nil {
		return err
	}
	err := pollFor(ctx, pushTimeout, func(ctx context.Context) (bool, error) {
		out, err := exec.CommandContext(ctx, "ctr", "--address="+containerdSocket(c.dir), "--namespace=k8s.io", "images", "push", "--plain-http", ref).CombinedOutput()
		return err == nil, errors.Wrap(err, strings.TrimSpace(string(out)))
	})
	return errors.Wrapf(err, errFmtPush, ref)
}
