package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
)

const (
	errAgentBuild = "agents run a prebuilt image: there is nothing to rebuild"
	errImageBuild = "its source is an image: there is nothing to rebuild"
	errRebuildFmt = "cannot annotate %s"
)

// rebuild asks for a new build of a function's code, even unchanged, by
// giving the rebuild annotation a new value: the time it was asked.
func rebuild(ctx context.Context, c client.Client, w *workload, now time.Time, out io.Writer) error {
	if w.kind.container == render.ContainerAgent {
		return errors.New(errAgentBuild)
	}
	if _, ok, _ := unstructured.NestedMap(w.object.Object, append(w.kind.spec, "source", "image")...); ok {
		return errors.New(errImageBuild)
	}
	value := now.UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.AnnotationRebuild, value)
	if err := c.Patch(ctx, w.object, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return errors.Wrapf(err, errRebuildFmt, w)
	}
	_, err := fmt.Fprintf(out, "%s will build again (%s=%s); kubectl lambda status %s shows its progress\n", w, v1alpha1.AnnotationRebuild, value, w.Name())
	return err
}
