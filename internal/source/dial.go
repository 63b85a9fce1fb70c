package source

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtRefused = "refusing to connect to %s (%s): loopback, link-local, unspecified and metadata addresses are never source locations"
	errFmtDenied  = "refusing to connect to %s (%s): it is the cluster's API server or in a network the provider is told to refuse (--deny-source-cidr)"
	errFmtNoAddr  = "%s resolves to no address"
	errFmtCIDR    = "cannot parse %q as a CIDR"
)

// A DialContextFn opens a connection, as net.Dialer.DialContext does.
type DialContextFn func(ctx context.Context, network, addr string) (net.Conn, error)

// A LookupFn resolves a host name, as net.Resolver.LookupIPAddr does.
type LookupFn func(ctx context.Context, host string) ([]net.IPAddr, error)

// SafeDialer is RefusingDialer with the system's resolver.
func SafeDialer(deny ...netip.Prefix) DialContextFn {
	return RefusingDialer(net.DefaultResolver.LookupIPAddr, deny...)
}

// RefusingDialer resolves a host itself and refuses addresses that a source
// location must never be: the node's loopback, link-local addresses (cloud
// metadata services among them), unspecified ones, the cluster's API server
// as a pod sees it (KUBERNETES_SERVICE_HOST), and any in deny. It checks
// after DNS, so a name that resolves to such an address is refused too, and
// dials the address it checked, so the name cannot resolve elsewhere then.
func RefusingDialer(lookup LookupFn, deny ...netip.Prefix) DialContextFn {
	d := &net.Dialer{Timeout: 10 * time.Second}
	deny = append(deny, apiServerService()...)
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
			if err := refused(host, ip.IP, deny); err != nil {
				return nil, err
			}
		}
		return d.DialContext(ctx, network, net.JoinHostPort(ips[0].IP.String(), port))
	}
}

// refused says why a source may not be at ip, if it may not.
func refused(host string, ip net.IP, deny []netip.Prefix) error {
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() {
		return errors.Errorf(errFmtRefused, host, ip)
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return errors.Errorf(errFmtRefused, host, ip)
	}
	for _, p := range deny {
		if p.Contains(a.Unmap()) {
			return errors.Errorf(errFmtDenied, host, ip)
		}
	}
	return nil
}

// apiServerService is the address a pod reaches the cluster's API server
// at, which kubelet gives every pod; none outside a pod.
func apiServerService() []netip.Prefix {
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
