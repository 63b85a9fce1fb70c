package main

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const (
	errFmtConvert  = "cannot convert %s %s"
	errFmtRequired = "cannot read the required resources %q"
)

// A pass is one RunFunction call's view of a composite resource: what
// Crossplane observed, and the desired state it builds up.
type pass struct {
	req *fnv1.RunFunctionRequest
	rsp *fnv1.RunFunctionResponse

	xr       composite
	dxr      *resource.Composite
	observed map[resource.Name]resource.ObservedComposed
	desired  map[resource.Name]*resource.DesiredComposed

	// requirements are every resource this pass asked Crossplane for; the
	// same set on every call, so Crossplane knows when it is done.
	requirements map[string]*fnv1.ResourceSelector

	// status is written to the composite resource; nil leaves it alone.
	status map[string]any
}

func newPass(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) (*pass, error) {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return nil, errors.Wrap(err, errObserved)
	}
	xr, err := compositeOf(oxr)
	if err != nil {
		return nil, err
	}
	p := &pass{req: req, rsp: rsp, xr: xr, requirements: map[string]*fnv1.ResourceSelector{}}
	if p.observed, err = request.GetObservedComposedResources(req); err != nil {
		return nil, errors.Wrap(err, errObserved)
	}
	if p.dxr, err = request.GetDesiredCompositeResource(req); err != nil {
		return nil, errors.Wrap(err, errDesired)
	}
	if p.desired, err = request.GetDesiredComposedResources(req); err != nil {
		return nil, errors.Wrap(err, errDesired)
	}
	return p, nil
}

// nameOf is the name of a composed resource in the pipeline: its kind and
// name. A build Job is named for its build identity, so a new build is a new
// resource and Crossplane removes the one it replaces.
func nameOf(o client.Object) resource.Name {
	return resource.Name(o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName())
}

// compose makes rendered objects desired, each ready when its observed twin
// says so.
func (p *pass) compose(objs ...client.Object) error {
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return errors.Wrapf(err, errFmtConvert, o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
		}
		// Render sets neither; the server does.
		delete(m, "status")
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		name := nameOf(o)
		d := &resource.DesiredComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}, Ready: resource.ReadyFalse}
		if ob, ok := p.observed[name]; ok {
			d.Ready = readiness(ob.Resource)
		}
		p.desired[name] = d
	}
	return nil
}

// keep carries observed composed resources forward as they are, when keep
// says so and this pass does not render them: a build that starts or a spec
// that fails leaves running objects alone.
func (p *pass) keep(keep func(o *composed.Unstructured) bool) {
	for name, ob := range p.observed {
		if _, ok := p.desired[name]; ok || !keep(ob.Resource) {
			continue
		}
		// Only what a client sets: status and the server's metadata would
		// be refused or fight the server.
		m := map[string]any{}
		for k, v := range ob.Resource.Object {
			if k != "status" && k != "metadata" {
				m[k] = v
			}
		}
		meta := map[string]any{}
		observed, _ := ob.Resource.Object["metadata"].(map[string]any)
		for _, k := range []string{"name", "namespace", "labels", "annotations"} {
			if v, ok := observed[k]; ok {
				meta[k] = v
			}
		}
		m["metadata"] = meta
		p.desired[name] = &resource.DesiredComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: m}}, Ready: readiness(ob.Resource)}
	}
}

// all keeps every observed composed resource.
func all(*composed.Unstructured) bool { return true }

// observedAs reads the observed twin of a rendered object into o; false
// when there is none yet.
func (p *pass) observedAs(rendered client.Object, o any) (bool, error) {
	ob, ok := p.observed[nameOf(rendered)]
	if !ok {
		return false, nil
	}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(ob.Resource.Object, o)
	return true, errors.Wrapf(err, errFmtNoObject, nameOf(rendered))
}

// require asks Crossplane for the resources a selector matches and returns
// them once it has answered; ok is false until then.
func (p *pass) require(key string, sel *fnv1.ResourceSelector) (items []*unstructured.Unstructured, ok bool, err error) {
	p.requirements[key] = sel
	rs, ok, err := request.GetRequiredResource(p.req, key)
	if err != nil || !ok {
		return nil, ok, errors.Wrapf(err, errFmtRequired, key)
	}
	for _, r := range rs {
		items = append(items, r.Resource)
	}
	return items, true, nil
}

// byName selects one resource of a kind by name in the composite's
// namespace; cluster scoped kinds pass namespace "".
func byName(apiVersion, kind, namespace, name string) *fnv1.ResourceSelector {
	s := &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	if namespace != "" {
		s.Namespace = &namespace
	}
	return s
}

// byLabels selects the resources of a kind with labels in a namespace.
func byLabels(apiVersion, kind, namespace string, labels map[string]string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: apiVersion, Kind: kind, Namespace: &namespace,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: maps.Clone(labels)}},
	}
}

// setStatus writes a workload's observation to the composite resource.
func (p *pass) setStatus(obs any) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obs)
	if err != nil {
		return errors.Wrap(err, errResponse)
	}
	p.status = m
	return nil
}

// finish writes the pass into the response: desired composed resources,
// requirements, the composite's status and readiness, and its Reconciling
// and Stalled conditions.
func (p *pass) finish(o outcome) error {
	generation, err := p.generation()
	if err != nil {
		return err
	}
	if err := response.SetDesiredComposedResources(p.rsp, p.desired); err != nil {
		return err
	}
	if len(p.requirements) > 0 {
		p.rsp.Requirements = &fnv1.Requirements{Resources: p.requirements}
	}
	if p.status == nil {
		p.status = map[string]any{}
	}
	p.status["phase"] = string(o.phase)
	if generation > 0 {
		p.status["observedGeneration"] = generation
	}
	// Earlier steps of the pipeline may have written status fields too. The
	// values are already JSON values, so they go in as they are: a field
	// path would convert each through JSON again.
	status, ok := p.dxr.Resource.Object["status"].(map[string]any)
	if !ok {
		status = map[string]any{}
		p.dxr.Resource.Object["status"] = status
	}
	maps.Copy(status, p.status)
	p.dxr.Ready = resource.ReadyFalse
	if o.phase == v1alpha1.PhaseReady {
		p.dxr.Ready = resource.ReadyTrue
	}
	o.conditions(p.rsp)
	return response.SetDesiredCompositeResource(p.rsp, p.dxr)
}
