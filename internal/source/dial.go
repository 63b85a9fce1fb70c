package source

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const errFmtRefused = "refusing to connect to %s (%s): loopback, link-local, unspecified and metadata addresses are never source locations"

// A DialContextFn opens a connection, as net.Dialer.DialContext does.
type DialContextFn func(ctx context.Context, network, addr string) (net.Conn, error)

// SafeDialer resolves a host itself and refuses addresses that a source
// location must never be: the node's loopback, link-local addresses (cloud
// metadata services among them) and unspecified ones. It checks after DNS,
// so a name that resolves to such an address is refused too.
func SafeDialer() DialContextFn {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if ip.IP.IsLoopback() || ip.IP.IsLinkLocalUnicast() || ip.IP.IsLinkLocalMulticast() || ip.IP.IsUnspecified() {
				return nil, errors.Errorf(errFmtRefused, host, ip.IP)
			}
		}
		// Dial the address that was checked, not the name again.
		return d.DialContext(ctx, network, net.JoinHostPort(ips[0].IP.String(), port))
	}
}

// HTTPClient is an HTTP client that dials through dial.
func HTTPClient(dial DialContextFn) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The default transport is one.
	t.DialContext = dial
	t.Proxy = nil
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}
