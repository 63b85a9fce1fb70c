package render

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	knsourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	duckv1 "knative.dev/pkg/apis/duck/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestSchedules checks what render makes of a function's schedules: one
// PingSource each, sending a JSON event to the function's Service; and what
// the schema cannot tell but Knative refuses, refused before anything is
// built, in Knative's words.
func TestSchedules(t *testing.T) {
	image := v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/reports", Tag: ptr.To[v1alpha1.ImageTag]("v1")}}
	inline := v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}}
	type ping struct{ Schedule, Timezone, Data, Sink string }
	cases := map[string]struct {
		reason    string
		source    v1alpha1.FunctionSource
		schedules []v1alpha1.Schedule
		want      []ping
		err       string
	}{
		"Daily": {
			reason:    "A schedule sends its data as JSON to the function's Service, in its time zone.",
			source:    image,
			schedules: []v1alpha1.Schedule{{Name: "nightly", Schedule: "30 2 * * *", TimeZone: ptr.To("Europe/Berlin"), Data: &runtime.RawExtension{Raw: []byte(`{"report":"orders"}`)}}},
			want:      []ping{{Schedule: "30 2 * * *", Timezone: "Europe/Berlin", Data: `{"report":"orders"}`, Sink: "Service/reports"}},
		},
		"NoData": {
			reason:    "Without data the event carries an empty object, which every handler can read as JSON.",
			source:    image,
			schedules: []v1alpha1.Schedule{{Name: "hourly", Schedule: "@hourly"}},
			want:      []ping{{Schedule: "@hourly", Data: "{}", Sink: "Service/reports"}},
		},
		"Building": {
			reason:    "While its image builds, a function has nothing to invoke: no PingSource yet.",
			source:    inline,
			schedules: []v1alpha1.Schedule{{Name: "hourly", Schedule: "@hourly"}},
		},
		"BackwardsRange": {
			reason:    "A range that runs backwards passes the schema but not Knative's cron parser.",
			source:    image,
			schedules: []v1alpha1.Schedule{{Name: "evening", Schedule: "0 22-6 * * *"}},
			err:       "eventing.schedules evening: Knative refuses it: invalid value: beginning of range (22) beyond end of range (6)",
		},
		"UnknownTimeZone": {
			reason:    "A time zone the IANA database does not know, refused before the build that would never run on time.",
			source:    inline,
			schedules: []v1alpha1.Schedule{{Name: "nightly", Schedule: "@daily", TimeZone: ptr.To("Mars/Olympus_Mons")}},
			err:       "eventing.schedules nightly: Knative refuses it: invalid value: provided bad location Mars/Olympus_Mons",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Function(FunctionInput{Namespace: "apps", Name: "reports", Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{
				Source: tc.source, Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)},
				Eventing: &v1alpha1.FunctionEventing{Schedules: tc.schedules},
			}})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%s\nFunction(...): want an error containing %q, got %v", tc.reason, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []ping
			for _, ps := range out.Schedules {
				s := ps.Spec
				got = append(got, ping{Schedule: s.Schedule, Timezone: s.Timezone, Data: s.Data, Sink: s.Sink.Ref.Kind + "/" + s.Sink.Ref.Name})
				if s.ContentType != "application/json" {
					t.Errorf("%s\nPingSource %s: content type %q, want application/json", tc.reason, ps.Name, s.ContentType)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nPingSources: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestScheduleRefusedAsKnative holds render's check of a schedule to
// Knative's own PingSource validation: the same verdict in the same words,
// for schedules of every shape the schema lets through.
func TestScheduleRefusedAsKnative(t *testing.T) {
	cases := map[string]struct {
		reason             string
		schedule, timezone string
	}{
		"FiveFields":    {reason: "A standard cron line is taken.", schedule: "30 2 * * *"},
		"SixFields":     {reason: "A line with seconds is taken.", schedule: "0 30 2 * * *"},
		"Descriptor":    {reason: "A descriptor is taken.", schedule: "@hourly"},
		"TimeZone":      {reason: "A time zone the IANA database knows is taken.", schedule: "0 9 * * 1-5", timezone: "Europe/Berlin"},
		"Every":         {reason: "@every is a descriptor Knative refuses.", schedule: "@every 5m"},
		"Backwards":     {reason: "A range that runs backwards is refused.", schedule: "0 22-6 * * *"},
		"TooFewFields":  {reason: "Four fields are too few.", schedule: "0 2 * *"},
		"OutOfRange":    {reason: "An hour past 23 is refused.", schedule: "0 24 * * *"},
		"UnknownZone":   {reason: "A time zone the IANA database does not know is refused, as a time zone.", schedule: "@daily", timezone: "Mars/Olympus_Mons"},
		"BothWrong":     {reason: "A wrong schedule in an unknown zone is refused for the zone, as Knative parses them together.", schedule: "0 22-6 * * *", timezone: "Mars/Olympus_Mons"},
		"EveryAndWrong": {reason: "Every reason is given.", schedule: "@every 5m", timezone: "Mars/Olympus_Mons"},
		"Unknown":       {reason: "A descriptor cron does not know is refused.", schedule: "@fortnightly"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := &knsourcesv1.PingSource{Spec: knsourcesv1.PingSourceSpec{
				SourceSpec:  duckv1.SourceSpec{Sink: serviceSubscriber("reports")},
				Schedule:    tc.schedule,
				Timezone:    tc.timezone,
				ContentType: contentJSON,
				Data:        "{}",
			}}
			var theirs, ours string
			if fe := k.Validate(context.Background()); fe != nil {
				theirs = fe.Error()
			}
			if fe := scheduleRefused(tc.schedule, tc.timezone); fe != nil {
				ours = fe.Error()
			}
			if diff := cmp.Diff(theirs, ours); diff != "" {
				t.Errorf("%s\nscheduleRefused(%q, %q): -Knative's, +ours:\n%s", tc.reason, tc.schedule, tc.timezone, diff)
			}
		})
	}
}
