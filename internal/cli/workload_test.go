package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// TestFind creates the examples of each kind the plugin knows, a function
// and an agent as managed resources and as v2 composites of the same
// names, and checks which one each way of naming them reaches.
func TestFind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newScene(ctx, t)
	for _, f := range []string{"lambdafunction-python-inline.yaml", "lambdaagent.yaml", "platform/xrs/python-inline.yaml", "platform/xrs/agent.yaml"} {
		objs, err := manifest.Read(filepath.Join("..", "..", "examples", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			o.SetNamespace(s.namespace)
			if err := s.kube.Create(ctx, o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
	cases := map[string]struct {
		reason    string
		arg       string
		wantFirst string
		wantErr   string
	}{
		"ManagedFunction": {reason: "KIND/NAME reaches that kind.", arg: "lambdafunction/hello-python", wantFirst: "LambdaFunction:  NAMESPACE/hello-python"},
		"ShortName":       {reason: "The kind's short name works as kubectl's does.", arg: "la/support", wantFirst: "LambdaAgent:  NAMESPACE/support"},
		"Composite":       {reason: "A v2 composite Lambda is a workload too.", arg: "lambda/hello-python", wantFirst: "Lambda:  NAMESPACE/hello-python"},
		"CompositeAgent":  {reason: "So is an Agent, by its kind's name.", arg: "Agent/support", wantFirst: "Agent:  NAMESPACE/support"},
		"Ambiguous":       {reason: "A bare name of two kinds is refused, naming both.", arg: "support", wantErr: "support names more than one workload in namespace NAMESPACE (LambdaAgent, Agent): say which, such as lambdaagent/support"},
		"Missing":         {reason: "A name of none says which kinds were looked at.", arg: "nothing", wantErr: "no LambdaFunction, LambdaAgent, Lambda or Agent named nothing in namespace NAMESPACE"},
		"OtherKind":       {reason: "A kind the plugin does not know is refused.", arg: "pod/support", wantErr: "pod is not a kind kubectl lambda knows"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := s.kubectlLambda(ctx, time.Now(), "status", tc.arg)
			out = strings.ReplaceAll(out, s.namespace, "NAMESPACE")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), s.namespace, "NAMESPACE"), tc.wantErr) {
					t.Errorf("%s\nstatus %s: error %v, want %q", tc.reason, tc.arg, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nstatus %s: %v\n%s", tc.reason, tc.arg, err, out)
			}
			if first, _, _ := strings.Cut(out, "\n"); first != tc.wantFirst {
				t.Errorf("%s\nstatus %s: first line %q, want %q", tc.reason, tc.arg, first, tc.wantFirst)
			}
		})
	}
}
