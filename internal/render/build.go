package render

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const (
	errFmtTooLarge      = "inline code, dependencies, files and the build's own files come to %d bytes, more than the %d a ConfigMap holds: move the code to git or S3"
	errFmtFileClash     = "inline file %q clashes with the %s, which render writes to that path"
	errFmtBadTimeout    = "build.timeout %q is not a duration"
	errFmtLongTimeout   = "build.timeout %s is longer than the %s the provider config allows (build.maxTimeout)"
	errFmtExecutorImage = "build.executorImage %s is not an executor the provider config allows: use one of %s (build.allowedExecutorImages)"
	errFmtAllowDenied   = "the provider config's build.network.allowCIDRs names %s, inside %s, which builds may never reach (loopback, link-local, cloud metadata, the API server or --deny-source-cidr)"
)

// Images of the build. The Kaniko executor comes from the maintained
// osscontainertools fork (upstream Kaniko was archived in June 2025), pinned
// by the digest of its v1.28.2 index; the fetchers only need a shell and
// their one tool.
const (
	DefaultExecutorImage = "ghcr.io/osscontainertools/kaniko:v1.28.2@sha256:4ea0e7301e3f6806de15150e4982c73018351e28c1dca6947bd3b4afb5ae3c60"
	GitFetcherImage      = "alpine/git:v2.49.1"
	S3FetcherImage       = "amazon/aws-cli:2.27.50"
)

// MaxConfigMapBytes is the most data a ConfigMap may hold.
const MaxConfigMapBytes = 1 << 20

// Build defaults.
const (
	// DefaultMaxBuildTimeout is the longest build a provider config allows
	// unless it says otherwise.
	DefaultMaxBuildTimeout = 30 * time.Minute
	defaultBuildTimeout    = 15 * time.Minute
	buildBackoffLimit      = 1
	buildTTLSeconds        = 24 * 60 * 60
)

// Paths inside a build pod.
const (
	workspace    = "/workspace"
	buildFiles   = "/build"
	dockerConfig = "/kaniko/.docker"
	// The fetcher's mounts of a git or S3 source's Secret.
	gitMount = "/etc/git-secret"
	s3Mount  = "/etc/s3-secret"
)

// contextDir is the folder of the build-context volume that holds an inline
// build's whole context. The kubelet projects a ConfigMap's top-level
// entries as links into its ..data folder, and Kaniko copies a link as a
// link, so files taken from the volume's root dangle in the image. Mounted
// by subPath, the folder is resolved by the kubelet once and Kaniko reads
// real files.
const contextDir = "context"

// fetcherUID is the user the fetch step runs as.
const fetcherUID = 65532

// annotationBuildIdentity carries the whole identity; labels are too short.
const annotationBuildIdentity = v1alpha1.Group + "/build-identity"

// dependencyFile is where each language reads its dependencies from.
var dependencyFile = map[v1alpha1.Language]string{
	v1alpha1.LanguagePython: "requirements.txt",
	v1alpha1.LanguageNodeJS: "package.json",
	v1alpha1.LanguageGo:     "go.mod",
}

// A build is everything one Kaniko build needs.
type build struct {
	namespace, name string
	identity        string
	sourceID        string
	destination     string
	spec            v1alpha1.LambdaFunctionParameters
	runtime         Runtime
	defaults        Defaults
}

// contextFile is one file of the build context and the ConfigMap key it is
// stored under.
type contextFile struct {
	key, path, content string
}

// contextFiles lists the files of the build-context ConfigMap: the
// Dockerfile, the runtime's files and, for inline code, the source under src/.
func (b build) contextFiles() ([]contextFile, error) {
	files := []contextFile{{key: "Dockerfile", path: "Dockerfile", content: b.runtime.Dockerfile}}
	for _, name := range slices.Sorted(maps.Keys(b.runtime.Files)) {
		files = append(files, contextFile{key: name, path: name, content: b.runtime.Files[name]})
	}
	src, err := InlineFiles(b.spec.Source.Inline, b.runtime)
	if err != nil {
		return nil, err
	}
	for i, f := range src {
		files = append(files, contextFile{key: "src-" + strconv.Itoa(i), path: "src/" + f.Path, content: f.Content})
	}
	return files, nil
}

// A SourceFile is one file of a function's source, at its path relative to
// the source's folder.
type SourceFile struct {
	Path, Content string
}

