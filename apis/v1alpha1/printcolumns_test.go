package v1alpha1_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestPrintColumns reads LambdaFunctions and LambdaAgents as the API server
// prints them for `kubectl get lf,la`: READY, SYNCED, PHASE, URL and AGE,
// with the values of a resource's status.
func TestPrintColumns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	ns := testkit.Namespace(ctx, t, c, "admission-", "")
	tag := v1alpha1.ImageTag("v1")
	fn := &v1alpha1.LambdaFunction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "printed"},
		Spec: v1alpha1.LambdaFunctionSpec{ForProvider: v1alpha1.LambdaFunctionParameters{
			Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: &tag}},
		}},
	}
	if err := c.Create(ctx, fn); err != nil {
		t.Fatal(err)
	}
	fn.Status.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess())
	fn.Status.AtProvider.Phase = v1alpha1.PhaseReady
	fn.Status.AtProvider.URL = "http://printed.apps.example.com"
	if err := c.Status().Update(ctx, fn); err != nil {
		t.Fatal(err)
	}

	for _, resource := range []string{"lambdafunctions", "lambdaagents"} {
		table := getTable(t, "/apis/lambda.m.crossplane.io/v1alpha1/namespaces/"+ns+"/"+resource)
		var names []string
		for _, col := range table.ColumnDefinitions {
			names = append(names, col.Name)
		}
		if diff := cmp.Diff([]string{"Name", "READY", "SYNCED", "PHASE", "URL", "AGE"}, names); diff != "" {
			t.Errorf("%s columns: -want, +got:\n%s", resource, diff)
		}
		if resource != "lambdafunctions" {
			continue
		}
		if len(table.Rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", resource, len(table.Rows))
		}
		got := table.Rows[0].Cells[:5]
		want := []any{"printed", string(corev1.ConditionTrue), string(corev1.ConditionTrue), "Ready", "http://printed.apps.example.com"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s row: -want, +got:\n%s", resource, diff)
		}
	}
}

// getTable asks the API server for a list as a Table, as kubectl does,
// through client-go, which also waits out a 429 as kubectl would.
func getTable(t *testing.T, path string) metav1.Table {
	t.Helper()
	cs, err := kubernetes.NewForConfig(controlPlane.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cs.CoreV1().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET %s as a Table: %v\n%s", path, err, b)
	}
	var table metav1.Table
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatalf("GET %s as a Table: %v\n%s", path, err, b)
	}
	return table
}
