//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// Handlers the lifecycle deploys in turn: each answers the order event
// with what names it, so a reply tells which Revision served it.
const (
	handlerV2 = "def handler(event, context):\n    return {\"accepted\": event.get(\"data\", {}).get(\"id\"), \"version\": 2}\n"
	// crashing fails at import, before the wrapper listens.
	crashing = "raise RuntimeError(\"refusing to start: version 3\")\n\ndef handler(event, context):\n    return {}\n"
)

// A lifecycle is the first function make run deployed, as the provider
// runs it on the local cluster, and how to reach it.
type lifecycle struct {
	kube  client.Client
	key   client.ObjectKey
	fnURL string
}

// newLifecycle reads the local cluster's kubeconfig that make run
// printed.
func newLifecycle(t *testing.T, kubeconfig, fnURL string) lifecycle {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return lifecycle{kube: testkit.Client(t, cfg), key: client.ObjectKey{Namespace: "functions", Name: "hello"}, fnURL: fnURL}
}

// run takes the first function through what a team does to it next, on
// the real cluster and through the provider: a code change builds once
// and its Revision serves; a scale change builds nothing; a rollback to
// the first Revision behind a tag, with the latest at its own tag's URL,
// builds nothing either; a version that
// crashes at start and a build that fails are reported in the kubelet's
// and Kaniko's words while the Revision before serves; and deleting it
// leaves none of its objects.
func (l lifecycle) run(ctx context.Context, t *testing.T) {
	first := l.function(ctx, t).Status.AtProvider.LatestReadyRevision
	builds := l.builds(ctx, t)
	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) { p.Source.Inline.Code = handlerV2 })
	start := time.Now()
	l.replies(ctx, t, "the new code's Revision serves", `{"accepted":42,"version":2}`)
	t.Logf("the new code served %s after the change", time.Since(start).Round(time.Second))
	if got := l.builds(ctx, t); got != builds+1 {
		t.Errorf("a code change made %d builds; want 1", got-builds)
	}
	served := l.function(ctx, t).Status.AtProvider.LatestReadyRevision

	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) {
		p.Scaling = &v1alpha1.Scaling{MaxReplicas: ptr.To[int32](3)}
	})
	wait.Until(ctx, t, "a Revision of the new scale serves", func() string {
		fn := l.function(ctx, t)
		if r := fn.Status.AtProvider.LatestReadyRevision; r == served || !fn.GetCondition(xpv2.TypeReady).Equal(xpv2.Available()) {
			return fmt.Sprintf("Revision %s, %+v", r, fn.GetCondition(xpv2.TypeReady))
		}
		return ""
	})
	if got := l.builds(ctx, t); got != builds+1 {
		t.Errorf("a scale change made %d builds; want none", got-builds-1)
	}

	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) { p.Traffic = canaryTraffic(first) })
	canary(ctx, t, l.fnURL, func() []v1alpha1.TrafficObservation { return l.function(ctx, t).Status.AtProvider.Traffic })
	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) { p.Traffic = nil })
	l.replies(ctx, t, "the latest Revision takes every request again", `{"accepted":42,"version":2}`)
	if got := l.builds(ctx, t); got != builds+1 {
		t.Errorf("a traffic split made %d builds; want none", got-builds-1)
	}

	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) { p.Source.Inline.Code = crashing })
	l.failsServing(ctx, t, "the crashing version", v1alpha1.TypeLatestRevisionReady, v1alpha1.ReasonRevisionFailed, "refusing to start: version 3")

	l.update(ctx, t, func(p *v1alpha1.LambdaFunctionParameters) {
		p.Source.Inline.Code = handlerV2
		p.Source.Inline.Dependencies = "no-such-package==1.0\n"
	})
	l.failsServing(ctx, t, "the failed build", xpv2.TypeReady, v1alpha1.ReasonBuildFailed, "error building image")

	deleted(ctx, t, l.kube, v1alpha1.LambdaFunctionKind, &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: l.key.Namespace, Name: l.key.Name}}, render.DefaultBroker)
}

// canaryTraffic rolls back to the first Revision without a build, behind
// a tag, while the latest is tried at its own tag's URL.
func canaryTraffic(first string) *v1alpha1.Traffic {
	return &v1alpha1.Traffic{Targets: []v1alpha1.TrafficTarget{
		{RevisionName: &first, Percent: 100, Tag: ptr.To("stable")},
		{Percent: 0, Tag: ptr.To("canary")},
	}}
}

// canary checks canaryTraffic through Knative's Route and the node's
// ingress: the function's URL and the stable tag's answer as the first
// Revision did, and the canary tag's URL, read from the traffic status, as
// the latest does.
func canary(ctx context.Context, t *testing.T, fnURL string, traffic func() []v1alpha1.TrafficObservation) {
	t.Helper()
	replies(ctx, t, fnURL, "the first Revision takes every request", `{"accepted":42}`)
	tags := map[string]string{}
	wait.Until(ctx, t, "the traffic status has both tags' URLs", func() string {
		for _, tr := range traffic() {
			tags[tr.Tag] = tr.URL
		}
		if tags["stable"] == "" || tags["canary"] == "" {
			return fmt.Sprintf("%v", tags)
		}
		return ""
	})
	replies(ctx, t, tags["stable"], "the stable tag's URL answers as the first Revision", `{"accepted":42}`)
	replies(ctx, t, tags["canary"], "the canary tag's URL answers as the latest Revision", `{"accepted":42,"version":2}`)
}

