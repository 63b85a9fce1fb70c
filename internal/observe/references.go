package observe

import (
	"fmt"
	"strings"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// What a workload refers to and its namespace lacks.
const (
	msgFmtNoSecret = "Secret %s (%s) does not exist in namespace %s"
	msgFmtNoKey    = "Secret %s (%s) in namespace %s has no key %q"
	msgFmtNoBroker = "Broker %s, which the Triggers listen on, does not exist in namespace %s: create it, or set eventing.broker.create to true"

	// MsgHeld ends what a workload held for a missing object says.
	MsgHeld = "; nothing is deployed or changed until it does"
)

// References are what a workload's objects refer to in its namespace and do
// not create.
type References struct {
	// Secrets its pods cannot pull or start without.
	Secrets []SecretRef

	// Broker its Triggers listen on, when the workload does not create it;
	// empty otherwise.
	Broker string
}

// ReferencesOf lists what a workload's Service, nil before it is rendered,
// refers to, and the Broker its Triggers listen on and it does not create.
func ReferencesOf(svc *servingv1.Service, broker string) References {
	r := References{Broker: broker}
	if svc != nil {
		r.Secrets = RequiredSecrets(svc.Spec.Template.Spec.PodSpec)
	}
	return r
}

// A SecretFn reads a Secret of the workload's namespace: its data, or false
// when it does not exist. The data never leaves Unmet.
type SecretFn func(name string) (data map[string][]byte, found bool, err error)

// A BrokerFn says whether a Broker of the workload's namespace exists.
type BrokerFn func(name string) (found bool, err error)

// Unmet is the verdict on a workload whose references its namespace lacks:
// deploying without them would start pods that cannot pull or start, or
// Triggers that deliver nothing, and an update would replace a running
// Revision with one that fails. held is false when nothing lacks.
func Unmet(was v1alpha1.Phase, namespace string, refs References, secret SecretFn, broker BrokerFn) (v Verdict, held bool, err error) {
	var missing []string
	for _, ref := range refs.Secrets {
		data, found, err := secret(ref.Name)
		switch {
		case err != nil:
			return Verdict{}, false, err
		case !found:
			missing = append(missing, fmt.Sprintf(msgFmtNoSecret, ref.Name, ref.Use, namespace))
		case ref.Key != "":
			if _, ok := data[ref.Key]; !ok {
				missing = append(missing, fmt.Sprintf(msgFmtNoKey, ref.Name, ref.Use, namespace, ref.Key))
			}
		}
	}
	if len(missing) > 0 {
		return Held(was, v1alpha1.ReasonSecretMissing, strings.Join(missing, "; ")+MsgHeld), true, nil
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
