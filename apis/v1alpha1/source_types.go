package v1alpha1

// FunctionSource is where a function's code comes from. Exactly one is set.
// +kubebuilder:validation:XValidation:rule="[has(self.inline), has(self.s3), has(self.git), has(self.image)].filter(x, x).size() == 1",message="exactly one of inline, s3, git or image must be set"
type FunctionSource struct {
	// Inline code, built into an image.
	// +optional
	Inline *InlineSource `json:"inline,omitempty"`

	// S3 fetches the code from an S3 or MinIO bucket and builds it.
	// +optional
	S3 *S3Source `json:"s3,omitempty"`

	// Git fetches the code from a git repository and builds it.
	// +optional
	Git *GitSource `json:"git,omitempty"`

	// Image deploys a prebuilt image; nothing is built.
	// +optional
	Image *ImageSource `json:"image,omitempty"`
}

// InlineSource is code written in the resource itself.
type InlineSource struct {
	// Code is the handler's source file.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=524288
	Code string `json:"code"`

	// Dependencies is the language's dependency file: requirements.txt for
	// python, package.json for nodejs, go.mod for go.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Dependencies string `json:"dependencies,omitempty"`

	// Files are further source files next to the handler.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=path
	// +optional
	Files []SourceFile `json:"files,omitempty"`
}

// A SourceFile is one file of inline code.
type SourceFile struct {
	// Path of the file relative to the handler.
	Path RelativePath `json:"path"`

	// Content of the file.
	// +kubebuilder:validation:MaxLength=262144
	Content string `json:"content"`
}

// S3Source is code stored under a key or prefix of an S3 or MinIO bucket.
// +kubebuilder:validation:XValidation:rule="has(self.key) != has(self.prefix)",message="exactly one of key or prefix must be set"
type S3Source struct {
	// Endpoint of an S3-compatible service such as MinIO. Empty means AWS S3.
	// In-cluster object stores such as http://minio.minio.svc:9000 are the
	// common case and allowed; the cluster's API server, loopback,
	// link-local and cloud metadata addresses are not.
	// +optional
	Endpoint *ServiceURL `json:"endpoint,omitempty"`

	// Bucket name.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$')",message="must be an S3 bucket name: 3 to 63 lowercase letters, digits, '.' or '-'"
	Bucket string `json:"bucket"`

	// Key of a single archive (.tar.gz or .zip) or source file.
	// +optional
	Key *RelativePath `json:"key,omitempty"`

	// Prefix under which every object is part of the source tree.
	// +optional
	Prefix *RelativePath `json:"prefix,omitempty"`

	// Region of the bucket.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9-]+$')",message="must be a region name such as us-east-1"
	// +optional
	Region string `json:"region,omitempty"`

	// SecretRef names a Secret in the resource's namespace with the keys
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Without them the bucket is
	// read anonymously. For an https endpoint it may also hold ca.crt: the
	// PEM CA bundle the server's certificate is checked against, in place of
	// the system's, as for git.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// GitSource is code in a git repository.
type GitSource struct {
	// URL of the repository, https:// or ssh://. Addresses inside the cluster
	// or of cloud metadata services are refused.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(https|ssh)://[A-Za-z0-9.-]+(:[0-9]{1,5})?/[A-Za-z0-9._~%/-]+$')",message="must be an https:// or ssh:// repository URL without user, query or shell characters"
	// +kubebuilder:validation:XValidation:rule="!self.split('/')[2].split(':')[0].lowerAscii().matches('^(localhost|metadata[.]google[.]internal|kubernetes|kubernetes[.]default.*|.*[.]svc|.*[.]svc[.].*|.*[.]cluster[.]local|169[.]254[.].*|127[.].*|0[.].*|100[.]100[.]100[.]200|168[.]63[.]129[.]16|[0-9]+|0x.*)$')",message="must not point at the cluster's own services, a loopback, link-local or cloud metadata address"
	URL string `json:"url"`

	// Ref is a branch, tag or commit. The provider resolves it to a commit.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9._/-]*$') && !self.contains('..') && !self.endsWith('.lock') && !self.endsWith('/')",message="must be a branch, tag or commit name: letters, digits, '.', '_', '-' and '/'"
	// +optional
	Ref string `json:"ref,omitempty"`

	// Path of the function inside the repository.
	// +optional
	Path *RelativePath `json:"path,omitempty"`

	// SecretRef names a Secret in the resource's namespace holding either
	// username and password (https) or ssh-privatekey and known_hosts (ssh).
	// For https it may also hold ca.crt, with or without credentials: the PEM
	// CA bundle the server's certificate is checked against, in place of the
	// system's, as Flux's GitRepository takes it.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// ImageSource is a prebuilt image.
// +kubebuilder:validation:XValidation:rule="has(self.tag) != has(self.digest)",message="exactly one of tag or digest must be set"
type ImageSource struct {
	// Repository of the image, such as ghcr.io/acme/fn.
	Repository ImageRepository `json:"repository"`

	// Tag of the image.
	// +optional
	Tag *ImageTag `json:"tag,omitempty"`

	// Digest of the image; preferred over a tag because it never moves.
	// +optional
	Digest *ImageDigest `json:"digest,omitempty"`

	// PullSecrets name docker-config Secrets in the resource's namespace.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PullSecrets []LocalObjectReference `json:"pullSecrets,omitempty"`
}
