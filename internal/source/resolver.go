package source

import (
	"net/http"

	"context"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A Resolver resolves a function's git or S3 source to its identity: the
// commit its ref names, or the identity of its objects.
type Resolver struct {
	Git *GitResolver
	S3  *S3Resolver
}

// NewResolver reaches git and S3 servers with the supplied client.
func NewResolver(c *http.Client) Resolver {
	return Resolver{Git: NewGitResolver(c), S3: NewS3Resolver(c)}
}

// Resolve resolves a git or S3 source with the data of its credentials
// Secret (see FunctionSource.CredentialsRef); nil data means anonymous.
// Other sources have no identity to resolve: render hashes inline code, and
// images are not built.
func (r Resolver) Resolve(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error) {
	if g := src.Git; g != nil {
		var creds *Credentials
		if u, ok := secret["username"]; ok {
			creds = &Credentials{Username: string(u), Password: string(secret["password"])}
		}
		return r.Git.Resolve(ctx, g.URL, g.Ref, creds)
	}
	s := src.S3
	if s == nil {
		return "", nil
	}
	var creds *S3Credentials
	if id, ok := secret["AWS_ACCESS_KEY_ID"]; ok {
		creds = &S3Credentials{AccessKeyID: string(id), SecretAccessKey: string(secret["AWS_SECRET_ACCESS_KEY"])}
	}
	return r.S3.Resolve(ctx, S3Location{
		Endpoint: string(deref(s.Endpoint)), Bucket: s.Bucket,
		Key: string(deref(s.Key)), Prefix: string(deref(s.Prefix)), Region: s.Region,
	}, creds)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
