package controller_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestCreateReadsEachNewNameOnce checks that a function's create reads the
// API server once for each object it creates, to find the object's name
// free: its Observe looks, and its Create applies what Observe found. The
// Create used to look again, one read more for every new object.
func TestCreateReadsEachNewNameOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, c, ns := newUnpolledScene(ctx, t, "reads-", providerOptions{})
	createRecordedFunction(ctx, t, c, ns, "hello")
	if n := p.reads.to(http.MethodGet, ns, "services"); n != 1 {
		t.Errorf("the Service's name was read %d times on the way to its create, want 1", n)
	}
}
