package playact

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// followPoll is how often a followed log is checked for more lines.
const followPoll = 20 * time.Millisecond

// A Kubelet plays the part of a kubelet that kube-apiserver's pods/log
// reaches: its /containerLogs endpoint over TLS, with a certificate of a CA
// the API server trusts (the control plane's KubeletCAFile). A Node points
// the API server at it; what each container logged is set by the test.
type Kubelet struct {
	srv  *httptest.Server
	mu   sync.Mutex
	logs map[string]*containerLog
}

// A containerLog is what one container logged, and whether it still runs.
type containerLog struct {
	text  string
	ended bool
}

// StartKubelet serves a played kubelet on loopback.
func StartKubelet(ca testca.CA) (*Kubelet, error) {
	k := &Kubelet{logs: map[string]*containerLog{}}
	srv, err := ca.Serve("kubelet", http.HandlerFunc(k.containerLogs))
	if err != nil {
		return nil, err
	}
	k.srv = srv
	return k, nil
}

// Close stops the kubelet.
func (k *Kubelet) Close() { k.srv.Close() }

// Log adds to what a container logged; ended says the container stopped,
// which ends a followed log.
func (k *Kubelet) Log(namespace, pod, container, text string, ended bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := namespace + "/" + pod + "/" + container
	l := k.logs[key]
	if l == nil {
		l = &containerLog{}
		k.logs[key] = l
	}
	l.text += text
	l.ended = ended
}

// read is what a container logged from an offset on, and whether it ended.
func (k *Kubelet) read(key string, from int) (string, bool, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.logs[key]
	if !ok {
		return "", false, false
	}
	return l.text[from:], l.ended, true
}

// containerLogs answers GET /containerLogs/NAMESPACE/POD/CONTAINER as the
// kubelet does: the log, and with follow=true what comes after until the
// container ends or the reader goes.
func (k *Kubelet) containerLogs(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, "/containerLogs/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	text, ended, ok := k.read(key, 0)
	if !ok {
		http.Error(w, "container "+key+" is not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(text))
	if r.URL.Query().Get("follow") != "true" {
		return
	}
	sent := len(text)
	for !ended {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(followPoll):
		}
		text, ended, _ = k.read(key, sent)
		_, _ = w.Write([]byte(text))
		sent += len(text)
	}
}

// Register creates a Node of a name whose kubelet is this one, as a kubelet
// registers itself: its address and port in the Node's status.
func (k *Kubelet) Register(ctx context.Context, c client.Client, name string) error {
	host, port, err := net.SplitHostPort(k.srv.Listener.Addr().String())
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, n); err != nil {
		return err
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(p) //nolint:gosec // A TCP port fits.
	return c.Status().Update(ctx, n)
}
