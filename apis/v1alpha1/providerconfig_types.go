package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// A CredentialsSource is where the provider gets credentials for the target
// cluster.
// +kubebuilder:validation:Enum=InjectedIdentity;Secret
type CredentialsSource string

// Credentials sources.
const (
	// CredentialsSourceInjectedIdentity targets the cluster the provider runs
	// in, with its own service account.
	CredentialsSourceInjectedIdentity CredentialsSource = "InjectedIdentity"

	// CredentialsSourceSecret targets the cluster of a kubeconfig in a Secret.
	CredentialsSourceSecret CredentialsSource = "Secret"
)

// EventingDefaults apply to the Triggers of the resources that use a
// provider config, unless the resource sets its own.
type EventingDefaults struct {
	// DeadLetterSink receives the events a Trigger could not deliver when
	// neither the Trigger nor its workload names a dead-letter sink. A ref
	// names an object in each resource's own namespace.
	// +optional
	DeadLetterSink *Sink `json:"deadLetterSink,omitempty"`

	// RelayImage runs beside each agent that forwards events and counts the
	// forwards each event passed through: the relay image of this
	// provider's release when unset. Only a ClusterProviderConfig may name
	// another.
	// +optional
	RelayImage *string `json:"relayImage,omitempty"`

	// MaxForwardHops is the most forwards one event passes through, across
	// every namespace, before relays drop it: a cycle of forwards ends
	// there. 8 when unset; a ProviderConfig may only lower it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	MaxForwardHops *int32 `json:"maxForwardHops,omitempty"`
}

// BuildDefaults apply to every build of the resources that use a provider
// config, unless the resource sets its own.
type BuildDefaults struct {
	// Registry images are pushed to, such as registry.local:5000/lambdas.
	// +optional
	Registry *ImageRepository `json:"registry,omitempty"`

	// ExecutorImage is the Kaniko executor image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ExecutorImage *string `json:"executorImage,omitempty"`

	// AllowedExecutorImages are the Kaniko executor images a resource's
	// build.executorImage may name, besides executorImage. Build pods run
	// the executor as root with the team's code, so which executor runs is
	// the platform's choice; any other image is refused.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	// +listType=set
	// +optional
	AllowedExecutorImages []string `json:"allowedExecutorImages,omitempty"`

	// GitFetcherImage fetches git sources into the build: a shell and git.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	GitFetcherImage *string `json:"gitFetcherImage,omitempty"`

	// S3FetcherImage fetches S3 sources into the build: a shell and the AWS
	// CLI.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	S3FetcherImage *string `json:"s3FetcherImage,omitempty"`

	// MaxTimeout is the longest build.timeout a resource may ask for; a
	// longer one is refused. 30m when unset.
	// +optional
	MaxTimeout *GoDuration `json:"maxTimeout,omitempty"`

	// Network limits where build pods may connect.
	// +optional
	Network *BuildNetwork `json:"network,omitempty"`

	// CacheRepo is where Kaniko caches layers; caching is on when set.
	// +optional
	CacheRepo *ImageRepository `json:"cacheRepo,omitempty"`

	// PushSecretRef names a docker-config Secret, in the namespace of each
	// resource, used to push images.
	// +optional
	PushSecretRef *LocalObjectReference `json:"pushSecretRef,omitempty"`

	// BaseImages replace the images builds start from, such as a mirror's
	// copy of python:3.12-slim pinned by digest, for a cluster that cannot
	// or may not pull from Docker Hub. A language's entry for the function's
	// version is used first, then its entry without a version; languages
	// without one use the public images (python:<version>-slim,
	// node:<version>-slim, golang:<version> and distroless static).
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.language == a.language && (has(b.version) ? b.version : '') == (has(a.version) ? a.version : '')))",message="each language and version may have one base image"
	// +optional
	BaseImages []BaseImage `json:"baseImages,omitempty"`

	// RegistryMirrors are registries Kaniko pulls base images through, in
	// order, before the image's own registry (its --registry-mirror).
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +optional
	RegistryMirrors []ImageRepository `json:"registryMirrors,omitempty"`

	// PullSecretRefs name docker-config Secrets, in the namespace of each
	// resource, that built images are pulled with: set them when registry
	// is private. A resource whose Secret is missing is held.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PullSecretRefs []LocalObjectReference `json:"pullSecretRefs,omitempty"`

	// InsecureRegistries are registries reached over plain http.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=255
	// +listType=set
	// +optional
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
}

