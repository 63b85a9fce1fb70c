package observe

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// What a workload refers to and its namespace lacks.
const (
	msgFmtNoObject = "%s %s (%s) does not exist in namespace %s"
	msgFmtNoKey    = "%s %s (%s) in namespace %s has no key %q"
	msgFmtNoBroker = "Broker %s, which the Triggers listen on, does not exist in namespace %s: create it, or set eventing.broker.create to true"

	// MsgHeld ends what a workload held for a missing object says.
	MsgHeld = "; nothing is deployed or changed until it does"
)

// References are what a workload's objects refer to in its namespace and do
// not create.
type References struct {
	// Required are the Secrets and ConfigMaps its pods cannot pull or
	// start without.
	Required []Required

	// Broker its Triggers listen on, when the workload does not create it;
	// empty otherwise.
	Broker string
}

// ReferencesOf lists what a workload's Service, nil before it is rendered,
// refers to, and the Broker its Triggers listen on and it does not create.
func ReferencesOf(svc *servingv1.Service, broker string) References {
	r := References{Broker: broker}
	if svc != nil {
		r.Required = RequiredOf(svc.Spec.Template.Spec.PodSpec)
	}
	return r
}

// An ObjectFn reads a Secret or ConfigMap (KindSecret, KindConfigMap) of the
// workload's namespace: the keys it holds, or false when it does not exist.
// Its values are never read out of it.
type ObjectFn func(kind, name string) (keys map[string]bool, found bool, err error)

// SecretKeys are the keys of a Secret.
func SecretKeys(s *corev1.Secret) map[string]bool {
	keys := make(map[string]bool, len(s.Data))
	for k := range s.Data {
		keys[k] = true
	}
	return keys
}

// ConfigMapKeys are the keys of a ConfigMap, text and binary.
func ConfigMapKeys(c *corev1.ConfigMap) map[string]bool {
	keys := make(map[string]bool, len(c.Data)+len(c.BinaryData))
	for k := range c.Data {
		keys[k] = true
	}
	for k := range c.BinaryData {
		keys[k] = true
	}
	return keys
}

// A BrokerFn says whether a Broker of the workload's namespace exists.
type BrokerFn func(name string) (found bool, err error)

// Unmet is the verdict on a workload whose references its namespace lacks:
// deploying without them would start pods that cannot pull or start, or
// Triggers that deliver nothing, and an update would replace a running
// Revision with one that fails. held is false when nothing lacks.
func Unmet(was v1alpha1.Phase, namespace string, refs References, object ObjectFn, broker BrokerFn) (v Verdict, held bool, err error) {
	var missing []string
	// A missing Secret names the reason: it is the likelier to hold a
	// credential someone has yet to hand over.
	reason := v1alpha1.ReasonConfigMapMissing
	for _, ref := range refs.Required {
		keys, found, err := object(ref.Kind, ref.Name)
		var msg string
		switch {
		case err != nil:
			return Verdict{}, false, err
		case !found:
			msg = fmt.Sprintf(msgFmtNoObject, ref.Kind, ref.Name, ref.Use, namespace)
		case ref.Key != "" && !keys[ref.Key]:
			msg = fmt.Sprintf(msgFmtNoKey, ref.Kind, ref.Name, ref.Use, namespace, ref.Key)
		default:
			continue
		}
		missing = append(missing, msg)
		if ref.Kind == KindSecret {
			reason = v1alpha1.ReasonSecretMissing
		}
	}
	if len(missing) > 0 {
		return Held(was, reason, strings.Join(missing, "; ")+MsgHeld), true, nil
	}
	if refs.Broker == "" {
		return Verdict{}, false, nil
	}
	found, err := broker(refs.Broker)
	if err != nil || found {
		return Verdict{}, false, err
	}
	return Held(was, v1alpha1.ReasonBrokerMissing, fmt.Sprintf(msgFmtNoBroker, refs.Broker, namespace)+MsgHeld), true, nil
}
