package main

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// indexRevisionService is the watcher's index of Revisions by the Service
// they were made for.
const indexRevisionService = "revision.service"

// indexRevisions adds indexRevisionService to a cache's Revisions.
func indexRevisions(ctx context.Context, c cache.Cache) error {
	return c.IndexField(ctx, &servingv1.Revision{}, indexRevisionService, func(o client.Object) []string {
		if s := o.GetLabels()[servingv1.ServiceLabelKey]; s != "" {
			return []string{s}
		}
		return nil
	})
}

// A revisionsByService answers the play's List of one Service's Revisions
// from indexRevisionService. A cache answers a label selector by matching
// every object of the namespace, and the play asks once a Service: at
// 10,000 that scan, over a list that grows to 10,000 Revisions, made the
// play slower a Service the more Services there were, and took the
// benchmark's CPU from the two cores the contender and the API server run
// on. Knative's controllers, which the play stands in for, run elsewhere.
type revisionsByService struct {
	client.Reader
}

// List lists a Service's Revisions through the index, and anything else as
// the cache does.
func (r revisionsByService) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if _, ok := list.(*servingv1.RevisionList); ok && lo.LabelSelector != nil && lo.FieldSelector == nil {
		if svc, ok := lo.LabelSelector.RequiresExactMatch(servingv1.ServiceLabelKey); ok {
			return r.Reader.List(ctx, list, client.InNamespace(lo.Namespace), client.MatchingLabelsSelector{Selector: lo.LabelSelector}, client.MatchingFields{indexRevisionService: svc})
		}
	}
	return r.Reader.List(ctx, list, opts...)
}