// A BaseImage is the image builds of one language start from.
// +kubebuilder:validation:XValidation:rule="!has(self.runImage) || self.language == 'go'",message="runImage is for go, whose binary runs in an image of its own"
// +kubebuilder:validation:XValidation:rule="!has(self.version) || !self.image.contains('{version}')",message="an image for one version names it: {version} is for an entry without a version"
type BaseImage struct {
	// Language whose builds start from the image.
	Language Language `json:"language"`

	// Version of the language the image is for; unset, every version
	// without an entry of its own.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+([.][0-9]+)*$')",message="must be a language version such as 3.12 or 22"
	// +optional
	Version *string `json:"version,omitempty"`

	// Image the build starts from, such as
	// mirror.local/library/python:{version}-slim: {version} is replaced
	// by the function's language version.
	Image BaseImageReference `json:"image"`

	// RunImage is, for go, the image the built binary runs in, such as
	// mirror.local/distroless/static-debian12:nonroot. It needs no shell.
	// +optional
	RunImage *BaseImageReference `json:"runImage,omitempty"`
}

// A BaseImageReference is an OCI image reference with a tag or a digest or
// both; its tag may hold {version}, the function's language version.
// +kubebuilder:validation:MaxLength=512
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:([A-Za-z0-9_.-]|[{]version[}])+)?(@sha256:[a-f0-9]{64})?$') && (self.contains('@') || self.split('/')[self.split('/').size() - 1].contains(':'))",message="must be an image reference with a tag or digest, such as mirror.local/library/python:{version}-slim or mirror.local/python@sha256:<64 hex digits>"
type BaseImageReference string

// A BuildNetworkPolicy says whether build pods get a NetworkPolicy.
// +kubebuilder:validation:Enum=Restricted;Unrestricted
type BuildNetworkPolicy string

// Build network policies.
const (
	// BuildNetworkRestricted renders a NetworkPolicy with every build.
	BuildNetworkRestricted BuildNetworkPolicy = "Restricted"
	// BuildNetworkUnrestricted renders none: build pods reach whatever
	// the cluster lets any pod reach.
	BuildNetworkUnrestricted BuildNetworkPolicy = "Unrestricted"
)

// A CIDR is an IPv4 or IPv6 network, such as 10.96.0.0/12.
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 10.96.0.0/12 or fd00::/8"
type CIDR string

// A BuildNetwork limits where build pods may connect. Package installers
// run the team's scripts as root inside Kaniko; what they can reach is what
// the team can reach.
type BuildNetwork struct {
	// Policy Restricted renders, with every build, a NetworkPolicy that
	// admits no ingress and lets build pods reach the cluster's DNS, the
	// internet, the namespaces in allowNamespaces and the networks in
	// allowCIDRs, but not link-local and cloud metadata addresses, the
	// cluster's networks, or the networks the provider is told to refuse.
	// Unrestricted renders none; it must be chosen explicitly.
	// +kubebuilder:default=Restricted
	// +optional
	Policy BuildNetworkPolicy `json:"policy,omitempty"`

	// ClusterCIDRs are the cluster's pod and service networks and its API
	// server's addresses. Empty means every private network: 10.0.0.0/8,
	// 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 and fc00::/7.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	ClusterCIDRs []CIDR `json:"clusterCIDRs,omitempty"`

	// AllowNamespaces are namespaces whose pods build pods may reach, such
	// as an in-cluster registry's or MinIO's.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	AllowNamespaces []DNSLabel `json:"allowNamespaces,omitempty"`

	// AllowCIDRs are networks build pods may reach although clusterCIDRs
	// hold them, such as a registry on a private network.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	AllowCIDRs []CIDR `json:"allowCIDRs,omitempty"`

	// DNSCIDRs are the DNS servers build pods may ask besides the cluster
	// DNS's pods (kube-system's pods labelled k8s-app: kube-dns), such as a
	// node-local DNS cache; port 53 of nothing else is open to them. Empty
	// means node-local DNS's default address, 169.254.20.10/32.
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +optional
	DNSCIDRs []CIDR `json:"dnsCIDRs,omitempty"`
}

