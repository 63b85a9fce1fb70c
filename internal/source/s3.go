package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/crossplane/function-sdk-go/errors"
)

const (
	errFmtS3Endpoint = "cannot use S3 endpoint %q"
	errFmtS3Client   = "cannot create an S3 client for %s"
	errFmtS3Stat     = "cannot read S3 object s3://%s/%s"
	errFmtS3NoObject = "S3 object s3://%s/%s does not exist"
	errFmtS3List     = "cannot list s3://%s/%s"
	errFmtS3Empty    = "there are no objects under s3://%s/%s"
)

// awsEndpoint is where S3 is when a source names no endpoint.
const awsEndpoint = "s3.amazonaws.com"

// An S3Location is where S3 code is: one key, or every object under a prefix.
type S3Location struct {
	// Endpoint URL of an S3-compatible service; empty means AWS S3.
	Endpoint string
	Bucket   string
	Key      string
	Prefix   string
	Region   string
}

// S3Credentials of a bucket; nil, or no access key, reads it anonymously.
type S3Credentials struct {
	AccessKeyID, SecretAccessKey string
	// CA is the PEM bundle the server's certificate is checked against, in
	// place of the system's; nil keeps the system's.
	CA []byte
}

// An S3Resolver resolves an S3 location to the identity of its content
// with its own HTTP transport, whose dialer decides which addresses may be
// reached.
type S3Resolver struct {
	client *http.Client
	limits Limits
}

// NewS3Resolver returns a resolver that reaches S3 through c's transport,
// within the default limits.
func NewS3Resolver(c *http.Client) *S3Resolver {
	return &S3Resolver{client: c, limits: DefaultLimits}
}

// Resolve returns the identity of what a location holds: a hash of each
// object's key, ETag and version. Any change to any object is a new identity;
// nothing is downloaded.
func (r *S3Resolver) Resolve(ctx context.Context, loc S3Location, creds *S3Credentials) (string, error) {
	return boundedTrusting(ctx, r.client, r.limits, creds.bundle(), func(ctx context.Context, c *http.Client) (string, error) {
		return resolveS3(ctx, c.Transport, r.limits.Keys, loc, creds)
	})
}

// bundle is the CA bundle of the credentials, if any.
func (c *S3Credentials) bundle() []byte {
	if c == nil {
		return nil
	}
	return c.CA
}

func resolveS3(ctx context.Context, transport http.RoundTripper, maxKeys int, loc S3Location, creds *S3Credentials) (string, error) {
	host, secure := awsEndpoint, true
	if loc.Endpoint != "" {
		u, err := url.Parse(loc.Endpoint)
		if err != nil || u.Host == "" {
			return "", unresolvable(errors.Errorf(errFmtS3Endpoint, loc.Endpoint))
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	c := credentials.NewStaticV4("", "", "")
	if creds != nil && creds.AccessKeyID != "" {
		c = credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, "")
	}
	s3, err := minio.New(host, &minio.Options{Creds: c, Secure: secure, Region: loc.Region, Transport: transport, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return "", errors.Wrapf(err, errFmtS3Client, host)
	}

	var objects []string
	if loc.Key != "" {
		info, err := s3.StatObject(ctx, loc.Bucket, loc.Key, minio.StatObjectOptions{})
		if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
			return "", unresolvable(errors.Errorf(errFmtS3NoObject, loc.Bucket, loc.Key))
		}
		if err != nil {
			return "", s3Failed(err, errFmtS3Stat, loc.Bucket, loc.Key)
		}
		objects = append(objects, object(info))
	} else {
		// The listing stops with ctx, which ends when this returns.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for info := range s3.ListObjects(ctx, loc.Bucket, minio.ListObjectsOptions{Prefix: loc.Prefix, Recursive: true}) {
			if info.Err != nil {
				return "", s3Failed(info.Err, errFmtS3List, loc.Bucket, loc.Prefix)
			}
			if len(objects) == maxKeys {
				return "", unresolvable(errors.Errorf(errFmtTooManyKeys, maxKeys, loc.Bucket, loc.Prefix, maxKeys))
			}
			objects = append(objects, object(info))
		}
		if len(objects) == 0 {
			return "", unresolvable(errors.Errorf(errFmtS3Empty, loc.Bucket, loc.Prefix))
		}
	}
	slices.Sort(objects)
	h := sha256.Sum256([]byte(strings.Join(objects, "\n")))
	return hex.EncodeToString(h[:]), nil
}

// s3Failed wraps what S3 answered. A refusal of these credentials (access
// denied, an unknown key, a wrong signature) will be the answer until a user
// changes them; anything else may pass.
func s3Failed(err error, format string, args ...any) error {
	code := minio.ToErrorResponse(err).StatusCode
	err = errors.Wrapf(err, format, args...)
	if code == http.StatusForbidden || code == http.StatusUnauthorized {
		return unresolvable(err)
	}
	return err
}

// object is the identity of one object: its key, ETag and version.
func object(info minio.ObjectInfo) string {
	return info.Key + "\x00" + strings.Trim(info.ETag, `"`) + "\x00" + info.VersionID
}
