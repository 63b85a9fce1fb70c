// Package knative holds, in its serving, eventing and sources packages, the
// wire form of the Knative kinds the provider and the function write and
// read: Service and Revision (serving.knative.dev/v1), Broker and Trigger
// (eventing.knative.dev/v1) and PingSource (sources.knative.dev/v1). They are
// not Knative's own Go types because Knative's packages for these kinds
// import its webhooks' dependencies: for Eventing, client-go's whole typed
// clientset, about 25 MB of executable and 12 MiB of memory at rest in each
// binary; for Serving, its configuration, networking and logging packages,
// whose logger is built when the program starts. The fields, JSON names and
// shared duck types are Knative's; this package's test holds them equal to
// Knative's v0.50 types, field for field. What render needs of Knative's
// validation, the serving package does in Knative's words, and its test
// holds the verdicts to Knative's.
package knative
