package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestTraffic checks what render makes of a traffic block, for a function
// and for an agent: Knative's traffic targets on the Service, the rollout's
// pace on the Service and not its pods, and a refusal before anything is
// built for a pin that is not the workload's own or anything else Knative
// refuses.
func TestTraffic(t *testing.T) {
	latest := func(percent int64, tag string) v1alpha1.TrafficTarget {
		return v1alpha1.TrafficTarget{Percent: percent, Tag: ptr.To(tag)}
	}
	pinned := func(rev string, percent int64) v1alpha1.TrafficTarget {
		return v1alpha1.TrafficTarget{RevisionName: ptr.To(rev), Percent: percent}
	}
	cases := map[string]struct {
		reason      string
		traffic     *v1alpha1.Traffic
		want        []servingv1.TrafficTarget
		wantRollout string
		err         string
	}{
		"Unset": {
			reason: "Without a traffic block the Service says nothing of traffic: Knative sends all of it to the latest ready Revision.",
		},
		"Canary": {
			reason:  "A pinned Revision keeps 90 percent while the latest takes 10 under its own tag.",
			traffic: &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{pinned("orders-00001", 90), latest(10, "canary")}},
			want: []servingv1.TrafficTarget{
				{RevisionName: "orders-00001", LatestRevision: ptr.To(false), Percent: ptr.To[int64](90)},
				{LatestRevision: ptr.To(true), Percent: ptr.To[int64](10), Tag: "canary"},
			},
		},
		"Rollout": {
			reason:      "A rollout duration alone paces the latest Revision's rollout; Knative reads it from the Service.",
			traffic:     &v1alpha1.Traffic{RolloutDuration: ptr.To[v1alpha1.RolloutDuration]("5m")},
			wantRollout: "5m",
		},
		"ForeignRevision": {
			reason:  "A Revision of another Service in the namespace would serve its code under this workload's URL.",
			traffic: &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{pinned("orders-archive-00003", 100)}},
			err:     `traffic: "orders-archive-00003" is not a Revision of this workload`,
		},
		"NotAGeneration": {
			reason:  "A name with the workload's prefix that Knative never gives a Revision of it.",
			traffic: &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{pinned("orders-blue", 100)}},
			err:     `traffic: "orders-blue" is not a Revision of this workload`,
		},
		"Sum": {
			reason:  "Percents that do not sum to 100, should the schema be bypassed, are refused in Knative's words.",
			traffic: &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{pinned("orders-00001", 50), latest(20, "next")}},
			err:     "traffic: Knative refuses it: Traffic targets sum to 70, want 100",
		},
		"SubSecond": {
			reason:  "Knative paces rollouts in whole seconds.",
			traffic: &v1alpha1.Traffic{RolloutDuration: ptr.To[v1alpha1.RolloutDuration]("1500ms")},
			err:     "traffic: Knative refuses it: rollout-duration=1500ms is not at second precision",
		},
	}
	image := v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/orders", Tag: ptr.To[v1alpha1.ImageTag]("v1")}}
	// The function's source would be built: a refusal must come first.
	inline := v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			source := image
			if tc.err != "" {
				source = inline
			}
			fn, fnErr := Function(FunctionInput{Namespace: "apps", Name: "orders", Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{
				Source: source, Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)}, Traffic: tc.traffic,
			}})
			agent, agentErr := Agent(AgentInput{Namespace: "apps", Name: "orders", Spec: v1alpha1.LambdaAgentParameters{
				Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/orders-agent", Tag: ptr.To[v1alpha1.ImageTag]("v1")}, Traffic: tc.traffic,
			}})
			for what, r := range map[string]struct {
				out *Objects
				err error
			}{"Function": {fn, fnErr}, "Agent": {agent, agentErr}} {
				if tc.err != "" {
					if r.err == nil || !strings.Contains(r.err.Error(), tc.err) {
						t.Errorf("%s\n%s(...): want an error containing %q, got %v", tc.reason, what, tc.err, r.err)
					}
					continue
				}
				if r.err != nil {
					t.Fatalf("%s(...): %v", what, r.err)
				}
				svc := r.out.Service
				if diff := cmp.Diff(tc.want, svc.Spec.Traffic); diff != "" {
					t.Errorf("%s\n%s's Service traffic: -want, +got:\n%s", tc.reason, what, diff)
				}
				if got := svc.Annotations["serving.knative.dev/rollout-duration"]; got != tc.wantRollout {
					t.Errorf("%s\n%s's Service rollout-duration: want %q, got %q", tc.reason, what, tc.wantRollout, got)
				}
				if got, ok := svc.Spec.Template.Annotations["serving.knative.dev/rollout-duration"]; ok {
					t.Errorf("%s\n%s's revision template has rollout-duration %q: a template annotation would make a new Revision of a pace", tc.reason, what, got)
				}
			}
		})
	}
}
