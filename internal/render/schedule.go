package render

import (
	"strings"
	// Schedules name IANA time zones, which the cron parser loads; the
	// provider's and the function's images have no zoneinfo of their own.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"knative.dev/pkg/apis"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	sourcesv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/sources/v1"
)

// ComponentSchedule is the LabelComponent of a function's PingSources.
const ComponentSchedule = "schedule"

const (
	errFmtSchedule = "eventing.schedules %s: Knative refuses it: %s"
	errEvery       = "unsupported descriptor @every"
)

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
				Timezone:    ptr.Deref(s.TimeZone, ""),
				ContentType: contentJSON,
				Data:        data,
			},
		}
		if fe := scheduleRefused(ps.Spec.Schedule, ps.Spec.Timezone); fe != nil {
			return nil, errors.Errorf(errFmtSchedule, s.Name, fe.Error())
		}
		out = append(out, ps)
	}
	return out, nil
}

// cronSchedule reads a schedule as Knative's PingSource validation and its
// adapter read it: five fields, or six with seconds, or a descriptor such as
// @hourly, in the time zone a CRON_TZ prefix names.
var cronSchedule = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// scheduleRefused is what Knative's PingSource validation says of a schedule
// and its time zone, in its words, or nil. Render holds PingSource's wire
// form, not Knative's webhook, whose package would bring its dependencies
// into both binaries; the rest of that validation, of the sink and the
// data, holds for every PingSource render makes.
func scheduleRefused(schedule, timezone string) *apis.FieldError {
	var errs *apis.FieldError
	if strings.Contains(schedule, "@every") {
		errs = apis.ErrInvalidValue(errors.New(errEvery), "schedule")
	}
	if timezone != "" {
		schedule = "CRON_TZ=" + timezone + " " + schedule
	}
	if _, err := cronSchedule.Parse(schedule); err != nil {
		field := "schedule"
		if strings.HasPrefix(err.Error(), "provided bad location") {
			field = "timezone"
		}
		errs = errs.Also(apis.ErrInvalidValue(err, field))
	}
	return errs.ViaField("spec")
}
