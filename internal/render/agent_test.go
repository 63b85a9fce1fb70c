package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func TestAgentReadinessAndTimeout(t *testing.T) {
	cases := map[string]struct {
		reason      string
		path        *v1alpha1.HTTPPath
		timeout     *int64
		wantProbe   corev1.ProbeHandler
		wantTimeout *int64
	}{
		"Defaults": {
			reason:    "An agent image render did not write is ready when its port accepts connections, and Knative's timeout applies.",
			wantProbe: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9000)}},
		},
		"PathAndTimeout": {
			reason:      "An agent that says where it answers once its model is loaded is probed there, on its own port, and its requests may take as long as it says.",
			path:        ptr.To[v1alpha1.HTTPPath]("/healthz"),
			timeout:     ptr.To[int64](240),
			wantProbe:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(9000)}},
			wantTimeout: ptr.To[int64](240),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Agent(AgentInput{Namespace: "apps", Name: "helper", Spec: v1alpha1.LambdaAgentParameters{
				Image:          v1alpha1.AgentImage{Repository: "ghcr.io/acme/agent", Tag: ptr.To[v1alpha1.ImageTag]("v1"), Port: 9000, ReadinessPath: tc.path},
				AI:             v1alpha1.AI{Provider: v1alpha1.AIProviderOllama, Endpoint: ptr.To[v1alpha1.HTTPURL]("http://ollama.ai.svc:11434"), Model: "llama3.2:3b"},
				TimeoutSeconds: tc.timeout,
			}})
			if err != nil {
				t.Fatal(err)
			}
			spec := out.Service.Spec.Template.Spec
			if diff := cmp.Diff(tc.wantProbe, spec.Containers[0].ReadinessProbe.ProbeHandler); diff != "" {
				t.Errorf("%s\nreadiness probe: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantTimeout, spec.TimeoutSeconds); diff != "" {
				t.Errorf("%s\ntimeoutSeconds: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
