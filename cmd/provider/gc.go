package main

import "runtime/debug"

// gcPercent is the collector's target when GOGC sets none. Most of the
// provider's heap is the objects its caches hold for as long as it runs,
// and little of it is garbage at rest: at Go's default of 100 the heap
// grows to twice those objects between collections, and stays that large.
// At 50 it grows to one and a half times, for more frequent collections
// while resources change (docs/benchmarks.md, "The collector's target").
const gcPercent = 50

// setGCPercent sets the collector's target to gcPercent, unless GOGC, as
// lookupEnv reads it, already set one.
func setGCPercent(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
