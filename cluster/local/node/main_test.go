package node

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

func TestMain(m *testing.M) {
	// The tests' clients log nothing worth reading; controller-runtime
	// would otherwise warn, with a stack, that no logger was set.
	log.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
