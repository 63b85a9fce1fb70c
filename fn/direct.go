package main

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/fn/input/v1beta1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/lifecycle"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// Keys of the resources a Direct pass requires.
const (
	requireProviderConfig = "provider-config"
	requireNamespace      = "namespace"
	requireCredentials    = "source-credentials"
	requireBuildPods      = "build-pods"
	requireRevisionPods   = "revision-pods"
	requireForwardAgent   = "forward-agent-"
	requireBroker         = "broker-"
	requireSecret         = "secret-"
	requireConfigMap      = "configmap-"
)

const (
	msgWaitRequired  = "waiting for Crossplane to supply the resources this pass requires"
	msgFmtNoProvider = "the %s %s that the function's Input names does not exist"
	msgFmtNoSecret   = "the source credentials Secret %s does not exist in namespace %s"
)

// directFunction composes a Lambda's build, Knative Service, Broker and
// Triggers. The Service appears once the build of the current code has
// succeeded; until then a Service already running keeps its image.
func (p *pass) directFunction(ctx context.Context, in *v1beta1.Input, sources SourceResolver, buildDeny []string) (observe.Verdict, error) {
	xr := p.xr.lambdaXR
	spec := xr.Spec.LambdaFunctionParameters
	rin := render.FunctionInput{Namespace: p.xr.namespace, Name: p.xr.name, Spec: spec, Rebuild: xr.GetAnnotations()[v1alpha1.AnnotationRebuild]}
	status := &xr.Status.LambdaFunctionObservation
	// What was observed stays in the status when this pass stops early.
	if err := p.setStatus(status); err != nil {
		return observe.Verdict{}, err
	}
	if b := status.Build; b != nil && b.Digest != "" {
		rin.Observed.Build = &render.Pushed{Identity: b.Identity, Digest: b.Digest}
	}
	rin.Observed.Served = status.LatestReadyRevision != ""

	d, v, ok, err := p.defaults(in)
	if err != nil || !ok {
		return v, err
	}
	rin.Defaults = d
	rin.Defaults.Network.Deny = buildDeny
	return lifecycle.Function(ctx, rin, status.Phase, &functionSteps{workloadSteps: workloadSteps{pass: p, at: &status.WorkloadObservation, full: status}, sources: sources, status: status})
}

// workloadSteps take the steps that end a Direct pass over a workload
// (lifecycle.Workload): what they compose is the answer's, and a pass ends
// with a verdict.
type workloadSteps struct {
	*pass
	at *v1alpha1.WorkloadObservation
	// full is the composite's whole status, which at is part of.
	full any
}

// Admit admits every workload: Crossplane supplies the Brokers and Secrets
// it refers to as it deploys (unmet).
func (s workloadSteps) Admit(context.Context, *render.Objects) (*observe.Verdict, error) {
	return nil, nil
}

// Deploy composes the workload and records in the status how far it got.
func (s workloadSteps) Deploy(_ context.Context, objs *render.Objects) (observe.Verdict, error) {
	v, err := s.deployed(objs, s.at)
	if err != nil {
		return observe.Verdict{}, err
	}
	return v, s.setStatus(s.full)
}

// Hold keeps every composed resource as it was observed: the verdict says
// why, so the cause is no failure of the pass.
func (s workloadSteps) Hold(v observe.Verdict, _ error) (observe.Verdict, error) {
	s.carried = all
	return v, nil
}

// functionSteps take a Direct pass's steps of a Lambda's lifecycle.
type functionSteps struct {
	workloadSteps
	sources SourceResolver
	status  *v1alpha1.LambdaFunctionObservation
}

// Resolve resolves the source with its credentials Secret's data, once
// Crossplane has supplied it.
func (s *functionSteps) Resolve(ctx context.Context, src v1alpha1.FunctionSource) (string, *observe.Verdict, error) {
	secret, v, ok, err := s.credentials(src.CredentialsRef())
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", &v, nil
	}
	id, err := s.sources.Resolve(ctx, src, secret)
	return id, nil, err
}

