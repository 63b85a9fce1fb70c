package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

const (
	testNS       = "apps"
	testName     = "hello"
	testRegistry = "registry.test/lambdas"
	testDigest   = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testInput    = `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","build":{"registry":"` + testRegistry + `"}}`
	managedInput = `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","mode":"Managed","providerConfigRef":{"kind":"ClusterProviderConfig","name":"default"}}`
)

// helloSpec is an inline Python function on its own Broker with a Trigger.
const helloSpec = `
source:
  inline:
    code: |
      def handler(event, context):
          return {"ok": True}
runtime: {language: python, version: "3.12", handler: main.handler}
eventing:
  broker: {name: events, create: true}
  triggers:
  - name: orders
    filters: {type: com.example.order.created}
`

// A composedSummary is what a test checks of a desired composed resource;
// render's own tests check every field.
type composedSummary struct {
	Kind, Namespace, Name string
	Ready                 string
	Image                 string `json:",omitempty"`
}

func TestRunFunction(t *testing.T) {
	spec := parseSpec(t, helloSpec)
	building := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry}})
	built := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: spec, Defaults: render.Defaults{Registry: testRegistry},
		Observed: render.Observed{Build: &render.Pushed{Identity: building.BuildIdentity, Digest: testDigest}}})
	changed := parseSpec(t, helloSpec)
	changed.Source.Inline.Code = "def handler(event, context):\n    return {\"ok\": False}\n"
	rebuilding := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: changed, Defaults: render.Defaults{Registry: testRegistry}})
	job, cm := building.BuildJob.Name, building.BuildContext.Name
	buildPods := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Pod", Namespace: ptr.To(testNS),
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"batch.kubernetes.io/job-name": job}}}}
	runningSvc := serviceRolledOut(t, built.Service, nil)
	appsNamespace := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Namespace", Match: &fnv1.ResourceSelector_MatchName{MatchName: testNS}}
	eventsBroker := &fnv1.ResourceSelector{ApiVersion: "eventing.knative.dev/v1", Kind: "Broker", Namespace: ptr.To(testNS), Match: &fnv1.ResourceSelector_MatchName{MatchName: "events"}}

	type want struct {
		composed     map[string]composedSummary
		status       string
		ready        fnv1.Ready
		conditions   []*fnv1.Condition
		results      []*fnv1.Result
		requirements map[string]*fnv1.ResourceSelector
	}
	const (
		gitSpec = "source: {git: {url: \"https://git.example.com/acme/fns\", ref: main, secretRef: {name: git-creds}}}\nruntime: {language: go, handler: Handle}\n"
		commit  = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	)
	gitBuild := mustRender(t, render.FunctionInput{Namespace: testNS, Name: testName, Spec: parseSpec(t, gitSpec), Defaults: render.Defaults{Registry: testRegistry}, Observed: render.Observed{SourceIdentity: commit}})
	gitCreds := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret", Namespace: ptr.To(testNS), Match: &fnv1.ResourceSelector_MatchName{MatchName: "git-creds"}}
	resolveGit := SourceResolverFn(func(_ context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error) {
		if src.Git == nil || string(secret["username"]) != "bot" || string(secret["password"]) != "s3cret" {
			return "", errors.New("resolved without the credentials Secret's data")
		}
		return commit, nil
	})
	const sshRefused = "git URL ssh://git@git.example.com/acme/fns.git: only https:// repositories can be resolved by this provider build"
	crash := playact.CrashLoop(1, "boom")
	const dlqMissing = `: Unable to get the dead letter sink's URI: failed to get object apps/dlq: services.serving.knative.dev "dlq" not found`
	const (
		crashed      = `RevisionFailed: Revision "hello-00001" failed with message: Container failed with: boom.`
		crashedAgain = `RevisionFailed: Revision "hello-00002" failed with message: Container failed with: boom.; Revision hello-00001 still serves`
		crashLooping = `Revision hello-00002: container function keeps exiting: code 1, restarted 2 times: RuntimeError: refusing to start; Revision hello-00001 still serves`
	)
	// podsOf is the requirement of a Revision's pods.
	podsOf := func(revision string) map[string]*fnv1.ResourceSelector {
		return map[string]*fnv1.ResourceSelector{requireRevisionPods: {ApiVersion: "v1", Kind: "Pod", Namespace: ptr.To(testNS), Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"serving.knative.dev/revision": revision}}}}}
	}
	builtXR := lambdaXR(t, helloSpec, `{"build":{"identity":"`+building.BuildIdentity+`","jobName":"`+job+`","digest":"`+testDigest+`"}}`)
	// deployed are a built function's observed Broker, Service and Trigger.
	deployed := func(svc, trigger *structpb.Struct) map[string]*fnv1.Resource {
		return map[string]*fnv1.Resource{
			"Broker/events":             {Resource: readyStruct(t, building.Broker)},
			"Service/hello":             {Resource: svc},
			"Trigger/" + trig(built, 0): {Resource: trigger},
		}
	}
	// deployedComposed is what a pass over them composes.
	deployedComposed := func(serviceReady, triggerReady bool) map[string]composedSummary {
		return composedOf(
			composedAs("Broker", "events", true),
			serviceRunning(testName, serviceReady, built.Image),
			composedAs("Trigger", trig(built, 0), triggerReady),
		)
	}
	// deployedStatus is the status of such a pass, with the phase and the
	// Service's fields given as JSON members.
	deployedStatus := func(phase, service string) string {
		return `{"phase":"` + phase + `","image":"` + built.Image + `",` + service + `,"eventing":{"broker":"events","createdBrokers":["events"],"triggers":["` + trig(built, 0) + `"]},` +
			`"build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `","digest":"` + testDigest + `"}}`
	}
	const serving = `"url":"http://hello.apps.example.com","latestReadyRevision":"hello-00001","traffic":[{"revisionName":"hello-00001","latestRevision":true,"percent":100}]`
	// failsWhileServing is what a pass says of a new Revision, hello-00002,
	// that fails as msg says while the one before serves.
	failsWhileServing := func(msg string) want {
		return want{
			composed:     deployedComposed(false, true),
			status:       deployedStatus("Ready", serving+`,"failedRevision":"hello-00002"`),
			ready:        fnv1.Ready_READY_TRUE,
			requirements: podsOf("hello-00002"),
			conditions:   stalledConditions("RevisionFailed", msg),
			results:      []*fnv1.Result{warning("RevisionFailed", msg)},
		}
	}
	mr := func(status string) *structpb.Struct {
		return codectest.Struct(t, `{"apiVersion":"lambda.m.crossplane.io/v1alpha1","kind":"LambdaFunction","metadata":{"name":"hello","namespace":"apps"},"status":`+status+`}`)
	}

	// A new function's first pass: its build and its Broker.
	firstPass := want{
		composed:     composedOf(composedAs("ConfigMap", cm, false), composedAs("Job", job, false), composedAs("NetworkPolicy", job, false), composedAs("Broker", "events", false)),
		status:       `{"phase":"Pending","build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `"}}`,
		ready:        fnv1.Ready_READY_FALSE,
		requirements: map[string]*fnv1.ResourceSelector{"namespace": appsNamespace, "broker-events": eventsBroker},
		conditions:   progressingConditions("Building", "starting build "+job),
	}
	// A claim's composite's first pass also asks for the claim, whose
	// generation it reports.
	claimFirstPass := firstPass
	claimFirstPass.requirements = map[string]*fnv1.ResourceSelector{"namespace": appsNamespace, "broker-events": eventsBroker, "claim": claimOf("LambdaClaim")}

	cases := map[string]struct {
		reason   string
		input    string
		xr       string
		sources  SourceResolver
		observed map[string]*fnv1.Resource
		required map[string]*fnv1.Resources
		want     want
	}{
		"FirstPass": {
			reason:   "A new function gets its build and its Broker; the Service waits for the image.",
			xr:       lambdaXR(t, helloSpec, ""),
			required: map[string]*fnv1.Resources{"namespace": {}, "broker-events": {}},
			want:     firstPass,
		},
		"RestrictedNamespace": {
			reason:   "A namespace that enforces the restricted Pod Security level would refuse the build's pods silently: the XR stalls and says so, and no Job is composed.",
			xr:       lambdaXR(t, helloSpec, ""),
			required: map[string]*fnv1.Resources{"namespace": {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"apps","labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)}}}},
			want: want{
				composed:     composedOf(),
				status:       `{"phase":"Pending"}`,
				ready:        fnv1.Ready_READY_FALSE,
				requirements: map[string]*fnv1.ResourceSelector{"namespace": appsNamespace},
				conditions:   stalledConditions("BuildNotAdmitted", observe.BuildNotAdmitted(testNS, map[string]string{observe.LabelEnforce: "restricted"})),
				results:      []*fnv1.Result{warning("BuildNotAdmitted", observe.BuildNotAdmitted(testNS, map[string]string{observe.LabelEnforce: "restricted"}))},
			},
		},
		"BrokerOfAnother": {
			reason:   "A Broker to create that exists and is not this XR's is used, not composed: Crossplane would refuse to take it over.",
			xr:       lambdaXR(t, helloSpec, ""),
			required: map[string]*fnv1.Resources{"namespace": {}, "broker-events": {Items: []*fnv1.Resource{{Resource: readyStruct(t, building.Broker)}}}},
			want: want{
				composed:     composedOf(composedAs("ConfigMap", cm, false), composedAs("Job", job, false), composedAs("NetworkPolicy", job, false)),
				status:       `{"phase":"Pending","build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				requirements: map[string]*fnv1.ResourceSelector{"namespace": appsNamespace, "broker-events": eventsBroker},
				conditions:   progressingConditions("Building", "starting build "+job),
			},
		},
		"JobRunning": {
			reason: "A running build keeps the XR Reconciling and not Ready.",
			xr:     lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{
				"ConfigMap/" + cm: {Resource: toStruct(t, building.BuildContext)},
				"Job/" + job:      {Resource: jobWithStatus(t, building.BuildJob, batchv1.JobStatus{StartTime: ptr.To(metav1.NewTime(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)))})},
			},
			required: map[string]*fnv1.Resources{"broker-events": {}},
			want: want{
				composed:     composedOf(composedAs("ConfigMap", cm, true), composedAs("Job", job, false), composedAs("NetworkPolicy", job, false), composedAs("Broker", "events", false)),
				status:       `{"phase":"Building","build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `","startedAt":"2026-11-22T08:00:00Z"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				requirements: map[string]*fnv1.ResourceSelector{"broker-events": eventsBroker},
				conditions:   progressingConditions("Building", "building "+building.Image+" in Job "+job),
			},
		},
		"JobFailed": {
			reason: "A failed build stalls the XR with Kaniko's message, and its Job stays: nothing is retried.",
			xr:     lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{
				"Job/" + job: {Resource: jobWithStatus(t, building.BuildJob, finished(batchv1.JobFailed))},
			},
			required: map[string]*fnv1.Resources{"broker-events": {}, "build-pods": {Items: []*fnv1.Resource{{Resource: podTerminated(t, job, 1, "error building image: no such file main.py")}}}},
			want: want{
				composed:     composedOf(composedAs("ConfigMap", cm, false), composedAs("Job", job, false), composedAs("NetworkPolicy", job, false), composedAs("Broker", "events", false)),
				status:       `{"phase":"Failed","build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `","message":"error building image: no such file main.py"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   stalledConditions("BuildFailed", "build "+job+" failed: error building image: no such file main.py"),
				results:      []*fnv1.Result{warning("BuildFailed", "build "+job+" failed: error building image: no such file main.py")},
				requirements: map[string]*fnv1.ResourceSelector{"broker-events": eventsBroker, "build-pods": buildPods},
			},
		},
		"JobFinishedAskForPods": {
			reason: "A finished Job's outcome is in its pods, which the function requires before it concludes anything.",
			xr:     lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{
				"Job/" + job: {Resource: jobWithStatus(t, building.BuildJob, finished(batchv1.JobComplete))},
			},
			required: map[string]*fnv1.Resources{"broker-events": {}},
			want: want{
				composed:     composedOf(composedAs("ConfigMap", cm, false), composedAs("Job", job, true), composedAs("NetworkPolicy", job, false), composedAs("Broker", "events", false)),
				status:       `{"phase":"Building","build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   progressingConditions("Building", msgWaitRequired),
				requirements: map[string]*fnv1.ResourceSelector{"broker-events": eventsBroker, "build-pods": buildPods},
			},
		},
		"JobSucceeded": {
			reason: "Once the build succeeded the Service appears with the pushed digest, and the Job stays until the digest is in the status.",
			xr:     lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{
				"Job/" + job:    {Resource: jobWithStatus(t, building.BuildJob, finished(batchv1.JobComplete))},
				"Broker/events": {Resource: toStruct(t, building.Broker)},
			},
			required: map[string]*fnv1.Resources{"build-pods": {Items: []*fnv1.Resource{{Resource: podTerminated(t, job, 0, testDigest)}}}},
			want: want{
				composed: composedOf(
					composedAs("ConfigMap", cm, false),
					composedAs("Job", job, true), composedAs("NetworkPolicy", job, false),
					composedAs("Broker", "events", false),
					serviceRunning(testName, false, built.Image),
					composedAs("Trigger", trig(built, 0), false),
				),
				status: `{"phase":"Deploying","image":"` + built.Image + `","eventing":{"broker":"events","createdBrokers":["events"],"triggers":["` + trig(built, 0) + `"]},` +
					`"build":{"identity":"` + building.BuildIdentity + `","jobName":"` + job + `","digest":"` + testDigest + `"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
				requirements: map[string]*fnv1.ResourceSelector{"build-pods": buildPods},
			},
		},
		"Serving": {
			reason: "With the digest in the status the build's objects go, and a Ready Service makes the XR Ready with its URL.",
			xr:     builtXR,
			observed: func() map[string]*fnv1.Resource {
				o := deployed(runningSvc, readyStruct(t, built.Triggers[0]))
				o["Job/"+job] = &fnv1.Resource{Resource: jobWithStatus(t, building.BuildJob, finished(batchv1.JobComplete))}
				return o
			}(),
			want: want{
				composed:   deployedComposed(true, true),
				status:     deployedStatus("Ready", serving),
				ready:      fnv1.Ready_READY_TRUE,
				conditions: readyConditions("serving at http://hello.apps.example.com"),
			},
		},
		"RevisionFailed": {
			reason: "A first Revision that crash-loops stalls the XR with Knative's message; its status names the Revision. " +
				"Its pods are required: what they do now may be news to Knative.",
			xr:       builtXR,
			observed: deployed(serviceRolledOut(t, built.Service, crash), readyStruct(t, built.Triggers[0])),
			want: want{
				composed:     deployedComposed(false, true),
				status:       deployedStatus("Failed", `"url":"http://hello.apps.example.com","failedRevision":"hello-00001"`),
				ready:        fnv1.Ready_READY_FALSE,
				requirements: podsOf("hello-00001"),
				conditions:   stalledConditions("RevisionFailed", crashed),
				results:      []*fnv1.Result{warning("RevisionFailed", crashed)},
			},
		},
		"NewRevisionFailsWhileOldServes": {
			reason:   "A new Revision that fails while the one before serves keeps the XR Ready and stalls it, naming both.",
			xr:       builtXR,
			observed: deployed(serviceRolledOut(t, built.Service, nil, crash), readyStruct(t, built.Triggers[0])),
			want:     failsWhileServing(crashedAgain),
		},
		"NewRevisionCrashLoops": {
			reason:   "A new Revision Knative has yet to report on, whose pod the kubelet backs off restarting, fails in the kubelet's words while the one before serves; its pods are required.",
			xr:       builtXR,
			observed: deployed(serviceRolledOut(t, built.Service, nil, playact.Deploying()), readyStruct(t, built.Triggers[0])),
			required: map[string]*fnv1.Resources{requireRevisionPods: {Items: []*fnv1.Resource{{Resource: toStruct(t, playact.CrashLoopingPod(built.Service, "hello-00002", 1, "RuntimeError: refusing to start"))}}}},
			want:     failsWhileServing(crashLooping),
		},
		"NewRevisionUnschedulableCrashLoops": {
			reason: "A new Revision Knative failed Unschedulable, whose pod was scheduled since and keeps exiting, fails in the kubelet's words: " +
				"Knative does not look again.",
			xr:       builtXR,
			observed: deployed(serviceRolledOut(t, built.Service, nil, playact.Unschedulable("0/1 nodes are available: 1 Insufficient example.com/room. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")), readyStruct(t, built.Triggers[0])),
			required: map[string]*fnv1.Resources{requireRevisionPods: {Items: []*fnv1.Resource{{Resource: toStruct(t, playact.CrashLoopingPod(built.Service, "hello-00002", 1, "RuntimeError: refusing to start"))}}}},
			want:     failsWhileServing(crashLooping),
		},
		"NewRevisionAwaited": {
			reason: "A new Revision Knative has yet to report on, whose pods say nothing yet, keeps the XR deploying, so Crossplane calls again soon to read them: " +
				"it does not watch them.",
			xr:       builtXR,
			observed: deployed(serviceRolledOut(t, built.Service, nil, playact.Deploying()), readyStruct(t, built.Triggers[0])),
			required: map[string]*fnv1.Resources{requireRevisionPods: {}},
			want: want{
				composed:     deployedComposed(false, true),
				status:       deployedStatus("Deploying", serving),
				ready:        fnv1.Ready_READY_FALSE,
				requirements: podsOf("hello-00002"),
				conditions:   progressingConditions("Deploying", "waiting for the Knative Service to be Ready: "),
			},
		},
		"TriggerFailed": {
			reason:   "A Trigger Knative reports cannot deliver stalls the XR, naming the Trigger and Knative's reason.",
			xr:       builtXR,
			observed: deployed(runningSvc, triggerSettled(t, built.Triggers[0], playact.DeadLetterSinkUnresolved(`failed to get object apps/dlq: services.serving.knative.dev "dlq" not found`))),
			want: want{
				composed:   deployedComposed(true, false),
				status:     deployedStatus("Failed", serving),
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("EventingFailed", "Trigger "+trig(built, 0)+dlqMissing),
				results:    []*fnv1.Result{warning("EventingFailed", "Trigger "+trig(built, 0)+dlqMissing)},
			},
		},
		"TriggerMovesBroker": {
			reason: "A Trigger that listens on another Broker than the spec names is left out, so Crossplane deletes it and a later pass creates it anew: Knative refuses to change a Trigger's Broker.",
			xr:     builtXR,
			observed: func() map[string]*fnv1.Resource {
				moved := built.Triggers[0].DeepCopy()
				moved.Spec.Broker = "before"
				return deployed(runningSvc, readyStruct(t, moved))
			}(),
			want: want{
				composed: composedOf(
					composedAs("Broker", "events", true),
					serviceRunning(testName, true, built.Image),
				),
				status:     deployedStatus("Ready", serving),
				ready:      fnv1.Ready_READY_TRUE,
				conditions: readyConditions("serving at http://hello.apps.example.com"),
			},
		},
		"TriggerNotReported": {
			reason:   "A Trigger Knative has not reported on yet keeps the XR reconciling.",
			xr:       builtXR,
			observed: deployed(runningSvc, toStruct(t, built.Triggers[0])),
			want: want{
				composed:   deployedComposed(true, false),
				status:     deployedStatus("Deploying", serving),
				ready:      fnv1.Ready_READY_FALSE,
				conditions: progressingConditions("Deploying", "waiting for Knative Eventing: Trigger "+trig(built, 0)+" has no Ready condition yet"),
			},
		},
		"CodeChanged": {
			reason: "Changed code starts a new build and keeps the running Service and Trigger as they are until it succeeds.",
			xr:     lambdaXR(t, changedSpec(t, changed), `{"url":"http://hello.apps.example.com","build":{"identity":"`+building.BuildIdentity+`","jobName":"`+job+`","digest":"`+testDigest+`"}}`),
			observed: map[string]*fnv1.Resource{
				"Broker/events":             {Resource: readyStruct(t, building.Broker)},
				"Service/hello":             {Resource: runningSvc},
				"Trigger/" + trig(built, 0): {Resource: readyStruct(t, built.Triggers[0])},
			},
			required: map[string]*fnv1.Resources{"namespace": {}},
			want: want{
				composed: composedOf(
					composedAs("ConfigMap", rebuilding.BuildContext.Name, false),
					composedAs("Job", rebuilding.BuildJob.Name, false), composedAs("NetworkPolicy", rebuilding.BuildJob.Name, false),
					composedAs("Broker", "events", true),
					serviceRunning(testName, true, built.Image),
					composedAs("Trigger", trig(built, 0), true),
				),
				status:       `{"phase":"Pending","url":"http://hello.apps.example.com","build":{"identity":"` + rebuilding.BuildIdentity + `","jobName":"` + rebuilding.BuildJob.Name + `"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				requirements: map[string]*fnv1.ResourceSelector{"namespace": appsNamespace},
				conditions:   progressingConditions("Building", "starting build "+rebuilding.BuildJob.Name),
			},
		},
		"InvalidSpecKeepsWhatRuns": {
			reason: "A spec render refuses stalls the XR and keeps every composed resource as observed.",
			xr:     lambdaXR(t, "source: {inline: {code: x}}\nruntime: {language: go, handler: handle}\n", `{"phase":"Ready","url":"http://hello.apps.example.com"}`),
			observed: map[string]*fnv1.Resource{
				"Service/hello": {Resource: runningSvc},
			},
			want: want{
				composed:   composedOf(serviceRunning(testName, true, built.Image)),
				status:     `{"phase":"Ready","url":"http://hello.apps.example.com"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("InvalidSpec", renderError(t, "handle")),
				results:    []*fnv1.Result{warning("InvalidSpec", renderError(t, "handle"))},
			},
		},
		"ClaimNamespace": {
			reason:   "A legacy XR's objects go to its claim's namespace and are named after the claim.",
			xr:       legacyXR(t, "XLambda", "hello-x7k2p", helloSpec),
			required: map[string]*fnv1.Resources{"namespace": {}, "broker-events": {}},
			want:     claimFirstPass, // The same objects, in the claim's namespace, named after it.
		},
		"GitSourceRequiresItsSecret": {
			reason:  "A git source's credentials Secret is required before its ref is resolved; nothing is composed meanwhile.",
			xr:      lambdaXR(t, gitSpec, ""),
			sources: resolveGit,
			want: want{
				composed:     composedOf(),
				status:       `{"phase":"Pending"}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   progressingConditions("Waiting", msgWaitRequired),
				requirements: map[string]*fnv1.ResourceSelector{"source-credentials": gitCreds},
			},
		},
		"GitSourceResolved": {
			reason:   "With its Secret a git ref resolves to a commit, which names the build.",
			xr:       lambdaXR(t, gitSpec, ""),
			sources:  resolveGit,
			required: map[string]*fnv1.Resources{"namespace": {}, "source-credentials": {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"git-creds","namespace":"apps"},"data":{"username":"Ym90","password":"czNjcmV0"}}`)}}}},
			want: want{
				composed:     composedOf(composedAs("ConfigMap", gitBuild.BuildContext.Name, false), composedAs("Job", gitBuild.BuildJob.Name, false), composedAs("NetworkPolicy", gitBuild.BuildJob.Name, false)),
				status:       `{"phase":"Pending","build":{"identity":"` + gitBuild.BuildIdentity + `","jobName":"` + gitBuild.BuildJob.Name + `"}}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   progressingConditions("Building", "starting build "+gitBuild.BuildJob.Name),
				requirements: map[string]*fnv1.ResourceSelector{"namespace": appsNamespace, "source-credentials": gitCreds},
			},
		},
		"GitSecretMissing": {
			reason:   "A credentials Secret that does not exist stalls the XR and says which.",
			xr:       lambdaXR(t, gitSpec, ""),
			sources:  resolveGit,
			required: map[string]*fnv1.Resources{"source-credentials": {}},
			want: want{
				composed:     composedOf(),
				status:       `{"phase":"Pending"}`,
				ready:        fnv1.Ready_READY_FALSE,
				conditions:   stalledConditions("SourceUnresolved", "the source credentials Secret git-creds does not exist in namespace apps"),
				results:      []*fnv1.Result{warning("SourceUnresolved", "the source credentials Secret git-creds does not exist in namespace apps")},
				requirements: map[string]*fnv1.ResourceSelector{"source-credentials": gitCreds},
			},
		},
		"GitUnreachableStaysReady": {
			reason:   "A git server that does not answer is retried: nothing changes, and a function that serves stays Ready.",
			xr:       lambdaXR(t, gitSpec, `{"phase":"Ready","url":"http://hello.apps.example.com"}`),
			required: map[string]*fnv1.Resources{"source-credentials": {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"git-creds","namespace":"apps"}}`)}}}},
			sources: SourceResolverFn(func(context.Context, v1alpha1.FunctionSource, map[string][]byte) (string, error) {
				return "", errors.New("cannot reach git repository https://git.example.com/acme/fns: connection refused")
			}),
			observed: map[string]*fnv1.Resource{"Service/hello": {Resource: runningSvc}},
			want: want{
				composed:     composedOf(serviceRunning(testName, true, built.Image)),
				status:       `{"phase":"Ready","url":"http://hello.apps.example.com"}`,
				ready:        fnv1.Ready_READY_TRUE,
				conditions:   progressingConditions("SourceUnreachable", "cannot reach git repository https://git.example.com/acme/fns: connection refused"),
				requirements: map[string]*fnv1.ResourceSelector{"source-credentials": gitCreds},
			},
		},
		"GitRefUnresolvable": {
			reason:  "A git source the provider cannot resolve however often it tries stalls the XR, through the real resolver.",
			xr:      lambdaXR(t, "source: {git: {url: \"ssh://git@git.example.com/acme/fns.git\", ref: main}}\nruntime: {language: go, handler: Handle}\n", ""),
			sources: source.NewResolver(http.DefaultClient),
			want: want{
				composed:   composedOf(),
				status:     `{"phase":"Pending"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("SourceUnresolved", sshRefused),
				results:    []*fnv1.Result{warning("SourceUnresolved", sshRefused)},
			},
		},
		"ManagedFirstPass": {
			reason: "Managed mode composes one LambdaFunction with the XR's spec and its provider config.",
			input:  managedInput,
			xr:     lambdaXR(t, helloSpec, ""),
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Pending"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: progressingConditions("Waiting", msgMRCreating),
			},
		},
		"ManagedTakesOver": {
			reason:   "A composite moved from Direct to Managed mode composes its managed resource alone: what Direct mode composed is not carried forward, and Crossplane deletes it.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"Service/hello": {Resource: runningSvc}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Pending"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: progressingConditions("Waiting", msgMRCreating),
			},
		},
		"ManagedReady": {
			reason:   "Managed mode mirrors the managed resource's observation and readiness.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Ready","url":"http://hello.apps.example.com","image":"` + built.Image + `"},"conditions":[{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, true)),
				status:     `{"phase":"Ready","url":"http://hello.apps.example.com","image":"` + built.Image + `"}`,
				ready:      fnv1.Ready_READY_TRUE,
				conditions: readyConditions("serving at http://hello.apps.example.com"),
			},
		},
		"ManagedBuildFailed": {
			reason:   "A managed resource whose build failed stalls the XR with its reason and message.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Failed"},"conditions":[{"type":"Ready","status":"False","reason":"BuildFailed","message":"build hello-build-1 failed: exit 1","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Failed"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("BuildFailed", "build hello-build-1 failed: exit 1"),
				results:    []*fnv1.Result{warning("BuildFailed", "build hello-build-1 failed: exit 1")},
			},
		},
		"ManagedRevisionFailed": {
			reason:   "A managed resource whose Revision fails stalls the XR with its message.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Failed","failedRevision":"hello-00001"},"conditions":[{"type":"Ready","status":"False","reason":"RevisionFailed","message":"Revision hello-00001: ExitCode1: Container failed with: boom","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Failed","failedRevision":"hello-00001"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("RevisionFailed", "Revision hello-00001: ExitCode1: Container failed with: boom"),
				results:    []*fnv1.Result{warning("RevisionFailed", "Revision hello-00001: ExitCode1: Container failed with: boom")},
			},
		},
		"ManagedNewRevisionFails": {
			reason: "A managed resource that serves while its latest Revision fails keeps the XR Ready and stalls it.",
			input:  managedInput,
			xr:     lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Ready","url":"http://hello.apps.example.com","latestReadyRevision":"hello-00001","failedRevision":"hello-00002"},"conditions":[` +
				`{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"2026-11-22T08:00:00Z"},` +
				`{"type":"LatestRevisionReady","status":"False","reason":"RevisionFailed","message":"Revision hello-00002: ExitCode1: Container failed with: boom; Revision hello-00001 still serves","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, true)),
				status:     `{"phase":"Ready","url":"http://hello.apps.example.com","latestReadyRevision":"hello-00001","failedRevision":"hello-00002"}`,
				ready:      fnv1.Ready_READY_TRUE,
				conditions: stalledConditions("RevisionFailed", "Revision hello-00002: ExitCode1: Container failed with: boom; Revision hello-00001 still serves"),
				results:    []*fnv1.Result{warning("RevisionFailed", "Revision hello-00002: ExitCode1: Container failed with: boom; Revision hello-00001 still serves")},
			},
		},
		"ManagedRouteFailed": {
			reason:   "A managed resource whose route fails stalls the XR: Knative routes nothing new until the spec changes.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Failed"},"conditions":[{"type":"Ready","status":"False","reason":"RouteFailed","message":"RevisionMissing: Revision hello-00009 does not exist","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Failed"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("RouteFailed", "RevisionMissing: Revision hello-00009 does not exist"),
				results:    []*fnv1.Result{warning("RouteFailed", "RevisionMissing: Revision hello-00009 does not exist")},
			},
		},
		"ManagedSecretMissing": {
			reason:   "A managed resource held for a Secret that does not exist stalls the XR: only a user can create it.",
			input:    managedInput,
			xr:       lambdaXR(t, helloSpec, ""),
			observed: map[string]*fnv1.Resource{"LambdaFunction/hello": {Resource: mr(`{"atProvider":{"phase":"Pending"},"conditions":[{"type":"Ready","status":"False","reason":"SecretMissing","message":"Secret regcred (image pull secret) does not exist in namespace apps","lastTransitionTime":"2026-11-22T08:00:00Z"}]}`)}},
			want: want{
				composed:   composedOf(composedAs("LambdaFunction", testName, false)),
				status:     `{"phase":"Pending"}`,
				ready:      fnv1.Ready_READY_FALSE,
				conditions: stalledConditions("SecretMissing", "Secret regcred (image pull secret) does not exist in namespace apps"),
				results:    []*fnv1.Result{warning("SecretMissing", "Secret regcred (image pull secret) does not exist in namespace apps")},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.input == "" {
				tc.input = testInput
			}
			if tc.sources == nil {
				tc.sources = noSources(t)
			}
			req := &fnv1.RunFunctionRequest{
				Input:             codectest.Struct(t, tc.input),
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, tc.xr)}, Resources: tc.observed},
				RequiredResources: tc.required,
			}
			f := &Function{log: logging.NewNopLogger(), sources: tc.sources}
			rsp, err := run(t, f, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			status := tc.want.status
			if !strings.Contains(tc.xr, "claimRef") {
				// Namespaced XRs report the generation a pass acted on.
				status = strings.TrimSuffix(status, "}") + `,"observedGeneration":1}`
			}
			// A pass that leaves the composite Reconciling asks to be
			// called again soon.
			ttl := responseTTL
			if len(tc.want.conditions) > 0 && tc.want.conditions[0].GetType() == typeReconciling && tc.want.conditions[0].GetStatus() == fnv1.Status_STATUS_CONDITION_TRUE {
				ttl = workingTTL
			}
			want := &fnv1.RunFunctionResponse{
				Meta:       &fnv1.ResponseMeta{Ttl: durationpb.New(ttl)},
				Desired:    &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, `{"status":`+status+`}`), Ready: tc.want.ready}},
				Conditions: tc.want.conditions,
				Results:    tc.want.results,
			}
			if tc.want.requirements != nil {
				want.Requirements = &fnv1.Requirements{Resources: tc.want.requirements}
			}
			if diff := cmp.Diff(want, rsp, protocmp.Transform(), protocmp.IgnoreFields(&fnv1.State{}, "resources")); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.composed, summarise(t, rsp)); diff != "" {
				t.Errorf("%s\nRunFunction(...): desired composed resources: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func progressingConditions(reason, msg string) []*fnv1.Condition {
	return []*fnv1.Condition{
		{Type: typeReconciling, Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: reason, Message: ptr.To(msg), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
		{Type: typeStalled, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: reason, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
	}
}

func stalledConditions(reason, msg string) []*fnv1.Condition {
	return []*fnv1.Condition{
		{Type: typeReconciling, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: reason, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
		{Type: typeStalled, Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: reason, Message: ptr.To(msg), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
	}
}

func readyConditions(msg string) []*fnv1.Condition {
	return []*fnv1.Condition{
		{Type: typeReconciling, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: string(xpv2.ReasonAvailable), Message: ptr.To(msg), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
		{Type: typeStalled, Status: fnv1.Status_STATUS_CONDITION_FALSE, Reason: string(xpv2.ReasonAvailable), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()},
	}
}

func warning(reason, msg string) *fnv1.Result {
	return &fnv1.Result{Severity: fnv1.Severity_SEVERITY_WARNING, Message: msg, Reason: ptr.To(reason), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
}

// composedAs is what a test expects of a desired composed resource.
func composedAs(kind, name string, ready bool) composedSummary {
	r := "READY_FALSE"
	if ready {
		r = "READY_TRUE"
	}
	return composedSummary{Kind: kind, Namespace: testNS, Name: name, Ready: r}
}

// serviceRunning is what a test expects of a desired Knative Service.
func serviceRunning(name string, ready bool, image string) composedSummary {
	s := composedAs("Service", name, ready)
	s.Image = image
	return s
}

// composedOf keys expectations as the function names composed resources.
func composedOf(cs ...composedSummary) map[string]composedSummary {
	out := make(map[string]composedSummary, len(cs))
	for _, c := range cs {
		out[c.Kind+"/"+c.Name] = c
	}
	return out
}

// summarise reads what the tests check of each desired composed resource.
func summarise(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]composedSummary {
	t.Helper()
	out := map[string]composedSummary{}
	for name, r := range rsp.GetDesired().GetResources() {
		u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
		s := composedSummary{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Ready: r.GetReady().String()}
		if u.GetKind() == "Service" {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			s.Image, _, _ = unstructured.NestedString(cs[0].(map[string]any), "image") //nolint:forcetypeassert // A container of a composed Service.
		}
		out[name] = s
	}
	return out
}

func parseSpec(t testing.TB, y string) v1alpha1.LambdaFunctionParameters {
	t.Helper()
	var p v1alpha1.LambdaFunctionParameters
	if err := yaml.UnmarshalStrict([]byte(y), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func changedSpec(t testing.TB, p v1alpha1.LambdaFunctionParameters) string {
	t.Helper()
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustRender(t testing.TB, in render.FunctionInput) *render.Objects {
	t.Helper()
	objs, err := render.Function(in)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// renderError is render's refusal of a Go handler.
func renderError(t testing.TB, handler string) string {
	t.Helper()
	_, err := render.ResolveRuntime(&v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguageGo), Handler: ptr.To(handler)}, render.BuildEnv{})
	if err == nil {
		t.Fatalf("Go handler %s: render accepts it", handler)
	}
	return err.Error()
}

// run runs f's pass of req as the function's gRPC server reads it, and
// reads its answer as Crossplane does: both after a trip through the wire
// format, since requests keep and answers carry Structs in their encoding.
func run(t testing.TB, f *Function, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	t.Helper()
	rsp, err := f.RunFunction(context.Background(), served(t, req))
	if err != nil {
		return nil, err
	}
	return codectest.OnWire(t, rsp), nil
}

// served is req as the function's gRPC server reads it.
func served(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	t.Helper()
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	read := &fnv1.RunFunctionRequest{}
	if err := codec.NewCodec(&codec.Leases{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, read); err != nil {
		t.Fatal(err)
	}
	return read
}

// runDirect runs the function in Direct mode with the test Input for a
// Lambda XR of the spec, given the composed resources observed.
func runDirect(t testing.TB, spec string, observed map[string]*fnv1.Resource) *fnv1.RunFunctionResponse {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Input:             codectest.Struct(t, testInput),
		Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, spec, ""))}, Resources: observed},
		RequiredResources: map[string]*fnv1.Resources{"namespace": {}},
	}
	rsp, err := run(t, &Function{log: logging.NewNopLogger(), sources: noSources(t)}, req)
	if err != nil {
		t.Fatal(err)
	}
	return rsp
}

// lambdaXR is a namespaced Lambda with a spec in YAML and a status in JSON.
func lambdaXR(t testing.TB, spec, status string) string {
	t.Helper()
	xr := map[string]any{
		"apiVersion": "platform.lambda.crossplane.io/v1alpha1", "kind": "Lambda",
		"metadata": map[string]any{"name": testName, "namespace": testNS, "generation": 1},
		"spec":     fromYAML(t, spec),
	}
	if status != "" {
		xr["status"] = fromYAML(t, status)
	}
	return toJSON(t, xr)
}

// legacyXR is a cluster-scoped XR made for a claim named testName in testNS.
func legacyXR(t testing.TB, kind, name, spec string) string {
	t.Helper()
	return toJSON(t, map[string]any{
		"apiVersion": "platform.lambda.crossplane.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "labels": map[string]any{"crossplane.io/claim-name": testName, "crossplane.io/claim-namespace": testNS}},
		"spec":     withClaimRef(fromYAML(t, spec), kind, testNS, testName),
	})
}

// withClaimRef is a legacy XR's spec with the claim reference Crossplane
// binds it with.
func withClaimRef(spec map[string]any, kind, ns, name string) map[string]any {
	spec["claimRef"] = map[string]any{"apiVersion": "platform.lambda.crossplane.io/v1alpha1", "kind": strings.TrimPrefix(kind, "X") + "Claim", "namespace": ns, "name": name}
	return spec
}

func fromYAML(t testing.TB, y string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func toStruct(t testing.TB, o any) *structpb.Struct {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readyStruct is an object as Knative reports it once Ready.
func readyStruct(t testing.TB, o any) *structpb.Struct {
	t.Helper()
	s := toStruct(t, o).AsMap()
	s["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	st, err := structpb.NewStruct(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// serviceRolledOut is a Service as Knative reports it after one rollout per
// fault (nil serves), in the order given.
func serviceRolledOut(t testing.TB, o *servingv1.Service, faults ...playact.RevisionFault) *structpb.Struct {
	t.Helper()
	svc := o.DeepCopy()
	playact.RollEach(svc, faults...)
	return toStruct(t, svc)
}

// triggerSettled is a Trigger as Knative Eventing reports it, failed by the
// fault.
func triggerSettled(t testing.TB, o *eventingv1.Trigger, fault playact.TriggerFault) *structpb.Struct {
	t.Helper()
	tr := o.DeepCopy()
	playact.SettleTrigger(tr, fault)
	return toStruct(t, tr)
}

func jobWithStatus(t testing.TB, job *batchv1.Job, st batchv1.JobStatus) *structpb.Struct {
	t.Helper()
	j := job.DeepCopy()
	j.Status = st
	return toStruct(t, j)
}

func finished(c batchv1.JobConditionType) batchv1.JobStatus {
	return batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: c, Status: corev1.ConditionTrue}}}
}

func podTerminated(t testing.TB, job string, code int32, msg string) *structpb.Struct {
	t.Helper()
	return toStruct(t, &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: job + "-abcde", Namespace: testNS, Labels: map[string]string{"batch.kubernetes.io/job-name": job}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "kaniko", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}},
		}}},
	})
}

func trig(objs *render.Objects, i int) string { return objs.Triggers[i].Name }

// noSources fails a test that resolves a source it did not expect to.
func noSources(t testing.TB) SourceResolver {
	return SourceResolverFn(func(context.Context, v1alpha1.FunctionSource, map[string][]byte) (string, error) {
		t.Error("resolved a source")
		return "", nil
	})
}

// TestRunFunctionRefuses checks that what the function cannot work with is
// a fatal result that says why: Crossplane then applies nothing of the pass,
// so nothing running changes.
func TestRunFunctionRefuses(t *testing.T) {
	cases := map[string]struct {
		reason string
		input  string
		xr     string
		want   string
	}{
		"UnknownInputField": {
			reason: "An Input field the function does not know is refused, not ignored.",
			input:  `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","registry":"r.test"}`,
			xr:     lambdaXR(t, helloSpec, ""),
			want:   errInput,
		},
		"UnknownKind": {
			reason: "A composite of a kind the function does not serve is refused by name.",
			input:  testInput,
			xr:     `{"apiVersion":"example.org/v1","kind":"Database","metadata":{"name":"db","namespace":"apps"},"spec":{}}`,
			want:   "composite resources of kind Database are not served by this function",
		},
		"LegacyWithoutClaim": {
			reason: "A cluster-scoped XR made without a claim has no namespace for its objects.",
			input:  testInput,
			xr:     `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"XLambda","metadata":{"name":"hello"},"spec":{}}`,
			want:   "XLambda hello is cluster scoped and has no claim",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Input: codectest.Struct(t, tc.input), Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, tc.xr)}}}
			f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
			rsp, err := run(t, f, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			rs := rsp.GetResults()
			if len(rs) != 1 || rs[0].GetSeverity() != fnv1.Severity_SEVERITY_FATAL || !strings.Contains(rs[0].GetMessage(), tc.want) {
				t.Errorf("%s\nRunFunction(...): results %v, want one fatal result containing %q", tc.reason, rs, tc.want)
			}
			if len(rsp.GetDesired().GetResources()) != 0 {
				t.Errorf("%s\nRunFunction(...): desired resources %v, want none", tc.reason, rsp.GetDesired().GetResources())
			}
		})
	}
}

