package v1_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"knative.dev/networking/pkg/apis/networking"
	"knative.dev/pkg/apis"
	"knative.dev/serving/pkg/apis/serving"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"

	"github.com/knative-lambda/provider-knative-lambda/internal/knative/knativetest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// words is a validation's verdict as a user reads it: nothing, or the
// error's text.
func words(err *apis.FieldError) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTrafficRefusedAsKnative holds Validate's verdicts, and its words, to
// Knative's own validation of a Service's traffic, as the webhook runs it:
// within the Service's spec, whose Route has the Service's configuration.
func TestTrafficRefusedAsKnative(t *testing.T) {
	latest := func(percent int64, tag string) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{Tag: tag, LatestRevision: ptr.To(true), Percent: ptr.To(percent)}
	}
	pinned := func(rev string, percent int64) servingv1.TrafficTarget {
		return servingv1.TrafficTarget{RevisionName: rev, LatestRevision: ptr.To(false), Percent: ptr.To(percent)}
	}
	cases := map[string]struct {
		reason  string
		traffic []servingv1.TrafficTarget
		refused bool
	}{
		"AllLatest":     {reason: "The latest Revision takes all the traffic.", traffic: []servingv1.TrafficTarget{latest(100, "")}},
		"Canary":        {reason: "A pinned Revision keeps most of it; the latest takes the rest under a tag.", traffic: []servingv1.TrafficTarget{pinned("orders-00001", 90), latest(10, "canary")}},
		"ZeroPercent":   {reason: "A pinned Revision may take no traffic.", traffic: []servingv1.TrafficTarget{latest(100, ""), pinned("orders-00002", 0)}},
		"NoPercent":     {reason: "A target without a percent counts as none.", traffic: []servingv1.TrafficTarget{latest(100, ""), {RevisionName: "orders-00002", Tag: "old"}}},
		"Sum":           {reason: "Percents must sum to 100.", traffic: []servingv1.TrafficTarget{pinned("orders-00001", 50), latest(20, "next")}, refused: true},
		"Empty":         {reason: "Traffic given must go somewhere.", traffic: []servingv1.TrafficTarget{}, refused: true},
		"OverHundred":   {reason: "A percent is at most 100.", traffic: []servingv1.TrafficTarget{latest(150, ""), pinned("orders-00001", -50)}, refused: true},
		"BadTag":        {reason: "A tag becomes a host name.", traffic: []servingv1.TrafficTarget{latest(100, "Canary_1")}, refused: true},
		"DuplicateTag":  {reason: "Two targets cannot share a tag.", traffic: []servingv1.TrafficTarget{{Tag: "blue", LatestRevision: ptr.To(true), Percent: ptr.To[int64](50)}, {Tag: "blue", RevisionName: "orders-00001", LatestRevision: ptr.To(false), Percent: ptr.To[int64](50)}}, refused: true},
		"ThreeTags":     {reason: "Each repeat of a tag is named with the first.", traffic: []servingv1.TrafficTarget{latest(40, "a"), {Tag: "a", RevisionName: "orders-00001", Percent: ptr.To[int64](30)}, {Tag: "a", RevisionName: "orders-00002", Percent: ptr.To[int64](30)}}, refused: true},
		"BadRevision":   {reason: "A Revision's name is an object's name.", traffic: []servingv1.TrafficTarget{pinned("orders-00001-", 100)}, refused: true},
		"LongRevision":  {reason: "A Revision's name is at most 63 characters.", traffic: []servingv1.TrafficTarget{pinned("a-very-long-workload-name-that-goes-on-and-on-and-on-and-o-00001", 100)}, refused: true},
		"PinnedLatest":  {reason: "A target that pins a Revision cannot follow the latest.", traffic: []servingv1.TrafficTarget{{RevisionName: "orders-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}, refused: true},
		"UnpinnedFixed": {reason: "A target that follows no Revision goes nowhere.", traffic: []servingv1.TrafficTarget{{LatestRevision: ptr.To(false), Percent: ptr.To[int64](100)}}, refused: true},
		"Configuration": {reason: "A Service's traffic follows its own configuration.", traffic: []servingv1.TrafficTarget{{ConfigurationName: "other", Percent: ptr.To[int64](100)}}, refused: true},
		"URLInSpec":     {reason: "Knative writes a target's URL; a spec cannot.", traffic: []servingv1.TrafficTarget{{Tag: "a", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100), URL: apis.HTTP("a.example.com")}}, refused: true},
		"URLWithoutTag": {reason: "A URL without a tag is refused twice over.", traffic: []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100), URL: apis.HTTP("a.example.com")}}, refused: true},
		"ManyFaults":    {reason: "Every fault is said, as Knative says them together.", traffic: []servingv1.TrafficTarget{latest(120, "UP"), pinned("x-", 10), {ConfigurationName: "c"}}, refused: true},
	}
	ctx := apis.WithinSpec(knservingv1.WithDefaultConfigurationName(context.Background()))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := servingv1.RouteSpec{Traffic: tc.traffic}
			theirs := knativetest.As[knservingv1.RouteSpec](rs)
			want := words(theirs.Validate(ctx))
			if (want != "") != tc.refused {
				t.Fatalf("%s\nthe case is wrong: Knative's verdict is %q", tc.reason, want)
			}
			if diff := cmp.Diff(want, words(rs.Validate())); diff != "" {
				t.Errorf("%s\nValidate(): -Knative's, +ours:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRolloutDurationRefusedAsKnative holds ValidateRolloutDuration's
// verdicts and words to Knative's.
func TestRolloutDurationRefusedAsKnative(t *testing.T) {
	cases := map[string]struct {
		reason  string
		value   string
		refused bool
	}{
		"Unset":        {reason: "No pace is Knative's default."},
		"Minutes":      {reason: "Whole minutes are whole seconds.", value: "5m"},
		"Zero":         {reason: "No pace at all is allowed.", value: "0s"},
		"Mixed":        {reason: "Units combine.", value: "1h2m3s"},
		"SubSecond":    {reason: "Knative paces in whole seconds.", value: "1500ms", refused: true},
		"Fraction":     {reason: "A fraction of a second is not whole.", value: "1.5s", refused: true},
		"Negative":     {reason: "A pace cannot go backwards.", value: "-3s", refused: true},
		"NotADuration": {reason: "A duration has a unit.", value: "soon", refused: true},
		"NoUnit":       {reason: "A number alone is not a duration.", value: "30", refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := map[string]string{servingv1.RolloutDurationKey: tc.value}
			want := words(serving.ValidateRolloutDurationAnnotation(a))
			if (want != "") != tc.refused {
				t.Fatalf("%s\nthe case is wrong: Knative's verdict is %q", tc.reason, want)
			}
			if diff := cmp.Diff(want, words(servingv1.ValidateRolloutDuration(a))); diff != "" {
				t.Errorf("%s\nValidateRolloutDuration(%q): -Knative's, +ours:\n%s", tc.reason, tc.value, diff)
			}
		})
	}
}

func TestKeysAreKnatives(t *testing.T) {
	cases := map[string]struct {
		reason       string
		ours, theirs string
	}{
		"Service":      {reason: "Revisions and pods name their Service with Knative's label.", ours: servingv1.ServiceLabelKey, theirs: serving.ServiceLabelKey},
		"Rollout":      {reason: "Knative reads the rollout's pace from its annotation.", ours: servingv1.RolloutDurationKey, theirs: serving.RolloutDurationKey},
		"Visibility":   {reason: "Knative reads a Route's visibility from its label.", ours: servingv1.VisibilityLabelKey, theirs: networking.VisibilityLabelKey},
		"ClusterLocal": {reason: "Knative keeps a cluster-local Route off the ingress.", ours: servingv1.VisibilityClusterLocal, theirs: serving.VisibilityClusterLocal},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.ours != tc.theirs {
				t.Errorf("%s\nwant Knative's %q, got %q", tc.reason, tc.theirs, tc.ours)
			}
		})
	}
}
