package v1alpha1

// A Volume mounts the keys of a Secret or ConfigMap of the resource's own
// namespace as read-only files in a folder, as Knative Functions' volumes
// and OpenFaaS's secrets do: a key's file holds its value, and the kubelet
// updates it when the Secret or ConfigMap changes.
// +kubebuilder:validation:XValidation:rule="has(self.secret) != has(self.configMap)",message="exactly one of secret or configMap must be set"
type Volume struct {
	// Path of the folder the files appear in, such as /var/run/secrets/db.
	// /dev, /proc, /sys and /lambda are the system's and the wrappers', and
	// /app and /function hold a built function's code, so none of them, nor
	// anything under the first four, may be mounted over.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^(/[^/:]+)+$') && !self.matches('/[.][.]?(/|$)')",message="must be an absolute path without '.' or '..' parts, ':' or a trailing '/', such as /var/run/secrets/db"
	// +kubebuilder:validation:XValidation:rule="!(self in ['/app', '/function']) && !self.matches('^/(dev|proc|sys|lambda)(/|$)')",message="must not be /app, /function, or /dev, /proc, /sys or /lambda or under them: those hold the system and the function's code; mount under another folder, such as /var/run/secrets"
	Path string `json:"path"`

	// Secret whose keys become the files.
	// +optional
	Secret *VolumeSource `json:"secret,omitempty"`

	// ConfigMap whose keys become the files.
	// +optional
	ConfigMap *VolumeSource `json:"configMap,omitempty"`
}

// A VolumeSource names the Secret or ConfigMap a volume holds and which of
// its keys.
type VolumeSource struct {
	// Name of the Secret or ConfigMap.
	Name DNSSubdomain `json:"name"`

	// Items mounts only these keys, each at the path it names. Every key is
	// mounted, as a file named after it, when there are none.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=path
	// +optional
	Items []KeyToPath `json:"items,omitempty"`

	// Optional lets the workload start when the Secret or ConfigMap, or a
	// key Items names, is missing: the folder is then empty, or lacks the
	// key's file.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// A KeyToPath mounts one key of a Secret or ConfigMap at a path of its own.
type KeyToPath struct {
	// Key to mount.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must consist of letters, digits, '-', '_' or '.'"
	Key string `json:"key"`

	// Path of its file, relative to the volume's path, such as password or
	// tls/ca.crt.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[^/:]+(/[^/:]+)*$') && !self.matches('(^|/)[.][.]?(/|$)')",message="must be a relative path without '.' or '..' parts, ':' or a leading or trailing '/', such as password or tls/ca.crt"
	Path string `json:"path"`
}
