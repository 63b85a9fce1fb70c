// Package wait polls for what the tests against the local control plane wait
// on: a controller's reconcile, Crossplane's composition, a garbage
// collection.
package wait

import (
	"context"
	"testing"
	"time"
)

// interval is how often a check is tried again.
const interval = 200 * time.Millisecond

// Until tries check until it returns "" or ctx ends; then it fails the test
// with the last thing check said. It logs how long the wait took.
func Until(ctx context.Context, t testing.TB, what string, check func() string) {
	t.Helper()
	start, last := time.Now(), ""
	for {
		if last = check(); last == "" {
			t.Logf("%s: after %s", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not after %s; last seen: %s", what, time.Since(start).Round(time.Second), last)
		case <-time.After(interval):
		}
	}
}

// ErrString is err's message, or "" for none: a check that is done once an
// operation succeeds.
func ErrString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
