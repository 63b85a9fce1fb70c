package clients

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errFmtTargetSlow  = "the target cluster did not answer %s within %s, the longest the provider waits for one answer"
	errFmtTargetLarge = "the target cluster's answer to %s came to more than %d bytes, the most the provider reads of one answer"
)

// Bounds of each request to a target cluster.
const (
	// DefaultTargetRequestTimeout is how long one request may take, its
	// answer read whole; of a watch, until its answer starts.
	DefaultTargetRequestTimeout = 20 * time.Second
	// DefaultTargetResponseBytes is the most one answer may hold, a watch's
	// whole stream included.
	DefaultTargetResponseBytes = 64 << 20
)

// A boundedTransport bounds every request to a target cluster in time and
// every answer in bytes. The target is named by a team's kubeconfig, so it
// may never answer, or answer without end; either costs the provider one
// request's timeout and one answer's bytes, and the reconcile that asked an
// error saying which.
type boundedTransport struct {
	next    http.RoundTripper
	timeout time.Duration
	bytes   int64
}

// boundTargets wraps a target's transport in a boundedTransport.
func boundTargets(timeout time.Duration, bytes int64) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return boundedTransport{next: rt, timeout: timeout, bytes: bytes}
	}
}

func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	slow := errors.Errorf(errFmtTargetSlow, r.URL.Path, b.timeout)
	ctx, cancel := context.WithCancelCause(r.Context())
	timer := time.AfterFunc(b.timeout, func() { cancel(slow) })
	resp, err := b.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, cause(ctx, err)
	}
	if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
		// A watch streams for as long as the server keeps it open; the
		// reflector that asked ends it.
		timer.Stop()
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, ctx: ctx, left: b.bytes, path: r.URL.Path, limit: b.bytes, release: func() {
		timer.Stop()
		cancel(nil)
	}}
	return resp, nil
}

// cause is the reason ctx was cancelled in place of err, where a bound
// cancelled it.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c
	}
	return err
}

// A boundedBody refuses to read past its bytes.
type boundedBody struct {
	io.ReadCloser
	ctx         context.Context
	path        string
	left, limit int64
	release     func()
}

// Read refuses before it reads past the limit: a reader such as io.ReadFull
// drops an error that comes with the bytes it asked for.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// An answer of exactly the limit ends here.
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err == io.EOF { //nolint:errorlint // A reader returns io.EOF itself, never wrapped.
			return 0, io.EOF
		}
		return 0, errors.Errorf(errFmtTargetLarge, b.path, b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF { //nolint:errorlint // A reader returns io.EOF itself, never wrapped.
		err = cause(b.ctx, err)
	}
	return n, err
}

// Close ends the request.
func (b *boundedBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}
