package source

import (
	"context"
	"net/http"
	"regexp"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	errFmtEndpoint   = "cannot use git URL %s"
	errFmtSession    = "cannot reach git repository %s"
	errFmtAdvertised = "cannot list the refs of git repository %s"
	errFmtNoRef      = "git repository %s has no branch or tag %q"
	errFmtScheme     = "git URL %s: only https:// repositories can be resolved by this provider build"
)

// commitPattern is a full commit id, which names itself.
var commitPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Credentials of a git repository over https.
type Credentials struct {
	Username, Password string
	// CA is the PEM bundle the server's certificate is checked against, in
	// place of the system's; nil keeps the system's.
	CA []byte
}

// A GitResolver resolves git refs to commits over https with its own HTTP
// client, whose dialer decides which addresses may be reached.
type GitResolver struct {
	client *http.Client
	limits Limits
}

// NewGitResolver returns a resolver that reaches repositories through c,
// within the default limits.
func NewGitResolver(c *http.Client) *GitResolver {
	return &GitResolver{client: c, limits: DefaultLimits}
}

// Resolve returns the commit a branch, tag or commit id names in the
// repository at url. An annotated tag resolves to the commit it points at.
// A commit id is its own identity, but its repository is still asked for
// its refs: the build pod clones from where the provider's dialer lets it.
func (r *GitResolver) Resolve(ctx context.Context, url, ref string, creds *Credentials) (string, error) {
	return boundedTrusting(ctx, r.client, r.limits, creds.bundle(), func(ctx context.Context, c *http.Client) (string, error) {
		return resolveGit(ctx, githttp.NewClient(c), url, ref, creds)
	})
}

// bundle is the CA bundle of the credentials, if any.
func (c *Credentials) bundle() []byte {
	if c == nil {
		return nil
	}
	return c.CA
}

func resolveGit(ctx context.Context, t transport.Transport, url, ref string, creds *Credentials) (string, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return "", unresolvable(errors.Wrapf(err, errFmtEndpoint, url))
	}
	if ep.Protocol != "https" && ep.Protocol != "http" {
		return "", unresolvable(errors.Errorf(errFmtScheme, url))
	}
	var auth transport.AuthMethod
	if creds != nil && (creds.Username != "" || creds.Password != "") {
		auth = &githttp.BasicAuth{Username: creds.Username, Password: creds.Password}
	}
	sess, err := t.NewUploadPackSession(ep, auth)
	if err != nil {
		return "", errors.Wrapf(err, errFmtSession, url)
	}
	defer sess.Close() //nolint:errcheck // Nothing was sent that could fail to finish.
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		err = errors.Wrapf(err, errFmtAdvertised, url)
		// A server that says the repository is not there, or not for these
		// credentials, will say so again until a user changes something.
		if errors.Is(err, transport.ErrRepositoryNotFound) || errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) {
			return "", unresolvable(err)
		}
		return "", err
	}
	if commitPattern.MatchString(ref) {
		return ref, nil
	}
	refs, err := adv.AllReferences()
	if err != nil {
		return "", errors.Wrapf(err, errFmtAdvertised, url)
	}
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref), plumbing.ReferenceName(ref)} {
		if peeled, ok := adv.Peeled[name.String()]; ok {
			return peeled.String(), nil
		}
		if h, ok := refs[name]; ok && h.Type() == plumbing.HashReference {
			return h.Hash().String(), nil
		}
	}
	return "", unresolvable(errors.Errorf(errFmtNoRef, url, ref))
}
