package clients

import (
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TransformCompact keeps a cached object without its managed fields (see
// TargetCacheOptions) and with one copy of each string its objects' metadata
// repeat. A decoded object holds its own copy of every label key and value,
// annotation key, finalizer and owner's kind: each function's Service,
// LambdaFunction and ProviderConfigUsage carry the same few dozen, at rest,
// for as long as the provider runs. Annotation values, mostly hashes and
// times that no two objects share, are left as they are.
func TransformCompact() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
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
		compactMeta(o)
		if s, ok := in.(*servingv1.Service); ok {
			// A Service's pods repeat its labels.
			compactMeta(&s.Spec.Template.ObjectMeta)
		}
		return in, nil
	}
}

// compactMeta points o's shared strings at one copy each.
func compactMeta(o metav1.Object) {
	o.SetNamespace(canonical(o.GetNamespace()))
	if l := o.GetLabels(); len(l) > 0 {
		o.SetLabels(canonicalKeys(l, canonical))
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
func canonical(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
