package observe_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

func TestDeployed(t *testing.T) {
	const url = "http://hello.apps.example.com"
	ready := observe.ServiceState{URL: url, Ready: true, Serving: true}
	delivering := observe.EventingState{Ready: true}
	cases := map[string]struct {
		reason string
		d      observe.Deployment
		want   observe.Verdict
	}{
		"Serving": {
			reason: "A Ready Service whose eventing delivers serves.",
			d:      observe.Deployment{Service: ready, Eventing: delivering},
			want:   observe.Verdict{Phase: v1alpha1.PhaseReady, Ready: true, Reason: xpv2.ReasonAvailable, Message: "serving at " + url},
		},
		"Unapplied": {
			reason: "What is yet to be applied comes first, whatever Knative says of what runs.",
			d:      observe.Deployment{Unapplied: []string{"Service/hello: missing", "Trigger/t: missing"}, Service: ready, Eventing: delivering},
			want:   observe.Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: "applying: Service/hello: missing; Trigger/t: missing"},
		},
		"Refused": {
			reason: "A forward its target refuses needs a user.",
			d:      observe.Deployment{Refused: []string{"forward to b refused"}, Service: ready, Eventing: delivering},
			want:   observe.Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonForwardRefused, Message: "forward to b refused"},
		},
		"Pending": {
			reason: "What render waits for is waited for, before the Service is judged.",
			d:      observe.Deployment{Pending: []string{"waiting for Broker b"}, Service: ready, Eventing: delivering},
			want:   observe.Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonWaiting, Message: "waiting for Broker b"},
		},
		"FailsWhileServing": {
			reason: "A latest Revision that fails while the one before serves keeps the workload Ready and needs a user.",
			d:      observe.Deployment{Service: observe.ServiceState{URL: url, Failed: true, Serving: true, LatestReadyRevision: "hello-00001", Message: "boom"}},
			want:   observe.Verdict{Phase: v1alpha1.PhaseReady, Ready: true, Reason: v1alpha1.ReasonRevisionFailed, Message: "boom; Revision hello-00001 still serves"},
		},
		"Fails": {
			reason: "A Revision that fails with nothing serving fails the workload.",
			d:      observe.Deployment{Service: observe.ServiceState{Failed: true, Message: "boom"}},
			want:   observe.Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonRevisionFailed, Message: "boom"},
		},
		"RouteFails": {
			reason: "A route Knative cannot build fails the workload.",
			d:      observe.Deployment{Service: observe.ServiceState{RouteFailed: true, Message: "RevisionMissing"}},
			want:   observe.Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonRouteFailed, Message: "RevisionMissing"},
		},
		"NoService": {
			reason: "A Service that does not exist yet is waited for, in the same words on both sides.",
			d:      observe.Deployment{Service: observe.Service(nil, nil)},
			want:   observe.Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"},
		},
		"EventingFails": {
			reason: "A Trigger that cannot deliver fails the workload once its Service is Ready.",
			d:      observe.Deployment{Service: ready, Eventing: observe.EventingState{Failed: true, Message: "Trigger t: Unable to get the dead letter sink's URI"}},
			want:   observe.Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonEventingFailed, Message: "Trigger t: Unable to get the dead letter sink's URI"},
		},
		"EventingWaits": {
			reason: "Eventing not Ready yet is waited for, with the prefix the provider's early poll looks for.",
			d:      observe.Deployment{Service: ready, Eventing: observe.EventingState{Message: "Broker b has no Ready condition yet"}},
			want:   observe.Verdict{Phase: v1alpha1.PhaseDeploying, Reason: v1alpha1.ReasonDeploying, Message: observe.MsgWaitEventing + "Broker b has no Ready condition yet"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, observe.Deployed(tc.d)); diff != "" {
				t.Errorf("%s\nDeployed(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestBuilt(t *testing.T) {
	cases := map[string]struct {
		reason   string
		o        observe.BuildOutcome
		want     observe.Verdict
		wantDone bool
	}{
		"Running": {
			reason: "A build that runs is waited for.",
			want:   observe.Verdict{Phase: v1alpha1.PhaseBuilding, Reason: v1alpha1.ReasonBuilding, Message: "building registry/fn:abc in Job fn-build-abc"},
		},
		"Waiting": {
			reason: "A build that waits is still waited for, and says why it waits.",
			o:      observe.BuildOutcome{Waiting: "the build did not start (container kaniko waits): ErrImagePull: not found"},
			want:   observe.Verdict{Phase: v1alpha1.PhaseBuilding, Reason: v1alpha1.ReasonBuilding, Message: "building registry/fn:abc in Job fn-build-abc: the build did not start (container kaniko waits): ErrImagePull: not found"},
		},
		"Failed": {
			reason: "A failed build says which and why, and needs a user.",
			o:      observe.BuildOutcome{Failed: true, Message: "exit 1"},
			want:   observe.Verdict{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.ReasonBuildFailed, Message: "build fn-build-abc failed: exit 1"},
		},
		"Done": {
			reason:   "A build that pushed its image leaves the verdict to the deployment.",
			o:        observe.BuildOutcome{Done: true, Digest: "sha256:0"},
			wantDone: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, done := observe.Built("registry/fn:abc", "fn-build-abc", tc.o)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nBuilt(...): -want, +got:\n%s", tc.reason, diff)
			}
			if done != tc.wantDone {
				t.Errorf("%s\nBuilt(...): done %t, want %t", tc.reason, done, tc.wantDone)
			}
		})
	}
}

