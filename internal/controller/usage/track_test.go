package usage

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// function is a function in namespace team, of UID uid, that uses the
// provider config default.
func function(uid string) *v1alpha1.LambdaFunction {
	fn := &v1alpha1.LambdaFunction{}
	fn.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind)
	fn.SetNamespace("team")
	fn.SetName("fn-" + uid)
	fn.SetUID(types.UID(uid))
	fn.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"})
	return fn
}

// calls records what a tracker asked the API server.
type calls []string

func (c *calls) client(created, updated error) *test.MockClient {
	return &test.MockClient{
		MockCreate: func(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
			*c = append(*c, "create "+obj.GetName())
			return created
		},
		MockUpdate: func(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
			*c = append(*c, "update "+obj.GetName())
			return updated
		},
	}
}

func (c *calls) reader(current runtime.Object) *test.MockClient {
	return &test.MockClient{MockGet: func(_ context.Context, key client.ObjectKey, obj client.Object) error {
		*c = append(*c, "get "+key.Name)
		if current == nil {
			return errors.New("no usage to read")
		}
		return test.NewMockGetFn(nil, func(o client.Object) error {
			current.(*v1alpha1.ProviderConfigUsage).DeepCopyInto(o.(*v1alpha1.ProviderConfigUsage)) //nolint:forcetypeassert // Only usages are read.
			return nil
		})(context.Background(), key, obj)
	}}
}

func TestTrack(t *testing.T) {
	type want struct {
		err   error
		calls calls
		// then is whether the record then says the function's usage
		// names its config.
		then bool
	}
	cases := map[string]struct {
		reason  string
		listed  []any
		created error
		current runtime.Object
		want    want
	}{
		"Recorded": {
			reason: "A usage the record says names the function's config is not asked about.",
			listed: []any{pcu("a", v1alpha1.ProviderConfigKind, "default", true)},
			want:   want{then: true},
		},
		"New": {
			reason: "A usage the record does not hold is created without a read, and recorded.",
			want:   want{calls: calls{"create a"}, then: true},
		},
		"Refused": {
			reason:  "A usage the API server refuses to create is not recorded.",
			created: errors.New("refused"),
			want:    want{err: errors.New("refused"), calls: calls{"create a"}},
		},
		"Moved": {
			reason:  "A usage the record says names another config is read and updated; the watch records it.",
			listed:  []any{pcu("a", v1alpha1.ProviderConfigKind, "other", true)},
			current: pcu("a", v1alpha1.ProviderConfigKind, "other", true),
			want:    want{calls: calls{"get a", "update a"}},
		},
		"Stale": {
			reason:  "A usage of the same config that no resource controls is left for the config's controller to delete, and not recorded as the function's.",
			listed:  []any{pcu("a", v1alpha1.ProviderConfigKind, "default", false)},
			current: pcu("a", v1alpha1.ProviderConfigKind, "default", false),
			want:    want{calls: calls{"get a"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := New(0)
			_ = reflected{u}.Replace(tc.listed, "1")
			var got calls
			tr := NewTracker(u, got.client(tc.created, nil), got.reader(tc.current))
			err := tr.Track(context.Background(), function("a"))
			if diff := cmp.Diff(tc.want.err, errors.Cause(err), test.EquateErrors()); diff != "" {
				t.Errorf("%s\nTrack: -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.calls, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nasked of the API server: -want, +got:\n%s", tc.reason, diff)
			}
			if then := u.names("a", team); then != tc.want.then {
				t.Errorf("%s\nthe record names the function's config: %t, want %t", tc.reason, then, tc.want.then)
			}
		})
	}
}

func TestTrackWaitsForTheList(t *testing.T) {
	var got calls
	tr := NewTracker(New(0), got.client(nil, nil), got.reader(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tr.Track(ctx, function("a")); err == nil {
		t.Error("Track went on before the usages were listed")
	}
	if len(got) > 0 {
		t.Errorf("Track asked %v before the usages were listed", got)
	}
}
