package workload

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errFmtGetRefSecret = "cannot get Secret %s"
	errFmtGetRefBroker = "cannot get Broker %s"
	msgFmtNoSecret     = "Secret %s (%s) does not exist in namespace %s"
	msgFmtNoKey        = "Secret %s (%s) in namespace %s has no key %q"
	msgFmtNoBroker     = "Broker %s, which the Triggers listen on, does not exist in namespace %s: create it, or set eventing.broker.create to true"
	msgFmtNoRabbitMQ   = "Broker %s is of class RabbitMQBroker, but the cluster serves no RabbitmqBrokerConfigs for it: install eventing-rabbitmq"
	msgHeld            = "; nothing is deployed or changed until it does"
	errFmtMapping      = "cannot tell whether the cluster serves %s"
)

// unmet says what a workload's objects refer to that the target namespace
// lacks: a Secret its pods read, or the Broker its Triggers listen on when
// the resource does not create it. Deploying without them would start pods
// that cannot pull or start, or Triggers that deliver nothing, and an update
// would replace a running revision with one that fails. Secrets are read one
// by one and their values never leave this function.
func (d deployer) unmet(ctx context.Context, objs *render.Objects) (xpv2.ConditionReason, string, error) {
	var missing []string
	if svc := objs.Service; svc != nil {
		for _, ref := range observe.RequiredSecrets(svc.Spec.Template.Spec.PodSpec) {
			s := &corev1.Secret{}
			err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.namespace, Name: ref.Name}, s)
			switch {
			case kerrors.IsNotFound(err):
				missing = append(missing, fmt.Sprintf(msgFmtNoSecret, ref.Name, ref.Use, d.namespace))
			case err != nil:
				return "", "", errors.Wrapf(err, errFmtGetRefSecret, ref.Name)
			case ref.Key != "":
				if _, ok := s.Data[ref.Key]; !ok {
					missing = append(missing, fmt.Sprintf(msgFmtNoKey, ref.Name, ref.Use, d.namespace, ref.Key))
				}
			}
		}
	}
	if len(missing) > 0 {
		return v1alpha1.ReasonSecretMissing, strings.Join(missing, "; ") + msgHeld, nil
	}
	if objs.Broker != nil || len(objs.Triggers) == 0 {
		return "", "", nil
	}
	name := objs.Triggers[0].Spec.Broker
	err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.namespace, Name: name}, &eventingv1.Broker{})
	switch {
	case kerrors.IsNotFound(err):
		return v1alpha1.ReasonBrokerMissing, fmt.Sprintf(msgFmtNoBroker, name, d.namespace) + msgHeld, nil
	case err != nil:
		return "", "", errors.Wrapf(err, errFmtGetRefBroker, name)
	}
	return "", "", nil
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
		return fmt.Sprintf(msgFmtNoRabbitMQ, objs.Broker.Name) + msgHeld, nil
	case err != nil:
		return "", errors.Wrapf(err, errFmtMapping, gvk.Kind)
	}
	return "", nil
}

// held is the observation of a resource that waits for something a user
// must fix: up to date, so nothing is applied, and not Ready, saying why.
func held(mg resource.Managed, reason xpv2.ConditionReason, msg string, err error) (managed.ExternalObservation, error) {
	if msg != "" {
		mg.SetConditions(notReady(mg, reason, msg))
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, err
}
