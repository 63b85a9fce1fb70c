package workload

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
)

// requeue is what the managed reconciler returns after a create.
var requeue = reconcile.Result{Requeue: true} //nolint:staticcheck // As crossplane-runtime does.

func TestCreatedReconciler(t *testing.T) {
	key := types.NamespacedName{Namespace: "team", Name: "hello"}
	errBoom := errors.New("boom")
	cases := map[string]struct {
		reason  string
		created bool
		res     reconcile.Result
		err     error
		want    reconcile.Result
		wantErr error
		// wantAwaited is whether the spare awaits the create's wake.
		wantAwaited bool
	}{
		"RequeueAfterCreate": {
			reason:  "The requeue after a create whose objects will wake the resource becomes the next poll, spread over all resources, and the wake is awaited.",
			created: true, res: requeue, want: reconcile.Result{RequeueAfter: 4 * time.Minute}, wantAwaited: true,
		},
		"RequeueWithoutCreate": {
			reason: "A requeue with no create noted, such as after a failed create, keeps its backoff.",
			res:    requeue, want: requeue,
		},
		"ErrorAfterCreate": {
			reason:  "A status update that failed after the create keeps its error.",
			created: true, res: requeue, err: errBoom,
			want: requeue, wantErr: errBoom,
		},
		"PollAfterCreate": {
			reason:  "A reconcile that already asks to wait is left as it is.",
			created: true, res: reconcile.Result{RequeueAfter: time.Hour}, want: reconcile.Result{RequeueAfter: time.Hour},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newCreates(time.Minute, func(_ resource.Managed, poll time.Duration) time.Duration { return poll })
			s := newSpare(rate.NewLimiter(100, 1000), time.Minute, four)
			r := &createdReconciler{creates: c, spread: four, spare: s, inner: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				if tc.created {
					c.created(&v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
				}
				return tc.res, tc.err
			})}
			got, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nReconcile(...): -want result, +got result:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nReconcile(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if _, left := c.take(key); left {
				t.Errorf("%s\nReconcile(...): the create is still noted", tc.reason)
			}
			a, awaited := s.awaiting.get(key)
			if awaited != tc.wantAwaited {
				t.Errorf("%s\nReconcile(...): the create's wake is awaited: %t, want %t", tc.reason, awaited, tc.wantAwaited)
			}
			if awaited && a.poll != time.Minute {
				t.Errorf("%s\nReconcile(...): the awaited create's poll is noted before it is spread as %s, want %s", tc.reason, a.poll, time.Minute)
			}
		})
	}
}

func TestCreatesPoll(t *testing.T) {
	cases := map[string]struct {
		reason      string
		annotations map[string]string
		want        time.Duration
	}{
		"ProviderPoll": {
			reason: "A resource is next polled at the provider's interval, through the hook.",
			want:   2 * time.Minute,
		},
		"OwnPoll": {
			reason:      "A resource that sets its own poll interval is next polled at it, through the hook.",
			annotations: map[string]string{meta.AnnotationKeyPollInterval: "5m"},
			want:        10 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newCreates(time.Minute, func(_ resource.Managed, poll time.Duration) time.Duration { return 2 * poll })
			mg := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", Annotations: tc.annotations}}
			c.created(mg)
			got, ok := c.take(types.NamespacedName{Namespace: "team", Name: "hello"})
			if !ok {
				t.Fatalf("%s\ntake(...): the create was not noted", tc.reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ntake(...): -want poll, +got poll:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWokenBy(t *testing.T) {
	obj := func(kind string) client.Object {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		return u
	}
	cases := map[string]struct {
		reason   string
		followed map[string]bool
		objs     []kube.Object
		want     bool
	}{
		"Service": {
			reason:   "Knative writes a new Service's status, which wakes its resource.",
			followed: map[string]bool{"Service": true},
			objs:     []kube.Object{obj("Service"), obj("Trigger")},
			want:     true,
		},
		"Build": {
			reason:   "The Job controller writes a new build Job's status.",
			followed: map[string]bool{"Job": true, "ConfigMap": true},
			objs:     []kube.Object{obj("ConfigMap"), obj("NetworkPolicy"), obj("Job")},
			want:     true,
		},
		"NoReport": {
			reason:   "No controller writes the status of a ConfigMap or a NetworkPolicy.",
			followed: map[string]bool{"ConfigMap": true, "NetworkPolicy": true},
			objs:     []kube.Object{obj("ConfigMap"), obj("NetworkPolicy")},
		},
		"NotFollowed": {
			reason:   "A kind whose informer does not wake resources wakes nothing.",
			followed: map[string]bool{"Job": true},
			objs:     []kube.Object{obj("Service")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := deployer{followed: tc.followed}.wokenBy(tc.objs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nwokenBy(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
