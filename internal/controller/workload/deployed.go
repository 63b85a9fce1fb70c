package workload

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// ConnectionDetailURL is the connection detail that carries the URL.
const ConnectionDetailURL = "url"

// deploy compares what is deployed with objs, once nothing they refer to is
// missing, and reports how far Knative has got. The plan is for a Create or
// Update to apply objs; it is empty when the observation calls for neither.
func (c connection) deploy(ctx context.Context, mg resource.Managed, at *v1alpha1.WorkloadObservation, objs *render.Objects) (managed.ExternalObservation, plan, error) {
	if v, ok, err := c.unmet(ctx, at.Phase, objs); err != nil || ok {
		obs, err := held(mg, at, v.Reason, v.Message, err)
		return obs, plan{}, err
	}
	desired := objs.All()
	st, err := c.observe(ctx, desired)
	if err != nil {
		return managed.ExternalObservation{}, plan{}, err
	}
	if len(st.conflicts) > 0 {
		obs, err := nameConflict(mg, at, st)
		return obs, plan{}, err
	}
	if err := c.retire(ctx, &st, at.Eventing, objs); err != nil {
		return managed.ExternalObservation{}, plan{}, err
	}
	desired = render.Replaceable(desired, func(o kube.Object) kube.Object {
		if l, ok := st.objects[render.Key(o)]; ok {
			return l.obj
		}
		return nil
	})
	return c.deployed(mg, at, objs, st), plan{desired: desired, found: st, prune: true}, nil
}

// deployed compares a resource's deployed objects with the desired ones and
// reports, in its status and conditions, how far Knative has got.
func (c connection) deployed(mg resource.Managed, at *v1alpha1.WorkloadObservation, objs *render.Objects, st liveState) managed.ExternalObservation {
	at.Image, at.Eventing = objs.Image, objs.EventingObservation()
	if len(st.retiring) > 0 {
		if at.Eventing == nil {
			at.Eventing = &v1alpha1.EventingObservation{}
		}
		at.Eventing.CreatedBrokers = append(at.Eventing.CreatedBrokers, st.retiring...)
	}
	var live *servingv1.Service
	if l, ok := st.objects["Service/"+c.name]; ok {
		live = l.obj.(*servingv1.Service) //nolint:forcetypeassert // Listed as a Service.
	}
	svc := observe.Service(live, st.failedRevision).WithCrashLoop(st.crashLoop)
	c.revisionFailure(mg, at, svc)
	judge(mg, at, observe.Deployed(observe.Deployment{
		Unapplied: st.differences, Refused: objs.Refused, Pending: objs.Pending, Service: svc,
		Eventing: observe.EventingReadiness(objs.Eventing(), func(o kube.Object) kube.Object { return st.live[render.Key(o)] }),
	}))
	// Only a resource that once had a failing Revision carries the
	// condition; GetCondition of one never set has no reason.
	if !svc.Failed && svc.Ready && mg.GetCondition(v1alpha1.TypeLatestRevisionReady).Reason != "" {
		mg.SetConditions(condition(mg, v1alpha1.TypeLatestRevisionReady, corev1.ConditionTrue, v1alpha1.ReasonRevisionReady, "Revision "+svc.LatestReadyRevision+" serves"))
	}
	obs := managed.ExternalObservation{ResourceExists: st.exists, ResourceUpToDate: st.upToDate, Diff: strings.Join(st.differences, "\n")}
	if at.URL != "" {
		obs.ConnectionDetails = managed.ConnectionDetails{ConnectionDetailURL: []byte(at.URL)}
	}
	return obs
}

// revisionFailure records what Knative reports of the Service in the status
// and, for a failing latest Revision, the LatestRevisionReady condition and,
// when it is new, a warning event.
func (c connection) revisionFailure(mg resource.Managed, at *v1alpha1.WorkloadObservation, svc observe.ServiceState) {
	was := at.FailedRevision
	svc.Record(at)
	if !svc.Failed {
		return
	}
	msg := svc.Failure()
	mg.SetConditions(condition(mg, v1alpha1.TypeLatestRevisionReady, corev1.ConditionFalse, v1alpha1.ReasonRevisionFailed, msg))
	if was != at.FailedRevision {
		c.record.Event(mg, event.Warning(reasonRevisionFailed, errors.New(msg)))
	}
}
