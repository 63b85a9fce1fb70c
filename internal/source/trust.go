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

// A trustingClient is a resolver's client for one resolve.
type trustingClient struct {
	*http.Client
	// own is whether the client has a transport of its own.
	own bool
}

// close ends a transport of its own: nothing reuses its connection, which
// would otherwise idle open for a minute and a half.
func (c trustingClient) close() {
	if c.own {
		c.CloseIdleConnections()
	}
}

// trusted is c, or with a CA bundle a copy of c that checks servers'
// certificates against the bundle alone, in place of the system's, as
// git's GIT_SSL_CAINFO and the AWS CLI's AWS_CA_BUNDLE do in the build pod:
// a server the provider resolves is then one the build can fetch from. The
// copy keeps c's dialer, so the fence of addresses stays.
func trusted(c *http.Client, ca []byte) (trustingClient, error) {
	if ca == nil {
		return trustingClient{Client: c}, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return trustingClient{}, unresolvable(errors.New(errNoCA))
	}
	t, ok := c.Transport.(*http.Transport)
	if !ok {
		return trustingClient{}, errors.New(errNoTransport)
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.TLSClientConfig.RootCAs = pool
	copied := *c
	copied.Transport = t
	return trustingClient{Client: &copied, own: true}, nil
}
