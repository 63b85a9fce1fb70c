package kingress

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"knative.dev/networking/pkg/apis/networking"
	"knative.dev/networking/pkg/apis/networking/v1alpha1"
)

// backends serves each backend, named by its address in the cluster, on
// loopback, and returns a transport that dials that address to it. A
// backend answers with its Service's name, the host and path it was asked
// for, and the routing headers it got, sorted.
func backends(t *testing.T, names ...string) http.RoundTripper {
	t.Helper()
	addrs := map[string]string{}
	for _, n := range names {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got := strings.Split(n, ".")[0] + " " + r.Host + " " + r.URL.Path
			for _, k := range []string{"Knative-Serving-Namespace", "Knative-Serving-Revision", "X-Forwarded-Host", "X-Path-Header"} {
				if v := r.Header.Get(k); v != "" {
					got += " " + k + "=" + v
				}
			}
			_, _ = io.WriteString(w, got) //nolint:gosec // The test reads what its own backend echoes.
		}))
		t.Cleanup(srv.Close)
		addrs[n] = srv.Listener.Addr().String()
	}
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, ok := addrs[addr]
		if !ok {
			return nil, &net.AddrError{Err: "no such backend", Addr: addr}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, to)
	}}
}

func backend(name string, percent int, revision string) v1alpha1.IngressBackendSplit {
	return v1alpha1.IngressBackendSplit{
		IngressBackend: v1alpha1.IngressBackend{ServiceNamespace: "team", ServiceName: name, ServicePort: intstr.FromInt32(80)},
		Percent:        percent,
		AppendHeaders:  map[string]string{"Knative-Serving-Revision": revision, "Knative-Serving-Namespace": "team"},
	}
}

// route is the Ingress Knative Serving writes for a Route with an external
// and a cluster-local host, two Revisions split 90/10, and a tag reached by
// header.
func route(class string) *v1alpha1.Ingress {
	paths := []v1alpha1.HTTPIngressPath{
		{
			Headers: map[string]v1alpha1.HeaderMatch{"Knative-Serving-Tag": {Exact: "canary"}},
			Splits:  []v1alpha1.IngressBackendSplit{backend("hello-00002", 100, "hello-00002")},
		},
		{
			AppendHeaders: map[string]string{"X-Path-Header": "all"},
			Splits:        []v1alpha1.IngressBackendSplit{backend("hello-00001", 90, "hello-00001"), backend("hello-00002", 10, "hello-00002")},
		},
	}
	return &v1alpha1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", Annotations: map[string]string{networking.IngressClassAnnotationKey: class}},
		Spec: v1alpha1.IngressSpec{Rules: []v1alpha1.IngressRule{
			{Hosts: []string{"hello.team.example.com"}, Visibility: v1alpha1.IngressVisibilityExternalIP, HTTP: &v1alpha1.HTTPIngressRuleValue{Paths: paths}},
			{Hosts: []string{"hello.team", "hello.team.svc.cluster.local"}, Visibility: v1alpha1.IngressVisibilityClusterLocal, HTTP: &v1alpha1.HTTPIngressRuleValue{Paths: paths}},
			{Hosts: []string{"mapped.example.org"}, Visibility: v1alpha1.IngressVisibilityExternalIP, HTTP: &v1alpha1.HTTPIngressRuleValue{Paths: []v1alpha1.HTTPIngressPath{{
				RewriteHost: "hello.team.svc.cluster.local",
				Splits:      []v1alpha1.IngressBackendSplit{{IngressBackend: v1alpha1.IngressBackend{ServiceNamespace: "team", ServiceName: "hello", ServicePort: intstr.FromInt32(80)}}},
			}}}},
		}},
	}
}

func TestProxyRoutes(t *testing.T) {
	type want struct {
		status int
		body   string
	}
	cases := map[string]struct {
		reason  string
		private bool
		ings    []*v1alpha1.Ingress
		host    string
		header  map[string]string
		draw    int
		want    want
	}{
		"ExternalToFirstSplit": {
			reason: "An external host reaches the split whose share the draw falls in, with the path's and the split's headers.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "hello.team.example.com", draw: 89,
			want: want{status: http.StatusOK, body: "hello-00001 hello.team.example.com /x Knative-Serving-Namespace=team Knative-Serving-Revision=hello-00001 X-Forwarded-Host=hello.team.example.com X-Path-Header=all"},
		},
		"ExternalToSecondSplit": {
			reason: "A draw past the first split's 90 reaches the second.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "hello.team.example.com", draw: 90,
			want: want{status: http.StatusOK, body: "hello-00002 hello.team.example.com /x Knative-Serving-Namespace=team Knative-Serving-Revision=hello-00002 X-Forwarded-Host=hello.team.example.com X-Path-Header=all"},
		},
		"HostIsCaseAndPortBlind": {
			reason: "A Host header's case and port do not change its route.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "Hello.Team.Example.com:80",
			want:   want{status: http.StatusOK, body: "hello-00001 Hello.Team.Example.com:80 /x Knative-Serving-Namespace=team Knative-Serving-Revision=hello-00001 X-Forwarded-Host=Hello.Team.Example.com:80 X-Path-Header=all"},
		},
		"TagByHeader": {
			reason: "A path that matches a header comes first, and takes the request that carries it.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "hello.team.example.com", header: map[string]string{"Knative-Serving-Tag": "canary"},
			want: want{status: http.StatusOK, body: "hello-00002 hello.team.example.com /x Knative-Serving-Namespace=team Knative-Serving-Revision=hello-00002 X-Forwarded-Host=hello.team.example.com"},
		},
		"ClusterLocalNotPublic": {
			reason: "The public port does not serve a cluster-local host.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "hello.team.svc.cluster.local",
			want:   want{status: http.StatusNotFound, body: "no route for host hello.team.svc.cluster.local\n"},
		},
		"ClusterLocalPrivate": {
			reason: "The private port serves a cluster-local host.", private: true,
			ings: []*v1alpha1.Ingress{route(Class)},
			host: "hello.team",
			want: want{status: http.StatusOK, body: "hello-00001 hello.team /x Knative-Serving-Namespace=team Knative-Serving-Revision=hello-00001 X-Forwarded-Host=hello.team X-Path-Header=all"},
		},
		"RewriteHost": {
			reason: "A path that rewrites the host sends the rewritten one.",
			ings:   []*v1alpha1.Ingress{route(Class)},
			host:   "mapped.example.org",
			want:   want{status: http.StatusOK, body: "hello hello.team.svc.cluster.local /x X-Forwarded-Host=mapped.example.org"},
		},
		"OtherClass": {
			reason: "An Ingress of another class is not served.",
			ings:   []*v1alpha1.Ingress{route("kourier.ingress.networking.knative.dev")},
			host:   "hello.team.example.com",
			want:   want{status: http.StatusNotFound, body: "no route for host hello.team.example.com\n"},
		},
	}
	tr := backends(t, "hello-00001.team.svc.cluster.local:80", "hello-00002.team.svc.cluster.local:80", "hello.team.svc.cluster.local:80")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := NewProxy(tc.private, tr)
			p.draw = func() int { return tc.draw }
			p.Set(NewTable(tc.ings))
			r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/x", nil)
			r.Host = tc.host
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			p.ServeHTTP(w, r)
			got := want{status: w.Code, body: w.Body.String()}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nServeHTTP(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
