package render

import (
	"time"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const errFmtLoosens = "ProviderConfig %q sets %s, which %s: a namespaced ProviderConfig may tighten the fences the provider sets, never loosen them; a platform admin sets it in a ClusterProviderConfig"

// Why each field a namespaced ProviderConfig may not set would loosen a
// fence. Teams may write ProviderConfigs in their namespaces.
const (
	whyUnrestricted = "turns off the build's NetworkPolicy"
	whyAllow        = "lets builds reach what the fence refuses"
	whyClusterCIDRs = "replaces the cluster networks builds may not reach"
	whyExecutor     = "chooses the image that runs builds as root"
	whyFetcher      = "chooses an image that runs in every build"
	whyMaxTimeout   = "lets builds run longer than the provider allows (30m)"
	whyRelay        = "chooses what counts the forwards an event passed through, which ends cycles of forwards across namespaces"
	whyMaxHops      = "lets forwarded events go round more often than the provider allows (8)"
)

// Loosens refuses the settings of a namespaced ProviderConfig that would
// loosen what the provider allows every build and every forward: teams may
// write ProviderConfigs in their namespaces, and the provider and the
// function read them alike. It names the first such field in a fixed
// order, so the condition it ends up in does not change between passes.
func Loosens(name string, b *v1alpha1.BuildDefaults, e *v1alpha1.EventingDefaults) error {
	if b == nil {
		b = &v1alpha1.BuildDefaults{}
	}
	n := b.Network
	if n == nil {
		n = &v1alpha1.BuildNetwork{}
	}
	if e == nil {
		e = &v1alpha1.EventingDefaults{}
	}
	for _, f := range []struct {
		name, why string
		set       bool
	}{
		{"build.network.policy: Unrestricted", whyUnrestricted, n.Policy == v1alpha1.BuildNetworkUnrestricted},
		{"build.network.allowCIDRs", whyAllow, len(n.AllowCIDRs) > 0},
		{"build.network.allowNamespaces", whyAllow, len(n.AllowNamespaces) > 0},
		{"build.network.clusterCIDRs", whyClusterCIDRs, len(n.ClusterCIDRs) > 0},
		{"build.network.dnsCIDRs", whyAllow, len(n.DNSCIDRs) > 0},
		{"build.executorImage", whyExecutor, b.ExecutorImage != nil && *b.ExecutorImage != DefaultExecutorImage},
		{"build.allowedExecutorImages", whyExecutor, len(b.AllowedExecutorImages) > 0},
		{"build.gitFetcherImage", whyFetcher, b.GitFetcherImage != nil && *b.GitFetcherImage != GitFetcherImage},
		{"build.s3FetcherImage", whyFetcher, b.S3FetcherImage != nil && *b.S3FetcherImage != S3FetcherImage},
		{"build.maxTimeout", whyMaxTimeout, b.MaxTimeout != nil && longer(string(*b.MaxTimeout), DefaultMaxBuildTimeout)},
		{"eventing.relayImage", whyRelay, e.RelayImage != nil && *e.RelayImage != DefaultRelayImage},
		{"eventing.maxForwardHops", whyMaxHops, e.MaxForwardHops != nil && *e.MaxForwardHops > DefaultMaxForwardHops},
	} {
		if f.set {
			return errors.Errorf(errFmtLoosens, name, f.name, f.why)
		}
	}
	return nil
}

// longer is true when d is a duration longer than limit.
func longer(d string, limit time.Duration) bool {
	t, err := time.ParseDuration(d)
	return err == nil && t > limit
}
