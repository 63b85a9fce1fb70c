package workload

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

func TestResourceCollector(t *testing.T) {
	fn := func(ns, name string, phase v1alpha1.Phase, ready xpv2.Condition) *v1alpha1.LambdaFunction {
		f := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		f.Status.AtProvider.Phase = phase
		f.SetConditions(ready)
		return f
	}
	held := xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: v1alpha1.ReasonSecretMissing}
	agent := &v1alpha1.LambdaAgent{ObjectMeta: metav1.ObjectMeta{Namespace: "support", Name: "triage"}}
	agent.Status.AtProvider.Phase = v1alpha1.PhaseReady
	agent.SetConditions(xpv2.Available())
	objs := []client.Object{
		fn("shop", "orders", v1alpha1.PhaseReady, xpv2.Available()),
		fn("shop", "invoices", v1alpha1.PhaseReady, xpv2.Available()),
		fn("shop", "refunds", v1alpha1.PhaseDeploying, held),
		agent,
	}
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := &resourceCollector{reader: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()}
	want := `
# HELP lambda_resources LambdaFunctions and LambdaAgents by namespace, kind, phase and the reason of their Ready condition (Available, Building, SecretMissing, BuildFailed, ...).
# TYPE lambda_resources gauge
lambda_resources{kind="LambdaAgent",namespace="support",phase="Ready",reason="Available"} 1
lambda_resources{kind="LambdaFunction",namespace="shop",phase="Deploying",reason="SecretMissing"} 1
lambda_resources{kind="LambdaFunction",namespace="shop",phase="Ready",reason="Available"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
