package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// TestDirectHolds checks that Direct mode holds a workload whose Secrets,
// ConfigMaps or Broker its namespace lacks, as the provider does, with the same reasons
// and messages: nothing new is composed and what runs is carried forward.
func TestDirectHolds(t *testing.T) {
	const (
		withSecret = "source: {image: {repository: ghcr.io/acme/hello, tag: v1}}\n" +
			"env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: api, key: token}}}]\n"
		withFiles = "source: {image: {repository: ghcr.io/acme/hello, tag: v1}}\n" +
			"volumes: [{path: /etc/app, configMap: {name: settings, items: [{key: level, path: level}]}}]\n"
		onShared = "source: {image: {repository: ghcr.io/acme/hello, tag: v1}}\n" +
			"eventing:\n  broker: {name: shared}\n  triggers: [{name: orders, filters: {type: com.example.order.created}}]\n"
	)
	apiSecret := selectName("v1", "Secret", testNS, "api")
	settings := selectName("v1", "ConfigMap", testNS, "settings")
	configMap := func(data string) *fnv1.Resources {
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"apps"},`+data+`}`)}}}
	}
	sharedBroker := selectName("eventing.knative.dev/v1", "Broker", testNS, "shared")
	secret := func(data string) *fnv1.Resources {
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api","namespace":"apps"},"data":`+data+`}`)}}}
	}
	running := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: parseSpec(t, withSecret)})
	const noSecret = "Secret api (environment variable TOKEN) does not exist in namespace apps; nothing is deployed or changed until it does"

	cases := map[string]struct {
		reason       string
		spec, status string
		observed     map[string]*fnv1.Resource
		required     map[string]*fnv1.Resources
		phase        string
		ready        fnv1.Ready
		conditions   []*fnv1.Condition
		composed     map[string]composedSummary
		requirements map[string]*fnv1.ResourceSelector
	}{
		"AskedFirst": {
			reason:       "Until Crossplane has supplied the Secret, nothing is composed and the pass waits for it.",
			spec:         withSecret,
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   progressingConditions("Waiting", msgWaitRequired),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"secret-api": apiSecret},
		},
		"SecretMissing": {
			reason:       "A Secret the pods read that does not exist holds the workload, in the provider's words.",
			spec:         withSecret,
			required:     map[string]*fnv1.Resources{"secret-api": {}},
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("SecretMissing", noSecret),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"secret-api": apiSecret},
		},
		"KeyMissing": {
			reason:       "A Secret without the key the pods read holds the workload too.",
			spec:         withSecret,
			required:     map[string]*fnv1.Resources{"secret-api": secret(`{"other":"eA=="}`)},
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("SecretMissing", `Secret api (environment variable TOKEN) in namespace apps has no key "token"; nothing is deployed or changed until it does`),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"secret-api": apiSecret},
		},
		"SecretThere": {
			reason:       "With the Secret and its key there, the Service is composed.",
			spec:         withSecret,
			required:     map[string]*fnv1.Resources{"secret-api": secret(`{"token":"eA=="}`)},
			phase:        "Deploying",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
			composed:     composedOf(serviceRunning(testName, false, "ghcr.io/acme/hello:v1")),
			requirements: map[string]*fnv1.ResourceSelector{"secret-api": apiSecret},
		},
		"RunningKept": {
			reason:       "A Service that runs is carried forward as it is while the workload is held, and keeps its phase.",
			spec:         withSecret,
			status:       `{"phase":"Ready","url":"http://hello.apps.example.com"}`,
			observed:     map[string]*fnv1.Resource{"Service/hello": {Resource: serviceRolledOut(t, running.Service, nil)}},
			required:     map[string]*fnv1.Resources{"secret-api": {}},
			phase:        "Ready",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("SecretMissing", noSecret),
			composed:     composedOf(serviceRunning(testName, true, "ghcr.io/acme/hello:v1")),
			requirements: map[string]*fnv1.ResourceSelector{"secret-api": apiSecret},
		},
		"ConfigMapMissing": {
			reason:       "A ConfigMap the pods mount that does not exist holds the workload, in the provider's words.",
			spec:         withFiles,
			required:     map[string]*fnv1.Resources{"configmap-settings": {}},
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("ConfigMapMissing", "ConfigMap settings (volume at /etc/app) does not exist in namespace apps; nothing is deployed or changed until it does"),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"configmap-settings": settings},
		},
		"ConfigMapKeyMissing": {
			reason:       "A ConfigMap without a key the volume mounts holds the workload too.",
			spec:         withFiles,
			required:     map[string]*fnv1.Resources{"configmap-settings": configMap(`"data":{"colour":"blue"}`)},
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("ConfigMapMissing", `ConfigMap settings (volume at /etc/app) in namespace apps has no key "level"; nothing is deployed or changed until it does`),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"configmap-settings": settings},
		},
		"ConfigMapThere": {
			reason:       "A binary key counts as a text one does: with it there, the Service is composed.",
			spec:         withFiles,
			required:     map[string]*fnv1.Resources{"configmap-settings": configMap(`"binaryData":{"level":"eA=="}`)},
			phase:        "Deploying",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
			composed:     composedOf(serviceRunning(testName, false, "ghcr.io/acme/hello:v1")),
			requirements: map[string]*fnv1.ResourceSelector{"configmap-settings": settings},
		},
		"BrokerMissing": {
			reason:       "Triggers on a Broker the workload does not create, and that does not exist, hold it.",
			spec:         onShared,
			required:     map[string]*fnv1.Resources{"broker-shared": {}},
			phase:        "Pending",
			ready:        fnv1.Ready_READY_FALSE,
			conditions:   stalledConditions("BrokerMissing", "Broker shared, which the Triggers listen on, does not exist in namespace apps: create it, or set eventing.broker.create to true; nothing is deployed or changed until it does"),
			composed:     composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{"broker-shared": sharedBroker},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{
				Input:             codectest.Struct(t, testInput),
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, tc.spec, tc.status))}, Resources: tc.observed},
				RequiredResources: tc.required,
			}
			rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			if got := codec.StringAt(codec.Object(codectest.Encoded(t, rsp.GetDesired().GetComposite().GetResource())), "status", "phase"); got != tc.phase {
				t.Errorf("%s\nRunFunction(...): phase %q, want %q", tc.reason, got, tc.phase)
			}
			if got := rsp.GetDesired().GetComposite().GetReady(); got != tc.ready {
				t.Errorf("%s\nRunFunction(...): composite ready %s, want %s", tc.reason, got, tc.ready)
			}
			if diff := cmp.Diff(tc.conditions, rsp.GetConditions(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): conditions: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.requirements, rsp.GetRequirements().GetResources(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): requirements: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.composed, summarise(t, rsp)); diff != "" {
				t.Errorf("%s\nRunFunction(...): desired composed resources: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