// InlineFiles lays out inline code as its build does, and as kubectl lambda
// run does on the author's machine: the handler's code at the runtime's
// CodeFile, the dependencies at the language's dependency file, and the
// further files at their paths. Nothing without inline code.
func InlineFiles(in *v1alpha1.InlineSource, rt Runtime) ([]SourceFile, error) {
	if in == nil {
		return nil, nil
	}
	src := []SourceFile{{Path: rt.CodeFile, Content: in.Code}}
	dep := DependencyFile(rt.Language)
	if in.Dependencies != "" {
		src = append(src, SourceFile{Path: dep, Content: in.Dependencies})
	}
	for _, f := range in.Files {
		switch string(f.Path) {
		case rt.CodeFile:
			return nil, errors.Errorf(errFmtFileClash, f.Path, "handler's code file")
		case dep:
			if in.Dependencies != "" {
				return nil, errors.Errorf(errFmtFileClash, f.Path, "dependencies file")
			}
		}
		src = append(src, SourceFile{Path: string(f.Path), Content: f.Content})
	}
	return src, nil
}

// DependencyFile is the name of a language's dependency file.
func DependencyFile(l v1alpha1.Language) string { return dependencyFile[l] }

// configMap renders the immutable build-context ConfigMap.
func (b build) configMap(files []contextFile) (*corev1.ConfigMap, error) {
	data := make(map[string]string, len(files))
	size := 0
	for _, f := range files {
		data[f.key] = f.content
		size += len(f.key) + len(f.content)
	}
	if size > MaxConfigMapBytes {
		return nil, errors.Errorf(errFmtTooLarge, size, MaxConfigMapBytes)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: b.meta(),
		Immutable:  ptr.To(true),
		Data:       data,
	}, nil
}

func (b build) meta() metav1.ObjectMeta {
	l := labels(v1alpha1.LambdaFunctionKind, b.name, ComponentBuild)
	l[LabelBuildIdentity] = b.identity[:identityPrefixLen]
	return metav1.ObjectMeta{
		Namespace:   b.namespace,
		Name:        BuildName(b.name, b.identity),
		Labels:      l,
		Annotations: map[string]string{annotationBuildIdentity: b.identity},
	}
}

// allowedBuild refuses build settings the defaults do not allow: an
// executor image the platform did not choose, or a timeout longer than its
// maximum; and defaults whose network would let builds reach what they may
// never reach.
func allowedBuild(s *v1alpha1.Build, d Defaults) error {
	if err := allowedNetwork(d.Network); err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	if img := s.ExecutorImage; img != nil && *img != executorImage(d) && !slices.Contains(d.AllowedExecutorImages, *img) {
		return errors.Errorf(errFmtExecutorImage, *img, strings.Join(append([]string{executorImage(d)}, d.AllowedExecutorImages...), ", "))
	}
	_, err := buildTimeout(s, d)
	return err
}

// executorImage is the executor the defaults choose.
func executorImage(d Defaults) string {
	return orDefault(d.ExecutorImage, DefaultExecutorImage)
}

// buildTimeout is how long a build may run.
func buildTimeout(s *v1alpha1.Build, d Defaults) (time.Duration, error) {
	if s == nil || s.Timeout == nil {
		return defaultBuildTimeout, nil
	}
	t, err := time.ParseDuration(string(*s.Timeout))
	if err != nil {
		return 0, errors.Errorf(errFmtBadTimeout, *s.Timeout)
	}
	limit := d.MaxTimeout
	if limit == 0 {
		limit = DefaultMaxBuildTimeout
	}
	if t > limit {
		return 0, errors.Errorf(errFmtLongTimeout, t, limit)
	}
	return t, nil
}

