package workload

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/clients"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// A maskingReader reads the Service as the informers' reader does, with
// its kind set, and then applies mask to it, resourceVersion and all:
// content a real API server never serves under a resourceVersion it served
// before, which only a comparison sees.
type maskingReader struct {
	client.Client
	mask func(*servingv1.Service)
}

func (r maskingReader) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if err := r.Client.Get(ctx, key, o, opts...); err != nil {
		return err
	}
	if svc, ok := o.(*servingv1.Service); ok {
		svc.SetGroupVersionKind(servingv1.SchemeGroupVersion.WithKind("Service"))
		if r.mask != nil {
			r.mask(svc)
		}
	}
	return nil
}

func TestObserveComparesWhatChanged(t *testing.T) {
	maxScale := func(v string) func(*servingv1.Service) {
		return func(s *servingv1.Service) { s.Spec.Template.Annotations["autoscaling.knative.dev/max-scale"] = v }
	}
	differs := []string{"Service/hello"}
	type change struct {
		// update writes the live Service anew, as a user's edit does.
		update func(*servingv1.Service)
		// mask alters the live Service as read, keeping its
		// resourceVersion.
		mask func(*servingv1.Service)
		// spec changes what render wants.
		spec func(*render.FunctionInput)
		// unstamped drops the desired objects' stamps.
		unstamped bool
	}
	cases := map[string]struct {
		reason string
		first  change
		then   change
		want   []string
	}{
		"Unchanged": {
			reason: "A second observe of objects unchanged since they were found up to date finds them up to date.",
			want:   nil,
		},
		"SameResourceVersion": {
			reason: "Objects of the resourceVersions and stamps last found up to date are not compared again: content that differs under the same resourceVersion goes unseen.",
			then:   change{mask: maxScale("99")},
			want:   nil,
		},
		"Drifted": {
			reason: "An edit of the live object gives it a new resourceVersion, which is compared again.",
			then:   change{update: maxScale("99")},
			want:   differs,
		},
		"RenderedAnew": {
			reason: "A desired object with a new stamp is compared again with the same live object.",
			then:   change{spec: func(in *render.FunctionInput) { in.Spec.Scaling.MaxReplicas = new(int32(20)) }},
			want:   differs,
		},
		"DifferencesNotRemembered": {
			reason: "A comparison that found differences is not remembered: the same objects are compared again, and differ again.",
			first:  change{update: maxScale("99")},
			then:   change{mask: maxScale("99")},
			want:   differs,
		},
		"Unstamped": {
			reason: "Desired objects without a stamp are always compared: nothing says they are the objects compared before.",
			first:  change{unstamped: true},
			then:   change{unstamped: true, mask: maxScale("99")},
			want:   differs,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := kinds.TargetScheme()
			if err != nil {
				t.Fatal(err)
			}
			desired := func(c change) []kube.Object {
				in := render.FunctionInput{Namespace: "apps", Name: "hello", Spec: testkit.ImageFunction("apps", "hello").Spec.ForProvider}
				in.Spec.Scaling = &v1alpha1.Scaling{MaxReplicas: new(int32(10))}
				if c.spec != nil {
					c.spec(&in)
				}
				objs, err := render.Function(in)
				if err != nil {
					t.Fatal(err)
				}
				if c.unstamped {
					for _, o := range objs.All() {
						delete(o.GetAnnotations(), render.AnnotationRendered)
					}
				}
				return objs.All()
			}
			live := desired(change{})[0].DeepCopyObject().(*servingv1.Service) //nolint:forcetypeassert // An image function's first object is its Service.
			live.UID = types.UID("uid-of-hello")
			kube := fake.NewClientBuilder().WithScheme(s).WithObjects(live).Build()
			d := deployer{kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello", compared: newCompared()}
			observeAfter := func(c change) []string {
				t.Helper()
				if c.update != nil {
					svc := &servingv1.Service{}
					if err := kube.Get(ctx, client.ObjectKeyFromObject(live), svc); err != nil {
						t.Fatal(err)
					}
					c.update(svc)
					if err := kube.Update(ctx, svc); err != nil {
						t.Fatal(err)
					}
				}
				d.kube = maskingReader{Client: kube, mask: c.mask}
				st, err := d.observe(ctx, desired(c))
				if err != nil {
					t.Fatal(err)
				}
				// The objects that differ: which difference of an object
				// is told first is the luck of a map's order.
				var keys []string
				for _, d := range st.differences {
					keys = append(keys, strings.SplitN(d, ":", 2)[0])
				}
				return keys
			}
			observeAfter(tc.first)
			got := observeAfter(tc.then)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nobserve(...): -want objects that differ, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCompareBuildContextByIdentity checks that a build's ConfigMap, of
// which the cache keeps no data, is compared by the identity it is
// annotated with.
func TestCompareBuildContextByIdentity(t *testing.T) {
	cases := map[string]struct {
		reason string
		live   func(*corev1.ConfigMap)
		want   []string
	}{
		"AsCached": {
			reason: "A build's ConfigMap as the cache keeps it, without its data, is up to date.",
		},
		"OtherIdentity": {
			reason: "A ConfigMap annotated with another build's identity is not the build's.",
			live:   func(cm *corev1.ConfigMap) { cm.Annotations[v1alpha1.Group+"/build-identity"] = "another" },
			want:   []string{"ConfigMap/"},
		},
		"Mutable": {
			reason: "What else render sets of the ConfigMap is still compared.",
			live:   func(cm *corev1.ConfigMap) { cm.Immutable = nil },
			want:   []string{"ConfigMap/"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := render.Function(render.FunctionInput{
				Namespace: "apps", Name: "hello", Spec: testkit.InlineFunction("apps", "hello", "def handler(event):\n    return event\n").Spec.ForProvider,
				Defaults: render.Defaults{Registry: "registry.local/lambdas"},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := objs.BuildContext
			if want == nil || len(want.Data) == 0 {
				t.Fatal("render.Function(inline): no build ConfigMap with data")
			}
			cm := want.DeepCopy()
			if _, err := clients.TransformCompact()(cm); err != nil {
				t.Fatal(err)
			}
			if len(cm.Data) != 0 {
				t.Fatalf("the cache keeps %d keys of a ConfigMap's data", len(cm.Data))
			}
			if tc.live != nil {
				tc.live(cm)
			}
			d := deployer{kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello"}
			got := d.compare([]kube.Object{want}, map[string]client.Object{render.Key(want): cm})
			for i := range got {
				// Which field differs is diff's to say.
				got[i], _, _ = strings.Cut(got[i], want.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncompare(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