// Render renders in, writing the objects' encodings into the answer's
// buffers.
func (s *functionSteps) Render(in render.FunctionInput) (*render.Objects, error) {
	return render.FunctionEncoded(in, s.lend)
}

// Build follows the build.
func (s *functionSteps) Build(_ context.Context, objs *render.Objects) (string, observe.Verdict, error) {
	v, digest, err := s.build(objs, s.status)
	return digest, v, err
}

// Built renders the workload with the digest the build pushed.
func (s *functionSteps) Built(objs *render.Objects, digest string) (*render.Objects, error) {
	return objs.BuiltEncoded(digest, s.lend)
}

// build follows the build of the rendered identity, once the namespace
// admits its pods, and returns the digest it pushed once it has succeeded.
// The build's objects (and the Broker, which does not wait for it) stay
// desired while it runs, after it failed, and for the one pass after it
// succeeded, until its digest is in the status: the Job is the only record
// of the build meanwhile. Until the build has succeeded, whatever serves
// stays as it is, and an older build's objects go.
func (p *pass) build(objs *render.Objects, status *v1alpha1.LambdaFunctionObservation) (observe.Verdict, string, error) {
	if _, started := p.observedOf(objs.BuildJob); !started {
		if v, ok, err := p.buildAdmitted(); err != nil || !ok {
			return v, "", err
		}
	}
	v, digest, err := p.followBuild(objs, status)
	if err != nil {
		return observe.Verdict{}, "", err
	}
	if err := p.shareBroker(objs); err != nil {
		return observe.Verdict{}, "", err
	}
	if err := p.compose(objs.All()...); err != nil {
		return observe.Verdict{}, "", err
	}
	if digest == "" {
		p.carried = workloadObject
		return v, "", p.setStatus(status)
	}
	return v, digest, nil
}

// held is the verdict on the composite when this pass holds it before
// anything is composed.
func (p *pass) held(reason xpv2.ConditionReason, msg string) observe.Verdict {
	return observe.Held(p.xr.phase(), reason, msg)
}

// waiting is the verdict on the composite while Crossplane has yet to
// supply what this pass requires.
func (p *pass) waiting() observe.Verdict {
	return observe.Retrying(p.xr.phase(), v1alpha1.ReasonWaiting, msgWaitRequired)
}

