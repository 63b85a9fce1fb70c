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

func TestFunction(t *testing.T) {
	git := v1alpha1.FunctionSource{Git: &v1alpha1.GitSource{}}
	waiting := observe.Held(v1alpha1.PhasePending, v1alpha1.ReasonWaiting, "waiting")
	broker := observe.Held(v1alpha1.PhasePending, v1alpha1.ReasonBrokerMissing, "no Broker")
	cases := map[string]struct {
		reason string
		source v1alpha1.FunctionSource
		was    v1alpha1.Phase
		steps  *steps
		want   []string
		result string
		err    bool
	}{
		"Image": {
			reason: "A prebuilt image needs no source resolved and no build.",
			steps:  &steps{},
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := render.FunctionInput{Spec: v1alpha1.LambdaFunctionParameters{Source: tc.source}}
			got, err := Function(context.Background(), in, tc.was, tc.steps)
			if diff := cmp.Diff(tc.want, tc.steps.taken); diff != "" {
				t.Errorf("\n%s\nFunction(...): steps taken: -want, +got:\n%s", tc.reason, diff)
			}
			if got != tc.result || (err != nil) != tc.err {
				t.Errorf("\n%s\nFunction(...) = %q, %v; want %q, error %t", tc.reason, got, err, tc.result, tc.err)
			}
			if tc.source.Git != nil && len(tc.steps.taken) > 1 && tc.steps.taken[1] == "Render" && tc.steps.rendered.Observed.SourceIdentity != "commit" {
				t.Errorf("\n%s\nFunction(...): rendered without the resolved identity", tc.reason)
			}
		})
	}
}

// agentSteps take an agent's steps as steps take a function's.
type agentSteps struct{ *steps }

func (s agentSteps) Render(render.AgentInput) (*render.Objects, error) {
	s.taken = append(s.taken, "Render")
	return &render.Objects{}, s.renderErr
}

func TestAgent(t *testing.T) {
	broker := observe.Held(v1alpha1.PhasePending, v1alpha1.ReasonBrokerMissing, "no Broker")
	cases := map[string]struct {
		reason string
		steps  *steps
		want   []string
		result string
		err    bool
	}{
		"Deployed": {
			reason: "An admitted agent is deployed.",
			steps:  &steps{},
			want:   []string{"Render", "Admit", "Deploy"},
			result: "deployed",
		},
		"Invalid": {
			reason: "A spec render refuses is held as Invalid, with the cause.",
			steps:  &steps{renderErr: errors.New("bad spec")},
			want:   []string{"Render", "Hold " + string(v1alpha1.ReasonInvalid)},
			result: "held",
			err:    true,
		},
		"NotAdmitted": {
			reason: "An agent the caller does not admit is not deployed.",
			steps:  &steps{admitStop: &broker},
			want:   []string{"Render", "Admit", "Hold " + string(v1alpha1.ReasonBrokerMissing)},
			result: "held",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Agent(context.Background(), render.AgentInput{}, v1alpha1.PhasePending, agentSteps{tc.steps})
			if diff := cmp.Diff(tc.want, tc.steps.taken); diff != "" {
				t.Errorf("\n%s\nAgent(...): steps taken: -want, +got:\n%s", tc.reason, diff)
			}
			if got != tc.result || (err != nil) != tc.err {
				t.Errorf("\n%s\nAgent(...) = %q, %v; want %q, error %t", tc.reason, got, err, tc.result, tc.err)
			}
		})
	}
}
