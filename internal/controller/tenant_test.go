package controller_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/lists"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// TestKubeconfigRefused plays a team that may write ProviderConfigs and
// Secrets in its namespace and aims the provider at a server of its own
// with a kubeconfig that runs a command, sends the provider's token, or
// points at the provider's loopback. Each resource must end not Synced with
// a message naming the refused field or address; the command must never run
// and the server must never see a connection.
func TestKubeconfigRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var accepted atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("the-provider's-own-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	const inlineToken = "planted-7f3a9c41e2b84d06"
	kubeconfig := func(user string) string { return targetKubeconfig(srv.URL, user) }
	cases := []struct {
		reason, name, kubeconfig, msg string
	}{
		{
			reason: "A credential plugin would run a command in the provider's pod.", name: "exec",
			kubeconfig: kubeconfig(`exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "touch ` + marker + `; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'"], interactiveMode: Never}`),
			msg:        `user "team" sets exec`,
		},
		{
			reason: "A token file would send the provider's own token to the team's server.", name: "token-file",
			kubeconfig: kubeconfig(`tokenFile: ` + token),
			msg:        `user "team" sets tokenFile`,
		},
		{
			reason: "Inline credentials, but the server is on the provider's loopback.", name: "loopback",
			kubeconfig: kubeconfig(`token: ` + inlineToken),
			msg:        "refusing to connect to 127.0.0.1",
		},
	}

	p := startProviderWith(t, keep)
	c := p.kube
	ns := testkit.Namespace(ctx, t, c, "kubeconfig-", "")
	for _, tc := range cases {
		createTargetConfig(ctx, t, c, ns, tc.name, tc.kubeconfig)
		fn := newFunction(ns, tc.name, "def handler(event, context):\n    return event\n")
		fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: tc.name}
		if err := c.Create(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		fn := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}}
		t.Log(tc.reason)
		waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, tc.msg)
	}
	if n := accepted.Load(); n > 0 {
		t.Errorf("the team's server saw %d connections from the provider; want none", n)
	}
	// The refusals name fields, never values: no token shows in what the
	// provider wrote about the functions.
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	fns := &lists.LambdaFunctionList{}
	if err := c.List(ctx, fns, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	written := fmt.Sprintf("%+v %+v", events.Items, fns.Items)
	for _, secret := range []string{inlineToken, "the-provider's-own-token"} {
		if strings.Contains(written, secret) {
			t.Errorf("the token %q appears in the functions' status or events", secret)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the kubeconfig's credential plugin ran inside the provider")
	}
}

// TestNameConflict plays a team that names a resource after an object it
// did not create: a Service someone else made, another kind's Service, a
// build's ConfigMap made ahead of the build. Each resource must end not
// Ready with NameConflict naming the object, and the object must be left
// as it was; before, server-side apply with forced ownership took it over.
func TestNameConflict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "conflict", keep)
	image := func(name string) *v1alpha1.LambdaFunction {
		fn := newFunction(ns, name, "")
		fn.Spec.ForProvider = v1alpha1.LambdaFunctionParameters{Source: v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: ptr(v1alpha1.ImageTag("v1"))}}}
		return fn
	}

	// A Service someone else made, and a function named after it.
	theirs := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken", Labels: map[string]string{"team": "payments"}}}
	theirs.Spec.Template.Spec.Containers = []corev1.Container{{Image: "ghcr.io/payments/api:v3"}}
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, image("taken")); err != nil {
		t.Fatal(err)
	}

	// A function that runs, and an agent of the same name.
	twin := image("twin")
	if err := c.Create(ctx, twin); err != nil {
		t.Fatal(err)
	}
	svc := &servingv1.Service{}
	wait.Until(ctx, t, "the function twin's Service exists", func() string {
		return wait.ErrString(c.Get(ctx, client.ObjectKeyFromObject(twin), svc))
	})
	if err := c.Create(ctx, newAgent(ns, "twin", xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}, nil)); err != nil {
		t.Fatal(err)
	}

	// A built function whose build ConfigMap someone made first. Its
	// provider config comes last, so the build's name is known before the
	// provider can act.
	built := newFunction(ns, "built", "def handler(event, context):\n    return event\n")
	built.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "later"}
	if err := c.Create(ctx, built); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProviderConfig{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pc); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(built), built); err != nil {
		t.Fatal(err)
	}
	objs, err := render.Function(render.FunctionInput{Namespace: ns, Name: built.Name, Spec: built.Spec.ForProvider, Defaults: render.BuildDefaults(pc.Spec.Build)})
	if err != nil {
		t.Fatal(err)
	}
	planted := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: objs.BuildContext.Name}, Data: map[string]string{"Dockerfile": "FROM attacker/image\n"}}
	if err := c.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	later := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}, Spec: pc.Spec}
	if err := c.Create(ctx, later); err != nil {
		t.Fatal(err)
	}

	waitCondition(ctx, t, c, image("taken"), xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonNameConflict, "Service taken exists and was not created by this provider")
	waitCondition(ctx, t, c, built, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonNameConflict, "ConfigMap "+planted.Name+" exists and was not created by this provider")
	wait.Until(ctx, t, "the agent twin says its Service belongs to the function twin", func() string {
		mg := &v1alpha1.LambdaAgent{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "twin"}, mg); err != nil {
			return err.Error()
		}
		if r := mg.GetCondition(xpv2.TypeReady); r.Reason != v1alpha1.ReasonNameConflict || !strings.Contains(r.Message, "Service twin exists and belongs to LambdaFunction twin") {
			return fmt.Sprintf("Ready %s %s %q", r.Status, r.Reason, r.Message)
		}
		return ""
	})

	// Every poll in between must have left the objects alone.
	time.Sleep(2 * testPoll)
	got := &servingv1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[render.LabelManagedBy] != "" || got.Spec.Template.Spec.Containers[0].Image != "ghcr.io/payments/api:v3" {
		t.Errorf("the payments team's Service was changed: labels %v, image %s", got.Labels, got.Spec.Template.Spec.Containers[0].Image)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[render.LabelKind] != v1alpha1.LambdaFunctionKind || got.Generation != svc.Generation {
		t.Errorf("the function twin's Service was changed by the agent twin: kind label %q, generation %d, was %d", got.Labels[render.LabelKind], got.Generation, svc.Generation)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(planted), cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[render.LabelManagedBy] != "" || cm.Data["Dockerfile"] != "FROM attacker/image\n" {
		t.Errorf("the planted ConfigMap was taken over: labels %v", cm.Labels)
	}
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("a build started from a ConfigMap the function does not own: %s", jobs.Items[0].Name)
	}
}

