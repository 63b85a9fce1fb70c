package workload

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const errFmtSourceSecret = "cannot read the source credentials Secret %s"

// resolveSource resolves a git or S3 source to its identity, with the
// credentials of its Secret, which lives beside the build in the target
// namespace.
func (c *functionClient) resolveSource(ctx context.Context, src v1alpha1.FunctionSource) (string, error) {
	data, err := c.secret(ctx, src.CredentialsRef())
	if err != nil {
		return "", err
	}
	return c.sources.Resolve(ctx, src, data)
}

// secret reads a source's credentials Secret in the target namespace; no
// reference means no credentials.
func (c *functionClient) secret(ctx context.Context, ref *v1alpha1.LocalObjectReference) (map[string][]byte, error) {
	if ref == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	if err := c.kube.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: string(ref.Name)}, s); err != nil {
		return nil, errors.Wrapf(err, errFmtSourceSecret, ref.Name)
	}
	return s.Data, nil
}

// sourceKind is the source label of a source the provider resolves, or ""
// for one it does not.
func sourceKind(src v1alpha1.FunctionSource) string {
	switch {
	case src.Git != nil:
		return sourceGit
	case src.S3 != nil:
		return sourceS3
	}
	return ""
}
