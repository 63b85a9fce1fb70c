package main

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis"
	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/node"
)

const (
	errFirstFunction = "cannot read the first function"
	errProviderCfg   = "cannot convert the local cluster's provider config"
)

// firstTimeout bounds the wait for the first function: a cold Kaniko
// build and Knative's first Revision take under a minute here.
const firstTimeout = 10 * time.Minute

//go:embed first-function.yaml
var firstFunction []byte

// startNode starts the local cluster with Knative and Crossplane, publishes
// what builds run and start from, and installs the packages.
func startNode(ctx context.Context, root, bin string) (*node.Cluster, error) {
	fmt.Println("Starting the local cluster (etcd, kube-apiserver, kubelet, containerd, CoreDNS, Knative Serving and Eventing, Crossplane) in the network namespace " + node.NetNS + "; about three minutes.")
	c, err := node.Start(ctx, node.Options{BinDir: bin, Knative: true})
	if err != nil {
		return nil, err
	}
	fmt.Println("Publishing what builds start from on the node's registry, then installing Crossplane from its Helm chart and the configuration package, which brings the provider and the function.")
	if err := c.Prepare(ctx, root, bin); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// nodeObjects are what run applies to the local cluster once the platform
// is installed: the default ClusterProviderConfig, with builds and relays on
// the node, and the first function, in the examples' namespace.
func nodeObjects() ([]*unstructured.Unstructured, error) {
	pc := node.ProviderConfig("default")
	u, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(pc)
	if err != nil {
		return nil, errors.Wrap(err, errProviderCfg)
	}
	fn, err := manifest.Decode(firstFunction, "first-function.yaml")
	if err != nil {
		return nil, errors.Wrap(err, errFirstFunction)
	}
	return append([]*unstructured.Unstructured{{Object: u}}, fn...), nil
}

// awaitFirst waits until the first function is Ready, saying what it goes
// through, and then how to call it from this machine.
func awaitFirst(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	s := kruntime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		return err
	}
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(objs[len(objs)-1])
	fmt.Printf("Applied the first function, %s: Kaniko builds it on the node, then Knative serves it.\n", key)
	start := time.Now()
	wait, cancel := context.WithTimeout(ctx, firstTimeout)
	defer cancel()
	said := ""
	for {
		fn := &v1alpha1.LambdaFunction{}
		if err := kube.Get(wait, key, fn); err == nil {
			ready := fn.GetCondition(xpv2.TypeReady)
			if now := strings.TrimSuffix(string(fn.Status.AtProvider.Phase)+": "+ready.Message, ": "); fn.Status.AtProvider.Phase != "" && now != said {
				fmt.Printf("  %3.0fs %s\n", time.Since(start).Seconds(), now)
				said = now
			}
			if ready.Status == corev1.ConditionTrue {
				addr := fn.Status.AtProvider.URL
				fmt.Printf("%s is Ready at %s, %s after it was applied. Call it from this machine:\n"+
					"  curl -i 'http://%s/?id=42' -H 'Host: %s'\n"+
					"send it an event:\n"+
					"  curl -i http://%s/ -H 'Host: %s' -H 'Ce-Specversion: 1.0' -H 'Ce-Id: 1' -H 'Ce-Source: /manual' \\\n"+
					"    -H 'Ce-Type: com.example.order.created' -H 'Content-Type: application/json' -d '{\"id\": 42}'\n"+
					"or with the kubectl plugin (make kubectl-lambda puts it in _output/bin):\n"+
					"  kubectl lambda invoke %s -n %s --ingress %s --type com.example.order.created --data '{\"id\": 42}'\n",
					key, addr, time.Since(start).Round(time.Second), node.IngressIP, hostOf(addr), node.IngressIP, hostOf(addr), key.Name, key.Namespace, node.IngressIP)
				return nil
			}
		}
		select {
		case <-wait.Done():
			if ctx.Err() == nil {
				fmt.Printf("%s is not Ready after %s: see kubectl describe lambdafunction -n %s %s\n", key, firstTimeout, key.Namespace, key.Name)
			}
			return nil
		case <-time.After(time.Second):
		}
	}
}

// hostOf is the host of a URL, which the ingress routes by.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Host
}
