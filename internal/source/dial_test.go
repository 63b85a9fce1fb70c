package source

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSafeDialerRefuses(t *testing.T) {
	cases := map[string]struct {
		reason string
		addr   string
	}{
		"Loopback":    {reason: "The node's own services are never a source.", addr: "127.0.0.1:6443"},
		"LoopbackV6":  {reason: "Loopback in IPv6 neither.", addr: "[::1]:443"},
		"Metadata":    {reason: "The cloud metadata service is link-local.", addr: "169.254.169.254:80"},
		"Unspecified": {reason: "0.0.0.0 reaches the node itself.", addr: "0.0.0.0:80"},
		"ByName":      {reason: "A name is checked after it resolves.", addr: "localhost:443"},
	}
	dial := SafeDialer(Policy{})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := dial(ctx, "tcp", tc.addr)
			if err == nil {
				_ = conn.Close()
				t.Fatalf("\n%s\ndial(%s): connected; want a refusal", tc.reason, tc.addr)
			}
			if !strings.Contains(err.Error(), "refusing to connect") {
				t.Errorf("\n%s\ndial(%s): %v; want a refusal, not a network error", tc.reason, tc.addr, err)
			}
		})
	}
}

// TestRefusingDialerAfterDNS resolves names to addresses a source must never
// be at, as a hostile DNS record would, and checks each is refused.
func TestRefusingDialerAfterDNS(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	cases := map[string]struct {
		reason  string
		ips     []string
		deny    []netip.Prefix
		allow   []netip.Prefix
		refused bool
	}{
		"Metadata":        {reason: "A public name may point at the metadata service.", ips: []string{"169.254.169.254"}, refused: true},
		"APIServer":       {reason: "A public name may point at the cluster's API server Service.", ips: []string{"10.96.0.1"}, refused: true},
		"MappedLoopback":  {reason: "An IPv4-mapped IPv6 loopback is loopback.", ips: []string{"::ffff:127.0.0.1"}, refused: true},
		"OneOfMany":       {reason: "One bad address among good ones is enough to refuse.", ips: []string{"192.0.2.10", "127.0.0.1"}, refused: true},
		"AWSMetadataV6":   {reason: "AWS serves instance metadata over IPv6 at fd00:ec2::254, outside link-local.", ips: []string{"fd00:ec2::254"}, refused: true},
		"AlibabaMeta":     {reason: "Alibaba Cloud serves instance metadata at 100.100.100.200.", ips: []string{"100.100.100.200"}, refused: true},
		"AzureWire":       {reason: "Azure's wire server hands out host configuration at 168.63.129.16.", ips: []string{"168.63.129.16"}, refused: true},
		"AllowedLoopback": {reason: "A platform admin may allow a target on loopback for a provider run outside a cluster.", ips: []string{"127.0.0.1"}, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		"AllowIsNarrow":   {reason: "Allowing loopback does not allow metadata.", ips: []string{"169.254.169.254"}, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, refused: true},
		"DeniedNetwork":   {reason: "A platform team may deny its pod network.", ips: []string{"10.244.3.7"}, deny: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")}, refused: true},
		"NoAddress":       {reason: "A name with no address is not dialled.", ips: nil, refused: true},
		"Allowed":         {reason: "The control: an address in no refused network is dialled.", ips: []string{"192.0.2.10"}, deny: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lookup := func(context.Context, string) ([]net.IPAddr, error) {
				out := make([]net.IPAddr, 0, len(tc.ips))
				for _, ip := range tc.ips {
					out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
				}
				return out, nil
			}
			var dialled []string
			dial := func(_ context.Context, _, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				return nil, errors.New("the test dials nothing")
			}
			_, err := RefusingDialer(lookup, dial, Policy{Deny: tc.deny, Allow: tc.allow})(context.Background(), "tcp", "git.example.com:443")
			refused := err != nil && (strings.Contains(err.Error(), "refusing to connect") || strings.Contains(err.Error(), "resolves to no address"))
			if refused != tc.refused {
				t.Errorf("\n%s\ndial to %v: %v; refused %t, want %t", tc.reason, tc.ips, err, refused, tc.refused)
			}
			if tc.refused && len(dialled) > 0 {
				t.Errorf("\n%s\nrefused, but %v was dialled", tc.reason, dialled)
			}
			if !tc.refused && (len(dialled) != 1 || dialled[0] != net.JoinHostPort(tc.ips[0], "443")) {
				t.Errorf("\n%s\ndialled %v; want the address that was checked, %s", tc.reason, dialled, tc.ips[0])
			}
		})
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := ParseCIDRs([]string{"10.96.0.0/12", "10.244.1.7/16", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12"), netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00::/8")}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("ParseCIDRs(...): -want, +got:\n%s", diff)
	}
	if _, err := ParseCIDRs([]string{"10.96.0.0"}); err == nil || !strings.Contains(err.Error(), `"10.96.0.0"`) {
		t.Errorf("ParseCIDRs(an address without a prefix length): %v; want an error naming it", err)
	}
}