func TestHeldAndRetrying(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    observe.Verdict
		want   observe.Verdict
	}{
		"HeldNew": {
			reason: "A workload held before it was ever deployed is Pending.",
			got:    observe.Held("", v1alpha1.ReasonSecretMissing, "m"),
			want:   observe.Verdict{Phase: v1alpha1.PhasePending, Reason: v1alpha1.ReasonSecretMissing, Message: "m"},
		},
		"HeldRunning": {
			reason: "A held workload keeps the phase of what runs, but is not Ready: its spec is not deployed.",
			got:    observe.Held(v1alpha1.PhaseReady, v1alpha1.ReasonSecretMissing, "m"),
			want:   observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonSecretMissing, Message: "m"},
		},
		"RetryingServing": {
			reason: "A workload that serves stays Ready while a source server does not answer.",
			got:    observe.Retrying(v1alpha1.PhaseReady, v1alpha1.ReasonSourceUnreachable, "m"),
			want:   observe.Verdict{Phase: v1alpha1.PhaseReady, Ready: true, Reason: v1alpha1.ReasonSourceUnreachable, Message: "m"},
		},
		"RetryingNew": {
			reason: "A workload never deployed is Pending and not Ready while it retries.",
			got:    observe.Retrying("", v1alpha1.ReasonSourceUnreachable, "m"),
			want:   observe.Verdict{Phase: v1alpha1.PhasePending, Reason: v1alpha1.ReasonSourceUnreachable, Message: "m"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUnmet(t *testing.T) {
	errBoom := errors.New("boom")
	objects := map[string]map[string]bool{"Secret/api": {"token": true}, "ConfigMap/settings": {"level": true}}
	object := func(kind, name string) (map[string]bool, bool, error) {
		keys, ok := objects[kind+"/"+name]
		return keys, ok, nil
	}
	secret := func(name string) observe.Required { return observe.Required{Kind: observe.KindSecret, Name: name} }
	configMap := func(name string) observe.Required { return observe.Required{Kind: observe.KindConfigMap, Name: name} }
	brokers := func(name string) (bool, error) { return name == "events", nil }
	cases := map[string]struct {
		reason   string
		refs     observe.References
		object   observe.ObjectFn
		want     observe.Verdict
		wantHeld bool
		wantErr  error
	}{
		"Met": {
			reason: "Secrets and ConfigMaps with their keys and a Broker that exist hold nothing.",
			refs: observe.References{Required: []observe.Required{
				{Kind: observe.KindSecret, Name: "api", Key: "token", Use: "environment variable TOKEN"},
				{Kind: observe.KindConfigMap, Name: "settings", Key: "level", Use: "volume at /etc/app"},
			}, Broker: "events"},
		},
		"NoSecret": {
			reason: "Every missing Secret is named, with what needs it.",
			refs: observe.References{Required: []observe.Required{
				{Kind: observe.KindSecret, Name: "regcred", Use: "image pull secret"},
				{Kind: observe.KindSecret, Name: "db", Use: "volume at /var/run/secrets/db"},
			}},
			want:     observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonSecretMissing, Message: "Secret regcred (image pull secret) does not exist in namespace apps; Secret db (volume at /var/run/secrets/db) does not exist in namespace apps" + observe.MsgHeld},
			wantHeld: true,
		},
		"NoKey": {
			reason:   "A Secret without the key the pod reads holds the workload.",
			refs:     observe.References{Required: []observe.Required{{Kind: observe.KindSecret, Name: "api", Key: "password", Use: "environment variable PASSWORD"}}},
			want:     observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonSecretMissing, Message: `Secret api (environment variable PASSWORD) in namespace apps has no key "password"` + observe.MsgHeld},
			wantHeld: true,
		},
		"NoConfigMap": {
			reason:   "A missing ConfigMap, or one without the key the pod reads, holds the workload as a Secret does, with a reason of its own.",
			refs:     observe.References{Required: []observe.Required{{Kind: observe.KindConfigMap, Name: "app", Use: "environment of container function"}, {Kind: observe.KindConfigMap, Name: "settings", Key: "colour", Use: "environment variable COLOUR"}}},
			want:     observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonConfigMapMissing, Message: `ConfigMap app (environment of container function) does not exist in namespace apps; ConfigMap settings (environment variable COLOUR) in namespace apps has no key "colour"` + observe.MsgHeld},
			wantHeld: true,
		},
		"NoSecretNorConfigMap": {
			reason:   "A missing Secret names the reason when a ConfigMap is missing too, whichever comes first.",
			refs:     observe.References{Required: []observe.Required{configMap("app"), secret("db")}},
			want:     observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonSecretMissing, Message: "ConfigMap app () does not exist in namespace apps; Secret db () does not exist in namespace apps" + observe.MsgHeld},
			wantHeld: true,
		},
		"NoBroker": {
			reason:   "Triggers on a Broker that does not exist hold the workload.",
			refs:     observe.References{Broker: "orders"},
			want:     observe.Verdict{Phase: v1alpha1.PhaseReady, Reason: v1alpha1.ReasonBrokerMissing, Message: "Broker orders, which the Triggers listen on, does not exist in namespace apps: create it, or set eventing.broker.create to true" + observe.MsgHeld},
			wantHeld: true,
		},
		"ReadFails": {
			reason:  "A Secret that cannot be read is an error, not a verdict.",
			refs:    observe.References{Required: []observe.Required{secret("api")}},
			object:  func(string, string) (map[string]bool, bool, error) { return nil, false, errBoom },
			wantErr: errBoom,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.object == nil {
				tc.object = object
			}
			got, held, err := observe.Unmet(v1alpha1.PhaseReady, "apps", tc.refs, tc.object, brokers)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s\nUnmet(...): error %v, want %v", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUnmet(...): -want, +got:\n%s", tc.reason, diff)
			}
			if held != tc.wantHeld {
				t.Errorf("%s\nUnmet(...): held %t, want %t", tc.reason, held, tc.wantHeld)
			}
		})
	}
}
