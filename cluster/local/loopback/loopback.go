// Package loopback finds loopback addresses for the processes and servers
// the tests and benchmarks start.
package loopback

import (
	"context"
	"net"
	"testing"
)

// Free is a loopback address nothing listens on, for a server started next.
func Free() (string, error) {
	return FreeOn("127.0.0.1")
}

// FreeOn is an address of this machine's ip nothing listens on, such as the
// host's end of the local cluster's link, which its pods reach.
func FreeOn(ip string) (string, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // Only its address is wanted.
	return l.Addr().String(), nil
}

// Address is Free for a test, which fails when there is none.
func Address(t testing.TB) string {
	t.Helper()
	a, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Port is the port of an Address.
func Port(t testing.TB) int {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", Address(t))
	if err != nil {
		t.Fatal(err)
	}
	return a.Port
}
