package v1alpha1

import "k8s.io/apimachinery/pkg/runtime"

// A Schedule invokes a function at the times of a cron schedule, through a
// Knative PingSource that sends its event straight to the function.
type Schedule struct {
	// Name of the schedule, unique within the function. It names the
	// PingSource.
	Name DNSLabel `json:"name"`

	// Schedule is when the function is invoked, in cron's five fields
	// (minute, hour, day of month, month, day of week), such as
	// "*/5 * * * *" or "0 8 * * MON-FRI", or a descriptor: @yearly,
	// @monthly, @weekly, @daily, @midnight or @hourly.
	Schedule CronSchedule `json:"schedule"`

	// TimeZone the schedule's times are in, an IANA name such as
	// Europe/Berlin; the cluster's (usually UTC) when unset.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z]+([/_+-][A-Za-z0-9]+)*$')",message="must be an IANA time zone such as Europe/Berlin or UTC"
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// Data is the JSON object each invocation's event carries, such as
	// {"report": "daily"}; an empty object when unset.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Data *runtime.RawExtension `json:"data,omitempty"`
}

// A CronSchedule is a cron schedule of five fields, or a descriptor such as
// @hourly. Names of months and days are allowed, and '?' for any day. Ranges
// that run backwards, which no expression can tell, are refused when the
// schedule is rendered.
// +kubebuilder:validation:MaxLength=256
// +kubebuilder:validation:XValidation:rule="self.matches('^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$') || (self.split(' ').size() == 5 && self.split(' ')[0].matches('^(([*]|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)(,([*]|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?)*$') && self.split(' ')[1].matches('^(([*]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)(,([*]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)*$') && self.split(' ')[2].matches('^(([*]|[?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)(,([*]|[?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)*$') && self.split(' ')[3].lowerAscii().matches('^(([*]|(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?)(,([*]|(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(-(0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?)(/[1-9][0-9]?)?)*$') && self.split(' ')[4].lowerAscii().matches('^(([*]|[?]|([0-6]|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?)(,([*]|[?]|([0-6]|sun|mon|tue|wed|thu|fri|sat)(-([0-6]|sun|mon|tue|wed|thu|fri|sat))?)(/[1-9][0-9]?)?)*$'))",message="must be a cron schedule of five fields (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of week 0-6 or SUN-SAT) separated by single spaces, such as '*/5 * * * *' or '0 8 * * MON-FRI', or a descriptor such as @hourly or @daily"
type CronSchedule string
