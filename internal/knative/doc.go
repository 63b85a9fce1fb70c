// Package knative holds, in its eventing and sources packages, the wire form
// of the Knative Eventing kinds the provider and the function write and read:
// Broker and Trigger (eventing.knative.dev/v1) and PingSource
// (sources.knative.dev/v1). They are not Knative's own Go types because
// Knative's packages for these kinds import its webhooks' dependencies,
// client-go's whole typed clientset among them: about 25 MB of executable and
// 12 MiB of memory at rest in each binary. The fields, JSON names and shared
// duck types are Knative's; this package's test holds them equal to
// Knative's v0.50 types, field for field.
package knative
