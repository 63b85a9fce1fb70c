package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestS3FetcherRegion(t *testing.T) {
	cases := map[string]struct {
		reason string
		region string
		want   []corev1.EnvVar
	}{
		"NoRegion": {
			reason: "Without a region the AWS CLI must choose its own: an empty AWS_REGION signs for no region, which an S3 server answers with 400 Bad Request.",
		},
		"Region": {
			reason: "A region the spec names is the CLI's.",
			region: "eu-central-1",
			want:   []corev1.EnvVar{{Name: "AWS_REGION", Value: "eu-central-1"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := build{spec: v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{Bucket: "functions", Region: tc.region}}}}
			c, _ := b.fetcher()
			var got []corev1.EnvVar
			for _, e := range c.Env {
				if e.Name == "AWS_REGION" {
					got = append(got, e)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nfetcher(): AWS_REGION: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
