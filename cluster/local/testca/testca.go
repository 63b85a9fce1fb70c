// Package testca is a certificate authority for the servers the tests run
// on loopback over TLS: a registry, a played kubelet.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errKey   = "cannot make a key"
	errSign  = "cannot sign a certificate"
	errParse = "cannot read a certificate and its key"
)

// validity is how long certificates are valid from now: as long as any
// test run.
const validity = 24 * time.Hour

// A CA signs certificates for a test.
type CA struct {
	cert *x509.Certificate
	key  any
	// PEM is the CA's certificate, for those that trust it.
	PEM []byte
}

// New makes a certificate authority.
func New(name string) (CA, error) {
	der, key, err := sign(&x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	if err != nil {
		return CA{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return CA{}, errors.Wrap(err, errSign)
	}
	return CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Parse is the CA of a certificate and key, such as one a program made.
func Parse(certPEM, keyPEM []byte) (CA, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return CA{}, errors.Wrap(err, errParse)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return CA{}, errors.Wrap(err, errParse)
	}
	return CA{cert: cert, key: pair.PrivateKey, PEM: certPEM}, nil
}

// Issue signs a server certificate for localhost and 127.0.0.1 and returns
// it and its key as PEM.
func (ca CA) Issue(cn string) (certPEM, keyPEM []byte, err error) {
	return ca.IssueFor(x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// IssueFor signs a certificate of the subject, names and uses of tmpl and
// returns it and its key as PEM.
func (ca CA) IssueFor(tmpl x509.Certificate) (certPEM, keyPEM []byte, err error) {
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, key, err := sign(&tmpl, ca.cert, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, errors.Wrap(err, errKey)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// IssueForIP signs a server certificate for an IP address, such as the
// host's end of a cluster node's link, and returns it and its key as PEM.
func (ca CA) IssueForIP(ip net.IP) (certPEM, keyPEM []byte, err error) {
	return ca.IssueFor(x509.Certificate{
		Subject:     pkix.Name{CommonName: ip.String()},
		IPAddresses: []net.IP{ip},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Serve serves a handler on loopback over TLS with a certificate of the CA.
func (ca CA) Serve(cn string, h http.Handler) (*httptest.Server, error) {
	certPEM, keyPEM, err := ca.Issue(cn)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, errors.Wrap(err, errParse)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	return srv, nil
}

// sign makes a key and a certificate of tmpl for it, valid from a minute
// ago, signed by parent with parentKey, or by itself when parent is nil.
func sign(tmpl, parent *x509.Certificate, parentKey any) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, errors.Wrap(err, errKey)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(validity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	return der, key, errors.Wrap(err, errSign)
}
