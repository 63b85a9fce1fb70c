package main

import (
	"maps"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtConvert  = "cannot convert %s %s"
	errFmtRequired = "cannot read the required resources %q"
)

// A composedName names a composed resource in the request and the answer.
type composedName string

// A pass is one RunFunction call's view of a composite resource: what
// Crossplane observed, and the desired state it builds up. Objects stay in
// the encoding the request and answer carry; only those a pass reads are
// decoded.
type pass struct {
	rsp *fnv1.RunFunctionResponse

	xr       *composite
	observed map[composedName]codec.Object
	// required are the resources Crossplane supplied, by requirement.
	required map[string][]codec.Object
	// desired are the answer's composed resources, earlier steps' included.
	desired map[string]*fnv1.Resource

	// requirements are every resource this pass asked Crossplane for; the
	// same set on every call, so Crossplane knows when it is done.
	requirements map[string]*fnv1.ResourceSelector

	// status is written to the composite resource; nil leaves it alone.
	status codec.Object

	// parser writes the answer's composed resources in the encoding gRPC
	// sends.
	parser codec.Parser
	// rendered are the composed resources of the objects render lent
	// their JSON (see lend), by object.
	rendered map[kube.Object]*fnv1.Resource

	// carried says which observed composed resources the answer carries
	// forward as they are, when this pass does not compose them (see
	// keep). It is all of them until a pass has composed everything it
	// wants, so that a pass that stops early, for whatever reason, leaves
	// what runs alone.
	carried func(kind string) bool
}

// newPass reads req; what it writes into rsp is held by l, if it has one.
func newPass(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, l *codec.Lease) (*pass, error) {
	xr, err := codec.ObjectOf(req.GetObserved().GetComposite().GetResource())
	if err != nil {
		return nil, errors.Wrap(err, errDecodeXR)
	}
	c, err := compositeOf(xr)
	if err != nil {
		return nil, err
	}
	p := &pass{rsp: rsp, xr: c, requirements: map[string]*fnv1.ResourceSelector{}, parser: codec.Parser{Lease: l}, carried: all}
	p.observed = make(map[composedName]codec.Object, len(req.GetObserved().GetResources()))
	for name, r := range req.GetObserved().GetResources() {
		if p.observed[composedName(name)], err = codec.ObjectOf(r.GetResource()); err != nil {
			return nil, errors.Wrapf(err, errFmtNoObject, name)
		}
	}
	p.required = make(map[string][]codec.Object, len(req.GetRequiredResources()))
	for key, rs := range req.GetRequiredResources() {
		items := make([]codec.Object, len(rs.GetItems()))
		for i, r := range rs.GetItems() {
			if items[i], err = codec.ObjectOf(r.GetResource()); err != nil {
				return nil, errors.Wrapf(err, errFmtRequired, key)
			}
		}
		p.required[key] = items
	}
	// The answer starts as the request's desired state, which answerTo
	// shares with the request: the composed resources get a map of their
	// own, so the request is left as it came.
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	} else {
		rsp.Desired = &fnv1.State{Composite: rsp.Desired.GetComposite(), Resources: maps.Clone(rsp.Desired.GetResources())}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	p.desired = rsp.Desired.Resources
	return p, nil
}

// nameOf is the name of a composed resource in the pipeline: its kind and
// name. A build Job is named for its build identity, so a new build is a new
// resource and Crossplane removes the one it replaces.
func nameOf(o kube.Object) composedName {
	return composedName(render.Key(o))
}

// observedOf is the observed twin of a rendered object, found by nameOf
// without making the name: a pass looks up each object more than once.
func (p *pass) observedOf(o kube.Object) (codec.Object, bool) {
	var room [128]byte
	ob, ok := p.observed[composedName(render.AppendKey(room[:0], o))]
	return ob, ok
}

