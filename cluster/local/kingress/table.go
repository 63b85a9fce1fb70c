// Package kingress serves Knative's KIngress contract on the local cluster,
// where no Envoy-based networking layer can run: it routes each request by
// host, path and headers to one of a rule's splits, adding the headers
// Knative asks for, and marks each Ingress of its class ready once its
// routes are served.
package kingress

import (
	"net"
	"strings"

	"knative.dev/networking/pkg/apis/networking"
	"knative.dev/networking/pkg/apis/networking/v1alpha1"
)

// Class is the ingress class this implementation serves: config-network's
// ingress-class, or a Service's networking.knative.dev/ingress.class.
const Class = "lambda.ingress.networking.knative.dev"

// A Table is the routes of every Ingress of Class, by host. It is built
// whole from the Ingresses and never changed, so requests read it without
// a lock while the next one is built.
type Table struct {
	// public holds the ExternalIP rules; private holds every rule, as
	// cluster-local callers reach both through the private load balancer.
	public, private map[string][]path
}

// A path is one HTTP path of a rule: a request matches it by prefix and by
// every header it names.
type path struct {
	prefix      string
	headers     map[string]string
	rewriteHost string
	append      map[string]string
	splits      []split
}

// A split is a backend with the share of requests it takes.
type split struct {
	host    string
	percent int
	append  map[string]string
}

// NewTable builds the routes of the Ingresses that name Class. A host two
// Ingresses claim keeps the paths of both, the first Ingress's first.
func NewTable(ings []*v1alpha1.Ingress) *Table {
	t := &Table{public: map[string][]path{}, private: map[string][]path{}}
	for _, ing := range ings {
		if !OfClass(ing) {
			continue
		}
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			paths := make([]path, 0, len(r.HTTP.Paths))
			for _, p := range r.HTTP.Paths {
				paths = append(paths, newPath(ing.Namespace, p))
			}
			for _, h := range r.Hosts {
				h = strings.ToLower(h)
				t.private[h] = append(t.private[h], paths...)
				if r.Visibility != v1alpha1.IngressVisibilityClusterLocal {
					t.public[h] = append(t.public[h], paths...)
				}
			}
		}
	}
	return t
}

// OfClass is true when this implementation serves the Ingress.
func OfClass(ing *v1alpha1.Ingress) bool {
	return ing.Annotations[networking.IngressClassAnnotationKey] == Class
}

func newPath(namespace string, p v1alpha1.HTTPIngressPath) path {
	out := path{prefix: p.Path, rewriteHost: p.RewriteHost, append: p.AppendHeaders}
	if out.prefix == "" {
		out.prefix = "/"
	}
	if len(p.Headers) > 0 {
		out.headers = make(map[string]string, len(p.Headers))
		for k, m := range p.Headers {
			out.headers[k] = m.Exact
		}
	}
	for _, s := range p.Splits {
		ns := s.ServiceNamespace
		if ns == "" {
			ns = namespace
		}
		// Knative names each backend's port by number; the Service's name
		// in the cluster's DNS keeps this table free of Service lookups.
		host := net.JoinHostPort(s.ServiceName+"."+ns+".svc.cluster.local", s.ServicePort.String())
		out.splits = append(out.splits, split{host: host, percent: s.Percent, append: s.AppendHeaders})
	}
	return out
}

// match is the first path of host that the request's path and headers
// match.
func match(paths []path, urlPath string, header func(string) string) (path, bool) {
	for _, p := range paths {
		if !strings.HasPrefix(urlPath, p.prefix) {
			continue
		}
		ok := true
		for k, v := range p.headers {
			if header(k) != v {
				ok = false
				break
			}
		}
		if ok {
			return p, true
		}
	}
	return path{}, false
}

// pick chooses a split by its percent, given n drawn from [0, 100). A
// single split, or splits whose percents are all zero, take every request
// on the first, as the contract defaults a lone split to 100.
func (p path) pick(n int) split {
	for _, s := range p.splits {
		if n < s.percent {
			return s
		}
		n -= s.percent
	}
	return p.splits[0]
}
