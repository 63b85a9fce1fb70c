package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// identityShown is how much of a build identity the status shows: as much
// as names the build's Job.
const identityShown = 12

// printStatus writes one screen of what a user needs of a workload: its
// phase, its conditions with their reasons, its build's progress, its image
// and URL, its revisions and traffic, and its eventing objects. Times are
// shown against now.
func printStatus(out io.Writer, w *workload, now time.Time) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	s := w.status
	line := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s:\t%s\n", label, printable(fmt.Sprintf(format, args...)))
	}
	line(w.Kind(), "%s/%s", w.Namespace(), w.Name())
	line("Phase", "%s", orNone(string(s.Phase), "(not observed yet)"))
	if b := s.Build; b != nil {
		line("Build", "%s", buildProgress(b, now))
		if b.JobName != "" {
			line("Build Job", "%s", b.JobName)
		}
		if b.Message != "" {
			line("Build log", "%s", indent(b.Message))
		}
	}
	if s.Image != "" {
		line("Image", "%s", s.Image)
	}
	if s.URL != "" {
		line("URL", "%s", s.URL)
	}
	if s.LatestReadyRevision != "" || s.FailedRevision != "" {
		line("Revision", "%s", revisions(s.WorkloadObservation))
	}
	if e := s.Eventing; e != nil {
		if e.Broker != "" {
			line("Broker", "%s", e.Broker)
		}
		if len(e.Triggers) > 0 {
			line("Triggers", "%s", strings.Join(e.Triggers, ", "))
		}
		if len(e.Schedules) > 0 {
			line("Schedules", "%s", strings.Join(e.Schedules, ", "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Traffic) > 0 {
		if err := printTraffic(out, s.Traffic); err != nil {
			return err
		}
	}
	return printConditions(out, w.conditions, now)
}

// buildProgress says where a build is: running for how long, or done and
// how long it took.
func buildProgress(b *v1alpha1.BuildObservation, now time.Time) string {
	id := b.Identity
	if len(id) > identityShown {
		id = id[:identityShown]
	}
	switch {
	case b.StartedAt == nil:
		return fmt.Sprintf("%s, not started", id)
	case b.CompletedAt == nil:
		return fmt.Sprintf("%s, running for %s (started %s)", id, since(b.StartedAt.Time, now), b.StartedAt.UTC().Format(time.RFC3339))
	}
	// A build that succeeded reported its image's digest.
	outcome := "failed"
	if b.Digest != "" {
		outcome = "succeeded"
	}
	return fmt.Sprintf("%s, %s %s ago after %s", id, outcome, since(b.CompletedAt.Time, now), b.CompletedAt.Sub(b.StartedAt.Time).Round(time.Second))
}

// revisions names the Revision that serves and the one that failed.
func revisions(s v1alpha1.WorkloadObservation) string {
	var parts []string
	if s.LatestReadyRevision != "" {
		parts = append(parts, s.LatestReadyRevision+" serves")
	}
	if s.FailedRevision != "" {
		parts = append(parts, s.FailedRevision+" failed")
	}
	return strings.Join(parts, "; ")
}

// printTraffic writes the traffic split as Knative reports it.
func printTraffic(out io.Writer, traffic []v1alpha1.TrafficObservation) error {
	fmt.Fprintln(out, "Traffic:")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  REVISION\tPERCENT\tTAG\tURL")
	for _, t := range traffic {
		rev := t.RevisionName
		if t.LatestRevision {
			rev += " (latest)"
		}
		fmt.Fprintf(tw, "  %s\t%d%%\t%s\t%s\n", rev, t.Percent, orNone(t.Tag, "-"), orNone(t.URL, "-"))
	}
	return tw.Flush()
}

// printConditions writes every condition with its reason, age and message,
// which says why a workload waits, is held or failed.
func printConditions(out io.Writer, conds []xpv2.Condition, now time.Time) error {
	fmt.Fprintln(out, "Conditions:")
	if len(conds) == 0 {
		fmt.Fprintln(out, "  (none yet)")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
	for _, c := range conds {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, printable(string(c.Reason)), since(c.LastTransitionTime.Time, now), orNone(printable(firstLine(c.Message)), "-"))
	}
	return tw.Flush()
}

// since is how long ago a time was, to the second.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// firstLine is a message's first line, with a mark when more follows: a
// failed build's log belongs under Build said, not in a table cell.
func firstLine(s string) string {
	if first, _, ok := strings.Cut(s, "\n"); ok {
		return first + " …"
	}
	return s
}

// indent lines a multi-line message up under its label.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
