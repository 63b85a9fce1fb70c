package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
)

const (
	msgMRCreating = "waiting for the provider to observe the managed resource"
	msgMRNotReady = "the managed resource is not Ready yet"
)

// stallReasons are the managed resource's Ready reasons that need a user.
var stallReasons = map[xpv2.ConditionReason]bool{
	v1alpha1.ReasonBuildFailed: true, v1alpha1.ReasonBuildNotAdmitted: true, v1alpha1.ReasonInvalid: true, v1alpha1.ReasonSourceUnresolved: true,
	v1alpha1.ReasonSecretMissing: true, v1alpha1.ReasonBrokerMissing: true, v1alpha1.ReasonNameConflict: true,
	v1alpha1.ReasonRevisionFailed: true, v1alpha1.ReasonEventingFailed: true,
}

// managed composes one LambdaFunction or LambdaAgent with the composite's
// spec as its forProvider, and mirrors its observation and readiness.
func (p *pass) managed(in *v1beta1.Input) (outcome, error) {
	meta := metav1.ObjectMeta{Namespace: p.xr.namespace, Name: p.xr.name}
	spec := xpv2.ManagedResourceSpec{ProviderConfigReference: in.ProviderConfigRef}
	var mr client.Object
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
		return outcome{}, err
	}
	ob, ok := p.observed[nameOf(mr)]
	if !ok {
		return progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgMRCreating), nil
	}
	if at := structAt(ob, "status", "atProvider"); at != nil {
		p.status = at
	}
	phase := stringAt(ob, "status", "atProvider", "phase")
	c := condition(ob, string(xpv2.TypeReady))
	reason := xpv2.ConditionReason(stringAt(c, "reason"))
	switch {
	case c == nil:
		return progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgMRCreating), nil
	case stringAt(c, "status") == "True":
		if lr := condition(ob, string(v1alpha1.TypeLatestRevisionReady)); stringAt(lr, "status") == "False" {
			return failingWhileServing(stringAt(lr, "message")), nil
		}
		return ready(stringAt(ob, "status", "atProvider", "url")), nil
	case stallReasons[reason]:
		return stalled(reason, stringAt(c, "message")), nil
	}
	msg := stringAt(c, "message")
	if msg == "" {
		msg = msgMRNotReady
	}
	if phase == "" {
		phase = string(v1alpha1.PhasePending)
	}
	return progressing(v1alpha1.Phase(phase), reason, msg), nil
}
