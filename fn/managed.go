package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
)

const (
	msgMRCreating = "waiting for the provider to observe the managed resource"
	msgMRNotReady = "the managed resource is not Ready yet"
)

// managed composes one LambdaFunction or LambdaAgent with the composite's
// spec as its forProvider, and mirrors its observation and readiness.
func (p *pass) managed(in *v1beta1.Input) (observe.Verdict, error) {
	meta := metav1.ObjectMeta{Namespace: p.xr.namespace, Name: p.xr.name}
	spec := xpv2.ManagedResourceSpec{ProviderConfigReference: in.ProviderConfigRef}
	var mr kube.Object
	if p.xr.agent {
		mr = &v1alpha1.LambdaAgent{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.LambdaAgentKind},
			ObjectMeta: meta,
			Spec:       v1alpha1.LambdaAgentSpec{ManagedResourceSpec: spec, ForProvider: p.xr.agentXR.Spec.LambdaAgentParameters},
		}
	} else {
		if r, ok := p.xr.lambdaXR.GetAnnotations()[v1alpha1.AnnotationRebuild]; ok {
			meta.Annotations = map[string]string{v1alpha1.AnnotationRebuild: r}
		}
		mr = &v1alpha1.LambdaFunction{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.LambdaFunctionKind},
			ObjectMeta: meta,
			Spec:       v1alpha1.LambdaFunctionSpec{ManagedResourceSpec: spec, ForProvider: p.xr.lambdaXR.Spec.LambdaFunctionParameters},
		}
	}
	if err := p.compose(mr); err != nil {
		return observe.Verdict{}, err
	}
	// The managed resource takes over from what Direct mode composed.
	p.carried = none
	ob, ok := p.observedOf(mr)
	if !ok {
		return p.held(v1alpha1.ReasonWaiting, msgMRCreating), nil
	}
	if at := codec.StructAt(ob, "status", "atProvider"); at != nil {
		p.status = at
	}
	// The managed resource's verdict, as its phase and Ready condition say.
	c := condition(ob, string(xpv2.TypeReady))
	switch {
	case c == nil:
		return p.held(v1alpha1.ReasonWaiting, msgMRCreating), nil
	case codec.StringAt(c, "status") == "True":
		if lr := condition(ob, string(v1alpha1.TypeLatestRevisionReady)); codec.StringAt(lr, "status") == "False" {
			return observe.ServingWhileFailing(codec.StringAt(lr, "message")), nil
		}
		return observe.Serving(codec.StringAt(ob, "status", "atProvider", "url")), nil
	}
	msg := codec.StringAt(c, "message")
	if msg == "" {
		msg = msgMRNotReady
	}
	return observe.Held(v1alpha1.Phase(codec.StringAt(ob, "status", "atProvider", "phase")), xpv2.ConditionReason(codec.StringAt(c, "reason")), msg), nil
}
