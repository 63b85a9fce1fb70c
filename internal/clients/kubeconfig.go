package clients

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errParseKubeconfig = "cannot parse the kubeconfig"
	errFmtTooMany      = "the kubeconfig has %d %s; the provider takes exactly one, so what it connects to is never a matter of which is current"
	errFmtUserField    = "the kubeconfig's user %q sets %s, which the provider refuses: %s"
	errFmtClusterField = "the kubeconfig's cluster %q sets %s, which the provider refuses: %s"
)

// Why each kubeconfig field a tenant could abuse is refused. Whoever may
// write the kubeconfig Secret is not trusted to make the provider run a
// command, read one of its own files or send its requests elsewhere.
const (
	whyExec         = "a credential plugin runs a command inside the provider's pod"
	whyAuthProvider = "an auth provider plugin runs inside the provider and may read its files"
	whyFile         = "a file path reads a file of the provider's pod, such as its service account token; put the data inline"
	whyProxy        = "a proxy sends the provider's requests, credentials included, through a host of the kubeconfig's choosing"
)

// TargetConfig turns a kubeconfig from a Secret into the REST config of its
// cluster. It takes only inline credentials: a kubeconfig with a credential
// plugin, an auth provider, any file path, a proxy, or more than one
// cluster, user or context is refused with an error naming the field.
func TargetConfig(kubeconfig []byte) (*rest.Config, error) {
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, errors.Wrap(err, errParseKubeconfig)
	}
	if err := inlineOnly(kc); err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	return rc, errors.Wrap(err, errParseKubeconfig)
}

// A field of a kubeconfig the provider refuses when it is set.
type field struct {
	name, why string
	set       bool
}

// inlineOnly refuses what would make the provider act outside its requests
// to the named server. It names the first refused field in a fixed order,
// so the condition it ends up in does not change between reconciles.
func inlineOnly(kc *clientcmdapi.Config) error {
	for _, f := range []struct {
		what string
		n    int
	}{{"clusters", len(kc.Clusters)}, {"users", len(kc.AuthInfos)}, {"contexts", len(kc.Contexts)}} {
		if f.n > 1 {
			return errors.Errorf(errFmtTooMany, f.n, f.what)
		}
	}
	for name, u := range kc.AuthInfos {
		if f := firstSet(
			field{"exec", whyExec, u.Exec != nil},
			field{"auth-provider", whyAuthProvider, u.AuthProvider != nil},
			field{"tokenFile", whyFile, u.TokenFile != ""},
			field{"client-certificate", whyFile, u.ClientCertificate != ""},
			field{"client-key", whyFile, u.ClientKey != ""},
		); f != nil {
			return errors.Errorf(errFmtUserField, name, f.name, f.why)
		}
	}
	for name, c := range kc.Clusters {
		if f := firstSet(
			field{"certificate-authority", whyFile, c.CertificateAuthority != ""},
			field{"proxy-url", whyProxy, c.ProxyURL != ""},
		); f != nil {
			return errors.Errorf(errFmtClusterField, name, f.name, f.why)
		}
	}
	return nil
}

// firstSet is the first of fields that is set, or nil.
func firstSet(fields ...field) *field {
	for i := range fields {
		if fields[i].set {
			return &fields[i]
		}
	}
	return nil
}
