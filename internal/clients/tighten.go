package clients

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const errFmtLoosens = "ProviderConfig %q sets build.%s, which %s: a namespaced ProviderConfig may tighten the build fence the provider sets, never loosen it; a platform admin sets it in a ClusterProviderConfig"

// Why each build field a namespaced ProviderConfig may not set would
// loosen the fence. Teams may write ProviderConfigs in their namespaces.
const (
	whyUnrestricted = "turns off the build's NetworkPolicy"
	whyAllow        = "lets builds reach what the fence refuses"
	whyClusterCIDRs = "replaces the cluster networks builds may not reach"
	whyExecutor     = "chooses the image that runs builds as root"
	whyFetcher      = "chooses an image that runs in every build"
	whyMaxTimeout   = "lets builds run longer than the provider allows (30m)"
)

// loosens refuses the build settings of a namespaced ProviderConfig that
// would loosen what the provider allows every build. It names the first
// such field in a fixed order, so the condition it ends up in does not
// change between reconciles.
func loosens(name string, b *v1alpha1.BuildDefaults) error {
	if b == nil {
		return nil
	}
	n := b.Network
	if n == nil {
		n = &v1alpha1.BuildNetwork{}
	}
	if f := firstSet(
		field{"network.policy: Unrestricted", whyUnrestricted, n.Policy == v1alpha1.BuildNetworkUnrestricted},
		field{"network.allowCIDRs", whyAllow, len(n.AllowCIDRs) > 0},
		field{"network.allowNamespaces", whyAllow, len(n.AllowNamespaces) > 0},
		field{"network.clusterCIDRs", whyClusterCIDRs, len(n.ClusterCIDRs) > 0},
		field{"network.dnsCIDRs", whyAllow, len(n.DNSCIDRs) > 0},
		field{"executorImage", whyExecutor, b.ExecutorImage != nil && *b.ExecutorImage != render.DefaultExecutorImage},
		field{"allowedExecutorImages", whyExecutor, len(b.AllowedExecutorImages) > 0},
		field{"gitFetcherImage", whyFetcher, b.GitFetcherImage != nil && *b.GitFetcherImage != render.GitFetcherImage},
		field{"s3FetcherImage", whyFetcher, b.S3FetcherImage != nil && *b.S3FetcherImage != render.S3FetcherImage},
		field{"maxTimeout", whyMaxTimeout, b.MaxTimeout != nil && longer(string(*b.MaxTimeout), render.DefaultMaxBuildTimeout)},
	); f != nil {
		return errors.Errorf(errFmtLoosens, name, f.name, f.why)
	}
	return nil
}

// longer is true when d is a duration longer than limit.
func longer(d string, limit time.Duration) bool {
	t, err := time.ParseDuration(d)
	return err == nil && t > limit
}
