package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// A Language is a runtime a function is built for.
// +kubebuilder:validation:Enum=python;nodejs;go
type Language string

// Languages.
const (
	LanguagePython Language = "python"
	LanguageNodeJS Language = "nodejs"
	LanguageGo     Language = "go"
)

// A LogLevel is the lowest level of the lines a function's handler logs
// that the wrapper writes.
// +kubebuilder:validation:Enum=debug;info;warn;error
type LogLevel string

// Runtime is the language a function is written in and how it is served.
// +kubebuilder:validation:XValidation:rule="!has(self.version) || !has(self.language) || (self.language == 'python' && self.version in ['3.11', '3.12']) || (self.language == 'nodejs' && self.version in ['20', '22']) || (self.language == 'go' && self.version.matches('^1[.](2[3-9]|[3-9][0-9])$'))",message="supported versions are python 3.11 and 3.12, nodejs 20 and 22, go 1.23 and later"
type Runtime struct {
	// Language of the code. Required unless the source is an image.
	// +optional
	Language *Language `json:"language,omitempty"`

	// Version of the language; the newest supported one when empty.
	// +kubebuilder:validation:MaxLength=8
	// +optional
	Version *string `json:"version,omitempty"`

	// Handler is the function the wrapper calls: module.function for python
	// (main.handler), file.export for nodejs (index.handler), an exported
	// function name for go (Handle).
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*$')",message="must be a dotted identifier such as main.handler: letters, digits, '_' and '.'"
	// +optional
	Handler *string `json:"handler,omitempty"`

	// Port the container listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:validation:XValidation:rule="!(self in [8012, 8013, 8022, 9090, 9091])",message="ports 8012, 8013, 8022, 9090 and 9091 are reserved by Knative's queue-proxy"
	// +kubebuilder:default=8080
	// +optional
	Port int32 `json:"port,omitempty"`

	// MaxRequestBody is the largest request body the wrapper reads, such as
	// 6Mi (the default when empty); larger requests get 413. It applies to
	// built functions only: an image serves its own limits.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).compareTo(quantity('1Ki')) >= 0 && quantity(string(self)).compareTo(quantity('1Gi')) <= 0",message="must be a whole number of bytes from 1Ki to 1Gi"
	// +optional
	MaxRequestBody *resource.Quantity `json:"maxRequestBody,omitempty"`

	// LogLevel is the lowest level of the handler's log lines the wrapper
	// writes: debug, info (the default when empty), warn or error. Each
	// invocation's own line is info, or error when the handler failed. It
	// applies to built functions only, and changes the Service, not the
	// image.
	// +optional
	LogLevel *LogLevel `json:"logLevel,omitempty"`
}

// Build configures how a function's image is built by Kaniko.
type Build struct {
	// Registry the image is pushed to, such as registry.local:5000/lambdas.
	// The ProviderConfig's registry is used when empty.
	// +optional
	Registry *ImageRepository `json:"registry,omitempty"`

	// Timeout of one build, at most the provider config's maxTimeout.
	// +kubebuilder:default="15m"
	// +optional
	Timeout *GoDuration `json:"timeout,omitempty"`

	// ExecutorImage picks another Kaniko executor image among those the
	// provider config allows (allowedExecutorImages).
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?(@sha256:[a-f0-9]{64})?$')",message="must be an image reference such as registry.local/kaniko/executor:v1.25.0@sha256:..."
	// +optional
	ExecutorImage *string `json:"executorImage,omitempty"`

	// Cache layers in the registry between builds.
	// +optional
	Cache *bool `json:"cache,omitempty"`

	// PushSecretRef names a docker-config Secret in the resource's namespace
	// used to push the image.
	// +optional
	PushSecretRef *LocalObjectReference `json:"pushSecretRef,omitempty"`

	// BuildArgs are passed to the build as --build-arg.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]{0,63}$'))",message="build argument names must be identifiers: letters, digits and '_'"
	// +optional
	BuildArgs map[string]string `json:"buildArgs,omitempty"`
}
