package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kube"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

func TestFunctionRefuses(t *testing.T) {
	python := &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)}
	inline := func(code string, files ...v1alpha1.SourceFile) v1alpha1.FunctionSource {
		return v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: code, Dependencies: "requests\n", Files: files}}
	}
	cases := map[string]struct {
		reason   string
		in       FunctionInput
		wantErrs []string
	}{
		"NoRegistry": {
			reason:   "A build with nowhere to push says where to set a registry.",
			in:       FunctionInput{Spec: v1alpha1.LambdaFunctionParameters{Source: inline("x"), Runtime: python}},
			wantErrs: []string{"no registry", "build.registry"},
		},
		"GitUnresolved": {
			reason: "A git source without its resolved commit cannot be built.",
			in: FunctionInput{Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{
				Source:  v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{URL: "https://github.com/acme/fn", Ref: "main"}},
				Runtime: python,
			}},
			wantErrs: []string{"not resolved yet", "commit"},
		},
		"TooLarge": {
			reason:   "Inline code past the ConfigMap limit is refused with the size and the way out.",
			in:       FunctionInput{Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{Source: inline(strings.Repeat("#", MaxConfigMapBytes)), Runtime: python}},
			wantErrs: []string{"more than the 1048576 a ConfigMap holds", "git or S3"},
		},
		"FileClashesWithCode": {
			reason:   "An inline file at the handler's path would be overwritten.",
			in:       FunctionInput{Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{Source: inline("x", v1alpha1.SourceFile{Path: "main.py"}), Runtime: python}},
			wantErrs: []string{`"main.py" clashes with the handler's code file`},
		},
		"FileClashesWithDependencies": {
			reason:   "An inline file at the dependency file's path clashes with dependencies.",
			in:       FunctionInput{Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{Source: inline("x", v1alpha1.SourceFile{Path: "requirements.txt"}), Runtime: python}},
			wantErrs: []string{`"requirements.txt" clashes with the dependencies file`},
		},
		"GoHandlerNotExported": {
			reason: "A Go handler must be an exported function name.",
			in: FunctionInput{Defaults: testDefaults, Spec: v1alpha1.LambdaFunctionParameters{Source: inline("package function"),
				Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguageGo), Handler: ptr.To("main.handle")}}},
			wantErrs: []string{"exported function such as Handle", "main.handle"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Namespace, tc.in.Name = "apps", "fn"
			_, err := Function(tc.in)
			if err == nil {
				t.Fatalf("\n%s\nFunction(...): want an error, got none", tc.reason)
			}
			for _, w := range tc.wantErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nFunction(...): error %q does not say %q", tc.reason, err, w)
				}
			}
		})
	}
}

func TestPending(t *testing.T) {
	tag := v1alpha1.ImageTag("v1")
	agent := v1alpha1.LambdaAgentParameters{
		Image: v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: &tag},
		AI:    v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Model: "m"},
		Eventing: &v1alpha1.AgentEventing{Forwards: []v1alpha1.Forward{
			{Name: "up", EventTypes: []string{"a", "b"}, Target: v1alpha1.ForwardTarget{Agent: ptr.To(v1alpha1.DNSLabel("boss"))}},
		}},
	}
	cases := map[string]struct {
		reason       string
		observed     Observed
		wantPending  []string
		wantTriggers []string
	}{
		"ForwardUnresolved": {
			reason:      "A forward whose Broker has no address yet gets no Trigger, and says so.",
			wantPending: []string{"forward up waits for the address of agent/boss: its Broker is not ready yet"},
		},
		"ForwardBadAddress": {
			reason:      "An address that is not a URL is never used.",
			observed:    Observed{ForwardAddresses: map[string]string{"agent/boss": "::not a url"}},
			wantPending: []string{`forward up waits for a usable address: "::not a url" of agent/boss is not a URL`},
		},
		"ForwardResolved": {
			reason:   "A resolved forward gets one Trigger per event type, to the reported address.",
			observed: Observed{ForwardAddresses: map[string]string{"agent/boss": "http://broker-ingress.knative-eventing.svc/apps/boss"}},
			wantTriggers: []string{
				TriggerName(v1alpha1.LambdaAgentKind, "helper", "up-0", "forward/up/0") + " -> http://broker-ingress.knative-eventing.svc/apps/boss",
				TriggerName(v1alpha1.LambdaAgentKind, "helper", "up-1", "forward/up/1") + " -> http://broker-ingress.knative-eventing.svc/apps/boss",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Agent(AgentInput{Namespace: "apps", Name: "helper", Spec: agent, Observed: tc.observed})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPending, out.Pending); diff != "" {
				t.Errorf("\n%s\nPending: -want, +got:\n%s", tc.reason, diff)
			}
			var got []string
			for _, tr := range out.Triggers {
				got = append(got, tr.Name+" -> "+testkit.ForwardedTo(out.Relay, tr))
			}
			if diff := cmp.Diff(tc.wantTriggers, got); diff != "" {
				t.Errorf("\n%s\nTriggers: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBuilt holds Built to Function with the build observed, for every
// built function of the examples and the API's valid manifests: the same
// objects, stamps and all. BuiltEncoded lends only what it renders, since
// the Broker and its config were lent with the objects it is built from.
func TestBuilt(t *testing.T) {
	built := 0
	for _, gi := range goldenInputs(t) {
		spec, ok := gi.spec.(v1alpha1.LambdaFunctionParameters)
		if !ok {
			continue
		}
		in := FunctionInput{Namespace: gi.namespace, Name: gi.name, Spec: spec, Defaults: testDefaults, Observed: testObserved}
		first, err := Function(in)
		if err != nil {
			t.Fatalf("Function(%s): %v", gi.name, err)
		}
		if first.BuildJob == nil {
			if _, err := first.Built(testDigest); err == nil {
				t.Errorf("%s: Built() of objects that wait for no build: want an error", gi.name)
			}
			continue
		}
		built++
		var lent []string
		got, err := first.BuiltEncoded(testDigest, func(o kube.Object, _ []byte, _ []Verbatim) error {
			lent = append(lent, Key(o))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: BuiltEncoded(): %v", gi.name, err)
		}
		in.Observed.Build = &Pushed{Identity: first.BuildIdentity, Digest: testDigest}
		want, err := Function(in)
		if err != nil {
			t.Fatalf("Function(%s) once built: %v", gi.name, err)
		}
		if diff := cmp.Diff(goldenYAML(t, want), goldenYAML(t, got)); diff != "" {
			t.Errorf("%s: Built(): -Function with the build observed, +got:\n%s", gi.name, diff)
		}
		var rendered []string
		for _, o := range got.All() {
			if o != kube.Object(got.Broker) && o != kube.Object(got.BrokerConfig) {
				rendered = append(rendered, Key(o))
			}
		}
		if diff := cmp.Diff(rendered, lent); diff != "" {
			t.Errorf("%s: BuiltEncoded() lent: -rendered but the Broker and its config, +lent:\n%s", gi.name, diff)
		}
	}
	if built == 0 {
		t.Fatal("no golden function is built")
	}
}
