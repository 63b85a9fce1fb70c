package v1

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"knative.dev/pkg/apis"
)

// Validate refuses, in the words of Knative's webhook, traffic that
// Knative refuses in a Service's spec: a target that both pins a Revision
// and follows the latest, a revision that is not a valid name, a percent
// out of bounds, a URL, a tag that is not a DNS-1035 label or that two
// targets share, and percents that do not sum to 100. A Service's traffic
// never names a configuration, since the Service names its own.
func (rs RouteSpec) Validate() *apis.FieldError {
	var errs *apis.FieldError
	tagged := map[string]int{}
	var sum int64
	for i, tt := range rs.Traffic {
		errs = errs.Also(tt.validate().ViaIndex(i))
		if tt.Percent != nil {
			sum += *tt.Percent
		}
		if tt.Tag == "" {
			continue
		}
		if msgs := validation.IsDNS1035Label(tt.Tag); len(msgs) > 0 {
			errs = errs.Also(apis.ErrInvalidArrayValue(fmt.Sprint("not a DNS 1035 label: ", msgs), "tag", i))
		}
		if first, ok := tagged[tt.Tag]; ok {
			errs = errs.Also(&apis.FieldError{
				Message: fmt.Sprintf("Multiple definitions for %q", tt.Tag),
				Paths:   []string{fmt.Sprintf("[%d].tag", i), fmt.Sprintf("[%d].tag", first)},
			})
			continue
		}
		tagged[tt.Tag] = i
	}
	if sum != 100 {
		errs = errs.Also(&apis.FieldError{Message: fmt.Sprintf("Traffic targets sum to %d, want 100", sum), Paths: []string{apis.CurrentField}})
	}
	return errs.ViaField("traffic")
}

// validate refuses one target of a Service's traffic.
func (tt TrafficTarget) validate() *apis.FieldError {
	var errs *apis.FieldError
	if tt.LatestRevision != nil && *tt.LatestRevision == (tt.RevisionName != "") {
		// A target either follows the latest Revision or pins one.
		errs = apis.ErrGeneric(fmt.Sprintf("may not set revisionName %q when latestRevision is %t", tt.RevisionName, *tt.LatestRevision), "latestRevision")
	}
	switch {
	case tt.ConfigurationName != "":
		errs = errs.Also(apis.ErrDisallowedFields("configurationName"))
	case tt.RevisionName != "":
		if msgs := validation.IsQualifiedName(tt.RevisionName); len(msgs) > 0 {
			errs = errs.Also(apis.ErrInvalidKeyName(tt.RevisionName, "revisionName", msgs...))
		}
	}
	if tt.Percent != nil && (*tt.Percent < 0 || *tt.Percent > 100) {
		errs = errs.Also(apis.ErrOutOfBoundsValue(*tt.Percent, 0, 100, "percent"))
	}
	if tt.URL.String() != "" {
		// Knative refuses a URL in a spec, and one without a tag
		// anywhere: each is said.
		errs = errs.Also(apis.ErrDisallowedFields("url"))
		if tt.Tag == "" {
			errs = errs.Also(apis.ErrDisallowedFields("url"))
		}
	}
	return errs
}

// ValidateRolloutDuration refuses, in the words of Knative's webhook, a
// rollout duration among a Service's annotations that is not a whole, non
// negative number of seconds.
func ValidateRolloutDuration(annotations map[string]string) *apis.FieldError {
	v := annotations[RolloutDurationKey]
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return apis.ErrInvalidValue(v, RolloutDurationKey)
	case d.Round(time.Second) != d:
		return &apis.FieldError{Message: fmt.Sprintf("rollout-duration=%s is not at second precision", v), Paths: []string{RolloutDurationKey}}
	case d < 0:
		return &apis.FieldError{Message: fmt.Sprintf("rollout-duration=%s must be positive", v), Paths: []string{RolloutDurationKey}}
	}
	return nil
}
