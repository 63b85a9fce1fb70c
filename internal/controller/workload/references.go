package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtGetRef       = "cannot get %s %s"
	errFmtGetRefBroker = "cannot get Broker %s"
	msgFmtNoRabbitMQ   = "Broker %s is of class RabbitMQBroker, but the cluster serves no RabbitmqBrokerConfigs for it: install eventing-rabbitmq"
	errFmtMapping      = "cannot tell whether the cluster serves %s"
)

// unmet is the verdict on a workload whose objects refer to what the target
// namespace lacks (observe.Unmet); held is false when nothing lacks. Secrets
// and ConfigMaps are read one by one from the API server, since the informers
// hold only the provider's own ConfigMaps, and only their keys leave here.
func (d deployer) unmet(ctx context.Context, was v1alpha1.Phase, objs *render.Objects) (v observe.Verdict, held bool, err error) {
	return observe.Unmet(was, d.namespace, observe.ReferencesOf(objs.Service, objs.ListenedBroker()),
		func(kind, name string) (map[string]bool, bool, error) {
			key := types.NamespacedName{Namespace: d.namespace, Name: name}
			var keys func() map[string]bool
			var o client.Object
			if kind == observe.KindSecret {
				s := &corev1.Secret{}
				o, keys = s, func() map[string]bool { return observe.SecretKeys(s) }
			} else {
				c := &corev1.ConfigMap{}
				o, keys = c, func() map[string]bool { return observe.ConfigMapKeys(c) }
			}
			err := d.uncached.Get(ctx, key, o)
			switch {
			case kerrors.IsNotFound(err):
				return nil, false, nil
			case err != nil:
				return nil, false, errors.Wrapf(err, errFmtGetRef, kind, name)
			}
			return keys(), true, nil
		},
		func(name string) (bool, error) {
			err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.namespace, Name: name}, &eventingv1.Broker{})
			if kerrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, errors.Wrapf(err, errFmtGetRefBroker, name)
		})
}

// unserved says when a workload's Broker needs a kind the target cluster
// does not serve: the RabbitmqBrokerConfig of a RabbitMQ Broker, in a
// cluster without eventing-rabbitmq. Nothing of it is applied until the
// kind is served; the REST mapper looks again on every miss.
func (d deployer) unserved(objs *render.Objects) (string, error) {
	cfg := objs.BrokerConfig
	if cfg == nil {
		return "", nil
	}
	gvk := cfg.GroupVersionKind()
	_, err := d.kube.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case apimeta.IsNoMatchError(err):
		return fmt.Sprintf(msgFmtNoRabbitMQ, objs.Broker.Name) + observe.MsgHeld, nil
	case err != nil:
		return "", errors.Wrapf(err, errFmtMapping, gvk.Kind)
	}
	return "", nil
}
