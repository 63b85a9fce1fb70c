package render

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"strings"
	"sync"

	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

const (
	errSourceUnresolved = "the source is not resolved yet: the commit of the git ref or the ETags of the S3 objects are needed to know what to build"
	errNoRegistry       = "no registry to push the image to: set build.registry on the resource or build.registry on its provider config"
)

// A hasher writes length-prefixed fields into a SHA-256, so that ("ab",
// "c") and ("a", "bc") never hash the same.
type hasher struct {
	h hash.Hash
	// buf carries strings to h: a hash takes bytes, and converting a
	// wrapper's or Dockerfile's text to bytes would copy all of it at every
	// render.
	buf [hasherBuf]byte
	// json is the last object a stamp that lends it hashed, and verbatim
	// its strings written from runtime files; grown, they stay grown for
	// the next.
	json     []byte
	verbatim []Verbatim
}

// hasherBuf is how much of a string a hasher writes at once.
const hasherBuf = 512

// hashers are reused: every render takes one for each identity and each
// object it stamps, on every pass of the provider and the function.
var hashers = sync.Pool{New: func() any { return &hasher{h: sha256.New()} }}

// borrowHasher is a hasher that has hashed nothing, to be given back with
// done.
func borrowHasher() *hasher {
	w := hashers.Get().(*hasher) //nolint:forcetypeassert // The pool holds nothing else.
	w.h.Reset()
	return w
}

// done gives w back.
func (w *hasher) done() { hashers.Put(w) }

// hexSum is the hex of the first n bytes of the hash, at most all of them.
func (w *hasher) hexSum(n int) string {
	sum := w.h.Sum(w.buf[:0])
	return hex.EncodeToString(sum[:min(n, len(sum))])
}

func (w *hasher) field(name, value string) {
	w.write(name)
	binary.BigEndian.PutUint64(w.buf[:8], uint64(len(value)))
	w.buf[8] = 0
	_, _ = w.h.Write(w.buf[8:9])
	_, _ = w.h.Write(w.buf[:8])
	w.write(value)
}

// write writes a string to the hash through buf.
func (w *hasher) write(s string) {
	for len(s) > 0 {
		n := copy(w.buf[:], s)
		_, _ = w.h.Write(w.buf[:n])
		s = s[n:]
	}
}

// SourceIdentity is the content identity of a function's source, without
// building it. Inline code hashes its code, dependencies and files; git and
// S3 sources take the identity observed in the cluster; an image source needs
// no build and has none.
func SourceIdentity(spec v1alpha1.LambdaFunctionParameters, o Observed) (string, error) {
	src := spec.Source
	switch {
	case src.Inline != nil:
		w := borrowHasher()
		defer w.done()
		w.field("kind", "inline")
		w.field("code", src.Inline.Code)
		w.field("dependencies", src.Inline.Dependencies)
		files := slices.Clone(src.Inline.Files)
		slices.SortFunc(files, func(a, b v1alpha1.SourceFile) int { return strings.Compare(string(a.Path), string(b.Path)) })
		for _, f := range files {
			w.field("path", string(f.Path))
			w.field("content", f.Content)
		}
		return w.hexSum(sha256.Size), nil
	case src.Git != nil, src.S3 != nil:
		if o.SourceIdentity == "" {
			return "", errors.New(errSourceUnresolved)
		}
		return o.SourceIdentity, nil
	}
	return "", nil
}

// BuildIdentity is the identity of the image a build produces: the source
// identity, where in the source the function is, the runtime, everything the
// build writes (Dockerfile and wrapper), how an inline context reaches
// Kaniko, the build arguments and where the image is pushed, and a rebuild
// token when the user asked for one. Scaling,
// env, eventing and resources are not part of it, so changing them never
// rebuilds.
func BuildIdentity(spec v1alpha1.LambdaFunctionParameters, rt Runtime, sourceIdentity, repository, rebuild string) string {
	w := borrowHasher()
	defer w.done()
	w.field("source", sourceIdentity)
	if spec.Source.Inline != nil {
		// Inline images built before their context was mounted by subPath
		// hold links that dangle: each such function builds once more.
		w.field("context", contextDir)
	}
	if g := spec.Source.Git; g != nil {
		w.field("git.url", g.URL)
		w.field("git.path", string(ptr.Deref(g.Path, "")))
	}
	if s := spec.Source.S3; s != nil {
		w.field("s3.endpoint", string(ptr.Deref(s.Endpoint, "")))
		w.field("s3.bucket", s.Bucket)
		w.field("s3.key", string(ptr.Deref(s.Key, "")))
		w.field("s3.prefix", string(ptr.Deref(s.Prefix, "")))
	}
	w.field("language", string(rt.Language))
	w.field("version", rt.Version)
	w.field("handler", rt.Handler)
	w.field("dockerfile", rt.Dockerfile)
	w.field("wrapper", rt.Wrapper)
	if b := spec.Build; b != nil {
		keys := make([]string, 0, len(b.BuildArgs))
		for k := range b.BuildArgs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.field("arg."+k, b.BuildArgs[k])
		}
	}
	w.field("repository", repository)
	if rebuild != "" {
		// Only when set, so identities from before a token existed hold.
		w.field("rebuild", rebuild)
	}
	return w.hexSum(sha256.Size)
}

// Repository is where a function's image is pushed:
// <registry>/<namespace>/<name>.
func Repository(spec v1alpha1.LambdaFunctionParameters, d Defaults, namespace, name string) (string, error) {
	registry := d.Registry
	if b := spec.Build; b != nil && b.Registry != nil {
		registry = string(*b.Registry)
	}
	if registry == "" {
		return "", errors.New(errNoRegistry)
	}
	return strings.TrimSuffix(registry, "/") + "/" + namespace + "/" + name, nil
}

// BuiltImage is the reference the Service runs: by digest once the build is
// known, else by the tag the build pushes.
func BuiltImage(repository, identity, digest string) string {
	if digest != "" {
		return repository + "@" + digest
	}
	return repository + ":" + identity[:identityPrefixLen]
}
