package v1alpha1_test

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestNeedsUser(t *testing.T) {
	cases := map[xpv2.ConditionReason]struct {
		reason string
		want   bool
	}{
		v1alpha1.ReasonBuilding:          {reason: "A build ends on its own.", want: false},
		v1alpha1.ReasonDeploying:         {reason: "Knative gets there on its own.", want: false},
		v1alpha1.ReasonWaiting:           {reason: "What is waited for comes on its own.", want: false},
		v1alpha1.ReasonSourceUnreachable: {reason: "A server that does not answer may answer later.", want: false},
		xpv2.ReasonAvailable:             {reason: "A workload that serves needs no one.", want: false},
		v1alpha1.ReasonBuildFailed:       {reason: "A build is not retried until the code or its settings change.", want: true},
		v1alpha1.ReasonBuildNotAdmitted:  {reason: "Only a user can relabel the namespace.", want: true},
		v1alpha1.ReasonInvalid:           {reason: "Only a new spec renders.", want: true},
		v1alpha1.ReasonSourceUnresolved:  {reason: "A ref or object that does not exist does not appear by waiting.", want: true},
		v1alpha1.ReasonSecretMissing:     {reason: "Only a user creates the Secret.", want: true},
		v1alpha1.ReasonBrokerMissing:     {reason: "Only a user creates the Broker.", want: true},
		v1alpha1.ReasonNameConflict:      {reason: "Only a user frees the name.", want: true},
		v1alpha1.ReasonRevisionFailed:    {reason: "Knative does not retry a failed Revision.", want: true},
		v1alpha1.ReasonEventingFailed:    {reason: "Knative Eventing reports what only a new spec or object fixes.", want: true},
		v1alpha1.ReasonRouteFailed:       {reason: "A route to a Revision that does not exist needs a new spec.", want: true},
		v1alpha1.ReasonForwardRefused:    {reason: "Only the target's owner can accept the forward.", want: true},
	}
	for r, tc := range cases {
		t.Run(string(r), func(t *testing.T) {
			if got := v1alpha1.NeedsUser(r); got != tc.want {
				t.Errorf("%s\nNeedsUser(%s): want %t, got %t", tc.reason, r, tc.want, got)
			}
		})
	}
}
