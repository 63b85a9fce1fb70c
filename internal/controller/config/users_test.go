package config

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/controller/usage"
)

// written is what a count wrote: the config's finalizers, users and
// Terminating condition as last written, and the usages it deleted.
type written struct {
	Finalizers  []string
	Users       int64
	Terminating corev1.ConditionStatus
	Deleted     []string
	Writes      int
}

func TestCounter(t *testing.T) {
	deleted := metav1.Now()
	cases := map[string]struct {
		reason     string
		finalizers []string
		deleted    *metav1.Time
		users      int64
		was        int64
		stale      []types.NamespacedName
		usersErr   error
		want       written
		wantErr    bool
	}{
		"New": {
			reason: "A new config gets the finalizer and its users.",
			users:  2,
			want:   written{Finalizers: []string{inUse}, Users: 2, Writes: 2},
		},
		"Counted": {
			reason:     "A config that has its finalizer and says its users is not written.",
			finalizers: []string{inUse},
			users:      2,
			was:        2,
			want:       written{Finalizers: []string{inUse}, Users: 2},
		},
		"DeletedInUse": {
			reason:     "A deleted config that resources use keeps its finalizer and says why.",
			finalizers: []string{inUse},
			deleted:    &deleted,
			users:      1,
			was:        2,
			want:       written{Finalizers: []string{inUse}, Users: 1, Terminating: corev1.ConditionTrue, Writes: 1},
		},
		"DeletedUnused": {
			reason:     "A deleted config that nothing uses loses its finalizer.",
			finalizers: []string{inUse},
			deleted:    &deleted,
			was:        1,
			want:       written{Users: 1, Writes: 1},
		},
		"Stale": {
			reason:     "A usage that no resource controls is deleted; its resource, if any, makes it again.",
			finalizers: []string{inUse},
			stale:      []types.NamespacedName{{Namespace: "team", Name: "orphan"}},
			want:       written{Finalizers: []string{inUse}, Deleted: []string{"team/orphan"}},
		},
		"NotListed": {
			reason:     "Users that cannot be counted leave the config as it is.",
			finalizers: []string{inUse},
			deleted:    &deleted,
			usersErr:   errors.New("not listed"),
			want:       written{Finalizers: []string{inUse}},
			wantErr:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pc := &v1alpha1.ProviderConfig{}
			pc.SetNamespace("team")
			pc.SetName("default")
			pc.SetFinalizers(tc.finalizers)
			pc.SetDeletionTimestamp(tc.deleted)
			pc.SetUsers(tc.was)
			var got written
			c := &test.MockClient{
				MockGet: test.NewMockGetFn(nil, func(o client.Object) error {
					pc.DeepCopyInto(o.(*v1alpha1.ProviderConfig)) //nolint:forcetypeassert // Only configs are read.
					return nil
				}),
				MockUpdate: func(_ context.Context, o client.Object, _ ...client.UpdateOption) error {
					got.Writes++
					pc.SetFinalizers(o.GetFinalizers())
					return nil
				},
				MockStatusUpdate: func(_ context.Context, o client.Object, _ ...client.SubResourceUpdateOption) error {
					got.Writes++
					p := o.(*v1alpha1.ProviderConfig) //nolint:forcetypeassert // Only configs are written.
					pc.SetUsers(p.GetUsers())
					pc.SetConditions(p.GetCondition(providerconfig.TypeTerminating))
					return nil
				},
				MockDelete: func(_ context.Context, o client.Object, _ ...client.DeleteOption) error {
					got.Deleted = append(got.Deleted, o.GetNamespace()+"/"+o.GetName())
					return nil
				},
			}
			var asked usage.Config
			r := &counter{
				client: c,
				users: func(_ context.Context, cfg usage.Config) (int64, []types.NamespacedName, error) {
					asked = cfg
					return tc.users, tc.stale, tc.usersErr
				},
				kind:      v1alpha1.ProviderConfigKind,
				newConfig: func() resource.ProviderConfig { return &v1alpha1.ProviderConfig{} },
				log:       logging.NewNopLogger(),
				record:    event.NewNopRecorder(),
			}
			_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "default"}})
			if (err != nil) != tc.wantErr {
				t.Errorf("%s\nReconcile: %v, want an error: %t", tc.reason, err, tc.wantErr)
			}
			if want := (usage.Config{Namespace: "team", Kind: v1alpha1.ProviderConfigKind, Name: "default"}); asked != want {
				t.Errorf("%s\ncounted the users of %+v, want %+v", tc.reason, asked, want)
			}
			got.Finalizers, got.Users = pc.GetFinalizers(), pc.GetUsers()
			got.Terminating = pc.GetCondition(providerconfig.TypeTerminating).Status
			if tc.want.Terminating == "" {
				tc.want.Terminating = corev1.ConditionUnknown
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nthe config and its usages: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
