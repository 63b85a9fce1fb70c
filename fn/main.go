// Command function-knative-lambda is a Crossplane composition function. It
// realises Lambda and Agent composite resources as Knative workloads, either
// directly (Service, Broker, Triggers and a Kaniko build) or through
// provider-knative-lambda's managed resources.
package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	function "github.com/crossplane/function-sdk-go"

	"github.com/knative-lambda/provider-knative-lambda/internal/source"
)

func main() {
	var (
		app         = kingpin.New(filepath.Base(os.Args[0]), "A Crossplane composition function for Knative lambdas and agents.")
		debug       = app.Flag("debug", "Emit debug logs.").Short('d').Bool()
		network     = app.Flag("network", "Network on which to listen for gRPC connections.").Default("tcp").String()
		address     = app.Flag("address", "Address at which to listen for gRPC connections.").Default(":9443").String()
		tlsCertsDir = app.Flag("tls-certs-dir", "Folder with the server's tls.crt and tls.key and the ca.crt that client certificates must chain to.").Envar("TLS_SERVER_CERTS_DIR").String()
		insecure    = app.Flag("insecure", "Serve without mutual TLS, such as for crossplane render. --tls-certs-dir is ignored.").Bool()
		metrics     = app.Flag("metrics-address", "Address of the Prometheus metrics endpoint; empty turns it off.").Default(":8080").String()
		denyCIDRs   = app.Flag("deny-source-cidr", "A network no git or S3 source or build pod may reach, such as the cluster's Service and pod networks; repeat for more. Loopback, link-local, cloud metadata and the cluster's API server are always refused.").Strings()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	deny, err := source.ParseCIDRs(*denyCIDRs)
	kingpin.FatalIfError(err, "cannot parse --deny-source-cidr")

	log, err := function.NewLogger(*debug)
	kingpin.FatalIfError(err, "cannot create a logger")
	// Git and S3 servers are reached only through the dialer that refuses
	// loopback, link-local and metadata addresses and the API server, as in
	// the provider.
	kingpin.FatalIfError(registerMetrics(prometheus.DefaultRegisterer), "cannot register metrics")
	fn := &Function{log: log, sources: source.NewResolver(source.HTTPClient(source.SafeDialer(source.Policy{Deny: deny}))), buildDeny: source.BuildDeny(deny)}
	kingpin.FatalIfError(serve(context.Background(), fn, serving{
		network: *network, address: *address,
		tlsCertsDir: *tlsCertsDir, insecure: *insecure,
		metricsAddress: *metrics,
	}), "cannot serve")
}
