package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec/codectest"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestPrivateRegistryComposed checks that Direct mode builds and serves as
// the Input's private registry settings say: the build starts from the
// platform's base image and pulls the rest through its mirror, and the built
// image's Service is pulled with the platform's Secret.
func TestPrivateRegistryComposed(t *testing.T) {
	const input = `{"apiVersion":"fn.lambda.crossplane.io/v1beta1","kind":"Input","build":{"registry":"registry.private/lambdas",` +
		`"baseImages":[{"language":"python","image":"registry.private/mirror/python:{version}-slim"}],` +
		`"registryMirrors":["registry.private/dockerhub"],"pullSecretRefs":[{"name":"registry-pull"}]}}`
	f := &Function{log: logging.NewNopLogger(), sources: noSources(t)}
	run := func(observed map[string]*fnv1.Resource, required map[string]*fnv1.Resources) map[string]*fnv1.Resource {
		t.Helper()
		req := &fnv1.RunFunctionRequest{
			Input:             codectest.Struct(t, input),
			Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: codectest.Struct(t, lambdaXR(t, helloSpec, ""))}, Resources: observed},
			RequiredResources: required,
		}
		rsp, err := run(t, f, req)
		if err != nil {
			t.Fatal(err)
		}
		return rsp.GetDesired().GetResources()
	}

	building := run(nil, map[string]*fnv1.Resources{"namespace": {}, "broker-events": {}})
	job := &batchv1.Job{}
	cm := &corev1.ConfigMap{}
	for key, r := range building {
		var into any
		switch {
		case strings.HasPrefix(key, "Job/"):
			into = job
		case strings.HasPrefix(key, "ConfigMap/"):
			into = cm
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.GetResource().AsMap(), into); err != nil {
			t.Fatal(err)
		}
	}
	if job.Name == "" {
		t.Fatalf("the first pass composes no build Job: %v", building)
	}
	if !slices.Contains(job.Spec.Template.Spec.Containers[0].Args, "--registry-mirror=registry.private/dockerhub") {
		t.Errorf("Kaniko does not pull through the Input's mirror: %q", job.Spec.Template.Spec.Containers[0].Args)
	}
	if !strings.Contains(cm.Data["Dockerfile"], "\nFROM registry.private/mirror/python:3.12-slim\n") {
		t.Errorf("the build does not start from the Input's base image:\n%s", cm.Data["Dockerfile"])
	}

	built := run(
		map[string]*fnv1.Resource{"Job/" + job.Name: {Resource: jobWithStatus(t, job, finished(batchv1.JobComplete))}},
		map[string]*fnv1.Resources{
			"broker-events": {}, "build-pods": {Items: []*fnv1.Resource{{Resource: podTerminated(t, job.Name, 0, testDigest)}}},
			"secret-registry-pull": {Items: []*fnv1.Resource{{Resource: codectest.Struct(t, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"registry-pull","namespace":"apps"}}`)}}},
		},
	)
	svc, ok := built["Service/"+testName]
	if !ok {
		t.Fatalf("no Service composed once the build succeeded: %v", built)
	}
	s := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(svc.GetResource().AsMap(), s); err != nil {
		t.Fatal(err)
	}
	if p := s.Spec.Template.Spec.ImagePullSecrets; len(p) != 1 || p[0].Name != "registry-pull" {
		t.Errorf("the built image's Service is not pulled with the Input's Secret: %v", p)
	}
}
