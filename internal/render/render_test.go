package render

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/golden"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files from what render produces")

// testDefaults are the provider config defaults of every golden case.
var testDefaults = Defaults{
	Registry:              "registry.local:5000/lambdas",
	InsecureRegistries:    []string{"registry.local:5000"},
	PushSecretName:        "registry-push",
	AllowedExecutorImages: []string{"registry.local:5000/kaniko/executor:v1.25.0", "registry.local/kaniko:v2"},
	MaxTimeout:            2 * time.Hour,
	Network:               Network{AllowNamespaces: []string{"registry"}},
	// A private registry: Go's images from its mirror, Kaniko pulling
	// the others through it, and images pulled with a Secret.
	BaseImages: []v1alpha1.BaseImage{{
		Language: v1alpha1.LanguageGo, Image: "registry.local:5000/mirror/golang:{version}",
		RunImage: ptr.To[v1alpha1.BaseImageReference]("registry.local:5000/mirror/distroless-static:nonroot"),
	}},
	RegistryMirrors: []string{"registry.local:5000/dockerhub"},
	PullSecrets:     []v1alpha1.LocalObjectReference{{Name: "registry-pull"}},
}

// testObserved are the cluster facts of every golden case: a resolved git
// commit or S3 ETag hash, and the addresses of the Brokers agents forward to.
var testObserved = Observed{
	SourceIdentity: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
	ForwardAddresses: map[string]string{
		"agent/supervisor": "http://broker-ingress.knative-eventing.svc.cluster.local/apps/supervisor",
		"broker/humans":    "http://broker-ingress.knative-eventing.svc.cluster.local/apps/humans",
		// A target in another namespace that accepts the golden agents'.
		"agent/billing/refunds": "http://broker-ingress.knative-eventing.svc.cluster.local/billing/refunds",
	},
}

const testDigest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// A goldenCase is one resource rendered with the test facts.
type goldenCase struct {
	name    string
	objects *Objects
}

// A goldenInput is a LambdaFunction or LambdaAgent spec from the examples or
// the API's valid test manifests.
type goldenInput struct {
	kind, namespace, name string
	spec                  any
}

// goldenInputs reads every LambdaFunction and LambdaAgent of the examples and
// of the API's valid test manifests.
func goldenInputs(t testing.TB) []goldenInput {
	t.Helper()
	var inputs []goldenInput
	for _, dir := range []string{"../../examples", "../../apis/v1alpha1/testdata/valid"} {
		objs, err := manifest.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range objs {
			in := goldenInput{kind: u.GetKind(), namespace: u.GetNamespace(), name: u.GetName()}
			if in.namespace == "" {
				in.namespace = "apps"
			}
			switch in.kind {
			case v1alpha1.LambdaFunctionKind:
				fn := &v1alpha1.LambdaFunction{}
				mustConvert(t, u.Object, fn)
				in.spec = fn.Spec.ForProvider
			case v1alpha1.LambdaAgentKind:
				a := &v1alpha1.LambdaAgent{}
				mustConvert(t, u.Object, a)
				in.spec = a.Spec.ForProvider
			default:
				continue
			}
			inputs = append(inputs, in)
		}
	}
	return inputs
}

// goldenCases renders every golden input with the test facts. A built
// function is rendered twice: before its build, and once the build of its
// identity is known.
func goldenCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, gi := range goldenInputs(t) {
		switch spec := gi.spec.(type) {
		case v1alpha1.LambdaFunctionParameters:
			in := FunctionInput{Namespace: gi.namespace, Name: gi.name, Spec: spec, Defaults: testDefaults, Observed: testObserved}
			out, err := Function(in)
			if err != nil {
				t.Fatalf("Function(%s): %v", gi.name, err)
			}
			cases = append(cases, goldenCase{name: "function-" + gi.name, objects: out})
			if out.BuildIdentity == "" {
				continue
			}
			in.Observed.Build = &Pushed{Identity: out.BuildIdentity, Digest: testDigest}
			built, err := Function(in)
			if err != nil {
				t.Fatalf("Function(%s) once built: %v", gi.name, err)
			}
			cases = append(cases, goldenCase{name: "function-" + gi.name + "-built", objects: built})
		case v1alpha1.LambdaAgentParameters:
			out, err := Agent(AgentInput{Namespace: gi.namespace, Name: gi.name, Spec: spec, Observed: testObserved})
			if err != nil {
				t.Fatalf("Agent(%s): %v", gi.name, err)
			}
			cases = append(cases, goldenCase{name: "agent-" + gi.name, objects: out})
		}
	}
	return cases
}

func mustConvert(t testing.TB, in map[string]any, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(in, out); err != nil {
		t.Fatal(err)
	}
}

// goldenYAML is what a golden file holds: the facts of the result, then
// every object in apply order.
func goldenYAML(t testing.TB, o *Objects) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# buildIdentity: %s\n# image: %s\n", o.BuildIdentity, o.Image)
	for _, p := range o.Pending {
		fmt.Fprintf(&b, "# pending: %s\n", p)
	}
	for _, obj := range o.All() {
		y, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// TestGolden compares what render produces for every case with its golden
// file in testdata/golden. Run with -update to rewrite them, then review the
// diff like any other change.
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	if len(cases) < 10 {
		t.Fatalf("only %d golden cases; the examples and valid manifests give more", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", "golden", tc.name+".yaml"), []byte(goldenYAML(t, tc.objects)), *update)
		})
	}
}

// own is Knative's own object for a Knative object render made in the wire
// form, which Knative's validation takes.
func own(t *testing.T, o client.Object) client.Object {
	t.Helper()
	k, err := knativetest.Own(o)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKnativeAcceptsRendered runs Knative's own defaulting and validation,
// as its admission webhooks would, on every rendered Knative object, in
// Knative's own types.
func TestKnativeAcceptsRendered(t *testing.T) {
	ctx := apis.WithinCreate(context.Background())
	eventing := 0
	for _, tc := range goldenCases(t) {
		for _, obj := range tc.objects.All() {
			switch obj.(type) {
			case *servingv1.Service:
				obj = own(t, obj)
			case *eventingv1.Broker, *eventingv1.Trigger, *sourcesv1.PingSource:
				obj = own(t, obj)
				eventing++
			}
			v, ok := obj.DeepCopyObject().(interface {
				client.Object
				apis.Validatable
				apis.Defaultable
			})
			if !ok {
				continue // Not a Knative object.
			}
			v.SetDefaults(ctx)
			if err := v.Validate(ctx); err != nil {
				t.Errorf("%s: Knative refuses %T %s: %v", tc.name, v, v.GetName(), err)
			}
		}
	}
	if eventing == 0 {
		t.Error("no example or valid manifest renders a Broker, Trigger or PingSource")
	}

	// The control: Knative refuses a pod-level security context unless its
	// podspec-securitycontext flag is on, so this validation has teeth.
	out, err := Agent(AgentInput{Namespace: "apps", Name: "control", Spec: v1alpha1.LambdaAgentParameters{
		Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To(v1alpha1.ImageTag("v1"))},
		AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Model: "llama3.2:3b"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out.Service.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	svc := own(t, out.Service).(*knservingv1.Service) //nolint:forcetypeassert // Own makes Knative's Service of a Service.
	if err := svc.Validate(ctx); err == nil {
		t.Error("Knative's validation accepted a pod-level security context; the check above proves nothing")
	}
}
