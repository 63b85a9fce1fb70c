package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestCrossplaneClusterRole binds the shipped ClusterRole to a user on the
// real API server and asks it, with SubjectAccessReviews, whether that user
// may do what Crossplane does with every kind Direct mode composes in the
// golden renders, and may not do what it need not.
func TestCrossplaneClusterRole(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kube := testkit.Client(t, controlPlane.Config(t))
	objs, err := manifest.Read(filepath.Join(repo, "package", "configuration", "rbac", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("want one ClusterRole, got %d objects", len(objs))
	}
	if err := kube.Create(ctx, objs[0]); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	const user = "crossplane-composer"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-composer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: objs[0].GetName()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := kube.Create(ctx, binding); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}

	// No example composes a RabbitMQ Broker; its RabbitmqBrokerConfig is
	// composed all the same.
	composed := append(composedKinds(t), schema.GroupKind{Group: "eventing.knative.dev", Kind: render.RabbitMQBrokerConfigKind})
	if len(composed) < 5 {
		t.Fatalf("the Direct renders compose %v, want at least Service, Broker, Trigger, Job and ConfigMap", composed)
	}
	type ask struct {
		gvr  schema.GroupVersionResource
		verb string
	}
	var allowed, denied []ask
	for _, gk := range composed {
		m, err := kube.RESTMapper().RESTMapping(gk)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			allowed = append(allowed, ask{m.Resource, v})
		}
	}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, v := range []string{"get", "list", "watch"} {
		allowed = append(allowed, ask{pods, v}, ask{namespaces, v})
	}
	denied = append(denied,
		ask{pods, "create"}, ask{pods, "delete"}, ask{namespaces, "update"}, ask{namespaces, "delete"},
		ask{schema.GroupVersionResource{Version: "v1", Resource: "pods/exec"}, "create"},
		ask{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "get"},
		ask{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "list"},
		ask{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "create"},
	)
	// The API server's authorizer learns of the new binding through its
	// own informer: what is allowed is asked until it is, what is denied
	// once after that.
	review := func(a ask, want bool) string {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "apps", Verb: a.verb, Group: a.gvr.Group, Version: a.gvr.Version,
				Resource: strings.Split(a.gvr.Resource, "/")[0], Subresource: subresource(a.gvr.Resource),
			},
		}}
		if err := kube.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != want {
			return fmt.Sprintf("%s %s: allowed %t, want %t", a.verb, a.gvr, sar.Status.Allowed, want)
		}
		return ""
	}
	for _, a := range allowed {
		wait.Until(ctx, t, a.verb+" "+a.gvr.String()+" is allowed", func() string { return review(a, true) })
	}
	for _, a := range denied {
		if msg := review(a, false); msg != "" {
			t.Error(msg)
		}
	}
}

func subresource(r string) string {
	if _, sub, ok := strings.Cut(r, "/"); ok {
		return sub
	}
	return ""
}

// composedKinds are the kinds the golden Direct renders compose.
func composedKinds(t *testing.T) []schema.GroupKind {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "render", "*-direct.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
		for _, d := range docs[1:] {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
				t.Fatal(err)
			}
			gk := u.GroupVersionKind().GroupKind()
			if !seen[gk] {
				seen[gk] = true
				out = append(out, gk)
			}
		}
	}
	return out
}
