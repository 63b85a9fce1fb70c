package workload

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var errBoom = errors.New("boom")

// ofLambda labels an object as one of the LambdaFunction name's.
func ofLambda(name string) map[string]string {
	return map[string]string{render.LabelManagedBy: render.ManagedBy, render.LabelKind: v1alpha1.LambdaFunctionKind, render.LabelResource: name}
}

// listing fills lists of the kinds given with their objects; other kinds
// list empty.
func listing(items map[string][]client.Object) test.MockListFn {
	return test.NewMockListFn(nil, func(l client.ObjectList) error {
		switch l := l.(type) {
		case *eventingv1.TriggerList:
			for _, o := range items["Trigger"] {
				l.Items = append(l.Items, *o.(*eventingv1.Trigger)) //nolint:forcetypeassert // The test lists Triggers as Triggers.
			}
		}
		return nil
	})
}

// imageFunction renders a LambdaFunction of a prebuilt image: a Service
// alone.
func imageFunction(t testing.TB) *render.Objects {
	t.Helper()
	objs, err := render.Function(render.FunctionInput{Namespace: "apps", Name: "hello", Spec: testkit.ImageFunction("apps", "hello").Spec.ForProvider})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestApplyErrors(t *testing.T) {
	notFound := kerrors.NewNotFound(schema.GroupResource{Group: "serving.knative.dev", Resource: "services"}, "hello")
	leftOver := &eventingv1.Trigger{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello-old", Labels: ofLambda("hello")}}
	taken := func(_ context.Context, _ client.ObjectKey, o client.Object) error {
		o.SetLabels(ofLambda("other"))
		return nil
	}
	cases := map[string]struct {
		reason string
		kube   *test.MockClient
		want   error
	}{
		"GetFails": {
			reason: "A read of the Service that fails stops the apply before anything is written, saying which object.",
			kube:   &test.MockClient{MockGet: test.NewMockGetFn(errBoom)},
			want:   errors.Wrapf(errBoom, errFmtGet, "Service/hello"),
		},
		"ListFails": {
			reason: "A list that fails stops the apply before anything is written, saying which kind.",
			kube:   &test.MockClient{MockGet: test.NewMockGetFn(notFound), MockList: test.NewMockListFn(errBoom)},
			want:   errors.Wrapf(errBoom, errFmtList, "Trigger"),
		},
		"ApplyFails": {
			reason: "An apply the API server refuses is returned with the object it was for.",
			kube: &test.MockClient{
				MockList:  listing(nil),
				MockGet:   test.NewMockGetFn(notFound),
				MockApply: func(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error { return errBoom },
			},
			want: errors.Wrapf(errBoom, errFmtApply, "Service/hello"),
		},
		"NameTaken": {
			reason: "An object of another resource under a desired name is never applied onto.",
			kube: &test.MockClient{
				MockList: listing(nil),
				MockGet:  taken,
				MockApply: func(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					return errors.New("applied onto another resource's object")
				},
			},
			want: errors.Wrap(errors.New(fmt.Sprintf(errFmtOthers, "Service", "hello", v1alpha1.LambdaFunctionKind, "other", v1alpha1.LambdaFunctionKind)), errConflict),
		},
		"PruneFails": {
			reason: "A left-over object whose delete fails is returned with its name.",
			kube: &test.MockClient{
				MockList:   listing(map[string][]client.Object{"Trigger": {leftOver}}),
				MockGet:    test.NewMockGetFn(notFound),
				MockApply:  func(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error { return nil },
				MockDelete: test.NewMockDeleteFn(errBoom),
			},
			want: errors.Wrapf(errBoom, errFmtDelete, "Trigger/hello-old"),
		},
		"PrunedAlready": {
			reason: "A left-over object that is gone by the time it is deleted is no error.",
			kube: &test.MockClient{
				MockList:   listing(map[string][]client.Object{"Trigger": {leftOver}}),
				MockGet:    test.NewMockGetFn(notFound),
				MockApply:  func(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error { return nil },
				MockDelete: test.NewMockDeleteFn(kerrors.NewNotFound(schema.GroupResource{Group: "eventing.knative.dev", Resource: "triggers"}, "hello-old")),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := deployer{kube: tc.kube, uncached: tc.kube, kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello"}
			// A Create or Update applies what its reconcile's Observe found.
			desired := imageFunction(t).All()
			found, err := d.observe(context.Background(), desired)
			if err == nil {
				err = d.apply(context.Background(), plan{desired: desired, found: found, prune: true})
			}
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nobserve(...), then apply(...): -want error, +got error:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemoveErrors(t *testing.T) {
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello", Labels: ofLambda("hello")}}
	conflict := kerrors.NewConflict(schema.GroupResource{Group: "serving.knative.dev", Resource: "services"}, "hello", errBoom)
	cases := map[string]struct {
		reason string
		kube   *test.MockClient
		shared []string
		want   error
	}{
		"DeleteConflicts": {
			reason: "A delete the API server refuses is returned with the object, so the reconcile tries again.",
			kube: &test.MockClient{
				MockGet:    test.NewMockGetFn(nil, func(o client.Object) error { *o.(*servingv1.Service) = *svc; return nil }), //nolint:forcetypeassert // The Service is read by name as a Service.
				MockList:   listing(nil),
				MockDelete: test.NewMockDeleteFn(conflict),
			},
			want: errors.Wrapf(conflict, errFmtDelete, "Service/hello"),
		},
		"UsersUnknown": {
			reason: "When the Broker's other users cannot be listed, the Broker stays.",
			kube: &test.MockClient{
				MockGet: func(_ context.Context, _ client.ObjectKey, o client.Object) error {
					b, ok := o.(*eventingv1.Broker)
					if !ok {
						return kerrors.NewNotFound(schema.GroupResource{}, o.GetName())
					}
					*b = *createdBroker("events")
					return nil
				},
				MockList: func(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
					if _, ok := l.(*eventingv1.TriggerList); ok {
						return errBoom
					}
					return nil
				},
				MockDelete: test.NewMockDeleteFn(errors.New("deleted the Broker")),
			},
			shared: []string{"events"},
			want:   errors.Wrapf(errBoom, errFmtList, "Trigger"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := deployer{kube: tc.kube, uncached: tc.kube, kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello"}
			err := d.remove(context.Background(), tc.shared)
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nremove(...): -want error, +got error:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestObserveErrors(t *testing.T) {
	python, handler, tag := v1alpha1.LanguagePython, "main.handler", v1alpha1.ImageTag("v1")
	inline := v1alpha1.LambdaFunctionParameters{
		Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return {}\n"}},
		Runtime: &v1alpha1.Runtime{Language: &python, Handler: &handler},
	}
	image := v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/hello", Tag: &tag}}}
	cases := map[string]struct {
		reason string
		kube   *test.MockClient
		spec   v1alpha1.LambdaFunctionParameters
		want   error
	}{
		"GetJobFails": {
			reason: "A build Job that cannot be read is an error, and nothing is said of the build.",
			kube:   &test.MockClient{MockGet: test.NewMockGetFn(errBoom)},
			spec:   inline,
			want:   errors.Wrap(errBoom, errGetJob),
		},
		"GetServiceFails": {
			reason: "A Service that cannot be read is an error, not an absence: nothing is said of it.",
			kube:   &test.MockClient{MockGet: test.NewMockGetFn(errBoom)},
			spec:   image,
			want:   errors.Wrapf(errBoom, errFmtGet, "Service/hello"),
		},
		"ListFails": {
			reason: "Objects that cannot be listed are an error, not an absence: nothing is said of the Service.",
			kube: &test.MockClient{
				MockGet:  test.NewMockGetFn(kerrors.NewNotFound(schema.GroupResource{Group: "serving.knative.dev", Resource: "services"}, "hello")),
				MockList: test.NewMockListFn(errBoom),
			},
			spec: image,
			want: errors.Wrapf(errBoom, errFmtList, "Trigger"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &functionClient{connection: connection{
				deployer: deployer{kube: tc.kube, uncached: tc.kube, kind: v1alpha1.LambdaFunctionKind, namespace: "apps", name: "hello"},
				defaults: render.Defaults{Registry: "registry.example.com/lambdas"},
				record:   event.NewNopRecorder(),
			}}
			mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "hello"}, Spec: v1alpha1.LambdaFunctionSpec{ForProvider: tc.spec}}
			_, err := c.Observe(context.Background(), mg)
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nObserve(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionUnknown}, mg.GetCondition(xpv2.TypeReady)); diff != "" {
				t.Errorf("%s\nObserve(...): Ready condition set from a failed read: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
