package source

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// TestRecentAsksOncePerFreshness polls one S3 source as a busy resource is
// polled, and counts the listings its server sees.
func TestRecentAsksOncePerFreshness(t *testing.T) {
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		lists.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>functions</Name><Prefix>fns/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>fns/main.py</Key><ETag>"e"</ETag><Size>1</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents></ListBucketResult>`))
	}))
	defer srv.Close()
	now := time.Unix(0, 0)
	r := NewResolver(direct())
	r.Recent = NewRecent(30*time.Second, func() time.Time { return now })
	src := v1alpha1.FunctionSource{S3: &v1alpha1.S3Source{Endpoint: ptr.To(v1alpha1.ServiceURL(srv.URL)), Bucket: "functions", Prefix: ptr.To(v1alpha1.RelativePath("fns/")), Region: "us-east-1"}}
	resolve := func(secret map[string][]byte) {
		t.Helper()
		if _, err := r.Resolve(context.Background(), src, secret); err != nil {
			t.Fatal(err)
		}
	}
	for range 6 {
		resolve(nil)
		now = now.Add(5 * time.Second)
	}
	if got := lists.Load(); got != 1 {
		t.Errorf("6 polls 5 s apart within 30 s listed %d times; want once", got)
	}
	now = now.Add(time.Second)
	resolve(nil)
	if got := lists.Load(); got != 2 {
		t.Errorf("a poll after the identity went stale listed %d times in all; want twice", got)
	}
	resolve(map[string][]byte{"AWS_ACCESS_KEY_ID": []byte("a"), "AWS_SECRET_ACCESS_KEY": []byte("b")})
	if got := lists.Load(); got != 3 {
		t.Errorf("other credentials listed %d times in all; want a listing of their own, 3", got)
	}
}
