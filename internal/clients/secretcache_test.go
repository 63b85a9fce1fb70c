package clients

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A countingReader answers Gets of Secrets from a map and counts them.
type countingReader struct {
	client.Reader
	secrets map[types.NamespacedName]map[string][]byte
	gets    int
}

func (r *countingReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets++
	data, ok := r.secrets[key]
	if !ok {
		return kerrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil
	}
	s.ObjectMeta = metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
	s.Data = map[string][]byte{}
	for k, v := range data {
		s.Data[k] = append([]byte(nil), v...)
	}
	return nil
}

func TestSecretCache(t *testing.T) {
	kc := types.NamespacedName{Namespace: "ops", Name: "kubeconfig"}
	type read struct {
		after   time.Duration
		key     types.NamespacedName
		rotate  string
		obj     client.Object
		want    string
		wantErr bool
	}
	cases := map[string]struct {
		reason   string
		reads    []read
		wantGets int
	}{
		"FreshAnswersFromCache": {
			reason:   "Reads within the freshness are answered from the first, however many reconciles ask.",
			reads:    []read{{key: kc, want: "a"}, {after: time.Second, key: kc, want: "a"}, {after: 28 * time.Second, key: kc, want: "a"}},
			wantGets: 1,
		},
		"RotationSeenAfterFreshness": {
			reason:   "A rotated Secret is read again once its copy is no longer fresh.",
			reads:    []read{{key: kc, want: "a"}, {after: time.Second, key: kc, rotate: "b", want: "a"}, {after: 29 * time.Second, key: kc, want: "b"}},
			wantGets: 2,
		},
		"MissingNotKept": {
			reason:   "A Secret that is not found is asked for again at once, so a held resource sees it when it appears.",
			reads:    []read{{key: types.NamespacedName{Namespace: "ops", Name: "gone"}, wantErr: true}, {key: types.NamespacedName{Namespace: "ops", Name: "gone"}, wantErr: true}},
			wantGets: 2,
		},
		"OtherKindsReadThrough": {
			reason:   "Only Secrets are kept; anything else is read each time.",
			reads:    []read{{key: kc, obj: &corev1.ConfigMap{}}, {key: kc, obj: &corev1.ConfigMap{}}},
			wantGets: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &countingReader{secrets: map[types.NamespacedName]map[string][]byte{kc: {"kubeconfig": []byte("a")}}}
			now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
			c := NewSecretCache(r, DefaultSecretFreshness)
			c.now = func() time.Time { return now }
			for i, rd := range tc.reads {
				now = now.Add(rd.after)
				if rd.rotate != "" {
					r.secrets[kc] = map[string][]byte{"kubeconfig": []byte(rd.rotate)}
				}
				obj := rd.obj
				if obj == nil {
					obj = &corev1.Secret{}
				}
				err := c.Get(context.Background(), rd.key, obj)
				if (err != nil) != rd.wantErr {
					t.Fatalf("%s\nread %d: error %v, want error %t", tc.reason, i, err, rd.wantErr)
				}
				if s, ok := obj.(*corev1.Secret); ok && err == nil {
					if diff := cmp.Diff(rd.want, string(s.Data["kubeconfig"])); diff != "" {
						t.Errorf("%s\nread %d: -want, +got:\n%s", tc.reason, i, diff)
					}
					// The caller's copy is its own.
					s.Data["kubeconfig"] = []byte("changed by the caller")
				}
			}
			if diff := cmp.Diff(tc.wantGets, r.gets); diff != "" {
				t.Errorf("%s\nGETs sent to the API server: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
