package node

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

func TestMain(m *testing.M) {
	// The tests' clients log nothing worth reading; controller-runtime
	// would otherwise warn, with a stack, that no logger was set.
	log.SetLogger(logr.Discard())
	testkit.Parallel(parallelTests)
	code := m.Run()
	if code != 0 {
		diagnoseShared()
	}
	stopShared()
	os.Exit(code)
}

// parallelTests is how many of this package's tests run at once unless
// -parallel says otherwise: every real runtime's build, and the played
// builds, rollouts and Triggers.
const parallelTests = 8

// shared is the cluster the tests that only use one share: one start
// instead of one each.
var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// sharedCluster starts the shared cluster on first use.
func sharedCluster(t testing.TB) *Cluster {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.c, shared.err = Start(ctx, Options{BinDir: binDir(t), Knative: true})
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

// diagnoseShared writes the shared cluster's troubles, if it runs.
func diagnoseShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		diagnose(ctx, os.Stdout, shared.c.kube)
	}
}

// stopShared stops the shared cluster, if it runs: one cluster runs on a
// machine at a time.
func stopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			shared.err = err
		}
		shared.c = nil
	}
}
