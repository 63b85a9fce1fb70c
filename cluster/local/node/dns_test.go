package node

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestClusterDNS asks the cluster's DNS, from the host, for Services' names:
// CoreDNS answers from the API server, and kube-proxy's rules take the
// query from the kube-dns Service's address to CoreDNS's pod.
func TestClusterDNS(t *testing.T) {
	t.Parallel()
	sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, network := range []string{"udp", "tcp"} {
		r := Resolver(network)
		for name, want := range map[string]string{
			"kubernetes.default.svc.cluster.local":   serviceIP,
			"kube-dns.kube-system.svc.cluster.local": DNSIP,
		} {
			got, err := r.LookupHost(ctx, name)
			if err != nil {
				t.Errorf("%s over %s: %v", name, network, err)
				continue
			}
			if diff := cmp.Diff([]string{want}, got); diff != "" {
				t.Errorf("%s over %s: -want, +got:\n%s", name, network, diff)
			}
		}
	}
}
