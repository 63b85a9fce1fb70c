// Package bench holds what the benchmark programs under cluster/bench/cmd
// share: percentiles, and counters read from Prometheus endpoints. The
// programs print numbers; nothing here decides whether a number is good.
package bench
