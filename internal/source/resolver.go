package source

import (
	"context"
	"net/http"
	"time"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A Resolver resolves a function's git or S3 source to its identity: the
// commit its ref names, or the identity of its objects.
type Resolver struct {
	Git *GitResolver
	S3  *S3Resolver
	// Recent answers for a source resolved a moment ago; nil asks the
	// server every time.
	Recent *Recent
}

// NewResolver reaches git and S3 servers with the supplied client, and
// asks each about a source at most once in DefaultFresh.
func NewResolver(c *http.Client) Resolver {
	return Resolver{Git: NewGitResolver(c), S3: NewS3Resolver(c), Recent: NewRecent(DefaultFresh, time.Now)}
}

// Resolve resolves a git or S3 source with the data of its credentials
// Secret (see FunctionSource.CredentialsRef); nil data means anonymous.
// Other sources have no identity to resolve: render hashes inline code, and
// images are not built.
func (r Resolver) Resolve(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error) {
	if src.Git == nil && src.S3 == nil {
		return "", nil
	}
	if r.Recent == nil {
		return r.resolve(ctx, src, secret)
	}
	k := recentKey(src, secret)
	if v, ok := r.Recent.get(k); ok {
		return v.id, v.err
	}
	id, err := r.resolve(ctx, src, secret)
	r.Recent.put(k, id, err)
	return id, err
}

// resolve asks the source's server.
func (r Resolver) resolve(ctx context.Context, src v1alpha1.FunctionSource, secret map[string][]byte) (string, error) {
	if g := src.Git; g != nil {
		var creds *Credentials
		if secret != nil {
			creds = &Credentials{Username: string(secret["username"]), Password: string(secret["password"]), CA: secret[KeyCA]}
		}
		return r.Git.Resolve(ctx, g.URL, g.Ref, creds)
	}
	s := src.S3
	var creds *S3Credentials
	if secret != nil {
		creds = &S3Credentials{AccessKeyID: string(secret["AWS_ACCESS_KEY_ID"]), SecretAccessKey: string(secret["AWS_SECRET_ACCESS_KEY"]), CA: secret[KeyCA]}
	}
	return r.S3.Resolve(ctx, S3Location{
		Endpoint: string(ptr.Deref(s.Endpoint, "")), Bucket: s.Bucket,
		Key: string(ptr.Deref(s.Key, "")), Prefix: string(ptr.Deref(s.Prefix, "")), Region: s.Region,
	}, creds)
}
