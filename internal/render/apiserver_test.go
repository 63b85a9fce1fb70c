package render

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

var controlPlane local.Shared

func TestMain(m *testing.M) {
	os.Exit(controlPlane.Run(m))
}

var dryRun = &client.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}

// podOf makes a Pod of a pod spec, in a namespace.
func podOf(namespace, name string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: spec}
}

// TestAPIServerAcceptsRendered creates every rendered object of every golden
// case on a real API server, with Knative's and batch's schemas installed, as
// a strict server-side dry run; then admits each Service's pod spec in a
// namespace that enforces the restricted Pod Security level, and each build
// pod in one that enforces baseline.
func TestAPIServerAcceptsRendered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := testkit.Client(t, controlPlane.Config(t))
	testkit.Namespace(ctx, t, c, "restricted", "restricted")
	testkit.Namespace(ctx, t, c, "baseline", "baseline")
	cases := goldenCases(t)
	made := map[string]bool{}
	for _, tc := range cases {
		for _, obj := range tc.objects.All() {
			if ns := obj.GetNamespace(); !made[ns] {
				testkit.Namespace(ctx, t, c, ns, "")
				made[ns] = true
			}
		}
	}

	for _, tc := range cases {
		for _, obj := range tc.objects.All() {
			if err := c.Create(ctx, obj.DeepCopyObject().(client.Object), dryRun); err != nil { //nolint:forcetypeassert // A copy of an object is one.
				t.Errorf("%s: the API server refuses %s %s: %v", tc.name, obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
			}
		}
		if svc := tc.objects.Service; svc != nil {
			pod := podOf("restricted", svc.Name, svc.Spec.Template.Spec.PodSpec)
			if err := c.Create(ctx, pod, dryRun); err != nil {
				t.Errorf("%s: the Service's pod is not admitted under the restricted level: %v", tc.name, err)
			}
		}
		if job := tc.objects.BuildJob; job != nil {
			pod := podOf("baseline", job.Name, job.Spec.Template.Spec)
			if err := c.Create(ctx, pod, dryRun); err != nil {
				t.Errorf("%s: the build pod is not admitted under the baseline level: %v", tc.name, err)
			}
		}
	}

	// The control: Kaniko runs as root, which restricted forbids, so the
	// namespaces above really enforce their levels.
	for _, tc := range goldenCases(t) {
		if job := tc.objects.BuildJob; job != nil {
			if err := c.Create(ctx, podOf("restricted", job.Name, job.Spec.Template.Spec), dryRun); err == nil {
				t.Errorf("%s: a build pod was admitted under the restricted level; the checks above prove nothing", tc.name)
			}
			return
		}
	}
	t.Fatal("no golden case builds; the control did not run")
}
