package render

import (
	"context"
	// Schedules name IANA time zones, which Knative's validation loads;
	// the provider's and the function's images have no zoneinfo of their own.
	_ "time/tzdata"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// ComponentSchedule is the LabelComponent of a function's PingSources.
const ComponentSchedule = "schedule"

const errFmtSchedule = "eventing.schedules %s: Knative refuses it: %s"

// contentJSON is the content type of every schedule's event: its data is a
// JSON object.
const contentJSON = "application/json"

// ScheduleName names a function's PingSource for one of its schedules.
func ScheduleName(name string, schedule v1alpha1.DNSLabel) string {
	return TriggerName(v1alpha1.LambdaFunctionKind, name, string(schedule), "schedule/"+string(schedule))
}

// schedules renders a function's PingSources, each sending its event to the
// function's Service. What Knative's own validation would refuse, such as a
// range that runs backwards or an unknown time zone, which the schema cannot
// tell, is refused here in Knative's words, before anything is built.
func schedules(namespace, name string, in []v1alpha1.Schedule) ([]*sourcesv1.PingSource, error) {
	var out []*sourcesv1.PingSource
	for _, s := range in {
		data := "{}"
		if s.Data != nil && len(s.Data.Raw) > 0 {
			data = string(s.Data.Raw)
		}
		ps := &sourcesv1.PingSource{
			TypeMeta:   metav1.TypeMeta{APIVersion: sourcesAPIVersion, Kind: "PingSource"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ScheduleName(name, s.Name), Labels: labels(v1alpha1.LambdaFunctionKind, name, ComponentSchedule)},
			Spec: sourcesv1.PingSourceSpec{
				SourceSpec:  duckv1.SourceSpec{Sink: serviceSubscriber(name)},
				Schedule:    string(s.Schedule),
				Timezone:    deref(s.TimeZone),
				ContentType: contentJSON,
				Data:        data,
			},
		}
		if err := ps.Validate(context.Background()); err != nil {
			return nil, errors.Errorf(errFmtSchedule, s.Name, err.Error())
		}
		out = append(out, ps)
	}
	return out, nil
}
