package node

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// CallFunction sends a CloudEvent of eventType, with data as its JSON body,
// to the Knative Service at fnURL, as curl on this machine does: to the
// node's public ingress, which routes by the URL's host. It returns the
// reply's status and body.
func CallFunction(ctx context.Context, fnURL, eventType, data string) (int, string, error) {
	u, err := url.Parse(fnURL)
	if err != nil {
		return 0, "", err
	}
	return postEvent(ctx, "http://"+IngressIP+u.Path+"/", u.Host, eventType, data)
}

// GetFunction sends a plain GET of query, such as "id=42", to the Knative
// Service at fnURL, as curl on this machine does (see CallFunction). It
// returns the answer's status and body.
func GetFunction(ctx context.Context, fnURL, query string) (int, string, error) {
	u, err := url.Parse(fnURL)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+IngressIP+u.Path+"/?"+query, http.NoBody)
	if err != nil {
		return 0, "", err
	}
	req.Host = u.Host
	return answer(req)
}

// PostToBroker sends a CloudEvent of eventType, with data as its JSON body,
// to the Broker whose address is brokerURL, from this machine: to the
// cluster IP of Eventing's broker-ingress Service, ingressIP, which the host
// reaches, at the path the address names. It returns the answer's status
// and body: 202 once the Broker has taken it.
func PostToBroker(ctx context.Context, ingressIP, brokerURL, eventType, data string) (int, string, error) {
	u, err := url.Parse(brokerURL)
	if err != nil {
		return 0, "", err
	}
	return postEvent(ctx, "http://"+ingressIP+u.Path, "", eventType, data)
}

// eventSource is the source of the events CallFunction sends, as the
// README's curl gives it.
const eventSource = "/manual"

// caller sends the events: it keeps open a connection for each of up to
// callers at once, where http.DefaultClient keeps two and a burst of
// requests would open, and leave waiting to close, one for each request.
var caller = &http.Client{Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // The standard library's.
	t.MaxIdleConnsPerHost = callers
	return t
}()}

// callers is how many callers at once keep their connections.
const callers = 64

// postEvent posts a CloudEvent in binary mode to target, with host as the
// request's Host when it is not empty, and returns the reply's status and
// body.
func postEvent(ctx context.Context, target, host, eventType, data string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(data))
	if err != nil {
		return 0, "", err
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "1", "Ce-Source": eventSource, "Ce-Type": eventType, "Content-Type": "application/json"} {
		req.Header.Set(k, v)
	}
	return answer(req)
}

// answer sends a request and returns the answer's status and body.
func answer(req *http.Request) (int, string, error) {
	resp, err := caller.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close() //nolint:errcheck // Only read.
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