// TestClusterProviderConfigSelectsNamespaces checks that a
// ClusterProviderConfig serves only the namespaces its namespaceSelector
// selects: a resource elsewhere is refused, naming the config and the
// namespace, before a usage that would keep the config from being deleted
// is recorded; an empty selector serves every namespace. Before, any
// namespace could use any ClusterProviderConfig.
func TestClusterProviderConfigSelectsNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startProviderWith(t, keep)
	c := p.kube
	tenant := testkit.Namespace(ctx, t, c, "tenant-", "")
	other := testkit.Namespace(ctx, t, c, "other-", "")
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: tenant}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels["lambda.crossplane.io/tenant"] = tenant
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	registry := v1alpha1.ImageRepository("registry.local:5000/lambdas")
	selective := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "only-" + tenant},
		Spec: v1alpha1.ClusterProviderConfigSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"lambda.crossplane.io/tenant": tenant}},
			Credentials:       v1alpha1.ClusterProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity},
			Build:             &v1alpha1.BuildDefaults{Registry: &registry},
		},
	}
	everyone := selective.DeepCopy()
	everyone.Name, everyone.Spec.NamespaceSelector = "everyone-"+tenant, metav1.LabelSelector{}
	fn := func(ns, name string, pc *v1alpha1.ClusterProviderConfig) *v1alpha1.LambdaFunction {
		f := newFunction(ns, name, "def handler(event, context):\n    return event\n")
		f.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: pc.Name}
		f.Spec.ForProvider.Eventing = nil
		return f
	}
	admitted, refused, open := fn(tenant, "admitted", selective), fn(other, "refused", selective), fn(other, "open", everyone)
	for _, o := range []client.Object{selective, everyone, admitted, refused, open} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), selective)
		_ = c.Delete(context.Background(), everyone)
	})

	waitCondition(ctx, t, c, refused, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError,
		fmt.Sprintf("ClusterProviderConfig %q does not admit namespace %q", selective.Name, other))
	waitJobs(ctx, t, c, tenant, "admitted", 1)
	waitJobs(ctx, t, c, other, "open", 1)
	usages := &lists.ProviderConfigUsageList{}
	if err := c.List(ctx, usages, client.InNamespace(other)); err != nil {
		t.Fatal(err)
	}
	for _, u := range usages.Items {
		if u.ResourceReference.Name == "refused" {
			t.Errorf("the refused function recorded a usage of %s, which would keep it from being deleted", u.ProviderConfigReference.Name)
		}
	}
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(other), client.MatchingLabels{render.LabelResource: "refused"}); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Error("the refused function started a build")
	}
}

