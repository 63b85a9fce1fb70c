package render

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// projectConfigMap writes the items of a ConfigMap volume into dir as the
// kubelet's atomic writer does: the files in a timestamped folder, ..data a
// link to that folder, and each top-level entry a link into ..data.
func projectConfigMap(t testing.TB, dir string, cm *corev1.ConfigMap, items []corev1.KeyToPath) {
	t.Helper()
	const payload = "..2026_11_28_10_00_00.1234567890"
	for _, it := range items {
		content, ok := cm.Data[it.Key]
		if !ok {
			t.Fatalf("the volume projects key %q, which ConfigMap %s does not hold", it.Key, cm.Name)
		}
		file := filepath.Join(dir, payload, it.Path)
		if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(payload, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		top, _, _ := strings.Cut(it.Path, "/")
		if err := os.Symlink(filepath.Join("..data", top), filepath.Join(dir, top)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// mountSource is the folder the kubelet bind-mounts for m of a volume at
// dir: the volume itself, or its subPath with every link resolved, which
// must stay inside the volume.
func mountSource(t testing.TB, dir string, m corev1.VolumeMount) string {
	t.Helper()
	if m.SubPath == "" {
		return dir
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.EvalSymlinks(filepath.Join(dir, m.SubPath))
	if err != nil {
		t.Fatalf("the kubelet cannot resolve subPath %q of volume %s: %v", m.SubPath, m.Name, err)
	}
	if rel, err := filepath.Rel(base, src); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		t.Fatalf("subPath %q of volume %s leaves the volume", m.SubPath, m.Name)
	}
	return src
}

// kanikoContext builds, below a temporary folder, the context Kaniko reads
// in o's build Job, and returns its path: the build-context ConfigMap
// projected as the kubelet projects it and mounted as the Job mounts it.
// Where the Job fetches its source, the context is the workspace the fetch
// step fills: the build's files copied as its script copies them, with the
// real cp, and an empty src/ where git or S3 would put the source.
func kanikoContext(t testing.TB, o *Objects) string {
	t.Helper()
	pod := o.BuildJob.Spec.Template.Spec
	root := t.TempDir()
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		dir := filepath.Join(root, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if v.ConfigMap != nil {
			projectConfigMap(t, dir, o.BuildContext, v.ConfigMap.Items)
		}
		volumes[v.Name] = dir
	}
	source := func(m corev1.VolumeMount) string {
		dir, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("mount %s names no volume of the pod", m.Name)
		}
		return mountSource(t, dir, m)
	}
	ws := workspaceMount(t, pod)
	for _, c := range pod.InitContainers {
		for _, m := range c.VolumeMounts {
			if m.Name != "build-context" {
				continue
			}
			script := "cp -RL " + m.MountPath + "/. " + workspace + "/"
			if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "\n"+script+"\n") }) {
				t.Fatalf("init container %s does not copy the build's files with %q", c.Name, script)
			}
			dst := source(ws)
			if err := os.MkdirAll(filepath.Join(dst, "src"), 0o750); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), "cp", "-RL", source(m)+"/.", dst+"/").CombinedOutput(); err != nil {
				t.Fatalf("cp -RL: %v: %s", err, out)
			}
		}
	}
	return source(ws)
}

// workspaceMount is the executor's mount of the context it reads.
func workspaceMount(t testing.TB, pod corev1.PodSpec) corev1.VolumeMount {
	t.Helper()
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.MountPath == workspace {
			return m
		}
	}
	t.Fatalf("the %s container mounts nothing at %s", pod.Containers[0].Name, workspace)
	return corev1.VolumeMount{}
}

// TestKanikoCopiesRealFiles checks, for every golden case that builds, that
// each path the Dockerfile copies from the context Kaniko reads is a
// regular file or a folder of them, all the way down. Kaniko copies a link
// as a link, and the kubelet projects a ConfigMap's entries as links into
// its ..data folder, which the image does not hold.
func TestKanikoCopiesRealFiles(t *testing.T) {
	eachBuild(t, func(t *testing.T, o *Objects) {
		ctx := kanikoContext(t, o)
		for _, src := range copySources(t, o.BuildContext.Data["Dockerfile"]) {
			err := filepath.WalkDir(filepath.Join(ctx, src), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(ctx, p)
				switch {
				case d.Type()&fs.ModeSymlink != 0:
					t.Errorf("COPY %s takes %s, a link, which dangles in the image", src, rel)
				case !d.IsDir() && !d.Type().IsRegular():
					t.Errorf("COPY %s takes %s, not a regular file but %s", src, rel, d.Type())
				}
				return nil
			})
			if err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
		}
	})
}
