package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The fetch scripts are fixed text. User values reach them only as
// environment variables, always quoted, so no value is ever parsed as shell;
// git's arguments follow "--", and S3's start with s3://, so none is ever
// taken for an option.
const (
	gitFetchScript = `set -eu
export HOME=/workspace/.home
mkdir -p "$HOME" /workspace/src
if [ -f /etc/git-secret/ssh-privatekey ]; then
  export GIT_SSH_COMMAND="ssh -i /etc/git-secret/ssh-privatekey -o IdentitiesOnly=yes -o UserKnownHostsFile=/etc/git-secret/known_hosts -o StrictHostKeyChecking=yes"
fi
if [ -f /etc/git-secret/ca.crt ]; then
  export GIT_SSL_CAINFO=/etc/git-secret/ca.crt
fi
if [ -n "${GIT_USERNAME:-}" ]; then
  git config --global credential.helper '!f() { echo "username=$GIT_USERNAME"; echo "password=$GIT_PASSWORD"; }; f'
fi
git init -q /workspace/.repo
cd /workspace/.repo
git remote add origin -- "$GIT_URL"
git fetch -q --depth 1 origin -- "$GIT_COMMIT"
git -c advice.detachedHead=false checkout -q FETCH_HEAD
cp -R -- "./${GIT_PATH:-.}/." /workspace/src/
cp -RL /build/. /workspace/
rm -rf /workspace/.repo /workspace/.home
`
	s3FetchScript = `set -eu
export HOME=/workspace/.home
mkdir -p "$HOME" /workspace/src
if [ -f /etc/s3-secret/ca.crt ]; then
  export AWS_CA_BUNDLE=/etc/s3-secret/ca.crt
fi
set -- --only-show-errors
if [ -n "${S3_ENDPOINT:-}" ]; then set -- "$@" --endpoint-url "$S3_ENDPOINT"; fi
if [ -z "${AWS_ACCESS_KEY_ID:-}" ]; then set -- "$@" --no-sign-request; fi
if [ -n "${S3_KEY:-}" ]; then
  aws s3 cp "$@" "s3://$S3_BUCKET/$S3_KEY" /workspace/.object
  case "$S3_KEY" in
    *.tar.gz|*.tgz) tar -xzf /workspace/.object -C /workspace/src ;;
    *.tar) tar -xf /workspace/.object -C /workspace/src ;;
    *) mv /workspace/.object "/workspace/src/${S3_KEY##*/}" ;;
  esac
  rm -f /workspace/.object
else
  aws s3 cp "$@" --recursive "s3://$S3_BUCKET/$S3_PREFIX" /workspace/src
fi
cp -RL /build/. /workspace/
rm -rf /workspace/.home
`
)

// fetcher renders the init container that puts a git or S3 source into the
// workspace, and the volumes it needs besides the workspace.
func (b build) fetcher() (corev1.Container, []corev1.Volume) {
	c := corev1.Container{
		Name:         ContainerFetch,
		Command:      []string{"/bin/sh", "-c"},
		VolumeMounts: []corev1.VolumeMount{{Name: "workspace", MountPath: workspace}, {Name: "build-context", MountPath: buildFiles, ReadOnly: true}},
		// A failed fetch's message is the end of its log: git's or the AWS
		// CLI's error, which the build's status then shows.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		// A fetcher needs no privilege at all: the restricted level.
		SecurityContext: restrictedContainer(),
	}
	c.SecurityContext.RunAsUser = ptr.To[int64](fetcherUID)
	var volumes []corev1.Volume
	switch src := b.spec.Source; {
	case src.Git != nil:
		g := src.Git
		c.Image = orDefault(b.defaults.GitFetcherImage, GitFetcherImage)
		c.Args = []string{gitFetchScript}
		c.Env = []corev1.EnvVar{
			{Name: "GIT_URL", Value: g.URL},
			{Name: "GIT_COMMIT", Value: b.sourceID},
			{Name: "GIT_PATH", Value: string(ptr.Deref(g.Path, ""))},
		}
		if g.SecretRef != nil {
			name := string(g.SecretRef.Name)
			c.Env = append(c.Env, secretEnv("GIT_USERNAME", name, "username"), secretEnv("GIT_PASSWORD", name, "password"))
			volumes = append(volumes, secretFiles(&c, "git-secret", name, gitMount))
		}
	case src.S3 != nil:
		s := src.S3
		c.Image = orDefault(b.defaults.S3FetcherImage, S3FetcherImage)
		c.Args = []string{s3FetchScript}
		c.Env = []corev1.EnvVar{
			{Name: "S3_ENDPOINT", Value: string(ptr.Deref(s.Endpoint, ""))},
			{Name: "S3_BUCKET", Value: s.Bucket},
			{Name: "S3_KEY", Value: string(ptr.Deref(s.Key, ""))},
			{Name: "S3_PREFIX", Value: string(ptr.Deref(s.Prefix, ""))},
		}
		// An empty AWS_REGION is not an unset one: the AWS CLI signs for
		// no region, and the server answers 400 Bad Request.
		if s.Region != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: "AWS_REGION", Value: s.Region})
		}
		if s.SecretRef != nil {
			name := string(s.SecretRef.Name)
			c.Env = append(c.Env, secretEnv("AWS_ACCESS_KEY_ID", name, "AWS_ACCESS_KEY_ID"), secretEnv("AWS_SECRET_ACCESS_KEY", name, "AWS_SECRET_ACCESS_KEY"))
			volumes = append(volumes, secretFiles(&c, "s3-secret", name, s3Mount))
		}
	}
	return c, volumes
}

// secretFiles mounts a source's Secret into the fetcher at path, for the
// files its script looks for (a key, known hosts, a CA bundle), and returns
// its volume. The volume is optional, as the variables read from the Secret
// are: a Secret with credentials alone is no error.
func secretFiles(c *corev1.Container, volume, secret, path string) corev1.Volume {
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: path, ReadOnly: true})
	return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  secret,
		DefaultMode: ptr.To[int32](0o440),
		Optional:    ptr.To(true),
	}}}
}

// secretEnv reads a variable from a Secret key; a missing key leaves it
// unset, so an ssh Secret without username works.
func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key, Optional: ptr.To(true),
	}}}
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
