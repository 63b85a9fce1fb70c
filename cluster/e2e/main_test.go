//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// parallelStages is how many stages of the real cluster's test run at
// once: every one of TestRunServesFirstFunction's.
const parallelStages = 4

func TestMain(m *testing.M) {
	// The tests' clients log nothing worth reading; controller-runtime
	// would otherwise warn, with a stack, that no logger was set.
	log.SetLogger(logr.Discard())
	testkit.Parallel(parallelStages)
	os.Exit(m.Run())
}
