package workload

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPollsInterval(t *testing.T) {
	cases := map[string]struct {
		reason    string
		polls     *Polls
		resources int64
		poll      time.Duration
		want      time.Duration
	}{
		"WithinShare": {
			reason:    "1,000 resources polled every 30 s ask for 33 reconciles a second, within half of 100: each keeps its poll.",
			polls:     NewPolls(30*time.Second, 100, 0.5),
			resources: 1000,
			poll:      30 * time.Second,
			want:      30 * time.Second,
		},
		"BeyondShare": {
			reason:    "10,000 resources polled every 30 s would ask for 333 a second: spread to 50 a second, each is polled every 200 s.",
			polls:     NewPolls(30*time.Second, 100, 0.5),
			resources: 10000,
			poll:      30 * time.Second,
			want:      200 * time.Second,
		},
		"BusyPollBeyondShare": {
			reason:    "An early poll is spread like any other: it is as many reconciles.",
			polls:     NewPolls(30*time.Second, 100, 0.5),
			resources: 10000,
			poll:      10 * time.Second,
			want:      200 * time.Second,
		},
		"DefaultRate": {
			reason:    "At the default 10 a second and a share of half, 300 resources fill a 60 s poll, and 600 take twice that.",
			polls:     NewPolls(time.Minute, 10, 0.5),
			resources: 600,
			poll:      time.Minute,
			want:      2 * time.Minute,
		},
		"NoShare": {
			reason:    "A share of 0 polls every resource at the interval, however many there are.",
			polls:     NewPolls(30*time.Second, 100, 0),
			resources: 10000,
			poll:      30 * time.Second,
			want:      30 * time.Second,
		},
		"NoPolls": {
			reason: "A provider wired without Polls polls at the interval.",
			poll:   30 * time.Second,
			want:   30 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.polls != nil {
				tc.polls.add(tc.resources)
			}
			if diff := cmp.Diff(tc.want, tc.polls.Interval(tc.poll)); diff != "" {
				t.Errorf("%s\nInterval(%s): -want, +got:\n%s", tc.reason, tc.poll, diff)
			}
		})
	}
}
