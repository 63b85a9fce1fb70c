package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// Environment variables every function gets from render.
const (
	EnvHandler         = "LAMBDA_HANDLER"
	EnvSource          = "LAMBDA_SOURCE"
	EnvMaxRequestBytes = "LAMBDA_MAX_REQUEST_BYTES"
	EnvLogLevel        = "LAMBDA_LOG_LEVEL"
)

// pendingBuild says a function waits for its build.
const pendingBuild = "waiting for build "

// Function renders the objects of a LambdaFunction.
func Function(in FunctionInput) (*Objects, error) {
	return FunctionEncoded(in, nil)
}

// FunctionEncoded renders the objects of a LambdaFunction and lends each
// one's JSON to lend.
func FunctionEncoded(in FunctionInput, lend EncodedFn) (*Objects, error) {
	out, err := function(in)
	return stamped(out, err, lend)
}

// Built is what Function renders once the build these objects wait for
// has pushed digest, with that build observed: the objects that serve the
// image, and these objects' Broker as they hold it. Neither the runtime nor
// the identities are worked out again.
func (o *Objects) Built(digest string) (*Objects, error) {
	return o.BuiltEncoded(digest, nil)
}

// BuiltEncoded is Built, and lends the JSON of each object it renders to
// lend; the Broker was lent when these objects were rendered.
func (o *Objects) BuiltEncoded(digest string, lend EncodedFn) (*Objects, error) {
	if o.serving == nil {
		return nil, errors.New(errNoBuild)
	}
	out := &Objects{
		BuildIdentity: o.BuildIdentity, Image: BuiltImage(o.serving.repository, o.BuildIdentity, digest),
		Broker: o.Broker, BrokerConfig: o.BrokerConfig,
	}
	o.serving.serve(out)
	if err := stampEach(out.appendDeliveries([]kube.Object{out.Service}), lend); err != nil {
		return nil, err
	}
	return out, nil
}

// errNoBuild is why objects that wait for no build cannot be built.
const errNoBuild = "the function's objects wait for no build"

// A serving is what a function's Service, Triggers and PingSources are
// rendered from but the image: all known before its build has pushed it.
type serving struct {
	in         FunctionInput
	port       int32
	env        []corev1.EnvVar
	routes     route
	pings      []*sourcesv1.PingSource
	repository string
}

func function(in FunctionInput) (*Objects, error) {
	out := &Objects{}
	spec := in.Spec
	s := &serving{in: in, port: DefaultPort}
	if spec.Runtime != nil && spec.Runtime.Port != 0 {
		s.port = spec.Runtime.Port
	}
	s.env = []corev1.EnvVar{{Name: EnvSource, Value: FunctionSource(in.Namespace, in.Name)}}
	eventing := ptr.Deref(spec.Eventing, v1alpha1.FunctionEventing{})
	// Checked before anything is built: a schedule Knative refuses would
	// leave a built function that never runs when it should.
	var err error
	if s.pings, err = schedules(in.Namespace, in.Name, eventing.Schedules); err != nil {
		return nil, err
	}
	if s.routes, err = routing(in.Name, spec.Traffic); err != nil {
		return nil, err
	}

	if img := spec.Source.Image; img != nil {
		out.Image = imageRef(img.Repository, img.Tag, img.Digest)
	} else if err := s.build(out); err != nil {
		return nil, err
	}
	out.Broker, out.BrokerConfig = broker(v1alpha1.LambdaFunctionKind, in.Namespace, in.Name, eventing.Broker)
	if out.BuildJob != nil {
		// Nothing to serve yet; the Triggers and schedules follow the
		// Service, once Built knows the image.
		out.serving = s
		return out, nil
	}
	s.serve(out)
	return out, nil
}

