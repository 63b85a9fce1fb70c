package source

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/gitserver"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/loopback"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/s3server"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// A trustedServer is a real git or S3 server whose certificate no system
// trusts, and what a source of it needs.
type trustedServer struct {
	source v1alpha1.FunctionSource
	ca     []byte
	// credentials every Secret of the cases holds besides.
	credentials map[string][]byte
	// identity the source resolves to; empty takes any.
	identity string
}

// TestResolverTrustsSecretCA resolves a git ref and an S3 object on real
// servers whose certificates no system trusts: with the ca.crt of the
// source's Secret, and without.
func TestResolverTrustsSecretCA(t *testing.T) {
	g := gitserver.Start(t, "functions")
	head := g.Commit(t, "first", map[string][]byte{"main.py": []byte("def handler(event, context):\n    return 1\n")})
	s3 := s3server.StartTLS(t, local.BinDir(), loopback.Address(t))
	s3.Put(t, "hello/main.py", []byte("def handler(event, context):\n    return 1\n"))
	endpoint, key := v1alpha1.ServiceURL(s3.Endpoint()), v1alpha1.RelativePath("hello/main.py")
	servers := map[string]trustedServer{
		"Git": {
			source:   v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: g.URL(), Ref: gitserver.Branch}},
			ca:       g.CA(),
			identity: head,
		},
		"S3": {
			source:      v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{Endpoint: &endpoint, Bucket: s3server.Bucket, Key: &key}},
			ca:          s3.CA(),
			credentials: map[string][]byte{"AWS_ACCESS_KEY_ID": []byte(s3server.Access), "AWS_SECRET_ACCESS_KEY": []byte(s3server.Secret)},
		},
	}
	other, err := testca.New("another CA")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason       string
		ca           func(server trustedServer) []byte
		noSecret     bool
		wantErr      string
		unresolvable bool
	}{
		"ServerCA": {
			reason: "A Secret whose ca.crt signed the server's certificate resolves the source.",
			ca:     func(s trustedServer) []byte { return s.ca },
		},
		"NoSecret": {
			reason:   "Without a Secret the system's CAs are asked, and none signed the certificate.",
			noSecret: true,
			wantErr:  "certificate signed by unknown authority",
		},
		"NoCA": {
			reason:  "Without ca.crt the system's CAs are asked, and none signed the certificate.",
			ca:      func(trustedServer) []byte { return nil },
			wantErr: "certificate signed by unknown authority",
		},
		"OtherCA": {
			reason:  "ca.crt replaces the system's CAs: one that did not sign the certificate is refused.",
			ca:      func(trustedServer) []byte { return other.PEM },
			wantErr: "certificate signed by unknown authority",
		},
		"NotPEM": {
			reason:       "A ca.crt with no certificate in it is a mistake the user must mend.",
			ca:           func(trustedServer) []byte { return []byte("not a certificate") },
			wantErr:      errNoCA,
			unresolvable: true,
		},
	}
	for server, s := range servers {
		for name, tc := range cases {
			t.Run(server+"/"+name, func(t *testing.T) {
				var secret map[string][]byte
				if !tc.noSecret {
					secret = maps.Clone(s.credentials)
					if secret == nil {
						secret = map[string][]byte{}
					}
					if ca := tc.ca(s); ca != nil {
						secret[KeyCA] = ca
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				r := Resolver{Git: NewGitResolver(direct()), S3: NewS3Resolver(direct())}
				got, err := r.Resolve(ctx, s.source, secret)
				if tc.wantErr == "" && (err != nil || got == "" || s.identity != "" && got != s.identity) {
					t.Errorf("%s\nResolve(...) = %q, %v; want %q", tc.reason, got, err, s.identity)
				}
				if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("%s\nResolve(...): %v; want an error saying %q", tc.reason, err, tc.wantErr)
				}
				if IsUnresolvable(err) != tc.unresolvable {
					t.Errorf("%s\nIsUnresolvable(%v) = %t; want %t", tc.reason, err, !tc.unresolvable, tc.unresolvable)
				}
			})
		}
	}
}
