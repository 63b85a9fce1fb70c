package render

import (
	"regexp"

	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

const (
	errFmtTraffic         = "traffic: Knative refuses it: %s"
	errFmtForeignRevision = "traffic: %q is not a Revision of this workload: Knative names its Revisions %s-00001, %s-00002 and so on, as status.atProvider.latestReadyRevision and traffic show them"
)

// A route is how a workload's Service splits requests between Revisions
// and paces the rollout of a new one.
type route struct {
	targets []servingv1.TrafficTarget
	// annotations go on the Service, whose Route Knative gives them.
	annotations map[string]string
}

// ownRevision matches the names Knative gives the Revisions of the
// Service name: its Configuration, named after it, numbers them by
// generation. A workload's name is short enough that Knative never hashes
// it.
func ownRevision(name string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(name) + "-[0-9]{5,}$")
}

// routing renders a workload's traffic block. A pinned Revision must be
// one of the workload's own, so a workload cannot serve another's code
// under its URL; what else Knative's validation refuses, which the schema
// already should, is refused here in its words, before anything is built.
func routing(name string, t *v1alpha1.Traffic) (route, error) {
	var r route
	if t == nil {
		return r, nil
	}
	own := ownRevision(name)
	for _, tt := range t.Targets {
		target := servingv1.TrafficTarget{Percent: ptr.To(tt.Percent), Tag: ptr.Deref(tt.Tag, ""), LatestRevision: ptr.To(tt.RevisionName == nil)}
		if tt.RevisionName != nil {
			if !own.MatchString(*tt.RevisionName) {
				return route{}, errors.Errorf(errFmtForeignRevision, *tt.RevisionName, name, name)
			}
			target.RevisionName = *tt.RevisionName
		}
		r.targets = append(r.targets, target)
	}
	if t.RolloutDuration != nil {
		r.annotations = map[string]string{servingv1.RolloutDurationKey: string(*t.RolloutDuration)}
	}
	if len(r.targets) > 0 {
		rs := servingv1.RouteSpec{Traffic: r.targets}
		if err := rs.Validate(); err != nil {
			return route{}, errors.Errorf(errFmtTraffic, err.Error())
		}
	}
	if err := servingv1.ValidateRolloutDuration(r.annotations); err != nil {
		return route{}, errors.Errorf(errFmtTraffic, err.Error())
	}
	return r, nil
}
