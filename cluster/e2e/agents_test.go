//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

// ticketOpened is the event type the agents subscribe to.
const ticketOpened = "com.example.ticket.opened"

// agentsServe deploys a prebuilt image, one that serves CloudEvents, as an
// agent: as a LambdaAgent through the provider and as an Agent through
// Crossplane and the function, each with its model settings, kept warm and
// subscribed to ticket events on a Broker it creates. A ticket event posted
// to each Broker from this machine must reach its agent on real Eventing,
// as the agent's log says; deleting them leaves none of their objects.
func agentsServe(ctx context.Context, t *testing.T, kube client.Client, pods typedcorev1.CoreV1Interface, image string) {
	t.Helper()
	repository, digest, ok := strings.Cut(image, "@")
	if !ok {
		t.Fatalf("the image %q has no digest", image)
	}
	spec := v1alpha1.LambdaAgentParameters{
		Image: v1alpha1.AgentImage{Repository: v1alpha1.ImageRepository(repository), Digest: ptr.To(v1alpha1.ImageDigest(digest))},
		AI:    v1alpha1.AI{Provider: "ollama", Endpoint: ptr.To(v1alpha1.HTTPURL("http://ollama.ai.svc:11434")), Model: "llama3.2:3b"},
		Eventing: &v1alpha1.AgentEventing{
			Broker:        &v1alpha1.Broker{Name: "desk", Create: true},
			Subscriptions: []v1alpha1.Subscription{{Name: "tickets", EventType: ticketOpened}},
		},
	}
	agent, xr := managedAndComposite(t, v1alpha1.LambdaAgentGroupVersionKind, "Agent", "support", &spec)

	appliedAndReady(ctx, t, kube, "an agent", nil, []*unstructured.Unstructured{agent, xr}, func(o *unstructured.Unstructured, _ string) {
		delivered(ctx, t, kube, pods, o)
	})
	for _, o := range []*unstructured.Unstructured{agent, xr} {
		deleted(ctx, t, kube, v1alpha1.LambdaAgentKind, o, "desk")
	}
}

// delivered posts a ticket event to the agent's Broker, through
// Eventing's broker-ingress, again every few seconds, until the agent's log
// says it was invoked with it.
func delivered(ctx context.Context, t *testing.T, kube client.Client, pods typedcorev1.CoreV1Interface, o *unstructured.Unstructured) {
	t.Helper()
	start := time.Now()
	sent := time.Time{}
	wait.Until(ctx, t, o.GetName()+" is invoked with a ticket event", func() string {
		// An event the Broker took before the Trigger delivered is lost.
		if time.Since(sent) > resend {
			status, body, err := postToBroker(ctx, kube, o.GetNamespace(), "desk", ticketOpened, `{"ticket": 1}`)
			if err != nil || status != http.StatusAccepted {
				return fmt.Sprintf("the Broker answered %d %q (%v)", status, body, err)
			}
			sent = time.Now()
		}
		return invokedWith(ctx, pods, o, render.ContainerAgent, ticketOpened)
	})
	t.Logf("%s %s/%s got a ticket event through its Broker %s after the first was posted", o.GetKind(), o.GetNamespace(), o.GetName(), time.Since(start).Round(time.Millisecond))
}
