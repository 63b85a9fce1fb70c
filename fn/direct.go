package main

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// Keys of the resources a Direct pass requires.
const (
	requireProviderConfig = "provider-config"
	requireNamespace      = "namespace"
	requireCredentials    = "source-credentials"
	requireBuildPods      = "build-pods"
	requireForwardAgent   = "forward-agent-"
	requireBroker         = "broker-"
)

const (
	msgWaitRequired       = "waiting for Crossplane to supply the resources this pass requires"
	msgFmtNoProvider      = "the %s %s that the function's Input names does not exist"
	msgFmtNoSecret        = "the source credentials Secret %s does not exist in namespace %s"
	msgFmtStarting        = "starting build %s"
	msgFmtBuilding        = "building %s in Job %s"
	msgFmtBuildFails      = "build %s failed: %s"
	msgFmtServiceNotReady = "waiting for the Knative Service to be Ready: %s"
	msgNoService          = "the Knative Service does not exist yet"
)

// directFunction composes a Lambda's build, Knative Service, Broker and
// Triggers. The Service appears once the build of the current code has
// succeeded; until then a Service already running keeps its image.
func (p *pass) directFunction(ctx context.Context, in *v1beta1.Input, sources SourceResolver, buildDeny []string) (outcome, error) {
	xr := p.xr.lambdaXR
	spec := xr.Spec.LambdaFunctionParameters
	rin := render.FunctionInput{Namespace: p.xr.namespace, Name: p.xr.name, Spec: spec, Rebuild: xr.GetAnnotations()[v1alpha1.AnnotationRebuild]}
	status := &xr.Status.LambdaFunctionObservation
	// What was observed stays in the status when this pass stops early.
	if err := p.setStatus(status); err != nil {
		return outcome{}, err
	}
	if b := status.Build; b != nil && b.Digest != "" {
		rin.Observed.Build = &render.Build{Identity: b.Identity, Digest: b.Digest}
	}

	d, o, ok, err := p.defaults(in)
	if err != nil || !ok {
		p.keep(all)
		return o, err
	}
	rin.Defaults = d
	rin.Defaults.Network.Deny = buildDeny
	if spec.Source.Git != nil || spec.Source.S3 != nil {
		secret, o, ok, err := p.credentials(spec.Source.CredentialsRef())
		if err != nil || !ok {
			p.keep(all)
			return o, err
		}
		id, err := sources.Resolve(ctx, spec.Source, secret)
		switch {
		case source.IsUnresolvable(err):
			p.keep(all)
			return stalled(v1alpha1.ReasonSourceUnresolved, err.Error()), nil
		case err != nil:
			// A server that does not answer now may later.
			p.keep(all)
			return retrying(status.Phase, v1alpha1.ReasonSourceUnreachable, err.Error()), nil
		}
		rin.Observed.SourceIdentity = id
	}
	objs, err := render.Function(rin)
	if err != nil {
		p.keep(all)
		return stalled(v1alpha1.ReasonInvalid, err.Error()), nil
	}

	if objs.BuildJob != nil {
		if _, started := p.observed[nameOf(objs.BuildJob)]; !started {
			if o, ok, err := p.buildAdmitted(); err != nil || !ok {
				p.keep(all)
				return o, err
			}
		}
		o, digest, err := p.followBuild(objs, status)
		if err != nil {
			return outcome{}, err
		}
		// The build's objects (and the Broker, which does not wait for it)
		// stay desired while it runs, after it failed, and for the one pass
		// after it succeeded, until its digest is in the status: the Job is
		// the only record of the build meanwhile.
		if err := p.shareBroker(objs); err != nil {
			return outcome{}, err
		}
		if err := p.compose(objs.All()...); err != nil {
			return outcome{}, err
		}
		if digest == "" {
			// Whatever serves stays as it is; an older build's objects go.
			p.keep(workloadObject)
			return o, p.setStatus(status)
		}
		rin.Observed.Build = &render.Build{Identity: objs.BuildIdentity, Digest: digest}
		if objs, err = render.Function(rin); err != nil {
			return outcome{}, err
		}
	}
	o, err = p.deployed(objs, &status.WorkloadObservation)
	if err != nil {
		return outcome{}, err
	}
	return o, p.setStatus(status)
}

