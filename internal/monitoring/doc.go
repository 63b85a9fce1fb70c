// Package monitoring reads the monitoring kit the repository ships in
// examples/monitoring (alert rules and a Grafana dashboard) with
// Prometheus's own rule and PromQL parsers, and tells which metric names its
// queries use and who exports each. The tests of the provider, the function
// and Knative's queue-proxy hold those names to what each really exports.
package monitoring
