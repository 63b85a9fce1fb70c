package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

const (
	// rbacDir holds the generated ClusterRoles.
	rbacDir = "../../package/rbac"
	// providerRole is bound cluster-wide, secretsRole in each namespace the
	// provider serves.
	providerRole = "provider-knative-lambda"
	secretsRole  = "provider-knative-lambda-secrets"
)

// providerIdentity is whom Crossplane runs the provider as: its service
// account.
var providerIdentity = rest.ImpersonationConfig{
	UserName: "system:serviceaccount:crossplane-system:provider-knative-lambda",
	Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"},
}

// adminClient is a cluster administrator's client of the shared control
// plane.
func adminClient(t *testing.T) client.Client {
	t.Helper()
	return testkit.Client(t, controlPlane.Config(t))
}

// grantProvider installs the generated ClusterRoles, binds the provider's to
// its service account and the Secrets one in each of namespaces, as a
// platform team would.
func grantProvider(ctx context.Context, t *testing.T, c client.Client, namespaces ...string) {
	t.Helper()
	objs, err := manifest.Read(rbacDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("%s holds %d objects, want the provider's and the Secrets ClusterRole", rbacDir, len(objs))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "crossplane-system", Name: "provider-knative-lambda"}}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: providerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: providerRole},
		Subjects:   subjects,
	}
	if err := c.Create(ctx, crb); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretsRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: secretsRole},
			Subjects:   subjects,
		}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProviderRBAC runs the provider as its service account with nothing
// but the generated roles, and takes a git function whose source needs
// credentials from create to Ready to deleted. The same run checks that a
// resource cannot make the provider read a Secret of another namespace,
// and that no planted secret value shows in a spec, a status, an event, an
// object the provider wrote or a line it logged.
func TestProviderRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := adminClient(t)
	ns := testkit.Namespace(ctx, t, admin, "rbac-", "")
	other := testkit.Namespace(ctx, t, admin, "rbac-other-", "")
	grantProvider(ctx, t, admin, ns)
	newProviderConfig(ctx, t, admin, ns)

	planted := map[string]string{"password": "planted-" + rand.String(16), "stolen": "planted-" + rand.String(16)}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "git-creds"}, StringData: map[string]string{"username": "lambda", "password": planted["password"]}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "stolen"}, StringData: map[string]string{"username": "lambda", "password": planted["stolen"]}},
	} {
		if err := admin.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	g := startGitServer(t)
	logs := &process.Output{}
	startProvider(t, providerOptions{
		as:     providerIdentity,
		log:    logging.NewLogrLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true))),
		change: func(d *dependencies) { d.Sources.Git = g.resolver() },
	})

	fromGit := func(name, ref, secret string) *v1alpha1.LambdaFunction {
		fn := newFunction(ns, name, "")
		fn.Spec.ForProvider.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{
			URL: "https://git.lambda.test/functions.git", Ref: ref,
			SecretRef: &v1alpha1.LocalObjectReference{Name: v1alpha1.DNSSubdomain(secret)},
		}}
		if err := admin.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
		return fn
	}
	fn := fromGit("guarded", "main", "git-creds")
	// The Secret this one names lives in another namespace: the provider
	// looks for it in the resource's own, where it does not exist.
	thief := fromGit("thief", "main", "stolen")
	// An error path, where a leak would most likely be: the credentials are
	// used, and the ref does not exist.
	wrongRef := fromGit("wrong-ref", "no-such-branch", "git-creds")

	buildToReady(ctx, t, admin, fn)
	waitCondition(ctx, t, admin, thief, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonSourceUnresolved, `Secret stolen: secrets "stolen" not found`)
	waitCondition(ctx, t, admin, wrongRef, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonSourceUnresolved, `no branch or tag "no-such-branch"`)

	// Everything a resource makes is in its own namespace.
	for _, l := range []client.ObjectList{&servingv1.ServiceList{}, &eventingv1.BrokerList{}, &eventingv1.TriggerList{}, &batchv1.JobList{}, &corev1.ConfigMapList{}} {
		if err := admin.List(ctx, l, client.InNamespace(other), client.MatchingLabels{render.LabelManagedBy: render.ManagedBy}); err != nil {
			t.Fatal(err)
		}
		if n := apimeta.LenList(l); n > 0 {
			t.Errorf("the provider wrote %d %T in namespace %s, where no resource of it lives", n, l, other)
		}
	}

	// Everything the provider wrote or said while it worked, for the grep
	// below.
	var said []string
	for _, mg := range []*v1alpha1.LambdaFunction{fn, thief, wrongRef} {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(mg), mg); err != nil {
			t.Fatal(err)
		}
		said = append(said, asJSON(t, mg))
	}
	for _, n := range []string{ns, other} {
		for _, l := range []client.ObjectList{&corev1.EventList{}, &corev1.ConfigMapList{}, &servingv1.ServiceList{}} {
			if err := admin.List(ctx, l, client.InNamespace(n)); err != nil {
				t.Fatal(err)
			}
			said = append(said, asJSON(t, l))
		}
	}
	said = append(said, asJSON(t, jobs(ctx, t, admin, ns, fn.Name)))

	for _, mg := range []*v1alpha1.LambdaFunction{fn, thief, wrongRef} {
		if err := admin.Delete(ctx, mg); err != nil {
			t.Fatal(err)
		}
	}
	for _, mg := range []*v1alpha1.LambdaFunction{fn, thief, wrongRef} {
		wait.Until(ctx, t, "every object of "+mg.Name+" is gone", func() string { return objectsLeft(ctx, admin, ns, mg.Name) })
	}

	said = append(said, logs.String())
	if !strings.Contains(logs.String(), "thief") {
		t.Fatal("the provider's log never names the resource whose Secret is missing: the grep below would prove nothing")
	}
	for what, v := range planted {
		for _, s := range said {
			if strings.Contains(s, v) {
				t.Errorf("the %s Secret value appears in what the provider wrote or logged:\n%.400s", what, s[strings.Index(s, v)-min(strings.Index(s, v), 200):])
			}
		}
	}
}