// TestUnknownModeStalls checks that an Input whose mode the function does
// not know stalls the composite with InvalidSpec and keeps what runs.
func TestUnknownModeStalls(t *testing.T) {
	req := &fnv1.RunFunctionRequest{
		Input: codectest.Struct(t, `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","mode":"Fast"}`),
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, helloSpec, ""))},
			Resources: map[string]*fnv1.Resource{"Broker/events": {Resource: readyStruct(t, &eventingv1.Broker{
				TypeMeta:   metav1.TypeMeta{APIVersion: "eventing.knative.dev/v1", Kind: "Broker"},
				ObjectMeta: metav1.ObjectMeta{Name: "events", Namespace: testNS},
			})}},
		},
	}
	f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
	rsp, err := run(t, f, req)
	if err != nil {
		t.Fatal(err)
	}
	want := stalledConditions("InvalidSpec", `unknown mode "Fast": want Direct or Managed`)
	if diff := cmp.Diff(want, rsp.GetConditions(), protocmp.Transform()); diff != "" {
		t.Errorf("RunFunction(...): conditions: -want, +got:\n%s", diff)
	}
	wantComposed := composedOf(composedAs("Broker", "events", true))
	if diff := cmp.Diff(wantComposed, summarise(t, rsp)); diff != "" {
		t.Errorf("RunFunction(...): desired composed resources: -want, +got:\n%s", diff)
	}
}

