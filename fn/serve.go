package main

import (
	"context"
	"net"
	"net/http"
	"time"

	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	function "github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	fnv1beta1 "github.com/crossplane/function-sdk-go/proto/v1beta1"

	"github.com/knative-lambda/provider-knative-lambda/fn/codec"
)

const (
	errCreds     = "cannot load the server's credentials"
	errNoCreds   = "no credentials: set --tls-certs-dir or --insecure"
	errFmtListen = "cannot listen for %s connections at %q"
	errServe     = "cannot serve gRPC"
)

// metricsReadHeaderTimeout bounds how long a scrape may take to send its
// headers, so a slow client cannot hold a connection open.
const metricsReadHeaderTimeout = 30 * time.Second

// A serving says where and how the function serves.
type serving struct {
	network, address string
	// tlsCertsDir holds tls.crt, tls.key and the ca.crt client
	// certificates must chain to, unless insecure.
	tlsCertsDir string
	insecure    bool
	// metricsAddress serves Prometheus metrics; empty serves none.
	metricsAddress string
}

// serve serves f over gRPC as function.Serve does, but reads requests with
// requestCodec. function.Serve offers no server option for a codec, and
// gRPC's other way, registering one under protobuf's name, would replace
// protobuf's codec for every client and server of the process.
func serve(ctx context.Context, f *Function, s serving) error {
	so := &function.ServeOptions{}
	for _, o := range []function.ServeOption{function.MTLSCertificates(s.tlsCertsDir), function.Insecure(s.insecure)} {
		if err := o(so); err != nil {
			return errors.Wrap(err, errCreds)
		}
	}
	if so.Credentials == nil {
		return errors.New(errNoCreds)
	}
	lis, err := (&net.ListenConfig{}).Listen(ctx, s.network, s.address)
	if err != nil {
		return errors.Wrapf(err, errFmtListen, s.network, s.address)
	}
	var metrics *grpcprometheus.ServerMetrics
	if s.metricsAddress != "" {
		metrics = grpcprometheus.NewServerMetrics()
		prometheus.MustRegister(metrics)
		srv := &http.Server{Addr: s.metricsAddress, Handler: promhttp.Handler(), ReadHeaderTimeout: metricsReadHeaderTimeout}
		// As with function.Serve, a function whose metrics cannot be
		// served still serves.
		go func() { _ = srv.ListenAndServe() }()
	}
	return errors.Wrap(newServer(f, &codec.Leases{}, metrics, grpc.Creds(so.Credentials)).Serve(lis), errServe)
}

// newServer is a gRPC server of both versions of f's RunFunction that reads
// requests with requestCodec and gives each call its lease from ls,
// counting calls in metrics unless nil. Interceptors in opts run outside
// these.
func newServer(f *Function, ls *codec.Leases, metrics *grpcprometheus.ServerMetrics, opts ...grpc.ServerOption) *grpc.Server {
	interceptors := []grpc.UnaryServerInterceptor{ls.Intercept}
	if metrics != nil {
		interceptors = []grpc.UnaryServerInterceptor{metrics.UnaryServerInterceptor(), ls.Intercept}
	}
	opts = append(opts,
		grpc.MaxRecvMsgSize(function.DefaultMaxRecvMsgSize),
		grpc.ForceServerCodecV2(codec.NewCodec(ls)),
		grpc.ChainUnaryInterceptor(interceptors...))
	srv := grpc.NewServer(opts...)
	reflection.Register(srv)
	fnv1.RegisterFunctionRunnerServiceServer(srv, f)
	fnv1beta1.RegisterFunctionRunnerServiceServer(srv, function.ServeBeta(f))
	if metrics != nil {
		metrics.InitializeMetrics(srv)
	}
	return srv
}