// TestProviderClusterRoleDenies asks the API server what the provider's
// service account may do with the generated roles bound, for a sample of
// what it must never do.
func TestProviderClusterRoleDenies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := adminClient(t)
	ns := testkit.Namespace(ctx, t, admin, "rbac-served-", "")
	other := testkit.Namespace(ctx, t, admin, "rbac-unserved-", "")
	grantProvider(ctx, t, admin, ns)

	checkAccess(ctx, t, admin, []access{
		{reason: "The control: a Secret a resource names in a namespace it serves.", ns: ns, resource: "secrets", verb: "get", allowed: true},
		{reason: "The control: Knative Services anywhere.", ns: other, group: "serving.knative.dev", resource: "services", verb: "create", allowed: true},
		{reason: "Secrets of a namespace it does not serve.", ns: other, resource: "secrets", verb: "get"},
		{reason: "Listing Secrets, even where it serves.", ns: ns, resource: "secrets", verb: "list"},
		{reason: "Watching Secrets cluster-wide.", resource: "secrets", verb: "watch"},
		{reason: "Writing Secrets.", ns: ns, resource: "secrets", verb: "create"},
		{reason: "Exec into pods.", ns: ns, resource: "pods", subresource: "exec", verb: "create"},
		{reason: "Creating pods directly.", ns: ns, resource: "pods", verb: "create"},
		{reason: "Nodes.", resource: "nodes", verb: "get"},
		{reason: "Listing nodes.", resource: "nodes", verb: "list"},
		{reason: "Service account tokens.", ns: ns, resource: "serviceaccounts", subresource: "token", verb: "create"},
		{reason: "Deleting namespaces.", resource: "namespaces", verb: "delete"},
		{reason: "Granting itself more.", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", verb: "create"},
		{reason: "Changing CRDs.", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verb: "update"},
	})
}

