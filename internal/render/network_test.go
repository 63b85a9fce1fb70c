package render

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// A destination is where a build pod connects: an address, the namespace
// of the pod behind it (empty outside the cluster), a port and protocol.
type destination struct {
	ip        string
	namespace string
	// labels of the pod behind it.
	labels   map[string]string
	port     int32
	protocol corev1.Protocol
}

// admits says whether a NetworkPolicy lets the pods it selects connect to
// d, as Kubernetes defines it: some egress rule whose ports hold d's port
// (none: every port) and whose peers hold d (none: every peer).
func admits(t *testing.T, p *networkingv1.NetworkPolicy, d destination) bool {
	t.Helper()
	ip := netip.MustParseAddr(d.ip)
	for _, r := range p.Spec.Egress {
		if !portIn(r.Ports, d) {
			continue
		}
		if len(r.To) == 0 {
			return true
		}
		for _, peer := range r.To {
			if peerHolds(t, peer, ip, d) {
				return true
			}
		}
	}
	return false
}

func portIn(ports []networkingv1.NetworkPolicyPort, d destination) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if (p.Protocol == nil || *p.Protocol == d.protocol) && (p.Port == nil || p.Port.IntVal == d.port) {
			return true
		}
	}
	return false
}

func peerHolds(t *testing.T, peer networkingv1.NetworkPolicyPeer, ip netip.Addr, d destination) bool {
	t.Helper()
	if b := peer.IPBlock; b != nil {
		if !netip.MustParsePrefix(b.CIDR).Contains(ip) {
			return false
		}
		for _, e := range b.Except {
			if netip.MustParsePrefix(e).Contains(ip) {
				return false
			}
		}
		return true
	}
	if peer.NamespaceSelector == nil || d.namespace == "" {
		return false
	}
	return selects(t, peer.NamespaceSelector, klabels.Set{corev1.LabelMetadataName: d.namespace}) &&
		(peer.PodSelector == nil || selects(t, peer.PodSelector, d.labels))
}

func selects(t *testing.T, s *metav1.LabelSelector, l klabels.Set) bool {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel.Matches(l)
}

// inlineBuild is an inline Python function built under n.
func inlineBuild(n Network) FunctionInput {
	return FunctionInput{
		Namespace: "apps", Name: "hello",
		Spec: v1alpha1.LambdaFunctionParameters{
			Source:  v1alpha1.FunctionSource{Inline: &v1alpha1.InlineSource{Code: "def handler(event, context):\n    return event\n"}},
			Runtime: &v1alpha1.Runtime{Language: ptr.To(v1alpha1.LanguagePython)},
		},
		Defaults: Defaults{Registry: "registry.registry.svc:5000/lambdas", Network: n},
	}
}

