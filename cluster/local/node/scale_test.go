package node

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"knative.dev/pkg/apis"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// annotationWindow is Knative's per-Revision autoscaling window. The tests
// shorten it from the cluster's 60 s to Knative's least, so a function
// idles to zero within a test's time: the window, the cluster's 30 s
// scale-to-zero grace period, and the pod's drain.
const annotationWindow = "autoscaling.knative.dev/window"

// zeroTimeout bounds the wait for a function to scale to zero.
const zeroTimeout = 3 * time.Minute

// idleQuickly shortens the autoscaling window of the Service's Revisions.
func idleQuickly(svc *servingv1.Service) {
	if svc.Spec.Template.Annotations == nil {
		svc.Spec.Template.Annotations = map[string]string{}
	}
	svc.Spec.Template.Annotations[annotationWindow] = "6s"
}

// scalesToZeroAndBack waits until Knative has removed every pod of the
// idle Service, then calls it again: the activator holds the request until
// a new pod is ready, and the reply is the handler's. It logs the cold
// start, the time from the request to its reply.
func scalesToZeroAndBack(ctx context.Context, t *testing.T, kube client.Client, svc *servingv1.Service, url *apis.URL) {
	t.Helper()
	scaledToZero(ctx, t, kube, svc)
	start := time.Now()
	status, body := invoke(ctx, t, url, `{"id": "order-3"}`)
	if status != http.StatusOK || strings.Join(strings.Fields(body), "") != `{"accepted":"order-3"}` {
		t.Errorf("the function at zero answered %d %q; want 200 with the handler's reply", status, body)
	}
	t.Logf("cold start: the function at zero replied %s after the request", time.Since(start).Round(time.Millisecond))
}
