package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// A listed records how it was asked to list.
type listed struct {
	client.Reader
	fields, labels string
}

func (l *listed) List(_ context.Context, _ client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.FieldSelector != nil {
		l.fields = lo.FieldSelector.String()
	}
	if lo.LabelSelector != nil {
		l.labels = lo.LabelSelector.String()
	}
	return nil
}

func TestRevisionsByService(t *testing.T) {
	cases := map[string]struct {
		reason     string
		list       client.ObjectList
		opts       []client.ListOption
		wantFields string
		wantLabels string
	}{
		"ServicesRevisions": {
			reason:     "A Service's Revisions are found through the index, and still matched by their labels.",
			list:       &servingv1.RevisionList{},
			opts:       []client.ListOption{client.InNamespace("bench"), client.MatchingLabels{servingv1.ServiceLabelKey: "fn-00001"}},
			wantFields: indexRevisionService + "=fn-00001",
			wantLabels: servingv1.ServiceLabelKey + "=fn-00001",
		},
		"OtherLabels": {
			reason:     "Revisions matched by other labels are listed as asked.",
			list:       &servingv1.RevisionList{},
			opts:       []client.ListOption{client.MatchingLabels{"team": "a"}},
			wantLabels: "team=a",
		},
		"OtherKinds": {
			reason:     "Other kinds are listed as asked.",
			list:       &servingv1.ServiceList{},
			opts:       []client.ListOption{client.MatchingLabels{servingv1.ServiceLabelKey: "fn-00001"}},
			wantLabels: servingv1.ServiceLabelKey + "=fn-00001",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := &listed{}
			if err := (revisionsByService{Reader: l}).List(context.Background(), tc.list, tc.opts...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([2]string{tc.wantFields, tc.wantLabels}, [2]string{l.fields, l.labels}); diff != "" {
				t.Errorf("%s\nfield and label selectors: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
