package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1alpha1 "github.com/knative-lambda/provider-knative-lambda/apis/platform/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errGetFmt       = "cannot get %s %s/%s"
	errDecodeFmt    = "cannot read the status of %s %s/%s"
	errNotFoundFmt  = "no LambdaFunction, LambdaAgent, Lambda or Agent named %s in namespace %s"
	errAmbiguousFmt = "%s names more than one workload in namespace %s (%s): say which, such as %s/%s"
	errKindFmt      = "%s is not a kind kubectl lambda knows: use lambdafunction (lf), lambdaagent (la), lambda or agent"
)

// A kind is one of the kinds the plugin works with.
type kind struct {
	gvk schema.GroupVersionKind
	// names are what a user may write before the slash of KIND/NAME.
	names []string
	// status is where its observation is: a managed resource's under
	// atProvider, a composite's in its status.
	status []string
	// spec is where its parameters are: a managed resource's under
	// forProvider, a composite's in its spec.
	spec []string
	// container is the name of its workload's container in its pods.
	container string
}

// kinds are looked up in this order for a bare name.
var kinds = []kind{
	{gvk: v1alpha1.LambdaFunctionGroupVersionKind, names: []string{"lambdafunction", "lambdafunctions", "lf"}, status: []string{"status", "atProvider"}, spec: []string{"spec", "forProvider"}, container: render.ContainerFunction},
	{gvk: v1alpha1.LambdaAgentGroupVersionKind, names: []string{"lambdaagent", "lambdaagents", "la"}, status: []string{"status", "atProvider"}, spec: []string{"spec", "forProvider"}, container: render.ContainerAgent},
	{gvk: platformv1alpha1.SchemeGroupVersion.WithKind(platformv1alpha1.LambdaKind), names: []string{"lambda", "lambdas"}, status: []string{"status"}, spec: []string{"spec"}, container: render.ContainerFunction},
	{gvk: platformv1alpha1.SchemeGroupVersion.WithKind(platformv1alpha1.AgentKind), names: []string{"agent", "agents"}, status: []string{"status"}, spec: []string{"spec"}, container: render.ContainerAgent},
}

// A workload is a function or an agent as the plugin reads it: the same
// observation whether a managed resource or a composite holds it.
type workload struct {
	kind       kind
	object     *unstructured.Unstructured
	status     v1alpha1.LambdaFunctionObservation
	conditions []xpv2.Condition
}

// Kind, Name and Namespace say which workload it is.
func (w *workload) Kind() string      { return w.kind.gvk.Kind }
func (w *workload) Name() string      { return w.object.GetName() }
func (w *workload) Namespace() string { return w.object.GetNamespace() }

// find reads the workload a user names: NAME, looked up among every kind,
// or KIND/NAME.
func find(ctx context.Context, c client.Reader, namespace, arg string) (*workload, error) {
	candidates := kinds
	name := arg
	if k, n, ok := strings.Cut(arg, "/"); ok {
		kd, err := kindNamed(k)
		if err != nil {
			return nil, err
		}
		candidates, name = []kind{kd}, n
	}
	var found []*workload
	for _, k := range candidates {
		w, err := get(ctx, c, k, types.NamespacedName{Namespace: namespace, Name: name})
		if kerrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = append(found, w)
	}
	switch len(found) {
	case 0:
		return nil, errors.Errorf(errNotFoundFmt, name, namespace)
	case 1:
		return found[0], nil
	}
	ks := make([]string, len(found))
	for i, w := range found {
		ks[i] = w.Kind()
	}
	return nil, errors.Errorf(errAmbiguousFmt, name, namespace, strings.Join(ks, ", "), found[0].kind.names[0], name)
}

// kindNamed is the kind a user's word names.
func kindNamed(word string) (kind, error) {
	for _, k := range kinds {
		for _, n := range k.names {
			if strings.EqualFold(word, n) || strings.EqualFold(word, k.gvk.Kind) {
				return k, nil
			}
		}
	}
	return kind{}, errors.Errorf(errKindFmt, word)
}

// get reads one workload of a kind.
func get(ctx context.Context, c client.Reader, k kind, key types.NamespacedName) (*workload, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return nil, errors.Wrapf(err, errGetFmt, k.gvk.Kind, key.Namespace, key.Name)
	}
	w := &workload{kind: k, object: u}
	if obs, ok, _ := unstructured.NestedMap(u.Object, k.status...); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obs, &w.status); err != nil {
			return nil, errors.Wrapf(err, errDecodeFmt, k.gvk.Kind, key.Namespace, key.Name)
		}
	}
	if conds, ok, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); ok {
		s := xpv2.ConditionedStatus{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"conditions": conds}, &s); err != nil {
			return nil, errors.Wrapf(err, errDecodeFmt, k.gvk.Kind, key.Namespace, key.Name)
		}
		w.conditions = s.Conditions
	}
	return w, nil
}

// String is KIND NAMESPACE/NAME.
func (w *workload) String() string {
	return fmt.Sprintf("%s %s/%s", w.Kind(), w.Namespace(), w.Name())
}
