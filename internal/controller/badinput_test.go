package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/playact"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/s3server"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// A badInput is a resource the API server admits but that cannot work as
// written, and the condition it must end with.
type badInput struct {
	reason string
	obj    client.Object
	// build, when set, is how the build Job the resource starts ends: the
	// kaniko container's exit message.
	build string
	// cond, want and msg are the condition, its reason and a part of its
	// message that names the problem.
	cond xpv2.ConditionType
	want xpv2.ConditionReason
	msg  string
}

// TestSemanticBadInput creates, beside a function that runs, resources that
// pass admission but are wrong: Secrets, refs, objects, Brokers and provider
// configs that do not exist, builds that cannot push. Each must end with a
// condition that names its problem, and the running function must not be
// touched.
func TestSemanticBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g := startGitServer(t)
	s3 := startS3Server(t)
	s3.put(t, "fns/a.tar.gz", "a")
	_, c, ns := newScene(ctx, t, "bad", func(d *dependencies) { d.Sources.Git, d.Sources.S3 = g.resolver(), s3.resolver() })

	// The function that runs, and must keep running untouched.
	running := newFunction(ns, "running", "def handler(event, context):\n    return 'ok'\n")
	if err := c.Create(ctx, running); err != nil {
		t.Fatal(err)
	}
	svc := buildToReady(ctx, t, c, running)
	before := svc.ResourceVersion

	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-creds"}, StringData: map[string]string{"AWS_ACCESS_KEY_ID": s3server.Access, "AWS_SECRET_ACCESS_KEY": s3server.Secret}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-wrong"}, StringData: map[string]string{"AWS_ACCESS_KEY_ID": s3server.Access, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-keys"}, StringData: map[string]string{"unrelated": "x"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"level": "debug"}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-secret"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.KeySelector{Name: "kubeconfig", Key: "kubeconfig"},
		}}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-key"}, Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.KeySelector{Name: "no-keys", Key: "kubeconfig"},
		}}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	cases := badInputs(ns)
	if len(cases) < 20 {
		t.Fatalf("%d bad inputs; the issue asks for at least 20", len(cases))
	}
	for _, tc := range cases {
		if err := c.Create(ctx, tc.obj); err != nil {
			t.Fatalf("%s: the API server refused it, but it is meant to pass admission: %v", tc.obj.GetName(), err)
		}
	}
	for _, tc := range cases {
		if tc.build == "" {
			continue
		}
		j := waitJobs(ctx, t, c, ns, tc.obj.GetName(), 1)[0]
		playact.FinishJob(ctx, t, c, &j, 1, tc.build)
	}
	wait.Until(ctx, t, "every bad input names its problem", func() string {
		var wrong []string
		for _, tc := range cases {
			mg := tc.obj.DeepCopyObject().(conditioned) //nolint:forcetypeassert // Both kinds are.
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), mg); err != nil {
				return err.Error()
			}
			got := mg.GetCondition(tc.cond)
			if got.Status != corev1.ConditionFalse || got.Reason != tc.want || !strings.Contains(got.Message, tc.msg) {
				wrong = append(wrong, fmt.Sprintf("%s (%s) %s %s %s %q; want False %s containing %q", tc.obj.GetName(), tc.reason, tc.cond, got.Status, got.Reason, got.Message, tc.want, tc.msg))
			}
		}
		return strings.Join(wrong, "\n")
	})

	// Nothing that runs was touched, and nothing of the bad ones runs.
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if svc.ResourceVersion != before {
		t.Errorf("the running function's Service changed (resourceVersion %s, was %s)", svc.ResourceVersion, before)
	}
	waitCondition(ctx, t, c, running, xpv2.TypeReady, corev1.ConditionTrue, "", "")
	for _, tc := range cases {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.obj.GetName()}, &servingv1.Service{}); err == nil {
			t.Errorf("%s: a Service was deployed for a resource that cannot work", tc.obj.GetName())
		}
	}
}

