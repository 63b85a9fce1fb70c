package clients

import (
	"crypto/sha256"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errKubeconfig = "cannot use the kubeconfig of the provider config"
	errNewClient  = "cannot create a client for the target cluster"
)

// TargetScheme knows every kind the provider writes to a target cluster.
func TargetScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, servingv1.AddToScheme, eventingv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// A NewClientFn makes a client for a target cluster.
type NewClientFn func(cfg *rest.Config) (client.Client, error)

// A Cache hands out one client per credential set. A client per reconcile
// costs memory, CPU and discovery calls for nothing (provider-kubernetes
// issue #541).
type Cache struct {
	// local is the client of the cluster the provider runs in.
	local client.Client
	// newClient makes a client for a kubeconfig's cluster.
	newClient NewClientFn

	mu     sync.Mutex
	remote map[[sha256.Size]byte]client.Client
}

// NewCache returns a cache whose InjectedIdentity client is local.
func NewCache(local client.Client, newClient NewClientFn) *Cache {
	return &Cache{local: local, newClient: newClient, remote: map[[sha256.Size]byte]client.Client{}}
}

// For returns the client of a provider config's target cluster.
func (c *Cache) For(cfg Config) (client.Client, error) {
	if cfg.Kubeconfig == nil {
		return c.local, nil
	}
	key := sha256.Sum256(cfg.Kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	if kc, ok := c.remote[key]; ok {
		return kc, nil
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, errors.Wrap(err, errKubeconfig)
	}
	kc, err := c.newClient(rc)
	if err != nil {
		return nil, errors.Wrap(err, errNewClient)
	}
	c.remote[key] = kc
	return kc, nil
}
