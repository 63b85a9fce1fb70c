package workload

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

func TestUnwoken(t *testing.T) {
	cases := map[string]struct {
		reason string
		ready  xpv2.Condition
		want   bool
	}{
		"WaitingForEventing": {
			reason: "A shared Broker wakes no one: the resource is polled for it.",
			ready:  xpv2.Condition{Reason: v1alpha1.ReasonDeploying, Message: observe.MsgWaitEventing + "Broker default is not Ready"},
			want:   true,
		},
		"WaitingForPending": {
			reason: "What the render lists as pending wakes no one.",
			ready:  xpv2.Condition{Reason: v1alpha1.ReasonWaiting, Message: "forward to team-b/agent waits for its consent"},
			want:   true,
		},
		"WaitingForRevision": {
			reason: "A Revision that crash-loops changes no object the provider follows until Knative's progress deadline.",
			ready:  xpv2.Condition{Reason: v1alpha1.ReasonDeploying, Message: "waiting for the Knative Service to be Ready: "},
			want:   true,
		},
		"Building": {
			reason: "The build Job wakes its resource when it ends.",
			ready:  xpv2.Condition{Reason: v1alpha1.ReasonBuilding, Message: "building hello-build-1234"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := unwoken(tc.ready); got != tc.want {
				t.Errorf("%s\nunwoken(%q: %q): got %t, want %t", tc.reason, tc.ready.Reason, tc.ready.Message, got, tc.want)
			}
		})
	}
}
