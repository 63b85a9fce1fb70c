package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestChangesGoBeforePolls checks that, with the reconcile rate never to
// spare, what changes a function still reconciles it: its creation, what
// Knative writes of its Service, and a new spec. A poll would wait for a
// spare token up to a poll interval, an hour here, so any of them taken
// for a poll fails the test.
func TestChangesGoBeforePolls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	limiter := ratelimiter.NewGlobal(testRate)
	saturate(ctx, limiter)
	_, c, ns := newUnpolledScene(ctx, t, "spare-", providerOptions{limiter: limiter})

	fn, svc := createImageFunction(ctx, t, c, ns, "hello")
	playact.MarkServiceReady(ctx, t, c, svc)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")

	update(ctx, t, c, client.ObjectKeyFromObject(fn), func(f *v1alpha1.LambdaFunction) {
		f.Spec.ForProvider.Scaling = &v1alpha1.Scaling{ContainerConcurrency: ptr(int64(7))}
	})
	serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), "takes the new spec", func(s *servingv1.Service) bool {
		cc := s.Spec.Template.Spec.ContainerConcurrency
		return cc != nil && *cc == 7
	})
}

// saturate keeps a second of the rate's tokens reserved ahead until ctx
// ends, as reconciles of other resources would in a provider whose rate
// never idles.
func saturate(ctx context.Context, l *ratelimiter.BucketRateLimiter) {
	go func() {
		for ctx.Err() == nil {
			now := time.Now()
			if ahead := l.TokensAt(now) + testRate; ahead > 0 {
				l.ReserveN(now, min(int(ahead)+1, l.Burst()))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
}
