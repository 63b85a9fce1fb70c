package node

import (
	"context"
	_ "embed"
	"net"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// The images of the cluster's own add-ons, imported into containerd from
// the tarballs make node assembles in BinDir.
const (
	// CoreDNSImage is the tarball of CoreDNS (cluster/local/build/coredns).
	CoreDNSImage = "coredns.tar"
	coreDNSRef   = "registry.local/system/coredns:v1.13.1"
)

const (
	errFmtAddon   = "cannot install %s"
	errFmtRollout = "%s did not become available: see kubectl -n %s describe deployment %s"
	errDNS        = "the cluster's DNS does not answer from the host"
)

//go:embed manifests/coredns.yaml
var coreDNSManifest string

// An addon is a manifest the cluster applies once its node is Ready, and
// the Deployment that says it is available.
type addon struct {
	name, manifest string
	vars           map[string]string
	deployment     client.ObjectKey
}

// addons are what every cluster runs besides its processes.
func addons() []addon {
	return []addon{{
		name: "CoreDNS", manifest: coreDNSManifest,
		vars:       map[string]string{"COREDNS_IMAGE": coreDNSRef, "CLUSTER_DNS": DNSIP},
		deployment: client.ObjectKey{Namespace: "kube-system", Name: "coredns"},
	}}
}

// installAddons imports the add-ons' images, applies their manifests and
// waits until each is available.
func (c *Cluster) installAddons(ctx context.Context, bin string) error {
	if err := c.importImage(ctx, filepath.Join(bin, CoreDNSImage)); err != nil {
		return err
	}
	for _, a := range addons() {
		objs, err := manifest.Decode([]byte(expand(a.manifest, a.vars)), a.name)
		if err != nil {
			return errors.Wrapf(err, errFmtAddon, a.name)
		}
		if err := local.Apply(ctx, c.Config, objs); err != nil {
			return errors.Wrapf(err, errFmtAddon, a.name)
		}
		if err := c.available(ctx, a.name, a.deployment); err != nil {
			return err
		}
	}
	// kube-proxy takes the DNS Service's rules in a moment after CoreDNS is
	// available; a cluster is ready when its DNS answers.
	return errors.Wrap(poll(ctx, dnsAnswers), errDNS)
}

// expand replaces each ${KEY} of a manifest with its value in vars.
func expand(manifest string, vars map[string]string) string {
	for k, v := range vars {
		manifest = strings.ReplaceAll(manifest, "${"+k+"}", v)
	}
	return manifest
}

// available waits until the Deployment that runs what name says has a
// replica available.
func (c *Cluster) available(ctx context.Context, name string, deployment client.ObjectKey) error {
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		err := c.kube.Get(ctx, deployment, d)
		return err == nil && d.Status.AvailableReplicas > 0, err
	})
	return errors.Wrapf(err, errFmtRollout, name, deployment.Namespace, deployment.Name)
}

// dnsAnswers is true once the cluster's DNS, asked from the host over UDP,
// knows the API server's Service.
func dnsAnswers(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := Resolver("udp").LookupHost(ctx, "kubernetes.default.svc.cluster.local")
	return err == nil, err
}

// Resolver asks the cluster's DNS, from the host, over network (udp or
// tcp).
func Resolver(network string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(DNSIP, "53"))
	}}
}
