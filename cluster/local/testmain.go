package local

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// RunTests is a TestMain body: it starts a control plane with every CRD,
// points cfg at it, runs the package's tests and stops it. A control plane
// that cannot start fails the package with the reason; it never skips.
func RunTests(m *testing.M, cfg **rest.Config) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := StartWithAllCRDs(ctx, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	*cfg = cp.Config
	return m.Run()
}

// StartWithAllCRDs starts a control plane with this provider's CRDs and
// every third-party CRD installed.
func StartWithAllCRDs(ctx context.Context, o Options) (*ControlPlane, error) {
	root, err := ModuleRoot(ctx, ".")
	if err != nil {
		return nil, err
	}
	crds, err := AllCRDs(ctx, root)
	if err != nil {
		return nil, err
	}
	o.CRDs = append(o.CRDs, crds...)
	return Start(ctx, o)
}