// compose makes rendered objects desired, each ready when its observed twin
// says so.
func (p *pass) compose(objs ...kube.Object) error {
	for _, o := range objs {
		r, ok := p.rendered[o]
		if !ok {
			var err error
			if r, err = p.parser.Resource(o, sentKey); err != nil {
				return errors.Wrapf(err, errFmtConvert, o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
			}
		}
		name := nameOf(o)
		r.Ready = fnv1.Ready_READY_FALSE
		if ob, ok := p.observed[name]; ok {
			r.Ready = readiness(ob)
		}
		p.desired[string(name)] = r
	}
	return nil
}

// lend is the render.EncodedFn of a pass: each object render stamps
// becomes the composed resource compose sends, from the JSON its stamp
// hashed, with the stamp added, so that no object is encoded twice.
func (p *pass) lend(o kube.Object, json []byte, verbatim []render.Verbatim) error {
	p.parser.Verbatim = verbatim
	defer func() { p.parser.Verbatim = nil }()
	r, err := p.parser.ResourceOf(json, sentKey, &codec.Addition{Path: annotationsPath, Key: render.AnnotationRendered, Value: o.GetAnnotations()[render.AnnotationRendered]})
	if err != nil {
		return errors.Wrapf(err, errFmtConvert, o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
	}
	if p.rendered == nil {
		p.rendered = map[kube.Object]*fnv1.Resource{}
	}
	p.rendered[o] = r
	return nil
}

// annotationsPath leads to an object's annotations.
var annotationsPath = []string{"metadata", "annotations"}

// keep carries observed composed resources forward as they are, when keep
// says so and this pass does not render them: a build that starts or a spec
// that fails leaves running objects alone.
func (p *pass) keep(keep func(kind string) bool) {
	for name, ob := range p.observed {
		if _, ok := p.desired[string(name)]; ok || !keep(codec.StringAt(ob, "kind")) {
			continue
		}
		p.desired[string(name)] = codec.ResourceOf(sent(ob), readiness(ob))
	}
}

// sent is an observed object as a client sends it: status and the server's
// metadata would be refused or fight the server. The bytes are copied: the
// answer is written once and never changed.
func sent(ob codec.Object) codec.Object {
	metadata := codec.StructAt(ob, "metadata").Filter(func(key []byte) bool {
		return codec.Named(key, []string{"name", "namespace", "labels"})
	})
	if a := codec.StructAt(ob, "metadata", "annotations"); a != nil {
		metadata = codec.AppendEntry(metadata, "annotations", codec.ObjectValue(a.Filter(func(key []byte) bool { return !userInfo(key) })))
	}
	kept := ob.Filter(func(key []byte) bool { return string(key) != "metadata" && sentKey(key) })
	return codec.Object(codec.AppendEntry(kept, "metadata", codec.ObjectValue(metadata)))
}

// userInfo is whether an annotation is one of those Knative's webhooks
// write of who created an object and who last changed its spec. Sent back,
// Crossplane's apply would own them, and its next apply, of the rendered
// object, would remove them: Knative refuses a creator that changes.
func userInfo(key []byte) bool {
	group, name, ok := strings.Cut(string(key), "/")
	return ok && strings.HasSuffix(group, ".knative.dev") && (name == "creator" || name == "lastModifier")
}

// sentKey is render.Sent of a key in an encoding.
func sentKey(key []byte) bool { return render.Sent(string(key)) }

// all keeps every observed composed resource.
func all(string) bool { return true }

// none keeps no observed composed resource: the pass composed all it
// wants, and Crossplane deletes the rest.
func none(string) bool { return false }

// observedMembers are what a pass reads of an object it renders: its
// status, the generation the status must have observed, and a Trigger's
// Broker, which Knative refuses to change (render.Replaceable). The rest of
// its spec is the one rendered, and its labels and annotations are render's
// too.
var observedMembers = codec.Selection{
	"apiVersion": nil, "kind": nil, "status": nil,
	"metadata": {"name": nil, "namespace": nil, "generation": nil},
	"spec":     {"broker": nil},
}

// statusOnly reads only what a resource's controller reports of it.
var statusOnly = codec.Selection{"status": nil}

// observedAs reads the observed twin of a rendered object into o, only the
// members observedMembers names; false when there is none yet.
func (p *pass) observedAs(rendered kube.Object, o any) (bool, error) {
	ob, ok := p.observedOf(rendered)
	if !ok {
		return false, nil
	}
	if err := codec.Decode(ob, o, observedMembers); err != nil {
		return true, errors.Wrapf(err, errFmtNoObject, nameOf(rendered))
	}
	return true, nil
}

// require asks Crossplane for the resources a selector matches and returns
// them once it has answered; ok is false until then.
func (p *pass) require(key string, sel *fnv1.ResourceSelector) (items []codec.Object, ok bool) {
	p.requirements[key] = sel
	items, ok = p.required[key]
	return items, ok
}

// requireAs reads each resource require returns into a T: only the members
// read names, or all when it is nil.
func requireAs[T any](p *pass, key string, sel *fnv1.ResourceSelector, read codec.Selection) (items []T, ok bool, err error) {
	os, ok := p.require(key, sel)
	if !ok {
		return nil, false, nil
	}
	items = make([]T, len(os))
	for i, o := range os {
		if err := codec.Decode(o, &items[i], read); err != nil {
			return nil, true, errors.Wrapf(err, errFmtRequired, key)
		}
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

// byLabels selects the resources of a kind with labels in a namespace; the
// selector keeps labels.
func byLabels(apiVersion, kind, namespace string, labels map[string]string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: apiVersion, Kind: kind, Namespace: &namespace,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
	}
}

// setStatus writes a workload's observation to the composite resource.
func (p *pass) setStatus(obs any) error {
	o, err := p.parser.Marshal(obs)
	if err != nil {
		return errors.Wrap(err, errResponse)
	}
	p.status = o
	return nil
}

// finish writes the pass into the response: desired composed resources,
// requirements, the composite's status and readiness, and its Reconciling
// and Stalled conditions.
func (p *pass) finish(v observe.Verdict) error {
	p.keep(p.carried)
	generation, err := p.generation()
	if err != nil {
		return err
	}
	if len(p.requirements) > 0 {
		p.rsp.Requirements = &fnv1.Requirements{Resources: p.requirements}
	}
	// Earlier steps of the pipeline may have written the composite, its
	// status included: theirs is kept, ours laid over it field by field.
	dxr := p.rsp.Desired.GetComposite()
	theirs, err := codec.ObjectOf(dxr.GetResource())
	if err != nil {
		return errors.Wrap(err, errDecodeXR)
	}
	replaced := func(key []byte) bool {
		return string(key) == "phase" || (generation > 0 && string(key) == "observedGeneration")
	}
	status := codec.StructAt(theirs, "status").Filter(func(key []byte) bool {
		_, ours := p.status.Get(string(key))
		return !ours && !replaced(key)
	})
	status = append(status, p.status.Filter(func(key []byte) bool { return !replaced(key) })...)
	status = codec.AppendEntry(status, "phase", codec.StringValue(string(v.Phase)))
	if generation > 0 {
		status = codec.AppendEntry(status, "observedGeneration", codec.NumberValue(float64(generation)))
	}
	xr := theirs.Filter(func(key []byte) bool { return string(key) != "status" })
	ready := fnv1.Ready_READY_FALSE
	if v.Ready {
		ready = fnv1.Ready_READY_TRUE
	}
	p.rsp.Desired.Composite = codec.ResourceOf(codec.Object(codec.AppendEntry(xr, "status", codec.ObjectValue(status))), ready)
	p.rsp.Desired.Composite.ConnectionDetails = dxr.GetConnectionDetails()
	conditions(p.rsp, v)
	return nil
}
