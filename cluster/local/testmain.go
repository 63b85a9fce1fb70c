package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A Shared control plane serves every test of a package. It starts, with
// every CRD, when a test first asks for it, so a package's unit tests run
// without one, and stops when Run ends.
type Shared struct {
	// Options it starts with; the CRDs are added to them.
	Options Options

	once sync.Once
	cp   *ControlPlane
	err  error
}

// Run is a TestMain body: it runs the tests, then stops the control plane
// if a test started it.
func (s *Shared) Run(m *testing.M) int {
	code := m.Run()
	if s.cp != nil {
		if err := s.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// Config starts the control plane on first use and returns an administrator's
// config for it. A control plane that cannot start fails the test with the
// reason; it never skips.
func (s *Shared) Config(t testing.TB) *rest.Config {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		s.cp, s.err = StartWithAllCRDs(ctx, s.Options)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.cp.Config
}

// StartWithAllCRDs starts a control plane with this provider's CRDs and
// every third-party CRD installed.
func StartWithAllCRDs(ctx context.Context, o Options) (*ControlPlane, error) {
	crds, err := CRDsWhere(ctx, ".", nil)
	if err != nil {
		return nil, err
	}
	o.CRDs = append(o.CRDs, crds...)
	return Start(ctx, o)
}

// ForTest stops the control plane when the test ends and writes its
// kubeconfig into dir, for the processes a test starts against it. It
// returns the kubeconfig's path.
func (c *ControlPlane) ForTest(t testing.TB, dir string) string {
	t.Helper()
	t.Cleanup(func() { _ = c.Stop() })
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
