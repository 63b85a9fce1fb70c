package workload

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// TestTargetPolicy checks where a kubeconfig's server may be. Before, the
// cluster's own networks were allowed, so a team's kubeconfig naming any
// in-cluster address made the provider GET a path of the team's choice there
// from its own network position.
func TestTargetPolicy(t *testing.T) {
	errDialled := errors.New("dialled")
	cases := map[string]struct {
		reason string
		ip     string
		allow  []netip.Prefix
		want   string
	}{
		"ServiceNetwork":  {reason: "A Service's cluster IP is the cluster's own.", ip: "10.96.0.10", want: "refusing to connect to target.test (10.96.0.10)"},
		"PodNetwork":      {reason: "A pod's address is the cluster's own.", ip: "192.168.3.7", want: "refusing to connect to target.test (192.168.3.7)"},
		"CGNAT":           {reason: "Shared address space is the cluster's own too.", ip: "100.64.0.9", want: "refusing to connect to target.test (100.64.0.9)"},
		"ULA":             {reason: "IPv6 unique local addresses are the cluster's own.", ip: "fd12::1", want: "refusing to connect to target.test (fd12::1)"},
		"Metadata":        {reason: "The metadata service stays refused.", ip: "169.254.169.254", want: "refusing to connect to target.test (169.254.169.254)"},
		"Public":          {reason: "A public address is another cluster.", ip: "203.0.113.7", want: errDialled.Error()},
		"AllowedPrivate":  {reason: "A platform that allows a private network reaches its clusters there.", ip: "10.20.0.5", allow: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}, want: errDialled.Error()},
		"OtherPrivate":    {reason: "Allowing one private network allows no other.", ip: "10.96.0.1", allow: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}, want: "refusing to connect"},
		"AllowedLoopback": {reason: "A provider run outside a cluster may be told to reach loopback.", ip: "127.0.0.1", allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, want: errDialled.Error()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lookup := func(context.Context, string) ([]net.IPAddr, error) {
				return []net.IPAddr{{IP: net.ParseIP(tc.ip)}}, nil
			}
			dial := func(context.Context, string, string) (net.Conn, error) { return nil, errDialled }
			_, err := source.RefusingDialer(lookup, dial, TargetPolicy(nil, tc.allow))(context.Background(), "tcp", "target.test:6443")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\ndial: %v; want %q", tc.reason, err, tc.want)
			}
		})
	}
}
