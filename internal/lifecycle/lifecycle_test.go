package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/observe"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// steps record which steps a pass took, and end it as each was told to.
type steps struct {
	taken []string

	resolveErr  error
	resolveStop *observe.Verdict
	renderErr   error
	admitStop   *observe.Verdict
	build       bool
	digest      string
	rendered    render.FunctionInput
}

func (s *steps) Resolve(context.Context, v1alpha1.FunctionSource) (string, *observe.Verdict, error) {
	s.taken = append(s.taken, "Resolve")
	return "commit", s.resolveStop, s.resolveErr
}

func (s *steps) Render(in render.FunctionInput) (*render.Objects, error) {
	s.taken = append(s.taken, "Render")
	s.rendered = in
	objs := &render.Objects{}
	if s.build {
		objs.BuildJob = &batchv1.Job{}
	}
	return objs, s.renderErr
}

func (s *steps) Admit(context.Context, *render.Objects) (*observe.Verdict, error) {
	s.taken = append(s.taken, "Admit")
	return s.admitStop, nil
}

func (s *steps) Build(context.Context, *render.Objects) (string, string, error) {
	s.taken = append(s.taken, "Build")
	return s.digest, "building", nil
}

func (s *steps) Built(objs *render.Objects, digest string) (*render.Objects, error) {
	s.taken = append(s.taken, "Built "+digest)
	return objs, nil
}

func (s *steps) Deploy(context.Context, *render.Objects) (string, error) {
	s.taken = append(s.taken, "Deploy")
	return "deployed", nil
}

func (s *steps) Hold(v observe.Verdict, cause error) (string, error) {
	s.taken = append(s.taken, "Hold "+string(v.Reason))
	if v.Ready {
		s.taken = append(s.taken, "still Ready")
	}
	return "held", cause
}

func TestPasses(t *testing.T) {
	git := v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{}}
	waiting := observe.Held(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, "waiting")
	broker := observe.Held(v1alpha1.PhasePending, v1alpha1.ReasonBrokerMissing, "no Broker")
	cases := map[string]struct {
		reason string
		source v1alpha1.FunctionSource
		was    v1alpha1.Phase
		steps  *steps
		// agent is true of a case an agent's pass takes alike.
		agent  bool
		want   []string
		result string
		err    bool
	}{
		"Image": {
			reason: "A prebuilt image needs no source resolved and no build; an agent is deployed alike.",
			steps:  &steps{},
			agent:  true,
			want:   []string{"Render", "Admit", "Deploy"},
			result: "deployed",
		},
		"Built": {
			reason: "A build that pushed a digest renders the workload with it before deploying.",
			source: git,
			steps:  &steps{build: true, digest: "sha256:1"},
			want:   []string{"Resolve", "Render", "Admit", "Build", "Built sha256:1", "Deploy"},
			result: "deployed",
		},
		"Building": {
			reason: "While a build runs, the pass ends with where it stands and deploys nothing.",
			source: git,
			steps:  &steps{build: true},
			want:   []string{"Resolve", "Render", "Admit", "Build"},
			result: "building",
		},
		"SourceNotFound": {
			reason: "A missing credentials Secret or object needs a user: held, with the cause.",
			source: git,
			was:    v1alpha1.PhaseReady,
			steps:  &steps{resolveErr: kerrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "creds")},
			want:   []string{"Resolve", "Hold " + string(v1alpha1.ReasonSourceUnresolved)},
			result: "held",
			err:    true,
		},
		"SourceUnreachable": {
			reason: "A server that does not answer may come back: what served stays Ready.",
			source: git,
			was:    v1alpha1.PhaseReady,
			steps:  &steps{resolveErr: errors.New("connection refused")},
			want:   []string{"Resolve", "Hold " + string(v1alpha1.ReasonSourceUnreachable), "still Ready"},
			result: "held",
			err:    true,
		},
		"SourceWaits": {
			reason: "A step that is yet to read what resolving needs holds the pass with its verdict.",
			source: git,
			steps:  &steps{resolveStop: &waiting},
			want:   []string{"Resolve", "Hold " + string(v1alpha1.ReasonWaiting)},
			result: "held",
		},
		"Invalid": {
			reason: "A spec render refuses is held as Invalid, with the cause.",
			steps:  &steps{renderErr: errors.New("bad spec")},
			agent:  true,
			want:   []string{"Render", "Hold " + string(v1alpha1.ReasonInvalid)},
			result: "held",
			err:    true,
		},
		"NotAdmitted": {
			reason: "A workload the caller does not admit is neither built nor deployed.",
			source: git,
			steps:  &steps{build: true, digest: "sha256:1", admitStop: &broker},
			want:   []string{"Resolve", "Render", "Admit", "Hold " + string(v1alpha1.ReasonBrokerMissing)},
			result: "held",
		},
		"NotAdmittedImage": {
			reason: "A prebuilt image or an agent the caller does not admit is not deployed.",
			steps:  &steps{admitStop: &broker},
			agent:  true,
			want:   []string{"Render", "Admit", "Hold " + string(v1alpha1.ReasonBrokerMissing)},
			result: "held",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fn := *tc.steps
			in := render.FunctionInput{Spec: v1alpha1.LambdaFunctionParameters{Source: tc.source}}
			got, err := Function(context.Background(), in, tc.was, &fn)
			check(t, tc.reason, "Function", fn.taken, tc.want, got, tc.result, err, tc.err)
			if tc.source.Git != nil && len(fn.taken) > 1 && fn.taken[1] == "Render" && fn.rendered.Observed.SourceIdentity != "commit" {
				t.Errorf("\n%s\nFunction(...): rendered without the resolved identity", tc.reason)
			}
			if !tc.agent {
				return
			}
			agent := *tc.steps
			got, err = Agent(context.Background(), render.AgentInput{}, tc.was, agentSteps{&agent})
			check(t, tc.reason, "Agent", agent.taken, tc.want, got, tc.result, err, tc.err)
		})
	}
}

// check compares the steps a pass took and what it ended with.
func check(t *testing.T, reason, pass string, taken, want []string, got, result string, err error, wantErr bool) {
	t.Helper()
	if diff := cmp.Diff(want, taken); diff != "" {
		t.Errorf("\n%s\n%s(...): steps taken: -want, +got:\n%s", reason, pass, diff)
	}
	if got != result || (err != nil) != wantErr {
		t.Errorf("\n%s\n%s(...) = %q, %v; want %q, error %t", reason, pass, got, err, result, wantErr)
	}
}

// agentSteps take an agent's steps as steps take a function's.
type agentSteps struct{ *steps }

func (s agentSteps) Render(render.AgentInput) (*render.Objects, error) {
	s.taken = append(s.taken, "Render")
	return &render.Objects{}, s.renderErr
}
