package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	errNoCA        = "the source's Secret holds ca.crt, but no PEM certificate in it"
	errNoTransport = "cannot trust a CA over a client without an HTTP transport"
)

// KeyCA is the key of a source's Secret that holds the PEM CA bundle its
// server's certificate is checked against, as Flux's sources take it.
const KeyCA = "ca.crt"

// boundedTrusting is bounded over c or, given a CA bundle, over a copy of c
// that checks servers' certificates against the bundle alone, in place of
// the system's, as git's GIT_SSL_CAINFO and the AWS CLI's AWS_CA_BUNDLE do
// in the build pod: a server the provider resolves is then one the build
// can fetch from. The copy keeps c's dialer, so the fence of addresses
// stays, and its connections are closed when the resolve ends: nothing
// reuses them, and they would otherwise idle open for a minute and a half.
func boundedTrusting(ctx context.Context, c *http.Client, l Limits, ca []byte, resolve func(context.Context, *http.Client) (string, error)) (string, error) {
	if ca == nil {
		return bounded(ctx, c, l, resolve)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return "", unresolvable(errors.New(errNoCA))
	}
	t, ok := c.Transport.(*http.Transport)
	if !ok {
		return "", errors.New(errNoTransport)
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	trusting := *c
	trusting.Transport = t
	defer trusting.CloseIdleConnections()
	return bounded(ctx, &trusting, l, resolve)
}
