package source

import (
	"context"
	"strings"
	"testing"
	"time"
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
	dial := SafeDialer()
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
