package source

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/gitserver"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/testca"
)

// TestGitResolverTrustsSecretCA resolves a ref on a real git server whose
// certificate no system trusts: with the ca.crt of the source's Secret, and
// without.
func TestGitResolverTrustsSecretCA(t *testing.T) {
	g := gitserver.Start(t, "functions")
	head := g.Commit(t, "first", map[string][]byte{"main.py": []byte("def handler(event, context):\n    return 1\n")})
	other, err := testca.New("another CA")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason       string
		secret       map[string][]byte
		want         string
		wantErr      string
		unresolvable bool
	}{
		"ServerCA": {
			reason: "A Secret whose ca.crt signed the server's certificate resolves the ref, with no credentials besides.",
			secret: map[string][]byte{KeyCA: g.CA()},
			want:   head,
		},
		"NoCA": {
			reason:  "Without ca.crt the system's CAs are asked, and none signed the certificate.",
			wantErr: "certificate signed by unknown authority",
		},
		"OtherCA": {
			reason:  "ca.crt replaces the system's CAs: one that did not sign the certificate is refused.",
			secret:  map[string][]byte{KeyCA: other.PEM, "username": []byte("team")},
			wantErr: "certificate signed by unknown authority",
		},
		"NotPEM": {
			reason:       "A ca.crt with no certificate in it is a mistake the user must mend.",
			secret:       map[string][]byte{KeyCA: []byte("not a certificate")},
			wantErr:      errNoCA,
			unresolvable: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r := Resolver{Git: NewGitResolver(direct())}
			got, err := r.Resolve(ctx, v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: g.URL(), Ref: gitserver.Branch}}, tc.secret)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nResolve(...): -want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%s\nResolve(...): %v; want an error saying %q", tc.reason, err, tc.wantErr)
			}
			if IsUnresolvable(err) != tc.unresolvable {
				t.Errorf("%s\nIsUnresolvable(%v) = %t; want %t", tc.reason, err, !tc.unresolvable, tc.unresolvable)
			}
		})
	}
}
