package clients

import (
	"os"
	"testing"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

// controlPlane serves the tests that read a real API server through the
// provider's caches.
var controlPlane local.Shared

func TestMain(m *testing.M) {
	os.Exit(controlPlane.Run(m))
}
