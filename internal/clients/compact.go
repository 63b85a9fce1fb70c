package clients

import (
	"maps"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TransformCompact keeps a cached object without its managed fields (see
// TargetCacheOptions) and with one copy of each string its objects' metadata
// repeat. A decoded object holds its own copy of every label key and value,
// annotation key, finalizer and owner's kind: each function's Service,
// LambdaFunction and ProviderConfigUsage carry the same few dozen, at rest,
// for as long as the provider runs. Annotation values, mostly hashes and
// times that no two objects share, are left as they are. Label maps that
// objects repeat whole are kept once too: a Service's pods', and those of
// the usages of one provider config.
func TransformCompact() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	usages := &labelSets{}
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
		switch t := in.(type) {
		case *servingv1.Service:
			compactPods(t)
		case *v1alpha1.ProviderConfigUsage:
			// The usages of one provider config carry the same labels,
			// its name and kind, and every resource has a usage.
			t.Labels = usages.shared(t.Labels)
		}
		return in, nil
	}
}

// maxLabelSets bounds how many label sets a labelSets keeps.
const maxLabelSets = 64

// A labelSets keeps one map for each set of labels that many cached objects
// carry, so that they share it. Once it holds maxLabelSets it starts again:
// a set it no longer holds is kept anew the next time one is decoded.
type labelSets struct {
	mu   sync.Mutex
	sets []map[string]string
}

// shared is the map kept for the labels l holds, which becomes l when none
// is.
func (s *labelSets) shared(l map[string]string) map[string]string {
	if len(l) == 0 {
		return l
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kept := range s.sets {
		if maps.Equal(kept, l) {
			return kept
		}
	}
	if len(s.sets) == maxLabelSets {
		clear(s.sets)
		s.sets = s.sets[:0]
	}
	s.sets = append(s.sets, l)
	return l
}

// compactPods compacts a Service's pod metadata, whose labels are most
// often its own: then the pods' are the Service's map, one map fewer a
// Service. Reads from the cache get deep copies, and nothing writes to a
// cached object, so two fields may share a map there.
func compactPods(s *servingv1.Service) {
	pods := &s.Spec.Template.ObjectMeta
	same := len(pods.Labels) > 0 && maps.Equal(pods.Labels, s.Labels)
	if same {
		// compactMeta would make them a map of their own.
		pods.Labels = nil
	}
	compactMeta(pods)
	if same {
		pods.Labels = s.Labels
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
