package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestDesiredStateChanged(t *testing.T) {
	const at = "2026-11-25T23:00:00Z"
	cases := map[string]struct {
		reason  string
		was, is metav1.ObjectMeta
		want    bool
	}{
		"CreateSucceeded": {
			reason: "The managed reconciler's note that a create succeeded is not a change of desired state.",
			was:    metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreatePending: at}},
			is:     metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreatePending: at, meta.AnnotationKeyExternalCreateSucceeded: at}},
		},
		"CreatePending": {
			reason: "Nor is its note that a create is under way.",
			is:     metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreatePending: at}},
		},
		"OtherAnnotation": {
			reason: "Any other annotation is, such as a request to reconcile now.",
			was:    metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreateSucceeded: at}},
			is:     metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreateSucceeded: at, meta.AnnotationKeyReconciliationPaused: "true"}},
			want:   true,
		},
		"AnnotationValue": {
			reason: "So is a new value of another annotation.",
			was:    metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}},
			is:     metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyReconciliationPaused: "false"}},
			want:   true,
		},
		"AnnotationRemoved": {
			reason: "And another annotation removed along with a create's note.",
			was:    metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}},
			is:     metav1.ObjectMeta{Annotations: map[string]string{meta.AnnotationKeyExternalCreatePending: at}},
			want:   true,
		},
		"Generation": {
			reason: "A new spec is a change of desired state.",
			was:    metav1.ObjectMeta{Generation: 1},
			is:     metav1.ObjectMeta{Generation: 2},
			want:   true,
		},
		"Labels": {
			reason: "So are new labels.",
			is:     metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			want:   true,
		},
		"Status": {
			reason: "A write of the status alone is not.",
			was:    metav1.ObjectMeta{Generation: 1, ResourceVersion: "1"},
			is:     metav1.ObjectMeta{Generation: 1, ResourceVersion: "2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := desiredStateChanged().Update(event.UpdateEvent{
				ObjectOld: &v1alpha1.LambdaFunction{ObjectMeta: tc.was},
				ObjectNew: &v1alpha1.LambdaFunction{ObjectMeta: tc.is},
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUpdate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
