package clients

import (
	"unique"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TransformCompact keeps a cached object without its managed fields (see
// TargetCacheOptions), a ConfigMap and a pod with only what the provider
// reads of them (trimConfigMap, trimPod), and with one copy of what its
// objects repeat. A
// decoded object holds its own copy of every label key and value,
// annotation key, finalizer, owner's kind and condition word: each
// function's Service and LambdaFunction carry the same few dozen, at rest,
// for as long as the provider runs. Annotation values, mostly hashes and
// times that no two objects share, are left as they are, and so is a label
// value that is the object's own name. Label maps that objects repeat
// whole are kept once too, a Service's pods', and so are the parts of a
// Service that render writes alike for every function (see serviceParts).
func TransformCompact() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	services := newServiceParts()
	return func(in any) (any, error) {
		in, err := strip(in)
		if err != nil {
			return in, err
		}
		o, err := meta.Accessor(in)
		if err != nil {
			// Not an object, such as the last state of one deleted while a
			// watch was down; it is not kept.
			return in, nil //nolint:nilerr // Passed on as it came.
		}
		switch t := in.(type) {
		case *corev1.ConfigMap:
			trimConfigMap(t)
		case *corev1.Pod:
			trimPod(t)
		}
		compactMeta(o, o.GetName())
		switch t := in.(type) {
		case *servingv1.Service:
			services.compact(t)
		case *v1alpha1.LambdaFunction:
			forgetCreates(t)
			compactManaged(&t.Spec.ManagedResourceSpec, &t.Status.ManagedResourceStatus, &t.Status.AtProvider.WorkloadObservation)
		case *v1alpha1.LambdaAgent:
			forgetCreates(t)
			compactManaged(&t.Spec.ManagedResourceSpec, &t.Status.ManagedResourceStatus, &t.Status.AtProvider)
		}
		return in, nil
	}
}

// compactManaged keeps once what managed resources write alike: the words
// of their conditions, their provider config's name and kind, and their
// phase. Messages are each resource's own. Within a resource's status, the
// Revisions traffic goes to share the latest ready one's name.
func compactManaged(spec *xpv2.ManagedResourceSpec, st *xpv2.ManagedResourceStatus, at *v1alpha1.WorkloadObservation) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status, c.Reason = canonical(c.Type), canonical(c.Status), canonical(c.Reason)
	}
	if ref := spec.ProviderConfigReference; ref != nil {
		ref.Name, ref.Kind = canonical(ref.Name), canonical(ref.Kind)
	}
	at.Phase = canonical(at.Phase)
	for i := range at.Traffic {
		if at.Traffic[i].RevisionName == at.LatestReadyRevision {
			at.Traffic[i].RevisionName = at.LatestReadyRevision
		}
	}
}

// compactMeta points o's shared strings at one copy each. A label value
// that is name, the name of o or of the object whose pods o describes,
// becomes that name's string: it is one object's own, and a copy kept for
// every object would cost more than the copy it saves.
func compactMeta(o metav1.Object, name string) {
	o.SetNamespace(canonical(o.GetNamespace()))
	if l := o.GetLabels(); len(l) > 0 {
		o.SetLabels(canonicalKeys(l, func(v string) string {
			if v == name {
				return name
			}
			return canonical(v)
		}))
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		o.SetAnnotations(canonicalKeys(a, func(v string) string { return v }))
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = canonical(f[i])
		}
		o.SetFinalizers(f)
	}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = canonical(refs[i].APIVersion), canonical(refs[i].Kind)
		}
		o.SetOwnerReferences(refs)
	}
}

// canonicalKeys is m with the one copy of each key, and each value as value
// makes it.
func canonicalKeys(m map[string]string, value func(string) string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[canonical(k)] = value(v)
	}
	return c
}

// canonical is the one copy of s that every cached object shares; the
// copies decoded are left to the collector.
func canonical[S ~string](s S) S {
	if s == "" {
		return s
	}
	// One table for every string type: a condition's type is the same
	// word as a label's value.
	return S(unique.Make(string(s)).Value())
}