// buildAdmitted checks, before a build starts, that its namespace does not
// enforce the restricted Pod Security level, whose admission would refuse
// Kaniko's pods without the Job ever saying so. A namespace Crossplane does
// not supply is given the benefit of the doubt.
func (p *pass) buildAdmitted() (observe.Verdict, bool, error) {
	items, ok, err := requireAs[metav1.PartialObjectMetadata](p, requireNamespace, byName("v1", "Namespace", "", p.xr.namespace), codec.Selection{"metadata": {"labels": nil}})
	switch {
	case err != nil || !ok:
		return p.waiting(), false, err
	case len(items) == 0:
		return observe.Verdict{}, true, nil
	}
	if msg := observe.BuildNotAdmitted(p.xr.namespace, items[0].GetLabels()); msg != "" {
		return p.held(v1alpha1.ReasonBuildNotAdmitted, msg), false, nil
	}
	return observe.Verdict{}, true, nil
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
	if _, ours := p.observedOf(b); ours {
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
// otherwise the verdict on where the build stands.
func (p *pass) followBuild(objs *render.Objects, status *v1alpha1.LambdaFunctionObservation) (observe.Verdict, string, error) {
	name := objs.BuildJob.Name
	status.Build = &v1alpha1.BuildObservation{Identity: objs.BuildIdentity, JobName: name}
	job := &batchv1.Job{}
	exists, err := p.observedAs(objs.BuildJob, job)
	if err != nil || !exists {
		return observe.BuildStarting(name), "", err
	}
	var pods []corev1.Pod
	if observe.Finished(job) {
		// The pods' termination messages say what the build pushed or why
		// it failed: their status is all a pass reads of them.
		var ok bool
		pods, ok, err = requireAs[corev1.Pod](p, requireBuildPods, byLabels("v1", "Pod", job.Namespace, map[string]string{observe.LabelJobName: name}), statusOnly)
		if err != nil || !ok {
			return observe.Retrying(v1alpha1.PhaseBuilding, v1alpha1.ReasonBuilding, msgWaitRequired), "", err
		}
	}
	bo := observe.OutcomeOf(job, pods)
	status.Build.StartedAt, status.Build.CompletedAt = job.Status.StartTime, bo.Completed
	status.Build.Message, status.Build.Digest = bo.Message, bo.Digest
	v, done := observe.Built(objs.Image, name, bo)
	if !done {
		return v, "", nil
	}
	return v, bo.Digest, nil
}

// deployed composes a workload's objects and reports, in its observation
// and a verdict, how far Knative has got with them.
func (p *pass) deployed(objs *render.Objects, at *v1alpha1.WorkloadObservation) (observe.Verdict, error) {
	if err := p.shareBroker(objs); err != nil {
		return observe.Verdict{}, err
	}
	if v, held, err := p.unmet(objs, at.Phase); err != nil || held {
		// What runs keeps running as it is (carried).
		return v, err
	}
	eventing, err := p.observedEach(objs.Eventing())
	if err != nil {
		return observe.Verdict{}, err
	}
	observed := func(o kube.Object) kube.Object { return eventing[nameOf(o)] }
	if err := p.compose(render.Replaceable(objs.All(), observed)...); err != nil {
		return observe.Verdict{}, err
	}
	p.carried = none
	at.Image, at.Eventing = objs.Image, objs.EventingObservation()
	var live *servingv1.Service
	if objs.Service != nil {
		s := &servingv1.Service{}
		exists, err := p.observedAs(objs.Service, s)
		if err != nil {
			return observe.Verdict{}, err
		}
		if exists {
			live = s
		}
	}
	crash, err := p.crashLoop(live)
	if err != nil {
		return observe.Verdict{}, err
	}
	svc := observe.Service(live, nil).WithCrashLoop(crash)
	svc.Record(at)
	return observe.Deployed(observe.Deployment{
		Refused: objs.Refused, Pending: objs.Pending, Service: svc,
		Eventing: observe.EventingReadiness(objs.Eventing(), observed),
	}), nil
}

// crashLoop reads the pods of the Service's latest Revision while it does
// not serve (observe.Unready), as the provider does, and says whether the
// container that runs the workload's code keeps exiting (observe.CrashLoop).
// Until Crossplane supplies them, the pass goes on without.
func (p *pass) crashLoop(live *servingv1.Service) (string, error) {
	if live == nil {
		return "", nil
	}
	revision := observe.Unready(live)
	if revision == "" {
		return "", nil
	}
	pods, _, err := requireAs[corev1.Pod](p, requireRevisionPods, byLabels("v1", "Pod", live.Namespace, map[string]string{observe.LabelRevision: revision}), statusOnly)
	for i := range pods {
		if msg := observe.CrashLoop(&pods[i]); msg != "" {
			return msg, err
		}
	}
	return "", err
}

// unmet is the verdict on a workload whose objects refer to what its
// namespace lacks (observe.Unmet), as Crossplane supplies the Secrets and
// the Broker they name; held is true until it has, and while any lacks.
func (p *pass) unmet(objs *render.Objects, was v1alpha1.Phase) (v observe.Verdict, held bool, err error) {
	ns := p.xr.namespace
	refs := observe.ReferencesOf(objs.Service, objs.ListenedBroker())
	answered := true
	objects := map[string]map[string]bool{}
	for _, ref := range refs.Required {
		keys, found, ok, err := p.requiredKeys(ref.Kind, ref.Name)
		if err != nil {
			return observe.Verdict{}, false, err
		}
		answered = answered && ok
		if found {
			objects[ref.Kind+"/"+ref.Name] = keys
		}
	}
	brokers := map[string]bool{}
	if b := refs.Broker; b != "" {
		items, ok := p.require(requireBroker+b, byName(eventingv1.SchemeGroupVersion.String(), "Broker", ns, b))
		answered = answered && ok
		brokers[b] = len(items) > 0
	}
	if !answered {
		return p.waiting(), true, nil
	}
	return observe.Unmet(was, ns, refs,
		func(kind, name string) (map[string]bool, bool, error) {
			keys, found := objects[kind+"/"+name]
			return keys, found, nil
		},
		func(name string) (bool, error) { return brokers[name], nil })
}

// requiredKeys requires a Secret or ConfigMap of the composite's namespace
// and reads its keys, as Crossplane supplies it; ok is false until it has.
func (p *pass) requiredKeys(kind, name string) (keys map[string]bool, found, ok bool, err error) {
	sel := byName("v1", kind, p.xr.namespace, name)
	if kind == observe.KindSecret {
		return keysOf(p, requireSecret+name, sel, observe.SecretKeys)
	}
	return keysOf(p, requireConfigMap+name, sel, observe.ConfigMapKeys)
}

// keysOf requires one object of type T and reads its keys with keys.
func keysOf[T any](p *pass, key string, sel *fnv1.ResourceSelector, keys func(*T) map[string]bool) (map[string]bool, bool, bool, error) {
	items, ok, err := requireAs[T](p, key, sel, nil)
	if len(items) == 0 || err != nil {
		return nil, false, ok, err
	}
	return keys(&items[0]), true, ok, nil
}

// observedEach reads each rendered object's observed copy into a new object
// of its type, by composed resource name; one not observed is left out.
func (p *pass) observedEach(rendered []kube.Object) (map[composedName]kube.Object, error) {
	live := map[composedName]kube.Object{}
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
func (p *pass) defaults(in *v1beta1.Input) (render.Defaults, observe.Verdict, bool, error) {
	if in.Build != nil || in.ProviderConfigRef == nil {
		return render.BuildDefaults(in.Build).WithEventing(in.Eventing), observe.Verdict{}, true, nil
	}
	ref := in.ProviderConfigRef
	ns := ""
	if ref.Kind == v1alpha1.ProviderConfigKind {
		ns = p.xr.namespace
	}
	// ProviderConfig and ClusterProviderConfig keep build settings alike.
	items, ok, err := requireAs[v1alpha1.ProviderConfig](p, requireProviderConfig, byName(v1alpha1.SchemeGroupVersion.String(), ref.Kind, ns, ref.Name), nil)
	switch {
	case err != nil:
		return render.Defaults{}, observe.Verdict{}, false, err
	case !ok:
		return render.Defaults{}, p.waiting(), false, nil
	case len(items) == 0:
		return render.Defaults{}, p.held(v1alpha1.ReasonInvalid, fmt.Sprintf(msgFmtNoProvider, ref.Kind, ref.Name)), false, nil
	}
	pc := items[0]
	if ref.Kind == v1alpha1.ProviderConfigKind {
		if err := render.Loosens(pc.Name, pc.Spec.Build, pc.Spec.Eventing); err != nil {
			return render.Defaults{}, p.held(v1alpha1.ReasonInvalid, err.Error()), false, nil
		}
	}
	return render.BuildDefaults(pc.Spec.Build).WithEventing(pc.Spec.Eventing).WithEventing(in.Eventing), observe.Verdict{}, true, nil
}

// credentials are the data of a source's credentials Secret; nil without a
// reference.
func (p *pass) credentials(ref *v1alpha1.LocalObjectReference) (map[string][]byte, observe.Verdict, bool, error) {
	if ref == nil {
		return nil, observe.Verdict{}, true, nil
	}
	items, ok, err := requireAs[corev1.Secret](p, requireCredentials, byName("v1", "Secret", p.xr.namespace, string(ref.Name)), nil)
	switch {
	case err != nil:
		return nil, observe.Verdict{}, false, err
	case !ok:
		return nil, p.waiting(), false, nil
	case len(items) == 0:
		return nil, p.held(v1alpha1.ReasonSourceUnresolved, fmt.Sprintf(msgFmtNoSecret, ref.Name, p.xr.namespace)), false, nil
	}
	return items[0].Data, observe.Verdict{}, true, nil
}