// job renders the Kaniko Job.
func (b build) job(files []contextFile) (*batchv1.Job, error) {
	timeout, err := buildTimeout(b.spec.Build, b.defaults)
	if err != nil {
		return nil, err
	}
	pod := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		// fsGroup lets the non-root fetcher read the source Secret's files.
		SecurityContext: &corev1.PodSecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			FSGroup:        ptr.To[int64](fetcherUID),
		},
		Containers: []corev1.Container{b.kaniko()},
	}
	cmVolume := corev1.Volume{Name: "build-context", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: BuildName(b.name, b.identity)},
	}}}
	if b.spec.Source.Inline != nil {
		// The ConfigMap is the whole context: its one folder is mounted
		// where Kaniko reads.
		cmVolume.ConfigMap.Items = items(files, contextDir+"/")
		pod.Volumes = append(pod.Volumes, cmVolume)
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: cmVolume.Name, MountPath: workspace, SubPath: contextDir, ReadOnly: true})
	} else {
		// The fetch scripts copy the build's own files with links
		// dereferenced; the Job of a build under way stays as it was.
		cmVolume.ConfigMap.Items = items(files, "")
		// A fetcher puts the source in src/ of an empty folder and copies
		// the build's own files next to it.
		pod.Volumes = append(pod.Volumes, cmVolume, corev1.Volume{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("2Gi"))}}})
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: workspace})
		fetcher, volumes := b.fetcher()
		pod.InitContainers = []corev1.Container{fetcher}
		pod.Volumes = append(pod.Volumes, volumes...)
	}
	if s := b.pushSecret(); s != "" {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "docker-config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: s,
			Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
		}}})
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "docker-config", MountPath: dockerConfig, ReadOnly: true})
	}
	meta := b.meta()
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](buildBackoffLimit),
			ActiveDeadlineSeconds:   ptr.To(int64(timeout.Seconds())),
			TTLSecondsAfterFinished: ptr.To[int32](buildTTLSeconds),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(meta.Labels), Annotations: maps.Clone(meta.Annotations)},
				Spec:       pod,
			},
		},
	}, nil
}

// items maps ConfigMap keys to their paths in the volume, below dir.
func items(files []contextFile, dir string) []corev1.KeyToPath {
	out := make([]corev1.KeyToPath, len(files))
	for i, f := range files {
		out[i] = corev1.KeyToPath{Key: f.key, Path: dir + f.path}
	}
	return out
}

func (b build) pushSecret() string {
	if s := b.spec.Build; s != nil && s.PushSecretRef != nil {
		return string(s.PushSecretRef.Name)
	}
	return b.defaults.PushSecretName
}

// kaniko renders the executor container. Every argument is its own argv
// entry: no shell ever sees a user's value.
func (b build) kaniko() corev1.Container {
	image := executorImage(b.defaults)
	if s := b.spec.Build; s != nil && s.ExecutorImage != nil {
		image = *s.ExecutorImage
	}
	args := []string{
		"--dockerfile=" + workspace + "/Dockerfile",
		"--context=dir://" + workspace,
		"--destination=" + b.destination,
		"--digest-file=/dev/termination-log",
		"--snapshot-mode=redo",
	}
	cache := b.defaults.CacheRepo != ""
	if s := b.spec.Build; s != nil && s.Cache != nil {
		cache = *s.Cache
	}
	if cache {
		// One cache per namespace: a team that could write another's cache
		// could put its own layers into the other's images.
		repo := strings.TrimSuffix(b.defaults.CacheRepo, "/") + "/" + b.namespace
		if b.defaults.CacheRepo == "" {
			// The destination is <registry>/<namespace>/<name>.
			repo = path.Dir(repositoryOf(b.destination)) + "/cache"
		}
		args = append(args, "--cache=true", "--cache-repo="+repo)
	}
	for _, r := range b.defaults.InsecureRegistries {
		args = append(args, "--insecure-registry="+r)
	}
	for _, m := range b.defaults.RegistryMirrors {
		args = append(args, "--registry-mirror="+m)
	}
	if s := b.spec.Build; s != nil {
		for _, k := range slices.Sorted(maps.Keys(s.BuildArgs)) {
			args = append(args, fmt.Sprintf("--build-arg=%s=%s", k, s.BuildArgs[k]))
		}
	}
	return corev1.Container{
		Name:  ContainerKaniko,
		Image: image,
		Args:  args,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
		},
		// On success the message is the digest file; on failure, the end of
		// Kaniko's log, which says why.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		// Kaniko unpacks images as root; this is the baseline level with
		// every capability Kaniko does not use dropped.
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{
				Drop: []corev1.Capability{"ALL"},
				Add:  []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETGID", "SETUID"},
			},
		},
	}
}

// repositoryOf strips the tag from an image reference.
func repositoryOf(ref string) string {
	for i := len(ref) - 1; i >= 0 && ref[i] != '/'; i-- {
		if ref[i] == ':' {
			return ref[:i]
		}
	}
	return ref
}
