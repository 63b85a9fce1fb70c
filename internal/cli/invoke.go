package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
)

// DefaultEventType is the type of the event invoke sends when none is given.
const DefaultEventType = "dev.knative.lambda.invoke"

// EventSource is the source of the events invoke sends.
const EventSource = "/kubectl-lambda"

const (
	errNoURLFmt      = "%s has no URL yet (phase %s): wait until it is Ready, or give --url"
	errNoBroker      = "it names no Broker to send through"
	errBrokerFmt     = "cannot read Broker %s/%s"
	errBrokerURLFmt  = "Broker %s/%s has no address yet"
	errReadDataFmt   = "cannot read %s"
	errEventData     = "cannot set the event's data"
	errNewClient     = "cannot make a CloudEvents client"
	errSendFmt       = "cannot send the event to %s"
	errReplyFmt      = "%s answered HTTP %d"
	errHandlerFailed = "the function's handler failed: its reply is above, its log says why (kubectl lambda logs)"
	errWriteReply    = "cannot write the reply"
	errHTTPBroker    = "a Broker takes only events: leave out --http or --broker"
	errNewRequest    = "cannot make the request"
)

// invokeOptions are what invoke sends and where.
type invokeOptions struct {
	eventType string
	// data is JSON, text, or @FILE to read it from.
	data string
	// url overrides the workload's.
	url string
	// broker sends through the workload's Broker instead of to its URL.
	broker bool
	// ingress is the address every connection goes to, whatever the URL's
	// host, which stays the request's Host: an ingress that routes by Host
	// and that no name resolves to, such as the local cluster's.
	ingress string
	// http sends a plain HTTP request instead of an event, with method
	// (GET, or POST when there is data) to path below the URL.
	http         bool
	method, path string
}

// invoke sends one CloudEvent to a workload, at its URL or through its
// Broker, and writes the reply event: a function's handler replies; a Broker
// only accepts. With o.http it sends a plain HTTP request instead.
func invoke(ctx context.Context, c client.Reader, w *workload, o invokeOptions, out io.Writer) error {
	target, err := invokeTarget(ctx, c, w, o)
	if err != nil {
		return err
	}
	if o.http {
		return request(ctx, target, o, out)
	}
	e := cloudevents.NewEvent()
	e.SetID(uuid.NewString())
	e.SetSource(EventSource)
	e.SetType(o.eventType)
	data, contentType, err := readData(o.data)
	if err != nil {
		return err
	}
	if data != nil {
		if err := e.SetData(contentType, data); err != nil {
			return errors.Wrap(err, errEventData)
		}
	}
	var opts []cehttp.Option
	if rt := through(o.ingress); rt != nil {
		opts = append(opts, cehttp.WithRoundTripper(rt))
	}
	ce, err := cloudevents.NewClientHTTP(opts...)
	if err != nil {
		return errors.Wrap(err, errNewClient)
	}
	reply, result := ce.Request(cloudevents.ContextWithTarget(ctx, target), e)
	status := 0
	var hr *cehttp.Result
	if errors.As(result, &hr) {
		status = hr.StatusCode
	}
	if !cloudevents.IsACK(result) && status == 0 {
		return errors.Wrapf(result, errSendFmt, target)
	}
	if reply == nil {
		fmt.Fprintf(out, "%s accepted event %s (HTTP %d): no reply event\n", target, e.ID(), status)
	} else if err := writeEvent(out, reply); err != nil {
		return err
	}
	if cloudevents.IsACK(result) {
		return nil
	}
	if reply != nil && strings.HasSuffix(reply.Type(), ".error") {
		return errors.New(errHandlerFailed)
	}
	return errors.Errorf(errReplyFmt, target, status)
}

// request sends one plain HTTP request to the workload at target and
// writes the response as curl -i does: its status, headers and body.
func request(ctx context.Context, target string, o invokeOptions, out io.Writer) error {
	data, contentType, err := readData(o.data)
	if err != nil {
		return err
	}
	method := o.method
	if method == "" {
		method = http.MethodGet
		if data != nil {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(target, "/")+"/"+strings.TrimPrefix(o.path, "/"), bytes.NewReader(data))
	if err != nil {
		return errors.Wrap(err, errNewRequest)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Transport: through(o.ingress)}).Do(req)
	if err != nil {
		return errors.Wrapf(err, errSendFmt, target)
	}
	defer resp.Body.Close() //nolint:errcheck // Only read.
	fmt.Fprintf(out, "%s %s\n", resp.Proto, resp.Status)
	for _, name := range slices.Sorted(maps.Keys(resp.Header)) {
		for _, v := range resp.Header[name] {
			fmt.Fprintf(out, "%s: %s\n", name, v)
		}
	}
	fmt.Fprintln(out)
	if _, err := io.Copy(out, resp.Body); err != nil {
		return errors.Wrap(err, errWriteReply)
	}
	if resp.StatusCode >= http.StatusBadRequest {
		return errors.Errorf(errReplyFmt, target, resp.StatusCode)
	}
	return nil
}

// through connects to ingress, when one is given, whatever host a URL
// names; nil without one.
func through(ingress string) http.RoundTripper {
	if ingress == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(ingress); err != nil {
		ingress = net.JoinHostPort(ingress, "80")
	}
	d := &net.Dialer{}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, ingress)
		},
	}
}

// invokeTarget is where invoke sends: --url, the Broker's address, or the
// workload's URL.
func invokeTarget(ctx context.Context, c client.Reader, w *workload, o invokeOptions) (string, error) {
	if o.url != "" {
		return o.url, nil
	}
	if o.broker && o.http {
		return "", errors.New(errHTTPBroker)
	}
	if !o.broker {
		if w.status.URL == "" {
			return "", errors.Errorf(errNoURLFmt, w, orNone(string(w.status.Phase), "unknown"))
		}
		return w.status.URL, nil
	}
	if w.status.Eventing == nil || w.status.Eventing.Broker == "" {
		return "", errors.New(errNoBroker)
	}
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(eventingv1.SchemeGroupVersion.WithKind("Broker"))
	key := types.NamespacedName{Namespace: w.Namespace(), Name: w.status.Eventing.Broker}
	if err := c.Get(ctx, key, b); err != nil {
		return "", errors.Wrapf(err, errBrokerFmt, key.Namespace, key.Name)
	}
	url, _, _ := unstructured.NestedString(b.Object, "status", "address", "url")
	if url == "" {
		return "", errors.Errorf(errBrokerURLFmt, key.Namespace, key.Name)
	}
	return url, nil
}

// readData reads what invoke sends and its content type: JSON as
// application/json, anything else as text; @FILE reads it from a file, @-
// from standard input. Without data, nothing.
func readData(data string) ([]byte, string, error) {
	if data == "" {
		return nil, "", nil
	}
	b := []byte(data)
	if name, ok := strings.CutPrefix(data, "@"); ok {
		var err error
		if name == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(name) //nolint:gosec // The file the user names.
		}
		if err != nil {
			return nil, "", errors.Wrapf(err, errReadDataFmt, name)
		}
	}
	if json.Valid(b) {
		return b, cloudevents.ApplicationJSON, nil
	}
	return b, cloudevents.TextPlain, nil
}

// writeEvent writes an event as structured JSON, its data decoded.
func writeEvent(out io.Writer, e *cloudevents.Event) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return errors.Wrap(err, errWriteReply)
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return errors.Wrap(err, errWriteReply)
}