// TestExampleRBAC applies examples/provider-rbac.yaml beside the generated
// roles, as the README says, and asks the API server what the provider's
// service account may then do: the Secrets of the namespace it binds, and
// with leader election its leases in Crossplane's namespace, nowhere else.
func TestExampleRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := adminClient(t)
	grantProvider(ctx, t, admin)
	for _, ns := range []string{"crossplane-system", "functions"} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	objs, err := manifest.Read("../../examples/provider-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := admin.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	other := testkit.Namespace(ctx, t, admin, "rbac-example-", "")
	const leases = "leases"
	checkAccess(ctx, t, admin, []access{
		{reason: "A Secret of the namespace the example binds.", ns: "functions", resource: "secrets", verb: "get", allowed: true},
		{reason: "A Secret elsewhere.", ns: other, resource: "secrets", verb: "get"},
		{reason: "Reading its lease.", ns: "crossplane-system", group: "coordination.k8s.io", resource: leases, verb: "get", allowed: true},
		{reason: "Taking its lease.", ns: "crossplane-system", group: "coordination.k8s.io", resource: leases, verb: "create", allowed: true},
		{reason: "Renewing its lease.", ns: "crossplane-system", group: "coordination.k8s.io", resource: leases, verb: "update", allowed: true},
		{reason: "Deleting leases.", ns: "crossplane-system", group: "coordination.k8s.io", resource: leases, verb: "delete"},
		{reason: "Leases of another namespace.", ns: other, group: "coordination.k8s.io", resource: leases, verb: "update"},
	})
}

// An access is a question to the API server about the provider's service
// account, and the answer it must get.
type access struct {
	reason                                 string
	ns, group, resource, subresource, verb string
	allowed                                bool
}

// checkAccess asks the API server each question with a SubjectAccessReview.
// The authorizer learns of new bindings through its own informer, so an
// answer that must be yes is asked again until it is; the answers that must
// be no are asked once every yes has come, when the bindings are in effect
// and a no means the roles deny.
func checkAccess(ctx context.Context, t *testing.T, admin client.Client, cases []access) {
	t.Helper()
	for _, a := range cases {
		if a.allowed {
			wait.Until(ctx, t, a.reason, func() string { return askAccess(ctx, t, admin, a) })
		}
	}
	for _, a := range cases {
		if !a.allowed {
			if got := askAccess(ctx, t, admin, a); got != "" {
				t.Errorf("%s\n%s", a.reason, got)
			}
		}
	}
}

// askAccess asks the API server one question, and says how the answer
// differs from the one it must get, or "" when it does not.
func askAccess(ctx context.Context, t *testing.T, admin client.Client, a access) string {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   providerIdentity.UserName,
		Groups: providerIdentity.Groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.ns, Group: a.group, Resource: a.resource, Subresource: a.subresource, Verb: a.verb,
		},
	}}
	if err := admin.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	if sar.Status.Allowed != a.allowed {
		return fmt.Sprintf("%s %s/%s in %q: allowed %t, want %t", a.verb, a.resource, a.subresource, a.ns, sar.Status.Allowed, a.allowed)
	}
	return ""
}

// buildToReady plays a function's one build to success and its Service and
// eventing to Ready, waits until the function is Ready, and returns its
// Service.
func buildToReady(ctx context.Context, t *testing.T, c client.Client, fn *v1alpha1.LambdaFunction) *servingv1.Service {
	t.Helper()
	job := waitJobs(ctx, t, c, fn.Namespace, fn.Name, 1)[0]
	playact.FinishJob(ctx, t, c, &job, 0, digestA)
	svc := serviceWhen(ctx, t, c, client.ObjectKeyFromObject(fn), fn.Name+"'s Service exists", anyService)
	playact.MarkServiceReady(ctx, t, c, svc)
	// Its Broker and Trigger, once Knative Eventing reports them Ready.
	playEventing(ctx, c, fn.Namespace)
	waitCondition(ctx, t, c, fn, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	return svc
}

// waitCondition waits until a resource's condition has a status, and the
// reason and a message containing what is given, where given.
func waitCondition(ctx context.Context, t *testing.T, c client.Client, mg resource.Managed, ct xpv2.ConditionType, status corev1.ConditionStatus, reason xpv2.ConditionReason, msg string) {
	t.Helper()
	wait.Until(ctx, t, fmt.Sprintf("%s: %s=%s %s %q", mg.GetName(), ct, status, reason, msg), func() string {
		live := mg.DeepCopyObject().(resource.Managed) //nolint:forcetypeassert // A copy of a resource.Managed.
		if err := c.Get(ctx, client.ObjectKeyFromObject(mg), live); err != nil {
			return err.Error()
		}
		got := live.GetCondition(ct)
		if got.Status != status || (reason != "" && got.Reason != reason) || !strings.Contains(got.Message, msg) {
			return fmt.Sprintf("%s %s %q", got.Status, got.Reason, got.Message)
		}
		return ""
	})
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
