package workload

import (
	"context"
	"fmt"
	"slices"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const errFmtRelease = "cannot take this resource off the creators of %s"

// A Broker is shared: the provider creates one for each resource whose spec
// says so, and the resources that create it or listen on it may come and
// go in any order. Each creator says so by an annotation on the Broker, and
// each listener by its Triggers. A resource that stops creating or
// listening on a Broker the provider created takes its annotation off, and
// deletes the Broker when no other resource creates it or listens on it. So
// the last to leave deletes it, whether it created it or not, and a creator
// that sends to its Broker without listening keeps it.

// usedBrokers names the Brokers a resource created or listened on, which it
// sees to when it stops: the one its spec creates, those its status says it
// has yet to see to, and the one it last used.
func usedBrokers(b *v1alpha1.Broker, e *v1alpha1.EventingObservation) []string {
	var names []string
	if b != nil && b.Create {
		names = append(names, render.BrokerName(b))
	}
	if e != nil {
		names = append(names, e.CreatedBrokers...)
		names = append(names, e.Broker)
	}
	slices.Sort(names)
	return slices.DeleteFunc(slices.Compact(names), func(n string) bool { return n == "" })
}

// A brokerLeft is what a resource that stops creating or listening on a
// Broker still has to do about it.
type brokerLeft struct {
	// mine is the live Broker while its annotations still say the
	// resource creates it.
	mine client.Object
	// objects are the live objects to delete, the Broker before its
	// RabbitmqBrokerConfig: none while another resource creates the Broker
	// or listens on it.
	objects []client.Object
}

// lines say what is left, as an observation's differences do.
func (l brokerLeft) lines() []string {
	var out []string
	if l.mine != nil {
		out = append(out, render.Key(l.mine)+": says this resource creates it")
	}
	for _, o := range l.objects {
		out = append(out, render.Key(o)+": left over")
	}
	return out
}

// brokerLeft finds what is left to do about the Broker of the name, which
// the resource stops creating, or stops listening on unless listening.
// Each object is read from the API server: a creator or listener that came
// a moment ago may not be in the informers yet, and the last to leave
// skipping its Broker would leave it behind for good. Nothing the provider
// did not create, or already deletes, is left to do.
func (d deployer) brokerLeft(ctx context.Context, name string, listening bool) (brokerLeft, error) {
	var l brokerLeft
	var live []client.Object
	for _, o := range slices.Backward(render.BrokerNamed(d.namespace, name)) {
		got, err := d.fresh(ctx, o)
		if apimeta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return l, err
		}
		if got == nil || got.GetDeletionTimestamp() != nil || notOurs(o, got) != "" {
			continue
		}
		live = append(live, got)
	}
	used := listening
	if len(live) > 0 {
		if b, ok := live[0].(*eventingv1.Broker); ok {
			for _, k := range render.Creators(b) {
				if k == d.creator() {
					l.mine = b
				} else {
					used = true
				}
			}
		}
	}
	if !used && len(live) > 0 {
		var err error
		if used, err = d.brokerInUse(ctx, name); err != nil {
			return l, err
		}
	}
	if !used {
		l.objects = live
	}
	return l, nil
}

// creator is the annotation by which the resource says it creates a Broker.
func (d deployer) creator() string {
	return render.CreatorAnnotation(d.kind, d.name)
}

// brokerInUse is true when a Trigger of another resource, not itself on its
// way out, uses the Broker. It reads the API server, not the informers:
// when several users go at once, each deletes its Triggers before it asks,
// so the last to ask sees none left, where a lagging cache would show each
// the others' and leave the Broker behind.
func (d deployer) brokerInUse(ctx context.Context, broker string) (bool, error) {
	l := &eventingv1.TriggerList{}
	if err := d.uncached.List(ctx, l, client.InNamespace(d.namespace)); err != nil {
		return false, errors.Wrapf(err, errFmtList, "Trigger")
	}
	for _, t := range l.Items {
		if t.Spec.Broker == broker && t.DeletionTimestamp == nil && (t.Labels[render.LabelKind] != d.kind || t.Labels[render.LabelResource] != d.name) {
			return true, nil
		}
	}
	return false, nil
}

// brokersLeft says what is left to do about the Brokers of the names, one
// line each, and which of them it concerns.
func (d deployer) brokersLeft(ctx context.Context, names []string, listening string) (lines, left []string, err error) {
	for _, name := range names {
		l, err := d.brokerLeft(ctx, name, name == listening)
		if err != nil {
			return nil, nil, err
		}
		if more := l.lines(); len(more) > 0 {
			lines, left = append(lines, more...), append(left, name)
		}
	}
	return lines, left, nil
}

// leave does what is left about the Brokers of the names. It takes the
// resource off a Broker's creators before it looks for others, as it
// deletes its Triggers first: of several that leave at once, the last to
// look then finds none and deletes the Broker.
func (d deployer) leave(ctx context.Context, names []string, listening string) error {
	for _, name := range names {
		l, err := d.brokerLeft(ctx, name, name == listening)
		if err != nil {
			return err
		}
		if l.mine != nil {
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, d.creator())
			if err := d.kube.Patch(ctx, l.mine, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
				return errors.Wrapf(err, errFmtRelease, render.Key(l.mine))
			}
			if l, err = d.brokerLeft(ctx, name, name == listening); err != nil {
				return err
			}
		}
		for _, o := range l.objects {
			if err := d.kube.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return errors.Wrapf(err, errFmtDelete, render.Key(o))
			}
		}
	}
	return nil
}

// retire finds what is left of the Brokers the resource created or listened
// on before, as its status says, and has stopped creating or listening on
// (its spec named another, or stopped creating one): the plan's Update sees
// to them as leave does on deletion, and the status keeps naming them until
// nothing is left, so a failed Update or a restarted provider does not
// forget them. At rest there are none, and nothing is read.
func (d deployer) retire(ctx context.Context, st *liveState, was *v1alpha1.EventingObservation, objs *render.Objects) error {
	creates, listening := "", objs.ListenedBroker()
	if objs.Broker != nil {
		creates = objs.Broker.Name
	}
	names := slices.DeleteFunc(usedBrokers(nil, was), func(n string) bool {
		return n == creates || n == listening && !slices.Contains(was.GetCreatedBrokers(), n)
	})
	lines, left, err := d.brokersLeft(ctx, names, listening)
	if err != nil || len(left) == 0 {
		return err
	}
	st.differences = append(st.differences, lines...)
	slices.Sort(st.differences)
	st.retiring, st.listening = left, listening
	st.upToDate = false
	return nil
}
