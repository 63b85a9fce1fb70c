package kingress

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"
)

// A Proxy serves the routes of its Table, replaced whole by Set.
type Proxy struct {
	table atomic.Pointer[Table]
	// Private serves every rule, Public only ExternalIP ones.
	private bool
	rp      *httputil.ReverseProxy
	// draw is a number in [0, 100) that picks a split.
	draw func() int
}

// NewProxy serves the public rules, or with private every rule, through
// transport.
func NewProxy(private bool, transport http.RoundTripper) *Proxy {
	p := &Proxy{private: private, draw: func() int { return rand.IntN(100) }} //nolint:gosec // Spreading requests over splits needs no secret.
	p.rp = &httputil.ReverseProxy{
		Rewrite:   rewrite,
		Transport: transport,
		// Streams and server-sent events reach the caller as they are
		// written.
		FlushInterval: -1,
	}
	p.table.Store(NewTable(nil))
	return p
}

// Set replaces the routes.
func (p *Proxy) Set(t *Table) { p.table.Store(t) }

// ServeHTTP routes the request by host, path and headers, or answers 404
// when no rule takes it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := p.table.Load()
	routes := t.public
	if p.private {
		routes = t.private
	}
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	route, ok := match(routes[host], r.URL.Path, r.Header.Get)
	if !ok {
		http.Error(w, "no route for host "+host, http.StatusNotFound)
		return
	}
	to := route.pick(p.draw())
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), toKey{}, destination{path: route, split: to})))
}

// A destination is the path and split ServeHTTP chose for a request.
type destination struct {
	path  path
	split split
}

type toKey struct{}

// rewrite sends a request to the destination ServeHTTP chose, with the
// path's and the split's headers, and says where it came from.
func rewrite(pr *httputil.ProxyRequest) {
	pr.SetXForwarded()
	d := pr.In.Context().Value(toKey{}).(destination) //nolint:forcetypeassert // ServeHTTP always sets it.
	pr.Out.URL.Scheme, pr.Out.URL.Host = "http", d.split.host
	if d.path.rewriteHost != "" {
		pr.Out.Host = d.path.rewriteHost
	}
	for k, v := range d.path.append {
		pr.Out.Header.Set(k, v)
	}
	for k, v := range d.split.append {
		pr.Out.Header.Set(k, v)
	}
}