// supportSpec is an agent with its own Broker that forwards escalations to
// the supervisor agent's Broker.
const supportSpec = `
image: {repository: ghcr.io/acme/support-agent, tag: v0.9.0}
ai: {provider: ollama, endpoint: "http://ollama.ai.svc:11434", model: "llama3.2:3b"}
eventing:
  broker: {name: support, create: true}
  subscriptions:
  - {name: tickets, eventType: com.example.ticket.opened}
  forwards:
  - name: escalations
    eventTypes: [com.example.ticket.escalated]
    target: {agent: supervisor}
`

// TestRunFunctionAgent checks that an Agent's forward to another agent
// requires that agent, then its Broker, and composes the agent with the
// Broker's address once Crossplane has supplied both.
func TestRunFunctionAgent(t *testing.T) {
	var spec v1alpha1.LambdaAgentParameters
	if err := yaml.UnmarshalStrict([]byte(supportSpec), &spec); err != nil {
		t.Fatal(err)
	}
	const (
		supportAddr    = "http://broker-ingress.knative-eventing.svc/apps/support"
		supervisorAddr = "http://broker-ingress.knative-eventing.svc/apps/supervisor"
	)
	objs, err := render.Agent(render.AgentInput{Namespace: testNS, Name: "support", Spec: spec, Observed: render.Observed{ForwardAddresses: map[string]string{
		"broker/support": supportAddr, "agent/supervisor": supervisorAddr,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	broker := func(name, addr string) *fnv1.Resources { return brokerAt(t, testNS, name, addr) }
	sel := func(apiVersion, kind, name string) *fnv1.ResourceSelector {
		return selectName(apiVersion, kind, testNS, name)
	}
	xr := agentXR(t, "support", supportSpec)

	cases := map[string]agentPass{
		"FirstAsk": {
			reason:   "Before Crossplane answers, the agent's own Broker and the target agent are required and nothing is composed.",
			composed: composedOf(),
			requirements: map[string]*fnv1.ResourceSelector{
				"broker-support":           sel("eventing.knative.dev/v1", "Broker", "support"),
				"forward-agent-supervisor": sel("platform.lambda.crossplane.io/v1alpha1", "Agent", "supervisor"),
			},
			conditions: progressingConditions("Waiting", msgWaitRequired),
		},
		"Addressed": {
			reason: "With the target agent and both Brokers supplied, the agent is composed; its own Broker exists already and is used, not composed.",
			required: map[string]*fnv1.Resources{
				"broker-support":           broker("support", supportAddr),
				"broker-supervisor":        broker("supervisor", supervisorAddr),
				"forward-agent-supervisor": {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"platform.lambda.crossplane.io/v1alpha1","kind":"Agent","metadata":{"name":"supervisor","namespace":"apps"},"spec":{"eventing":{"broker":{"name":"supervisor"}}}}`)}}},
			},
			composed: composedOf(append([]composedSummary{serviceRunning("support", false, objs.Image)}, triggersOf(objs)...)...),
			requirements: map[string]*fnv1.ResourceSelector{
				"broker-support":           sel("eventing.knative.dev/v1", "Broker", "support"),
				"broker-supervisor":        sel("eventing.knative.dev/v1", "Broker", "supervisor"),
				"forward-agent-supervisor": sel("platform.lambda.crossplane.io/v1alpha1", "Agent", "supervisor"),
			},
			conditions: progressingConditions("Deploying", "waiting for the Knative Service to be Ready: the Knative Service does not exist yet"),
		},
	}
	runAgentPasses(t, xr, cases)
}

// brokerAt is a Broker as Crossplane supplies it when required: reporting
// its address.
func brokerAt(t testing.TB, namespace, name, addr string) *fnv1.Resources {
	t.Helper()
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"eventing.knative.dev/v1","kind":"Broker","metadata":{"name":"`+name+`","namespace":"`+namespace+`"},"status":{"address":{"url":"`+addr+`"}}}`)}}}
}

// selectName is how the function requires one object by name.
func selectName(apiVersion, kind, namespace, name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Namespace: ptr.To(namespace), Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
}

// agentXR is a v2 Agent of the spec, in the test namespace.
func agentXR(t testing.TB, name, spec string) string {
	t.Helper()
	return toJSON(t, map[string]any{
		"apiVersion": "platform.lambda.crossplane.io/v1alpha1", "kind": "Agent",
		"metadata": map[string]any{"name": name, "namespace": testNS, "generation": 1},
		"spec":     fromYAML(t, spec),
	})
}

// An agentPass is one pass of the function over an Agent: what Crossplane
// supplies, and what the function composes, requires and says.
type agentPass struct {
	reason       string
	required     map[string]*fnv1.Resources
	composed     map[string]composedSummary
	requirements map[string]*fnv1.ResourceSelector
	conditions   []*fnv1.Condition
}

// runAgentPasses runs the function over the Agent XR once per pass.
func runAgentPasses(t *testing.T, xr string, cases map[string]agentPass) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{
				Input:             codectest.Struct(t, testInput),
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, xr)}},
				RequiredResources: tc.required,
			}
			f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
			rsp, err := run(t, f, req)
			if err != nil {
				t.Fatalf("%s\nRunFunction(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.composed, summarise(t, rsp)); diff != "" {
				t.Errorf("%s\nRunFunction(...): desired composed resources: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.requirements, rsp.GetRequirements().GetResources(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): requirements: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.conditions, rsp.GetConditions(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): conditions: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// triggersOf is what a test expects of what delivers a workload's events:
// an agent's relay, and its Triggers.
func triggersOf(objs *render.Objects) []composedSummary {
	out := make([]composedSummary, 0, len(objs.Triggers)+1)
	if r := objs.Relay; r != nil {
		out = append(out, serviceRunning(r.Name, false, r.Spec.Template.Spec.Containers[0].Image))
	}
	for _, tr := range objs.Triggers {
		out = append(out, composedAs("Trigger", tr.Name, false))
	}
	return out
}
