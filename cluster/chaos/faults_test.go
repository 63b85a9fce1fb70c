package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

// Kinds of fault.
const (
	killProvider     = "kill the provider"
	restartAPIServer = "restart kube-apiserver"
	restartEtcd      = "restart etcd"
)

// A fault happens after a pause.
type fault struct {
	after time.Duration
	what  string
}

// converging schedules kills of the provider at random pauses of 0.5 to 4
// seconds, with kube-apiserver's and etcd's restarts at random places among
// them.
func converging(rng *rand.Rand, kills int, restarts bool) []fault {
	faults := make([]fault, 0, kills+2)
	for range kills {
		faults = append(faults, fault{what: killProvider})
	}
	if restarts {
		for _, what := range []string{restartAPIServer, restartEtcd} {
			i := rng.IntN(len(faults) + 1)
			faults = append(faults[:i], append([]fault{{what: what}}, faults[i:]...)...)
		}
	}
	for i := range faults {
		faults[i].after = gap(rng, 500*time.Millisecond, 4*time.Second)
	}
	return faults
}

// gap is a random pause between lo and hi.
func gap(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// do makes the fault happen; one that cannot be made ends the test.
func (f fault) do(t *testing.T, p *provider, cp *local.ControlPlane) {
	t.Helper()
	var err error
	switch f.what {
	case killProvider:
		err = p.kill()
	case restartAPIServer:
		err = cp.RestartAPIServer()
	case restartEtcd:
		err = cp.RestartEtcd()
	}
	if err != nil {
		t.Fatalf("%s: %v", f.what, err)
	}
}

// tally counts the faults of each kind.
func tally(faults []fault) (kills, apiServer, etcd int) {
	for _, f := range faults {
		switch f.what {
		case killProvider:
			kills++
		case restartAPIServer:
			apiServer++
		case restartEtcd:
			etcd++
		}
	}
	return kills, apiServer, etcd
}

// figures are what a run measured, printed at its end.
type figures struct {
	seed                             uint64
	functions, builds                int
	kills, apiRestarts, etcdRestarts int
	readyAtFault                     []int
	converged, settled               time.Duration
	jobsCreated                      int
	builtTwice, orphans              []string
	objectsHeld                      int
	deleteKills                      int
	deleted                          time.Duration
	leftovers                        int
	crashes                          []string
	failedWrites                     int64
}

func (f *figures) String() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("chaos figures (seed %d)", f.seed)
	p("  functions:                       %d (%d build an image)", f.functions, f.builds)
	p("  faults while converging:         %d provider kills, %d kube-apiserver restarts, %d etcd restarts", f.kills, f.apiRestarts, f.etcdRestarts)
	p("  functions Ready at each fault:   %v", f.readyAtFault)
	p("  all Ready and Synced after:      %s (%s after the last fault)", f.converged.Round(100*time.Millisecond), f.settled.Round(100*time.Millisecond))
	p("  build Jobs ever created:         %d, for %d identities; built more than once: %d", f.jobsCreated, f.builds, len(f.builtTwice))
	p("  objects held in the target:      %d; without their function: %d", f.objectsHeld, len(f.orphans))
	p("  provider kills while deleting:   %d", f.deleteKills)
	p("  everything gone after:           %s; kinds with leftovers: %d; the provider config released", f.deleted.Round(100*time.Millisecond), f.leftovers)
	p("  provider crashes:                %d", len(f.crashes))
	p("  actor writes retried:            %d (while the control plane restarted)", f.failedWrites)
	return b.String()
}
