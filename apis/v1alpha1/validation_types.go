package v1alpha1

// Named string types carry their validation with them, so every field of that
// kind is checked the same way and reports the same message.

// A DNSLabel is a Kubernetes object name that is also a DNS label.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
type DNSLabel string

// A GoDuration is a duration in Go's notation, such as 30s, 5m or 1h30m.
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h30m"
type GoDuration string

// An ISO8601Duration is a duration in ISO 8601 notation, such as PT0.5S or
// PT1M, as Knative's delivery settings expect.
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self.matches('^P(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:[.][0-9]+)?S)?)?$') && self != 'P' && !self.endsWith('T')",message="must be an ISO 8601 duration such as PT0.5S, PT10S or PT1M"
type ISO8601Duration string

// An ImageRepository is an OCI image reference without tag or digest, such as
// ghcr.io/acme/agent or registry.local:5000/team/fn.
// +kubebuilder:validation:MaxLength=255
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*$')",message="must be an image repository such as ghcr.io/acme/app, without tag or digest"
type ImageRepository string

// An ImageTag is an OCI image tag.
// +kubebuilder:validation:MaxLength=128
// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]*$')",message="must be an image tag: letters, digits, '_', '.' and '-', not starting with '.' or '-'"
type ImageTag string

// An ImageDigest is a sha256 content digest of an image.
// +kubebuilder:validation:MaxLength=71
// +kubebuilder:validation:XValidation:rule="self.matches('^sha256:[a-f0-9]{64}$')",message="must be a digest of the form sha256:<64 lowercase hex digits>"
type ImageDigest string

// An HTTPURL is an http or https URL without credentials, query or fragment.
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$')",message="must be an http:// or https:// URL without user, query or fragment"
type HTTPURL string

// A ServiceURL is an HTTPURL the provider, Knative's dispatchers or a
// fetcher send requests to from inside the cluster, so it may not name the
// cluster's API server, loopback, link-local or cloud metadata addresses.
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$')",message="must be an http:// or https:// URL without user, query or fragment"
// +kubebuilder:validation:XValidation:rule="!self.split('/')[2].split(':')[0].lowerAscii().matches('^(localhost|metadata[.]google[.]internal|kubernetes|kubernetes[.]default([.].*)?|169[.]254[.].*|127[.].*|0[.].*|100[.]100[.]100[.]200|168[.]63[.]129[.]16|[0-9]+|0x.*)$')",message="must not point at the cluster's API server, a loopback, link-local or cloud metadata address"
type ServiceURL string

// An HTTPPath is the absolute path of an HTTP request, such as /healthz,
// without query or fragment.
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="self.matches('^/[A-Za-z0-9._~%/-]*$')",message="must be an absolute HTTP path such as /healthz: '/' then letters, digits, '.', '_', '~', '%', '-' and '/'"
type HTTPPath string

// A RelativePath is a path inside a source tree. It never leaves the tree: it
// is relative and has no '..' segment.
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._/-]+$')",message="may contain only letters, digits, '.', '_', '-' and '/'"
// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(s, s == '..')",message="must be a relative path without '..' segments"
type RelativePath string
