package controller_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"

	"github.com/knative-lambda/provider-knative-lambda/apis"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	lambdacontroller "github.com/knative-lambda/provider-knative-lambda/internal/controller"
)

var controlPlane local.Shared

func TestMain(m *testing.M) {
	os.Exit(controlPlane.Run(m))
}

// TestGatedControllersTrackUsage runs the provider's controllers behind the
// CRD gate against a real API server: every managed resource records which
// provider config it uses, the config counts its users, and each resource
// says plainly that this build has no external client yet.
func TestGatedControllersTrackUsage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, extv1.AddToScheme, apis.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := controlPlane.Config(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	o := controller.Options{
		Logger:                  logging.NewNopLogger(),
		GlobalRateLimiter:       ratelimiter.NewGlobal(100),
		PollInterval:            time.Minute,
		MaxConcurrentReconciles: 2,
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
	}
	if err := customresourcesgate.Setup(mgr, o); err != nil {
		t.Fatal(err)
	}
	if err := lambdacontroller.SetupGated(mgr, o); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	c := mgr.GetAPIReader()
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "usage-"}}
	pc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       v1alpha1.ClusterProviderConfigSpec{Credentials: v1alpha1.ClusterProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity}},
	}
	for _, obj := range []client.Object{ns, pc} {
		if err := kube.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	tag := v1alpha1.ImageTag("v1")
	fn := &v1alpha1.LambdaFunction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "fn"},
		Spec: v1alpha1.LambdaFunctionSpec{ForProvider: v1alpha1.LambdaFunctionParameters{
			Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}},
		}},
	}
	agent := &v1alpha1.LambdaAgent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "agent"},
		Spec: v1alpha1.LambdaAgentSpec{ForProvider: v1alpha1.LambdaAgentParameters{
			Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: &tag},
			AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr(v1alpha1.HTTPURL("http://ollama:11434")), Model: "llama3.2:3b"},
		}},
	}
	for _, obj := range []client.Object{fn, agent} {
		if err := kube.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	eventually(ctx, t, "both resources track their provider config usage", func() string {
		l := &v1alpha1.ProviderConfigUsageList{}
		if err := c.List(ctx, l, client.InNamespace(ns.Name)); err != nil {
			return err.Error()
		}
		got := map[string]xpv2.ProviderConfigReference{}
		for _, u := range l.Items {
			got[u.ResourceReference.Kind+"/"+u.ResourceReference.Name] = u.ProviderConfigReference
		}
		want := xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
		for _, k := range []string{"LambdaFunction/fn", "LambdaAgent/agent"} {
			if got[k] != want {
				return k + " has usage " + got[k].Kind + "/" + got[k].Name
			}
		}
		return ""
	})
	eventually(ctx, t, "the provider config counts two users", func() string {
		got := &v1alpha1.ClusterProviderConfig{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pc), got); err != nil {
			return err.Error()
		}
		if got.Status.Users != 2 {
			return fmt.Sprint("users: ", got.Status.Users)
		}
		return ""
	})
	for _, mg := range []interface {
		client.Object
		GetCondition(xpv2.ConditionType) xpv2.Condition
	}{fn, agent} {
		eventually(ctx, t, mg.GetName()+" is not synced and says why", func() string {
			if err := c.Get(ctx, client.ObjectKeyFromObject(mg), mg); err != nil {
				return err.Error()
			}
			cond := mg.GetCondition(xpv2.TypeSynced)
			if cond.Status != corev1.ConditionFalse || !strings.Contains(cond.Message, "not implemented yet") {
				return "Synced: " + string(cond.Status) + " " + cond.Message
			}
			return ""
		})
	}
}

// eventually polls check until it returns "" or ctx ends; then it fails the
// test with the last thing check said.
func eventually(ctx context.Context, t *testing.T, what string, check func() string) {
	t.Helper()
	last := ""
	for {
		if last = check(); last == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not by the deadline; last seen: %s", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ptr[T any](v T) *T { return &v }