// ProviderCredentials of a namespaced ProviderConfig: a kubeconfig Secret in
// the ProviderConfig's own namespace.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="secretRef is required when source is Secret"
type ProviderCredentials struct {
	// Source of the credentials.
	// +kubebuilder:default=InjectedIdentity
	Source CredentialsSource `json:"source"`

	// SecretRef selects the kubeconfig key of a Secret in the
	// ProviderConfig's namespace.
	// +optional
	SecretRef *KeySelector `json:"secretRef,omitempty"`
}

// ClusterProviderCredentials of a ClusterProviderConfig: a kubeconfig Secret
// in a namespace the platform team chooses.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="secretRef is required when source is Secret"
type ClusterProviderCredentials struct {
	// Source of the credentials.
	// +kubebuilder:default=InjectedIdentity
	Source CredentialsSource `json:"source"`

	// SecretRef selects the kubeconfig key of a Secret.
	// +optional
	SecretRef *xpv2.SecretKeySelector `json:"secretRef,omitempty"`
}

// A ProviderConfigSpec configures a namespaced ProviderConfig.
type ProviderConfigSpec struct {
	// Credentials for the target cluster.
	// +kubebuilder:default={"source": "InjectedIdentity"}
	Credentials ProviderCredentials `json:"credentials"`

	// Build defaults of the resources that use this config.
	// +optional
	Build *BuildDefaults `json:"build,omitempty"`

	// Eventing defaults of the resources that use this config.
	// +optional
	Eventing *EventingDefaults `json:"eventing,omitempty"`
}

// A ClusterProviderConfigSpec configures a ClusterProviderConfig.
type ClusterProviderConfigSpec struct {
	// NamespaceSelector selects the namespaces whose resources may use this
	// config; a resource in any other namespace is refused. It is required,
	// so which namespaces may use a cluster's credentials is always written
	// down. An empty selector ({}) admits every namespace, as an empty
	// Kubernetes label selector selects everything. Select namespaces by
	// name with the label kubernetes.io/metadata.name.
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// Credentials for the target cluster.
	// +kubebuilder:default={"source": "InjectedIdentity"}
	Credentials ClusterProviderCredentials `json:"credentials"`

	// Build defaults of the resources that use this config.
	// +optional
	Build *BuildDefaults `json:"build,omitempty"`

	// Eventing defaults of the resources that use this config.
	// +optional
	Eventing *EventingDefaults `json:"eventing,omitempty"`
}

// A ProviderConfigStatus is the observed state of a provider config.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// +kubebuilder:object:root=true

// A ProviderConfig points the LambdaFunctions and LambdaAgents of its
// namespace at a target cluster and sets their build defaults.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="REGISTRY",type="string",JSONPath=".spec.build.registry"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,knative-lambda}
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList contains a list of ProviderConfig.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ClusterProviderConfig points LambdaFunctions and LambdaAgents of the
// namespaces it selects at a target cluster and sets their build defaults.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="REGISTRY",type="string",JSONPath=".spec.build.registry"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,knative-lambda}
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigList contains a list of ClusterProviderConfig.
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ProviderConfigUsage records that a managed resource uses a provider
// config, so a config in use is not deleted.
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,knative-lambda}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}