// buildAdmitted checks, before a build starts, that its namespace does not
// enforce the restricted Pod Security level, whose admission would refuse
// Kaniko's pods without the Job ever saying so. A namespace Crossplane does
// not supply is given the benefit of the doubt.
func (p *pass) buildAdmitted() (outcome, bool, error) {
	items, ok, err := requireAs[metav1.PartialObjectMetadata](p, requireNamespace, byName("v1", "Namespace", "", p.xr.namespace))
	switch {
	case err != nil || !ok:
		return progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgWaitRequired), false, err
	case len(items) == 0:
		return outcome{}, true, nil
	}
	if msg := observe.BuildNotAdmitted(p.xr.namespace, items[0].GetLabels()); msg != "" {
		return stalled(v1alpha1.ReasonBuildNotAdmitted, msg), false, nil
	}
	return outcome{}, true, nil
}

// shareBroker leaves out a Broker to create that exists but is not this
// composite's: another composite in the namespace created it, or the
// platform did. Crossplane would refuse to take it over, and this composite
// uses it as it is. A Broker that goes with the composite that created it
// is created again by the next user that composes it.
func (p *pass) shareBroker(objs *render.Objects) error {
	b := objs.Broker
	if b == nil {
		return nil
	}
	if _, ours := p.observed[nameOf(b)]; ours {
		return nil
	}
	items, ok := p.require(requireBroker+b.Name, byName(eventingv1.SchemeGroupVersion.String(), "Broker", b.Namespace, b.Name))
	if !ok || len(items) > 0 {
		// Until Crossplane has answered, nothing is composed that another
		// composite might own; the Broker's RabbitmqBrokerConfig goes with
		// it.
		objs.Broker, objs.BrokerConfig = nil, nil
	}
	return nil
}

// workloadObject is what serves while a build runs: anything but an older
// build's Job, ConfigMap and NetworkPolicy.
func workloadObject(kind string) bool {
	return kind != "Job" && kind != "ConfigMap" && kind != "NetworkPolicy"
}

// followBuild reads the build Job of the current identity into the status.
// It returns the pushed image's digest once the build has succeeded, and
// otherwise where the build stands.
func (p *pass) followBuild(objs *render.Objects, status *v1alpha1.LambdaFunctionObservation) (outcome, string, error) {
	name := objs.BuildJob.Name
	status.Build = &v1alpha1.BuildObservation{Identity: objs.BuildIdentity, JobName: name}
	job := &batchv1.Job{}
	exists, err := p.observedAs(objs.BuildJob, job)
	if err != nil || !exists {
		return progressing(v1alpha1.PhasePending, v1alpha1.ReasonBuilding, fmt.Sprintf(msgFmtStarting, name)), "", err
	}
	var pods []corev1.Pod
	if observe.Finished(job) {
		// The pods' termination messages say what the build pushed or why
		// it failed.
		items, ok, err := requireAs[corev1.Pod](p, requireBuildPods, byLabels("v1", "Pod", job.Namespace, map[string]string{observe.LabelJobName: name}))
		if err != nil || !ok {
			return progressing(v1alpha1.PhaseBuilding, v1alpha1.ReasonBuilding, msgWaitRequired), "", err
		}
		for _, pod := range items {
			pods = append(pods, *pod)
		}
	}
	bo := observe.Build(job, pods)
	status.Build.StartedAt, status.Build.CompletedAt = job.Status.StartTime, job.Status.CompletionTime
	status.Build.Message, status.Build.Digest = bo.Message, bo.Digest
	switch {
	case bo.Failed:
		// Nothing is retried and nothing deployed changes until the code,
		// runtime or build settings do, or the rebuild annotation.
		return stalled(v1alpha1.ReasonBuildFailed, fmt.Sprintf(msgFmtBuildFails, name, bo.Message)), "", nil
	case !bo.Done:
		return progressing(v1alpha1.PhaseBuilding, v1alpha1.ReasonBuilding, fmt.Sprintf(msgFmtBuilding, objs.Image, name)), "", nil
	}
	return outcome{}, bo.Digest, nil
}

