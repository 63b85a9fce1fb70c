//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// parallelTests is how many of the package's tests run at once: all
// three, each on a control plane or cluster of its own, and the four
// stages of TestRunServesFirstFunction, which waits on the real cluster
// far longer than the other two take.
const parallelTests = 8

func TestMain(m *testing.M) {
	// The tests' clients log nothing worth reading; controller-runtime
	// would otherwise warn, with a stack, that no logger was set.
	log.SetLogger(logr.Discard())
	testkit.Parallel(parallelTests)
	os.Exit(m.Run())
}
