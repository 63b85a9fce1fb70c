package source

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	errFmtRefused = "refusing to connect to %s (%s): loopback, link-local, unspecified and cloud metadata addresses are never sources or target clusters"
	errFmtDenied  = "refusing to connect to %s (%s): it is the cluster's API server or in a network the provider is told to refuse (--deny-source-cidr)"
	errFmtNoAddr  = "%s resolves to no address"
	errFmtCIDR    = "cannot parse %q as a CIDR"
)

// A DialContextFn opens a connection, as net.Dialer.DialContext does.
type DialContextFn func(ctx context.Context, network, addr string) (net.Conn, error)

// A LookupFn resolves a host name, as net.Resolver.LookupIPAddr does.
type LookupFn func(ctx context.Context, host string) ([]net.IPAddr, error)

// A Policy says which addresses, besides the ones always refused, may not
// be dialled, and which may be despite that.
type Policy struct {
	// Deny are networks refused besides loopback, link-local, unspecified
	// and metadata addresses and the cluster's API server.
	Deny []netip.Prefix
	// Allow are networks dialled even though they would be refused. Only a
	// platform admin sets it, for a provider run outside a cluster against
	// an API server on loopback.
	Allow []netip.Prefix
}

// metadataAddresses are cloud metadata services outside the link-local
// range: AWS's IPv6 IMDS, Alibaba Cloud's, and Azure's wire server.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"),
}

// SafeDialer is RefusingDialer with the system's resolver and dialer.
func SafeDialer(p Policy) DialContextFn {
	return RefusingDialer(net.DefaultResolver.LookupIPAddr, (&net.Dialer{Timeout: 10 * time.Second}).DialContext, p)
}

// RefusingDialer resolves a host itself and refuses addresses that a source
// location or target cluster must never be at: the node's loopback,
// link-local addresses (cloud metadata services among them) and the other
// metadata addresses, unspecified ones, the cluster's API server as a pod
// sees it (KUBERNETES_SERVICE_HOST), and any the policy denies, unless the
// policy allows them. It checks after DNS, so a name that resolves to such
// an address is refused too, and dials the address it checked, so the name
// cannot resolve elsewhere then.
func RefusingDialer(lookup LookupFn, dial DialContextFn, p Policy) DialContextFn {
	p.Deny = append(slices.Clip(p.Deny), APIServerService()...)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, errors.Errorf(errFmtNoAddr, host)
		}
		for _, ip := range ips {
			if err := p.refused(host, ip.IP); err != nil {
				return nil, err
			}
		}
		return dial(ctx, network, net.JoinHostPort(ips[0].IP.String(), port))
	}
}

// refused says why nothing may be dialled at ip, if it may not.
func (p Policy) refused(host string, ip net.IP) error {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return errors.Errorf(errFmtRefused, host, ip)
	}
	a = a.Unmap()
	if in(a, p.Allow) {
		return nil
	}
	if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || slices.Contains(metadataAddresses, a) {
		return errors.Errorf(errFmtRefused, host, ip)
	}
	if in(a, p.Deny) {
		return errors.Errorf(errFmtDenied, host, ip)
	}
	return nil
}

// in is true when one of the networks holds a.
func in(a netip.Addr, networks []netip.Prefix) bool {
	return slices.ContainsFunc(networks, func(p netip.Prefix) bool { return p.Contains(a) })
}

// APIServerService is the address a pod reaches the cluster's API server
// at, which kubelet gives every pod; none outside a pod.
func APIServerService() []netip.Prefix {
	a, err := netip.ParseAddr(os.Getenv("KUBERNETES_SERVICE_HOST"))
	if err != nil {
		return nil
	}
	return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}
}

// ParseCIDRs parses the networks of --deny-source-cidr.
func ParseCIDRs(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, errors.Wrapf(err, errFmtCIDR, c)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// HTTPClient is an HTTP client that dials through dial.
func HTTPClient(dial DialContextFn) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The default transport is one.
	t.DialContext = dial
	t.Proxy = nil
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// BuildDeny is what build pods may not reach besides what render always
// refuses: the networks in deny and the cluster's API server.
func BuildDeny(deny []netip.Prefix) []string {
	all := slices.Concat(deny, APIServerService())
	out := make([]string, len(all))
	for i, p := range all {
		out[i] = p.String()
	}
	return out
}