// failsServing waits until the function's condition of type typ has reason
// and a message that says want, as the real component wrote it, and checks
// that the Revision before still answers.
func (l lifecycle) failsServing(ctx context.Context, t *testing.T, what string, typ xpv2.ConditionType, reason xpv2.ConditionReason, want string) {
	t.Helper()
	start := time.Now()
	wait.Until(ctx, t, what+" is reported", func() string {
		c := l.function(ctx, t).GetCondition(typ)
		if c.Reason != reason || !strings.Contains(c.Message, want) {
			return fmt.Sprintf("%s %s: %q", typ, c.Reason, c.Message)
		}
		return ""
	})
	c := l.function(ctx, t).GetCondition(typ)
	t.Logf("%s was reported %s after the change: %s", what, time.Since(start).Round(time.Second), c.Message)
	l.replies(ctx, t, "the Revision before still serves", `{"accepted":42,"version":2}`)
}

// nothingLeft waits until none of the objects of the deleted workload of a
// kind key names is left: its Services (an agent's relay's too), their
// Revisions' pods, Triggers, schedules, builds with their pods, contexts
// and network fences, and the Broker it created, if it names one.
func nothingLeft(ctx context.Context, t *testing.T, kube client.Client, kind string, key client.ObjectKey, broker string) {
	t.Helper()
	lists := []client.ObjectList{
		&servingv1.ServiceList{}, &eventingv1.TriggerList{}, &sourcesv1.PingSourceList{}, &batchv1.JobList{},
		&corev1.ConfigMapList{}, &networkingv1.NetworkPolicyList{}, &corev1.PodList{},
	}
	for _, list := range lists {
		wait.Until(ctx, t, fmt.Sprintf("no %T of %s is left", list, key.Name), func() string {
			if err := kube.List(ctx, list, client.InNamespace(key.Namespace), ownLabels(kind, key)); err != nil {
				return err.Error()
			}
			if n := apimeta.LenList(list); n > 0 {
				return fmt.Sprintf("%d left", n)
			}
			return ""
		})
	}
	if broker == "" {
		return
	}
	wait.Until(ctx, t, "the Broker of "+key.Name+" is gone", func() string {
		return absent(ctx, kube, client.ObjectKey{Namespace: key.Namespace, Name: broker}, &eventingv1.Broker{})
	})
}

// replies waits until the function answers the order event with want.
func (l lifecycle) replies(ctx context.Context, t *testing.T, what, want string) {
	t.Helper()
	replies(ctx, t, l.fnURL, what, want)
}

// replies waits until the function at fnURL answers the order event with
// want.
func replies(ctx context.Context, t *testing.T, fnURL, what, want string) {
	t.Helper()
	wait.Until(ctx, t, what, func() string {
		status, body, err := node.CallFunction(ctx, fnURL, "com.example.order.created", `{"id": 42}`)
		if got := strings.Join(strings.Fields(body), ""); err != nil || status != http.StatusOK || got != want {
			return fmt.Sprintf("%d %q (%v)", status, body, err)
		}
		return ""
	})
}

// builds counts the function's build Jobs.
func (l lifecycle) builds(ctx context.Context, t *testing.T) int {
	t.Helper()
	return builds(ctx, t, l.kube, l.key)
}

// builds counts the build Jobs of the function key names, a LambdaFunction
// or a Lambda, whose objects render labels alike.
func builds(ctx context.Context, t *testing.T, kube client.Client, key client.ObjectKey) int {
	t.Helper()
	jobs := &batchv1.JobList{}
	if err := kube.List(ctx, jobs, client.InNamespace(key.Namespace), ownLabels(v1alpha1.LambdaFunctionKind, key)); err != nil {
		t.Fatal(err)
	}
	return len(jobs.Items)
}

// ownLabels select the objects render made for the function key names.
func ownLabels(kind string, key client.ObjectKey) client.MatchingLabels {
	return client.MatchingLabels{render.LabelKind: kind, render.LabelResource: key.Name}
}

// function reads the function.
func (l lifecycle) function(ctx context.Context, t *testing.T) *v1alpha1.LambdaFunction {
	t.Helper()
	fn := &v1alpha1.LambdaFunction{}
	if err := l.kube.Get(ctx, l.key, fn); err != nil {
		t.Fatal(err)
	}
	return fn
}

// update changes the function's spec, as kubectl edit does.
func (l lifecycle) update(ctx context.Context, t *testing.T, change func(*v1alpha1.LambdaFunctionParameters)) {
	t.Helper()
	wait.Until(ctx, t, "the change is applied", func() string {
		fn := l.function(ctx, t)
		change(&fn.Spec.ForProvider)
		return wait.ErrString(l.kube.Update(ctx, fn))
	})
}
