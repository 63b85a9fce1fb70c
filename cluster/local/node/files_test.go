package node

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// filesHandler answers with what its function was given: the files of its
// volumes, whether it may write them, and the variables of a whole Secret
// and ConfigMap.
const filesHandler = `import os

def read(path):
    with open(path) as f:
        return f.read()

def listed(path):
    # The kubelet's own ..data links are not the volume's keys.
    return sorted(n for n in os.listdir(path) if not n.startswith(".."))

def handler(event, context):
    try:
        open("/etc/settings/level", "w")
        writable = True
    except OSError:
        writable = False
    maybe = "/var/run/secrets/maybe"
    return {
        "password": read("/var/run/secrets/db/password"),
        "ca": read("/var/run/secrets/db/tls/ca.crt"),
        "settings": listed("/etc/settings"),
        "level": read("/etc/settings/level"),
        "writable": writable,
        "optional": listed(maybe) if os.path.isdir(maybe) else None,
        "user": os.environ.get("DB_USER"),
        "region": os.environ.get("APP_REGION"),
    }
`

// TestFilesAndEnvFrom builds and deploys an inline function that mounts
// two keys of a Secret, a whole ConfigMap, and an optional Secret that does
// not exist, as files, and takes a Secret and a ConfigMap whole as
// variables, on the real kubelet, and reads through its URL what its
// handler saw: each value at the path the spec names, readable by the
// function's user and not writable, an empty folder for the optional
// Secret, and the variables under their prefixes.
func TestFilesAndEnvFrom(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, kube := sharedCluster(t), targetClient(t)
	rt := runtimes["Python3.11"]
	rt.name, rt.code = "files", filesHandler
	built := builtInline(ctx, t, c, kube, rt, nil, func(p *v1alpha1.LambdaFunctionParameters) {
		p.Eventing = nil
		p.Volumes = []v1alpha1.Volume{
			{Path: "/var/run/secrets/db", Secret: &v1alpha1.VolumeSource{Name: "db", Items: []v1alpha1.KeyToPath{{Key: "password", Path: "password"}, {Key: "ca.crt", Path: "tls/ca.crt"}}}},
			{Path: "/etc/settings", ConfigMap: &v1alpha1.VolumeSource{Name: "settings"}},
			{Path: "/var/run/secrets/maybe", Secret: &v1alpha1.VolumeSource{Name: "maybe", Optional: ptr.To(true)}},
		}
		p.EnvFrom = []v1alpha1.EnvFromSource{
			{Prefix: "DB_", SecretRef: &v1alpha1.ObjectSelector{Name: "db"}},
			{Prefix: "APP_", ConfigMapRef: &v1alpha1.ObjectSelector{Name: "settings"}},
		}
	})
	svc := built.Service
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: "db"}, StringData: map[string]string{"password": "s3cr3t", "ca.crt": "-----CA-----", "USER": "orders"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: "settings"}, Data: map[string]string{"level": "debug", "REGION": "eu-west-1"}},
	} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	url := deployedIdle(ctx, t, c, kube, svc)

	status, body, err := GetFunction(ctx, url.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK {
		t.Fatalf("the function answered %d %q; want 200 with what it read", status, body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("the function answered %q: %v", body, err)
	}
	want := map[string]any{
		"password": "s3cr3t", "ca": "-----CA-----",
		"settings": []any{"REGION", "level"}, "level": "debug", "writable": false,
		"optional": []any{},
		"user":     "orders", "region": "eu-west-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the function read: -want, +got:\n%s", diff)
	}
}
