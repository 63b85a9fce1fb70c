// Package loopback finds loopback addresses for the processes and servers
// the tests start.
package loopback

import (
	"net"
	"testing"
)

// Address is a loopback address nothing listens on, for a server the test
// starts next.
func Address(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // Only its address is wanted.
	return l.Addr().String()
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