// conditioned is a managed resource's conditions.
type conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// badInputs are the cases of TestSemanticBadInput, in namespace ns.
func badInputs(ns string) []badInput {
	fn := func(name string, change func(*v1alpha1.LambdaFunctionParameters)) *v1alpha1.LambdaFunction {
		f := newFunction(ns, name, "def handler(event, context):\n    return '"+name+"'\n")
		change(&f.Spec.ForProvider)
		return f
	}
	git := func(url, ref, secret string) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			p.Source = v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: url, Ref: ref}}
			if secret != "" {
				p.Source.Git.SecretRef = &v1alpha1.LocalObjectReference{Name: v1alpha1.DNSSubdomain(secret)}
			}
		}
	}
	s3 := func(bucket, key, prefix, secret string) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			src := &v1alpha1.S3Source{Endpoint: ptr(v1alpha1.ServiceURL("http://s3.lambda.test:9000")), Bucket: bucket}
			if key != "" {
				src.Key = ptr(v1alpha1.RelativePath(key))
			}
			if prefix != "" {
				src.Prefix = ptr(v1alpha1.RelativePath(prefix))
			}
			if secret != "" {
				src.SecretRef = &v1alpha1.LocalObjectReference{Name: v1alpha1.DNSSubdomain(secret)}
			}
			p.Source = v1alpha1.FunctionSource{S3: src}
		}
	}
	image := func(pullSecret string) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			p.Runtime = nil
			p.Source = v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{Repository: "ghcr.io/acme/fn", Tag: ptr(v1alpha1.ImageTag("v1"))}}
			if pullSecret != "" {
				p.Source.Image.PullSecrets = []v1alpha1.LocalObjectReference{{Name: v1alpha1.DNSSubdomain(pullSecret)}}
			}
		}
	}
	env := func(secret, key string) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			image("")(p)
			p.Env = []v1alpha1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &v1alpha1.EnvVarSource{SecretKeyRef: &v1alpha1.KeySelector{Name: secret, Key: key}}}}
		}
	}
	files := func(v v1alpha1.Volume) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			image("")(p)
			p.Volumes = []v1alpha1.Volume{v}
		}
	}
	settings := func(p *v1alpha1.LambdaFunctionParameters) {
		image("")(p)
		p.EnvFrom = []v1alpha1.EnvFromSource{{ConfigMapRef: &v1alpha1.ObjectSelector{Name: "app-settings"}}}
	}
	broker := func(name string) func(*v1alpha1.LambdaFunctionParameters) {
		return func(p *v1alpha1.LambdaFunctionParameters) {
			image("")(p)
			p.Eventing.Broker = &v1alpha1.Broker{Name: v1alpha1.DNSLabel(name)}
		}
	}
	asIs := func(*v1alpha1.LambdaFunctionParameters) {}
	withPC := func(f *v1alpha1.LambdaFunction, name string) *v1alpha1.LambdaFunction {
		f.Spec.ProviderConfigReference.Name = name
		return f
	}
	agent := func(name string, change func(*v1alpha1.LambdaAgentParameters)) *v1alpha1.LambdaAgent {
		a := newAgent(ns, name, xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "default"}, nil)
		change(&a.Spec.ForProvider)
		return a
	}
	hosted := func(secret, key string) func(*v1alpha1.LambdaAgentParameters) {
		return func(p *v1alpha1.LambdaAgentParameters) {
			p.AI = v1alpha1.AI{Provider: v1alpha1.AIProviderOpenAI, Model: "gpt-4o-mini", APIKeySecretRef: &v1alpha1.KeySelector{Name: secret, Key: key}}
		}
	}
	const repo = "https://git.lambda.test/functions.git"
	ready, synced := xpv2.TypeReady, xpv2.TypeSynced
	return []badInput{
		{reason: "A git source's credentials Secret is missing.", obj: fn("git-no-secret", git(repo, "main", "git-creds")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: `Secret git-creds: secrets "git-creds" not found`},
		{reason: "A git branch is missing.", obj: fn("git-no-branch", git(repo, "release-9", "")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: `no branch or tag "release-9"`},
		{reason: "A git tag is missing.", obj: fn("git-no-tag", git(repo, "v9.9.9", "")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: `no branch or tag "v9.9.9"`},
		{reason: "A git repository is missing.", obj: fn("git-no-repo", git("https://git.lambda.test/nothing.git", "main", "")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "nothing.git"},
		{reason: "A git URL over ssh, which the provider cannot resolve.", obj: fn("git-ssh", git("ssh://git.lambda.test/functions.git", "main", "")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "https"},
		{reason: "An S3 source's credentials Secret is missing.", obj: fn("s3-no-secret", s3("functions", "fns/a.tar.gz", "", "s3-missing")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: `Secret s3-missing: secrets "s3-missing" not found`},
		{reason: "An S3 object is missing.", obj: fn("s3-no-key", s3("functions", "fns/missing.tar.gz", "", "s3-creds")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "s3://functions/fns/missing.tar.gz does not exist"},
		{reason: "An S3 prefix holds nothing.", obj: fn("s3-empty-prefix", s3("functions", "", "nothing/", "s3-creds")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "nothing/"},
		{reason: "An S3 bucket is missing.", obj: fn("s3-no-bucket", s3("no-such-bucket", "fns/a.tar.gz", "", "s3-creds")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "no-such-bucket"},
		{reason: "S3 credentials that the server refuses.", obj: fn("s3-wrong-creds", s3("functions", "fns/a.tar.gz", "", "s3-wrong")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "cannot read S3 object s3://functions/fns/a.tar.gz: The request signature"},
		{reason: "An S3 object anonymous readers may not read.", obj: fn("s3-anonymous", s3("functions", "fns/a.tar.gz", "", "")), cond: ready, want: v1alpha1.ReasonSourceUnresolved, msg: "Access Denied"},
		{reason: "A build whose registry cannot be reached.", obj: fn("registry-down", asIs), build: "error pushing image: dial tcp: lookup registry.local on 10.96.0.10:53: no such host", cond: ready, want: v1alpha1.ReasonBuildFailed, msg: "lookup registry.local"},
		{reason: "A build whose registry refuses the push.", obj: fn("registry-denied", asIs), build: "error pushing image: UNAUTHORIZED: authentication required", cond: ready, want: v1alpha1.ReasonBuildFailed, msg: "UNAUTHORIZED"},
		{reason: "Code that does not build.", obj: fn("syntax-error", func(p *v1alpha1.LambdaFunctionParameters) { p.Source.Inline.Code = "def handler(:\n" }), build: "SyntaxError: invalid syntax (main.py, line 1)", cond: ready, want: v1alpha1.ReasonBuildFailed, msg: "SyntaxError"},
		{reason: "An image pull secret is missing.", obj: fn("pull-secret-missing", image("regcred")), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: "Secret regcred (image pull secret) does not exist in namespace " + ns},
		{reason: "An environment variable's Secret is missing.", obj: fn("env-secret-missing", env("db", "password")), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: "Secret db (environment variable DB_PASSWORD) does not exist"},
		{reason: "An environment variable's Secret lacks the key.", obj: fn("env-key-missing", env("no-keys", "password")), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: `has no key "password"`},
		{reason: "A volume's Secret lacks a key it mounts.", obj: fn("volume-key-missing", files(v1alpha1.Volume{Path: "/var/run/secrets/tls", Secret: &v1alpha1.VolumeSource{Name: "no-keys", Items: []v1alpha1.KeyToPath{{Key: "tls.crt", Path: "cert"}}}})), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: `Secret no-keys (volume at /var/run/secrets/tls) in namespace ` + ns + ` has no key "tls.crt"`},
		{reason: "A ConfigMap of the environment is missing.", obj: fn("envfrom-missing", settings), cond: ready, want: v1alpha1.ReasonConfigMapMissing, msg: "ConfigMap app-settings (environment of container function) does not exist"},
		{reason: "A ConfigMap the provider did not make, read from the API server, lacks a key a volume mounts.", obj: fn("configmap-key-missing", files(v1alpha1.Volume{Path: "/etc/settings", ConfigMap: &v1alpha1.VolumeSource{Name: "settings", Items: []v1alpha1.KeyToPath{{Key: "colour", Path: "colour"}}}})), cond: ready, want: v1alpha1.ReasonConfigMapMissing, msg: `ConfigMap settings (volume at /etc/settings) in namespace ` + ns + ` has no key "colour"`},
		{reason: "The Broker the Triggers listen on is missing.", obj: fn("broker-missing", broker("payments")), cond: ready, want: v1alpha1.ReasonBrokerMissing, msg: "Broker payments, which the Triggers listen on, does not exist"},
		{reason: "The provider config is missing.", obj: withPC(fn("pc-missing", asIs), "nowhere"), cond: synced, want: xpv2.ReasonReconcileError, msg: `cannot get ProviderConfig "nowhere"`},
		{reason: "The provider config's kubeconfig Secret is missing.", obj: withPC(fn("pc-no-secret", asIs), "no-secret"), cond: synced, want: xpv2.ReasonReconcileError, msg: "cannot get the kubeconfig Secret " + ns + "/kubeconfig"},
		{reason: "The provider config's kubeconfig Secret lacks the key.", obj: withPC(fn("pc-no-key", asIs), "no-key"), cond: synced, want: xpv2.ReasonReconcileError, msg: `has no key "kubeconfig"`},
		{reason: "An agent's API key Secret is missing.", obj: agent("agent-no-key", hosted("openai", "api-key")), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: "Secret openai (environment variable"},
		{reason: "An agent's API key Secret lacks the key.", obj: agent("agent-wrong-key", hosted("no-keys", "api-key")), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: `has no key "api-key"`},
		{reason: "An agent's image pull secret is missing.", obj: agent("agent-pull-secret", func(p *v1alpha1.LambdaAgentParameters) {
			p.Image.PullSecrets = []v1alpha1.LocalObjectReference{{Name: "agent-regcred"}}
		}), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: "Secret agent-regcred (image pull secret)"},
		{reason: "An agent's volume's Secret is missing.", obj: agent("agent-no-volume", func(p *v1alpha1.LambdaAgentParameters) {
			p.Volumes = []v1alpha1.Volume{{Path: "/var/run/secrets/tools", Secret: &v1alpha1.VolumeSource{Name: "tool-credentials"}}}
		}), cond: ready, want: v1alpha1.ReasonSecretMissing, msg: "Secret tool-credentials (volume at /var/run/secrets/tools) does not exist"},
	}
}
