package source

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	errFmtTooManyKeys = "more than %d objects under s3://%s/%s: the provider resolves at most %d; narrow the prefix or pack the code into one archive"
	errFmtTooLarge    = "the server's answers came to more than %d bytes: the provider reads at most that much to resolve one source"
	errFmtTooSlow     = "resolving the source took longer than the %s the provider allows"
)

// Limits bound one resolution, so a server that answers without end (an S3
// listing that is always truncated, a git ref advertisement that never
// ends) costs the provider a bounded amount of memory and time, and every
// other resource keeps being reconciled.
type Limits struct {
	// Keys is the most S3 objects one prefix may hold.
	Keys int
	// Bytes is the most the server's answers may hold, together.
	Bytes int64
	// Time is the longest one resolution may take.
	Time time.Duration
}

// DefaultLimits are the provider's and the function's.
var DefaultLimits = Limits{Keys: 10000, Bytes: 16 << 20, Time: 20 * time.Second}

// bounded runs one resolution with a client whose answers may hold at most
// l.Bytes, within l.Time. Stopped by either, it says which limit stopped it:
// a source over the limits will be over them at the next try too.
func bounded(ctx context.Context, c *http.Client, l Limits, resolve func(context.Context, *http.Client) (string, error)) (string, error) {
	b := &budget{next: c.Transport}
	b.left.Store(l.Bytes)
	limited := *c
	limited.Transport = b
	rctx, cancel := context.WithTimeout(ctx, l.Time)
	defer cancel()
	id, err := resolve(rctx, &limited)
	switch {
	case err == nil:
		return id, nil
	case b.over.Load():
		return "", unresolvable(errors.Errorf(errFmtTooLarge, l.Bytes))
	case ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		return "", unresolvable(errors.Errorf(errFmtTooSlow, l.Time))
	}
	return "", err
}

// A budget is a transport whose responses together may hold a number of
// bytes; reading past it fails.
type budget struct {
	next http.RoundTripper
	left atomic.Int64
	// over is set once a read was refused.
	over atomic.Bool
}

var errOverBudget = errors.New("response over the provider's budget")

func (b *budget) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.over.Load() {
		return nil, errOverBudget
	}
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &budgetedBody{ReadCloser: resp.Body, b: b}
	return resp, nil
}

type budgetedBody struct {
	io.ReadCloser
	b *budget
}

// Read refuses before it reads past the budget: a reader such as
// io.ReadFull drops an error that comes with the bytes it asked for.
func (r *budgetedBody) Read(p []byte) (int, error) {
	left := r.b.left.Load()
	if left <= 0 {
		r.b.over.Store(true)
		return 0, errOverBudget
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.ReadCloser.Read(p)
	r.b.left.Add(-int64(n))
	return n, err
}
