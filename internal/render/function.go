package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
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

func function(in FunctionInput) (*Objects, error) {
	out := &Objects{}
	spec := in.Spec
	port := DefaultPort
	if spec.Runtime != nil && spec.Runtime.Port != 0 {
		port = spec.Runtime.Port
	}
	source := FunctionSource(in.Namespace, in.Name)
	set := []corev1.EnvVar{{Name: EnvSource, Value: source}}
	var scheduled []v1alpha1.Schedule
	if spec.Eventing != nil {
		scheduled = spec.Eventing.Schedules
	}
	// Checked before anything is built: a schedule Knative refuses would
	// leave a built function that never runs when it should.
	pings, err := schedules(in.Namespace, in.Name, scheduled)
	if err != nil {
		return nil, err
	}
	routes, err := routing(in.Name, spec.Traffic)
	if err != nil {
		return nil, err
	}

	if img := spec.Source.Image; img != nil {
		out.Image = imageRef(img.Repository, img.Tag, img.Digest)
	} else {
		rt, err := ResolveRuntime(spec.Runtime, in.Defaults.buildEnv(spec.Build))
		if err != nil {
			return nil, err
		}
		port = rt.Port
		set = append(set, corev1.EnvVar{Name: EnvHandler, Value: rt.Handler})
		// Unset, the wrapper's own default holds, so a Service rendered
		// before the field existed does not change.
		if q := spec.Runtime.MaxRequestBody; q != nil {
			set = append(set, corev1.EnvVar{Name: EnvMaxRequestBytes, Value: strconv.FormatInt(q.Value(), 10)})
		}
		if l := spec.Runtime.LogLevel; l != nil {
			set = append(set, corev1.EnvVar{Name: EnvLogLevel, Value: string(*l)})
		}
		sourceID, err := SourceIdentity(spec, in.Observed)
		if err != nil {
			return nil, err
		}
		if err := allowedBuild(spec.Build, in.Defaults); err != nil {
			return nil, err
		}
		repo, err := Repository(spec, in.Defaults, in.Namespace, in.Name)
		if err != nil {
			return nil, err
		}
		out.BuildIdentity = BuildIdentity(spec, rt, sourceID, repo, in.Rebuild)
		if b := in.Observed.Build; b != nil && b.Identity == out.BuildIdentity && b.Digest != "" {
			out.Image = BuiltImage(repo, out.BuildIdentity, b.Digest)
		} else {
			out.Image = BuiltImage(repo, out.BuildIdentity, "")
			bd := build{
				namespace: in.Namespace, name: in.Name,
				identity: out.BuildIdentity, sourceID: sourceID,
				destination: out.Image,
				spec:        spec, runtime: rt, defaults: in.Defaults,
			}
			files, err := bd.contextFiles()
			if err != nil {
				return nil, err
			}
			if out.BuildContext, err = bd.configMap(files); err != nil {
				return nil, err
			}
			if out.BuildJob, err = bd.job(files); err != nil {
				return nil, err
			}
			out.BuildNetworkPolicy = bd.networkPolicy()
			out.Pending = append(out.Pending, pendingBuild+out.BuildJob.Name)
		}
	}

	var eventing v1alpha1.FunctionEventing
	if spec.Eventing != nil {
		eventing = *spec.Eventing
	}
	out.Broker, out.BrokerConfig = broker(in.Namespace, eventing.Broker)
	if out.BuildJob != nil {
		// Nothing to serve yet; the Triggers and schedules follow the
		// Service.
		return out, nil
	}
	// A built image runs our wrapper, which serves /ready; a prebuilt one
	// may serve anything.
	readiness := httpPath(PathReady, port)
	pullSecrets := in.Defaults.PullSecrets
	if spec.Source.Image != nil {
		pullSecrets = spec.Source.Image.PullSecrets
		readiness = openPort(port)
	}
	out.Service = workload{
		kind: v1alpha1.LambdaFunctionKind, namespace: in.Namespace, name: in.Name,
		container: ContainerFunction, image: out.Image, port: port, readiness: readiness,
		env:     env(set, spec.Env),
		scaling: spec.Scaling, resources: spec.Resources, timeoutSeconds: spec.TimeoutSeconds,
		serviceAccountName: spec.ServiceAccountName, pullSecrets: pullSecrets, meta: spec.Workload,
		route: routes,
	}.service()
	for _, t := range eventing.Triggers {
		s := subscription{name: string(t.Name), key: "trigger/" + string(t.Name), filters: t.Filters, notFrom: source, delivery: t.Delivery, parallelism: t.Parallelism}
		out.Triggers = append(out.Triggers, trigger(v1alpha1.LambdaFunctionKind, in.Namespace, in.Name, BrokerName(eventing.Broker), s, eventing.Delivery, in.Defaults, serviceSubscriber(in.Name)))
	}
	out.Schedules = pings
	return out, nil
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
	return string(repo) + ":" + string(deref(tag))
}
