package workload

import (
	"context"
	"hash/maphash"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/internal/diff"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// Compared remember, for each resource of one kind, the last comparison
// that found every live object holding what render wants: a hash of each
// desired object's stamp (render.AnnotationRendered) with its live copy's
// UID and resourceVersion. The stamp stands for everything render set, and a
// live object of one resourceVersion never changes, so the same hash means
// the same comparison with the same answer. A poll of a resource at rest
// then compares nothing, where converting each desired object and its
// live copy to their JSON form and walking them is most of what a poll
// costs. Anything that changes a live object, a drift included, gives it a
// new resourceVersion, and anything that changes what render wants, a new
// stamp.
type compared struct {
	*notes[uint64]
	seed maphash.Seed
}

func newCompared() *compared {
	return &compared{notes: newNotes[uint64](), seed: maphash.MakeSeed()}
}

// forgetDeleted forgets each resource of obj's kind that the cache's
// informer sees go. A resource made again under its name has new objects,
// whose UIDs no hash remembered holds: this only gives the room back.
func (c *compared) forgetDeleted(ctx context.Context, ca cache.Informers, obj client.Object) error {
	inf, err := ca.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(o any) {
			key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(o)
			if err != nil {
				return
			}
			if ns, name, err := toolscache.SplitMetaNamespaceKey(key); err == nil {
				c.take(types.NamespacedName{Namespace: ns, Name: name})
			}
		},
	})
	return err
}

// fingerprint hashes what comparing each desired object that has a live
// copy depends on. It is false without compared, and when something is not
// identified, such as an object without a stamp: only comparing tells then.
func (c *compared) fingerprint(desired []kube.Object, live map[string]client.Object) (uint64, bool) {
	if c == nil {
		return 0, false
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	// Every poll at rest comes here: keys are made on the stack.
	var room [128]byte
	for _, o := range desired {
		key := render.AppendKey(room[:0], o)
		l, ok := live[string(key)]
		if !ok {
			continue
		}
		stamp, uid, rv := o.GetAnnotations()[render.AnnotationRendered], string(l.GetUID()), l.GetResourceVersion()
		if stamp == "" || uid == "" || rv == "" {
			return 0, false
		}
		_, _ = h.Write(key)
		_ = h.WriteByte(0)
		for _, p := range [...]string{stamp, uid, rv} {
			_, _ = h.WriteString(p)
			_ = h.WriteByte(0)
		}
	}
	return h.Sum64(), true
}

// same is true when the resource's last comparison, of objects whose hash
// is fp, found nothing.
func (c *compared) same(r types.NamespacedName, fp uint64) bool {
	if c == nil {
		return false
	}
	was, ok := c.get(r)
	return ok && was == fp
}

// found remembers that the comparison of objects whose hash is fp found
// nothing, when upToDate, and else forgets what it remembered.
func (c *compared) found(r types.NamespacedName, fp uint64, upToDate bool) {
	switch {
	case c == nil:
	case upToDate:
		c.add(r, fp)
	default:
		c.take(r)
	}
}

// compare lists, one line each, what the live copies of the desired objects
// lack, unless the resource's last comparison of the same objects found
// nothing.
func (d deployer) compare(desired []kube.Object, live map[string]client.Object) []string {
	r := types.NamespacedName{Namespace: d.namespace, Name: d.name}
	fp, known := d.compared.fingerprint(desired, live)
	if known && d.compared.same(r, fp) {
		return nil
	}
	var differences []string
	for _, o := range desired {
		key := render.Key(o)
		l, ok := live[key]
		if !ok {
			continue
		}
		if m := diff.Missing(comparable(o), l); len(m) > 0 {
			differences = append(differences, key+": "+m[0])
		}
	}
	d.compared.found(r, fp, known && len(differences) == 0)
	return differences
}

// comparable is what of a desired object its live copy is compared on:
// what it applies, but a ConfigMap's data, which the cache does not keep
// (clients.TransformCompact). A build's ConfigMap is immutable and named
// and annotated by its build's identity, which its data is part of.
func comparable(o client.Object) map[string]any {
	u := applied(o)
	if _, ok := o.(*corev1.ConfigMap); ok {
		delete(u, "data")
		delete(u, "binaryData")
	}
	return u
}
