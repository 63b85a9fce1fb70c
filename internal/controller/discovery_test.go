package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// A laggingMapper does not know one kind until told that discovery serves
// it, as the API server's discovery can trail a CRD it already reports
// Established.
type laggingMapper struct {
	meta.RESTMapper
	kind   schema.GroupKind
	asked  atomic.Int32
	served atomic.Bool
}

func (m *laggingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if gk == m.kind && !m.served.Load() {
		m.asked.Add(1)
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// TestControllerStartsOnceDiscoveryServesItsKind plays discovery trailing
// the LambdaFunction CRD, as after Crossplane activates it: Crossplane's
// CRD gate opens on Established, and the controller must start once
// discovery serves the kind, then reconcile the function made meanwhile.
func TestControllerStartsOnceDiscoveryServesItsKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lag := &laggingMapper{kind: v1alpha1.LambdaFunctionGroupVersionKind.GroupKind()}
	p := startProvider(t, providerOptions{mapper: func(m meta.RESTMapper) meta.RESTMapper {
		lag.RESTMapper = m
		return lag
	}})
	ns := testkit.Namespace(ctx, t, p.kube, "discovery-", "")
	newProviderConfig(ctx, t, p.kube, ns)
	fn := testkit.ImageFunction(ns, "late")
	if err := p.kube.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	wait.Until(ctx, t, "the gate opens and the controller's setup asks for its kind", func() string {
		if lag.asked.Load() == 0 {
			return "not asked yet"
		}
		return ""
	})
	lag.served.Store(true)
	wait.Until(ctx, t, "the function's Service", func() string {
		if err := p.kube.Get(ctx, client.ObjectKeyFromObject(fn), &servingv1.Service{}); err != nil {
			return err.Error()
		}
		return ""
	})
}
