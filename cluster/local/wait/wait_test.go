package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilReturnsOnceDone(t *testing.T) {
	tries := 0
	Until(context.Background(), t, "third try", func() string {
		if tries++; tries < 3 {
			return "not yet"
		}
		return ""
	})
	if tries != 3 {
		t.Errorf("check ran %d times, want 3", tries)
	}
}

// A recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(string, ...any) {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r)
}

func TestUntilFailsWithTheLastWord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("Until did not fail the test at the deadline (recovered %v)", p)
			}
		}()
		Until(ctx, r, "never", func() string { return "still waiting" })
	}()
	if r.failed == "" {
		t.Error("Until did not fail the test")
	}
}

func TestErrString(t *testing.T) {
	if got := ErrString(nil); got != "" {
		t.Errorf("ErrString(nil) = %q, want empty", got)
	}
	if got := ErrString(errors.New("boom")); got != "boom" {
		t.Errorf("ErrString(boom) = %q", got)
	}
}
