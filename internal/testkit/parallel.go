package testkit

import (
	"flag"
	"strconv"
)

// Parallel lets n of a package's tests run at once, where go test's
// default is the number of cores, unless -parallel was given. It is for
// the tests of a real cluster, which wait on Kaniko, Knative and idle
// functions far longer than they compute: one after another, the node's
// took eleven minutes, mostly asleep. Call it in TestMain before m.Run.
func Parallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