// deployed composes a workload's objects and reports, in its observation,
// how far Knative has got with them.
func (p *pass) deployed(objs *render.Objects, at *v1alpha1.WorkloadObservation) (outcome, error) {
	if err := p.shareBroker(objs); err != nil {
		return outcome{}, err
	}
	if err := p.compose(objs.All()...); err != nil {
		return outcome{}, err
	}
	at.Image, at.Eventing = objs.Image, observe.Eventing(objs)
	svc := observe.ServiceState{Message: msgNoService}
	if objs.Service != nil {
		s := &servingv1.Service{}
		exists, err := p.observedAs(objs.Service, s)
		if err != nil {
			return outcome{}, err
		}
		if exists {
			svc = observe.Service(s, nil)
		}
	}
	at.URL, at.LatestReadyRevision, at.Traffic = svc.URL, svc.LatestReadyRevision, svc.Traffic
	if svc.Failed {
		at.FailedRevision = svc.LatestCreatedRevision
	}
	switch {
	case len(objs.Refused) > 0:
		return stalled(v1alpha1.ReasonForwardRefused, strings.Join(objs.Refused, "; ")), nil
	case len(objs.Pending) > 0:
		return progressing(v1alpha1.PhaseDeploying, v1alpha1.ReasonWaiting, strings.Join(objs.Pending, "; ")), nil
	case svc.Failed && svc.Serving:
		return failingWhileServing(svc.Failure()), nil
	case svc.Failed:
		return stalled(v1alpha1.ReasonRevisionFailed, svc.Failure()), nil
	case svc.RouteFailed:
		return stalled(v1alpha1.ReasonRouteFailed, svc.Message), nil
	case !svc.Ready:
		return progressing(v1alpha1.PhaseDeploying, v1alpha1.ReasonDeploying, fmt.Sprintf(msgFmtServiceNotReady, svc.Message)), nil
	}
	live, err := p.observedEach(objs.Eventing())
	if err != nil {
		return outcome{}, err
	}
	ev := observe.EventingReadiness(objs.Eventing(), func(o client.Object) client.Object { return live[nameOf(o)] })
	switch {
	case ev.Failed:
		return stalled(v1alpha1.ReasonEventingFailed, ev.Message), nil
	case !ev.Ready:
		return progressing(v1alpha1.PhaseDeploying, v1alpha1.ReasonDeploying, observe.MsgWaitEventing+ev.Message), nil
	}
	return ready(svc.URL), nil
}

// observedEach reads each rendered object's observed copy into a new object
// of its type, by composed resource name; one not observed is left out.
func (p *pass) observedEach(rendered []client.Object) (map[resource.Name]client.Object, error) {
	live := map[resource.Name]client.Object{}
	for _, r := range rendered {
		l := observe.Blank(r)
		exists, err := p.observedAs(r, l)
		if err != nil {
			return nil, err
		}
		if exists {
			live[nameOf(r)] = l
		}
	}
	return live, nil
}

// defaults are the build settings of a Direct pass: the Input's own, else
// those of the provider config it names, so a platform sets its registry
// once for the provider and the function.
func (p *pass) defaults(in *v1beta1.Input) (render.Defaults, outcome, bool, error) {
	if in.Build != nil || in.ProviderConfigRef == nil {
		return render.BuildDefaults(in.Build).WithEventing(in.Eventing), outcome{}, true, nil
	}
	ref := in.ProviderConfigRef
	ns := ""
	if ref.Kind == v1alpha1.ProviderConfigKind {
		ns = p.xr.namespace
	}
	// ProviderConfig and ClusterProviderConfig keep build settings alike.
	items, ok, err := requireAs[v1alpha1.ProviderConfig](p, requireProviderConfig, byName(v1alpha1.SchemeGroupVersion.String(), ref.Kind, ns, ref.Name))
	switch {
	case err != nil:
		return render.Defaults{}, outcome{}, false, err
	case !ok:
		return render.Defaults{}, progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgWaitRequired), false, nil
	case len(items) == 0:
		return render.Defaults{}, stalled(v1alpha1.ReasonInvalid, fmt.Sprintf(msgFmtNoProvider, ref.Kind, ref.Name)), false, nil
	}
	pc := items[0]
	return render.BuildDefaults(pc.Spec.Build).WithEventing(pc.Spec.Eventing).WithEventing(in.Eventing), outcome{}, true, nil
}

// credentials are the data of a source's credentials Secret; nil without a
// reference.
func (p *pass) credentials(ref *v1alpha1.LocalObjectReference) (map[string][]byte, outcome, bool, error) {
	if ref == nil {
		return nil, outcome{}, true, nil
	}
	items, ok, err := requireAs[corev1.Secret](p, requireCredentials, byName("v1", "Secret", p.xr.namespace, string(ref.Name)))
	switch {
	case err != nil:
		return nil, outcome{}, false, err
	case !ok:
		return nil, progressing(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, msgWaitRequired), false, nil
	case len(items) == 0:
		return nil, stalled(v1alpha1.ReasonSourceUnresolved, fmt.Sprintf(msgFmtNoSecret, ref.Name, p.xr.namespace)), false, nil
	}
	return items[0].Data, outcome{}, true, nil
}
