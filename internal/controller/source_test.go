package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/s3server"
	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

// TestSourceErrorsClassified checks, against a real git server and a real
// S3 server, which resolution failures say the spec itself cannot be
// resolved (so the composition function stalls its composite) and which
// may pass (so it retries): a missing ref, key or prefix is the first; a
// server that went away is the second.
func TestSourceErrorsClassified(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := startGitServer(t)
	s3 := startS3Server(t)
	s3.put(t, "fns/a.tar.gz", "a")
	const repo = "https://git.lambda.test/functions.git"
	creds := &source.S3Credentials{AccessKeyID: s3server.Access, SecretAccessKey: s3server.Secret}

	// Each resolves a spec that cannot be resolved however often one tries.
	cases := map[string]func() error{
		"GitRefMissing": func() error { _, err := g.resolver().Resolve(ctx, repo, "no-such-branch", nil); return err },
		"GitRepositoryMissing": func() error {
			_, err := g.resolver().Resolve(ctx, "https://git.lambda.test/nothing.git", "main", nil)
			return err
		},
		"GitNotHTTPS": func() error {
			_, err := g.resolver().Resolve(ctx, "ssh://git.lambda.test/functions.git", "main", nil)
			return err
		},
		"S3KeyMissing": func() error {
			_, err := s3.resolver().Resolve(ctx, source.S3Location{Endpoint: "http://minio.storage:9000", Bucket: "functions", Key: "fns/missing.tar.gz"}, creds)
			return err
		},
		"S3AccessDenied": func() error {
			_, err := s3.resolver().Resolve(ctx, source.S3Location{Endpoint: "http://minio.storage:9000", Bucket: "functions", Key: "fns/a.tar.gz"}, nil)
			return err
		},
		"S3PrefixEmpty": func() error {
			_, err := s3.resolver().Resolve(ctx, source.S3Location{Endpoint: "http://minio.storage:9000", Bucket: "functions", Prefix: "nothing/"}, creds)
			return err
		},
	}
	for name, resolve := range cases {
		t.Run(name, func(t *testing.T) {
			err := resolve()
			if err == nil || !source.IsUnresolvable(err) {
				t.Errorf("Resolve: error %v, IsUnresolvable %t; want an error that says the spec cannot be resolved", err, source.IsUnresolvable(err))
			}
		})
	}

	// A server that went away may come back: retry, do not stall.
	gr := g.resolver()
	if _, err := gr.Resolve(ctx, repo, "main", nil); err != nil {
		t.Fatalf("git server up: Resolve: %v", err)
	}
	g.HTTP.Close()
	_, err := gr.Resolve(ctx, repo, "main", nil)
	if err == nil || source.IsUnresolvable(err) {
		t.Errorf("git server gone: Resolve error %v, IsUnresolvable %t; want an error that may pass", err, source.IsUnresolvable(err))
	}
}
