package clients

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
)

func TestCreateNotesDropper(t *testing.T) {
	const at = "2026-11-26T20:00:00Z"
	s, err := kinds.ManagerScheme()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		was    map[string]string
		update map[string]string
		want   map[string]string
	}{
		"Pending": {
			reason: "The note that a create is pending is not written, nor is an annotation map for it alone.",
			update: map[string]string{xpmeta.AnnotationKeyExternalCreatePending: at},
		},
		"AllNotes": {
			reason: "Notes an earlier provider wrote go with the next update; the user's annotations stay.",
			was:    map[string]string{xpmeta.AnnotationKeyExternalCreatePending: at, xpmeta.AnnotationKeyExternalCreateSucceeded: at, "team": "a"},
			update: map[string]string{xpmeta.AnnotationKeyExternalCreatePending: at, xpmeta.AnnotationKeyExternalCreateFailed: at, "team": "a"},
			want:   map[string]string{"team": "a"},
		},
		"Others": {
			reason: "An update without notes is sent as it is.",
			update: map[string]string{xpmeta.AnnotationKeyReconciliationPaused: "true"},
			want:   map[string]string{xpmeta.AnnotationKeyReconciliationPaused: "true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			fn := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hello", Annotations: tc.was}}
			c := CreateNotesDropper{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(fn).Build()}
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), fn); err != nil {
				t.Fatal(err)
			}
			fn.SetAnnotations(tc.update)
			if err := c.Update(ctx, fn); err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.LambdaFunction{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(fn), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.GetAnnotations()); diff != "" {
				t.Errorf("%s\nannotations written: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