// TestBuildPodsAreFenced checks what a team's build gets from the provider
// and not from its own spec: a NetworkPolicy in place before the Job, which
// selects the Job's pods; no executor the provider config does not allow;
// no timeout over its maximum. Before, the build ran with full network, any
// executor image and any timeout.
func TestBuildPodsAreFenced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "fenced", keep)
	fn := newFunction(ns, "fenced", "def handler(event, context):\n    return event\n")
	executor := newFunction(ns, "own-executor", "def handler(event, context):\n    return event\n")
	executor.Spec.ForProvider.Build = &v1alpha1.Build{ExecutorImage: ptr("attacker.example/kaniko:latest")}
	slow := newFunction(ns, "slow", "def handler(event, context):\n    return event\n")
	slow.Spec.ForProvider.Build = &v1alpha1.Build{Timeout: ptr(v1alpha1.GoDuration("6h"))}
	for _, o := range []client.Object{fn, executor, slow} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	job := waitJobs(ctx, t, c, ns, "fenced", 1)[0]
	np := &networkingv1.NetworkPolicy{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&job), np); err != nil {
		t.Fatalf("the build %s has no NetworkPolicy: %v", job.Name, err)
	}
	if !np.CreationTimestamp.Time.Before(job.CreationTimestamp.Add(time.Second)) {
		t.Errorf("the NetworkPolicy was created at %s, after the Job at %s", np.CreationTimestamp, job.CreationTimestamp)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(job.Spec.Template.Labels)) {
		t.Errorf("the NetworkPolicy selects %s, which the build pods' labels %v do not match", sel, job.Spec.Template.Labels)
	}
	waitCondition(ctx, t, c, executor, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonInvalid, "build.executorImage attacker.example/kaniko:latest is not an executor the provider config allows")
	waitCondition(ctx, t, c, slow, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonInvalid, "build.timeout 6h0m0s is longer than the 30m0s the provider config allows")
	for _, name := range []string{"own-executor", "slow"} {
		if js := jobs(ctx, t, c, ns, name); len(js) > 0 {
			t.Errorf("%s started a build its provider config does not allow", name)
		}
	}
}

// TestNamespacedProviderConfigCannotLoosen plays a team that may write a
// ProviderConfig in its namespace and uses it to loosen the build fence,
// or the limit on forwards that ends their cycles.
// Before, its build block was honoured as if the platform wrote it: no
// NetworkPolicy, metadata and kube-system reachable, an executor of its
// own, builds for a year. Each resource must end not Synced with a message
// naming the field and start no build; a ProviderConfig that tightens the
// fence is honoured.
func TestNamespacedProviderConfigCannotLoosen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, ns := newScene(ctx, t, "loosen", keep)
	cases := []struct {
		reason, name string
		build        v1alpha1.BuildDefaults
		eventing     *v1alpha1.EventingDefaults
		msg          string
	}{
		{
			reason: "Unrestricted turns the build's NetworkPolicy off.", name: "unrestricted",
			build: v1alpha1.BuildDefaults{Network: &v1alpha1.BuildNetwork{Policy: v1alpha1.BuildNetworkUnrestricted}},
			msg:   "sets build.network.policy: Unrestricted",
		},
		{
			reason: "An allow rule for the metadata service.", name: "metadata",
			build: v1alpha1.BuildDefaults{Network: &v1alpha1.BuildNetwork{AllowCIDRs: []v1alpha1.CIDR{"169.254.169.254/32"}}},
			msg:   "sets build.network.allowCIDRs",
		},
		{
			reason: "kube-system's pods.", name: "kube-system",
			build: v1alpha1.BuildDefaults{Network: &v1alpha1.BuildNetwork{AllowNamespaces: []v1alpha1.DNSLabel{"kube-system"}}},
			msg:   "sets build.network.allowNamespaces",
		},
		{
			reason: "An executor of the team's own, which runs as root.", name: "executor",
			build: v1alpha1.BuildDefaults{ExecutorImage: ptr("attacker.example/kaniko:latest")},
			msg:   "sets build.executorImage",
		},
		{
			reason: "Builds that run for a year.", name: "forever",
			build: v1alpha1.BuildDefaults{MaxTimeout: ptr(v1alpha1.GoDuration("8760h"))},
			msg:   "sets build.maxTimeout",
		},
		{
			reason: "A relay of the team's own, which need not count the forwards an event passed.", name: "relay",
			eventing: &v1alpha1.EventingDefaults{RelayImage: ptr("attacker.example/relay:latest")},
			msg:      "sets eventing.relayImage",
		},
		{
			reason: "Cycles of forwards that go round four times as often.", name: "hops",
			eventing: &v1alpha1.EventingDefaults{MaxForwardHops: ptr[int32](32)},
			msg:      "sets eventing.maxForwardHops",
		},
		{
			reason: "The control: a shorter maximum and fewer hops tighten the fences.", name: "tighter",
			build: v1alpha1.BuildDefaults{MaxTimeout: ptr(v1alpha1.GoDuration("10m"))}, eventing: &v1alpha1.EventingDefaults{MaxForwardHops: ptr[int32](2)},
		},
	}
	for _, tc := range cases {
		b := tc.build
		b.Registry = ptr(v1alpha1.ImageRepository("registry.local:5000/lambdas"))
		fn := newFunction(ns, tc.name, "def handler(event, context):\n    return event\n")
		fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: tc.name}
		for _, o := range []client.Object{
			&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Spec: v1alpha1.ProviderConfigSpec{
				Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity}, Build: &b, Eventing: tc.eventing,
			}},
			fn,
		} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitJobs(ctx, t, c, ns, "tighter", 1)
	for _, tc := range cases[:len(cases)-1] {
		t.Log(tc.reason)
		fn := &v1alpha1.LambdaFunction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}}
		waitCondition(ctx, t, c, fn, xpv2.TypeSynced, corev1.ConditionFalse, xpv2.ReasonReconcileError, tc.msg)
		if js := jobs(ctx, t, c, ns, tc.name); len(js) > 0 {
			t.Errorf("%s started a build its ProviderConfig may not loosen the fences for", tc.name)
		}
	}
}