// TestBuildNetworkPolicyAdmits renders a build's NetworkPolicy and checks
// which destinations it admits. Before, build pods, which run the team's
// package scripts as root, could reach all of them.
func TestBuildNetworkPolicyAdmits(t *testing.T) {
	in := inlineBuild(Network{AllowNamespaces: []string{"registry", "minio"}, Deny: []string{"203.0.113.0/24"}})
	objs, err := Function(in)
	if err != nil {
		t.Fatal(err)
	}
	p := objs.BuildNetworkPolicy
	if p == nil {
		t.Fatal("a build has no NetworkPolicy; want one unless the provider config says Unrestricted")
	}
	if got, want := p.Spec.PodSelector.MatchLabels, objs.BuildJob.Spec.Template.Labels; !klabels.SelectorFromSet(got).Matches(klabels.Set(want)) {
		t.Errorf("the NetworkPolicy selects %v, which the build pod's labels %v do not match", got, want)
	}
	if len(p.Spec.Ingress) > 0 || len(p.Spec.PolicyTypes) != 2 {
		t.Errorf("the NetworkPolicy admits ingress: %v, %v; want none", p.Spec.PolicyTypes, p.Spec.Ingress)
	}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	kubeDNS := map[string]string{"k8s-app": "kube-dns"}
	cases := map[string]struct {
		reason string
		d      destination
		want   bool
	}{
		"Metadata":        {reason: "The cloud metadata service.", d: destination{ip: "169.254.169.254", port: 80, protocol: tcp}},
		"MetadataV6":      {reason: "AWS's IPv6 metadata service.", d: destination{ip: "fd00:ec2::254", port: 80, protocol: tcp}},
		"Alibaba":         {reason: "Alibaba Cloud's metadata service.", d: destination{ip: "100.100.100.200", port: 80, protocol: tcp}},
		"APIServer":       {reason: "The API server's Service, in the cluster's networks.", d: destination{ip: "10.96.0.1", port: 443, protocol: tcp}},
		"AnotherTeam":     {reason: "A pod of another namespace.", d: destination{ip: "10.244.1.5", namespace: "payments", port: 8080, protocol: tcp}},
		"Denied":          {reason: "A network the provider is told to refuse.", d: destination{ip: "203.0.113.7", port: 443, protocol: tcp}},
		"Internet":        {reason: "A package index on the internet.", d: destination{ip: "151.101.0.223", port: 443, protocol: tcp}, want: true},
		"InternetV6":      {reason: "A package index over IPv6.", d: destination{ip: "2a04:4e42::223", port: 443, protocol: tcp}, want: true},
		"KubeDNS":         {reason: "Cluster DNS.", d: destination{ip: "10.244.0.3", namespace: "kube-system", labels: kubeDNS, port: 53, protocol: udp}, want: true},
		"KubeDNSOverTCP":  {reason: "Cluster DNS over TCP.", d: destination{ip: "10.244.0.3", namespace: "kube-system", labels: kubeDNS, port: 53, protocol: tcp}, want: true},
		"OtherSystemPod":  {reason: "Port 53 of another kube-system pod.", d: destination{ip: "10.244.0.9", namespace: "kube-system", labels: map[string]string{"k8s-app": "metrics-server"}, port: 53, protocol: udp}},
		"AnotherTeams53":  {reason: "Port 53 of another team's pod, which was open anywhere before.", d: destination{ip: "10.244.1.5", namespace: "payments", port: 53, protocol: udp}},
		"MetadataDNS":     {reason: "Port 53 of the metadata address, which was open anywhere before.", d: destination{ip: "169.254.169.254", port: 53, protocol: udp}},
		"NodeLocalDNS":    {reason: "A node-local DNS cache on a link-local address.", d: destination{ip: "169.254.20.10", port: 53, protocol: udp}, want: true},
		"Registry":        {reason: "The in-cluster registry the provider config allows.", d: destination{ip: "10.244.2.9", namespace: "registry", port: 5000, protocol: tcp}, want: true},
		"MinIO":           {reason: "The in-cluster MinIO the provider config allows.", d: destination{ip: "10.244.3.4", namespace: "minio", port: 9000, protocol: tcp}, want: true},
		"MetadataOnDNS53": {reason: "Port 80 of metadata over UDP neither.", d: destination{ip: "169.254.169.254", port: 80, protocol: udp}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := admits(t, p, tc.d); got != tc.want {
				t.Errorf("\n%s\nadmits(%+v) = %t; want %t", tc.reason, tc.d, got, tc.want)
			}
		})
	}

	in.Defaults.Network = Network{Unrestricted: true}
	if objs, err := Function(in); err != nil || objs.BuildNetworkPolicy != nil {
		t.Errorf("Unrestricted: %v, %v; want no NetworkPolicy", objs.BuildNetworkPolicy, err)
	}
	in.Defaults.Network = Network{ClusterCIDRs: []string{"10.244.0.0/16", "10.96.0.0/12"}, AllowCIDRs: []string{"192.168.10.0/24"}}
	objs, err = Function(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		ip   string
		want bool
	}{{"10.244.1.5", false}, {"10.96.0.1", false}, {"192.168.10.20", true}, {"172.20.0.4", true}} {
		if got := admits(t, objs.BuildNetworkPolicy, destination{ip: d.ip, port: 443, protocol: tcp}); got != d.want {
			t.Errorf("with the cluster's own networks named, admits(%s) = %t; want %t", d.ip, got, d.want)
		}
	}
}

// TestAllowRulesKeepDenied checks that an allow rule never lets builds
// reach what they may never reach. Before, allowCIDRs were a rule of their
// own beside the denied networks, so 0.0.0.0/0 or 169.254.169.254/32 in a
// provider config opened metadata, the API server and --deny-source-cidr.
func TestAllowRulesKeepDenied(t *testing.T) {
	in := inlineBuild(Network{AllowCIDRs: []string{"0.0.0.0/0", "10.0.0.0/8"}, Deny: []string{"10.96.0.1/32", "203.0.113.0/24"}})
	objs, err := Function(in)
	if err != nil {
		t.Fatal(err)
	}
	tcp := corev1.ProtocolTCP
	for _, d := range []struct {
		reason, ip string
		want       bool
	}{
		{reason: "The metadata service, inside 0.0.0.0/0.", ip: "169.254.169.254"},
		{reason: "Loopback, inside 0.0.0.0/0.", ip: "127.0.0.1"},
		{reason: "The API server, inside 10.0.0.0/8.", ip: "10.96.0.1"},
		{reason: "A network the provider refuses, inside 0.0.0.0/0.", ip: "203.0.113.9"},
		{reason: "The control: the rest of 10.0.0.0/8 is allowed.", ip: "10.20.0.5", want: true},
	} {
		if got := admits(t, objs.BuildNetworkPolicy, destination{ip: d.ip, port: 443, protocol: tcp}); got != d.want {
			t.Errorf("%s\nadmits(%s) = %t; want %t", d.reason, d.ip, got, d.want)
		}
	}

	for _, c := range []string{"169.254.169.254/32", "10.96.0.1/32", "203.0.113.128/25"} {
		in.Defaults.Network.AllowCIDRs = []string{c}
		_, err := Function(in)
		if err == nil || !strings.Contains(err.Error(), "build.network.allowCIDRs names "+c) {
			t.Errorf("allowCIDRs %s, inside a network builds may never reach: %v; want refused", c, err)
		}
	}
}