// build works out the runtime and the identities of a function built from
// source, and its image: by digest once its build is known, else by the tag
// of the build it renders into out.
func (s *serving) build(out *Objects) error {
	in, spec := s.in, s.in.Spec
	rt, err := ResolveRuntime(spec.Runtime, in.Defaults.buildEnv(spec.Build))
	if err != nil {
		return err
	}
	s.port = rt.Port
	s.env = append(s.env, corev1.EnvVar{Name: EnvHandler, Value: rt.Handler})
	// Unset, the wrapper's own default holds, so a Service rendered
	// before the field existed does not change.
	if q := spec.Runtime.MaxRequestBody; q != nil {
		s.env = append(s.env, corev1.EnvVar{Name: EnvMaxRequestBytes, Value: strconv.FormatInt(q.Value(), 10)})
	}
	if l := spec.Runtime.LogLevel; l != nil {
		s.env = append(s.env, corev1.EnvVar{Name: EnvLogLevel, Value: string(*l)})
	}
	sourceID, err := SourceIdentity(spec, in.Observed)
	if err != nil {
		return err
	}
	if err := allowedBuild(spec.Build, in.Defaults); err != nil {
		return err
	}
	if s.repository, err = Repository(spec, in.Defaults, in.Namespace, in.Name); err != nil {
		return err
	}
	out.BuildIdentity = BuildIdentity(spec, rt, sourceID, s.repository, in.Rebuild)
	if b := in.Observed.Build; b != nil && b.Identity == out.BuildIdentity && b.Digest != "" {
		out.Image = BuiltImage(s.repository, out.BuildIdentity, b.Digest)
		return nil
	}
	out.Image = BuiltImage(s.repository, out.BuildIdentity, "")
	bd := build{
		namespace: in.Namespace, name: in.Name,
		identity: out.BuildIdentity, sourceID: sourceID,
		destination: out.Image,
		spec:        spec, runtime: rt, defaults: in.Defaults,
	}
	files, err := bd.contextFiles()
	if err != nil {
		return err
	}
	if out.BuildContext, err = bd.configMap(files); err != nil {
		return err
	}
	if out.BuildJob, err = bd.job(files); err != nil {
		return err
	}
	out.BuildNetworkPolicy = bd.networkPolicy()
	out.Pending = append(out.Pending, pendingBuild+out.BuildJob.Name)
	return nil
}

// serve renders into out the Service that runs out.Image, and what
// delivers events to it.
func (s *serving) serve(out *Objects) {
	in, spec := s.in, s.in.Spec
	// A built image runs our wrapper, which serves /ready; a prebuilt one
	// may serve anything.
	readiness := httpPath(PathReady, s.port)
	pullSecrets := in.Defaults.PullSecrets
	if spec.Source.Image != nil {
		pullSecrets = spec.Source.Image.PullSecrets
		readiness = openPort(s.port)
	}
	out.Service = workload{
		kind: v1alpha1.LambdaFunctionKind, namespace: in.Namespace, name: in.Name,
		container: ContainerFunction, image: out.Image, port: s.port, readiness: readiness,
		env: env(s.env, spec.Env), envFrom: spec.EnvFrom, volumes: spec.Volumes,
		scaling: spec.Scaling, resources: spec.Resources, timeoutSeconds: spec.TimeoutSeconds,
		serviceAccountName: spec.ServiceAccountName, pullSecrets: pullSecrets, meta: spec.Workload,
		route: s.routes,
	}.service()
	source, eventing := FunctionSource(in.Namespace, in.Name), ptr.Deref(spec.Eventing, v1alpha1.FunctionEventing{})
	for _, t := range eventing.Triggers {
		sub := subscription{name: string(t.Name), key: "trigger/" + string(t.Name), filters: t.Filters, not: map[string]string{"source": source}, delivery: t.Delivery, parallelism: t.Parallelism}
		out.Triggers = append(out.Triggers, trigger(v1alpha1.LambdaFunctionKind, in.Namespace, in.Name, BrokerName(eventing.Broker), sub, eventing.Delivery, in.Defaults, serviceSubscriber(in.Name)))
	}
	served(out.Triggers, in.Name, in.Observed)
	out.Schedules = s.pings
}

// FunctionSource is the CloudEvents source of a function's replies, which
// its wrapper reads from LAMBDA_SOURCE.
func FunctionSource(namespace, name string) string {
	return "/lambda/" + namespace + "/" + name
}

// imageRef is an image reference by digest when there is one, else by tag.
func imageRef(repo v1alpha1.ImageRepository, tag *v1alpha1.ImageTag, digest *v1alpha1.ImageDigest) string {
	if digest != nil {
		return string(repo) + "@" + string(*digest)
	}
	return string(repo) + ":" + string(ptr.Deref(tag, ""))
}
