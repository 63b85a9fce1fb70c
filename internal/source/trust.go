package source

import (
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

// trusting returns a copy of c that checks servers' certificates against
// the CA bundle alone, in place of the system's, as git's GIT_SSL_CAINFO
// does in the build pod: a server the provider resolves is then one the
// build can fetch from. It keeps c's dialer, so the fence of addresses
// stays, and c itself without a bundle.
func trusting(c *http.Client, ca []byte) (*http.Client, error) {
	if ca == nil {
		return c, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, unresolvable(errors.New(errNoCA))
	}
	t, ok := c.Transport.(*http.Transport)
	if !ok {
		return nil, errors.New(errNoTransport)
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	trusted := *c
	trusted.Transport = t
	return &trusted, nil
}
