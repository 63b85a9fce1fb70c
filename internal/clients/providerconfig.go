package clients

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errNoProviderConfig  = "the resource names no provider config"
	errFmtGetPC          = "cannot get %s %q"
	errFmtUnknownPCKind  = "unknown provider config kind %q: use ProviderConfig or ClusterProviderConfig"
	errFmtGetSecret      = "cannot get the kubeconfig Secret %s/%s"
	errFmtNoSecretKey    = "the kubeconfig Secret %s/%s has no key %q"
	errSecretRefRequired = "credentials.source is Secret but no secretRef is set"
	errFmtGetNamespace   = "cannot get namespace %q to match it against ClusterProviderConfig %q"
	errFmtSelector       = "ClusterProviderConfig %q has an invalid namespaceSelector"
	errFmtNotAdmitted    = "ClusterProviderConfig %q does not admit namespace %q: its namespaceSelector does not match the namespace's labels"
)

// A Config is what a provider config says: where the target cluster is, and
// the build defaults.
type Config struct {
	// Kubeconfig of the target cluster; nil means the provider's own.
	Kubeconfig []byte
	// Secret the kubeconfig was read from, as namespace/name/key: when it
	// changes, the client of what it held before is stopped.
	Secret string

	Defaults render.Defaults
}

// Resolve reads the provider config a managed resource references. A
// ProviderConfig is looked up in the resource's namespace and its Secret in
// the ProviderConfig's own, so a resource can never make the provider read a
// Secret in another namespace; it is a team's to write, so its build
// and eventing settings may not loosen the fences (render.Loosens).
func Resolve(ctx context.Context, kube client.Reader, mg resource.ModernManaged) (Config, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return Config{}, errors.New(errNoProviderConfig)
	}
	var (
		source    v1alpha1.CredentialsSource
		secretNS  string
		secretRef *v1alpha1.KeySelector
		build     *v1alpha1.BuildDefaults
		eventing  *v1alpha1.EventingDefaults
	)
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			return Config{}, errors.Wrapf(err, errFmtGetPC, ref.Kind, ref.Name)
		}
		if err := render.Loosens(pc.Name, pc.Spec.Build, pc.Spec.Eventing); err != nil {
			return Config{}, err
		}
		source, secretNS, secretRef, build, eventing = pc.Spec.Credentials.Source, pc.Namespace, pc.Spec.Credentials.SecretRef, pc.Spec.Build, pc.Spec.Eventing
	case v1alpha1.ClusterProviderConfigKind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return Config{}, errors.Wrapf(err, errFmtGetPC, ref.Kind, ref.Name)
		}
		if err := admits(ctx, kube, pc, mg.GetNamespace()); err != nil {
			return Config{}, err
		}
		source, build, eventing = pc.Spec.Credentials.Source, pc.Spec.Build, pc.Spec.Eventing
		if s := pc.Spec.Credentials.SecretRef; s != nil {
			secretNS, secretRef = s.Namespace, &v1alpha1.KeySelector{Name: s.Name, Key: s.Key}
		}
	default:
		return Config{}, errors.Errorf(errFmtUnknownPCKind, ref.Kind)
	}

	cfg := Config{Defaults: render.BuildDefaults(build).WithEventing(eventing)}
	if source != v1alpha1.CredentialsSourceSecret {
		return cfg, nil
	}
	if secretRef == nil {
		return Config{}, errors.New(errSecretRefRequired)
	}
	s := &corev1.Secret{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: secretNS, Name: secretRef.Name}, s); err != nil {
		return Config{}, errors.Wrapf(err, errFmtGetSecret, secretNS, secretRef.Name)
	}
	kc, ok := s.Data[secretRef.Key]
	if !ok || len(kc) == 0 {
		return Config{}, errors.Errorf(errFmtNoSecretKey, secretNS, secretRef.Name, secretRef.Key)
	}
	cfg.Kubeconfig, cfg.Secret = kc, secretNS+"/"+secretRef.Name+"/"+secretRef.Key
	return cfg, nil
}

// admits refuses a ClusterProviderConfig to a namespace its
// namespaceSelector does not select.
func admits(ctx context.Context, kube client.Reader, pc *v1alpha1.ClusterProviderConfig, namespace string) error {
	sel, err := metav1.LabelSelectorAsSelector(&pc.Spec.NamespaceSelector)
	if err != nil {
		return errors.Wrapf(err, errFmtSelector, pc.Name)
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		return errors.Wrapf(err, errFmtGetNamespace, namespace, pc.Name)
	}
	if !sel.Matches(labels.Set(ns.Labels)) {
		return errors.Errorf(errFmtNotAdmitted, pc.Name, namespace)
	}
	return nil
}
