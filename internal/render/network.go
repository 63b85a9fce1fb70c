package render

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
)

// DefaultClusterCIDRs are the networks a cluster's pods, Services and API
// server are in unless the defaults name them: every private network.
var DefaultClusterCIDRs = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"}

// DefaultDNSCIDRs are the DNS servers builds may ask besides the cluster
// DNS's pods unless the defaults name others: node-local DNS's address.
var DefaultDNSCIDRs = []string{"169.254.20.10/32"}

// clusterDNS selects the cluster DNS's pods: CoreDNS or kube-dns, as
// kubeadm, EKS, GKE and AKS label them.
var clusterDNS = networkingv1.NetworkPolicyPeer{
	NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: metav1.NamespaceSystem}},
	PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
}

// alwaysDenied are networks no build may reach, whatever the defaults say:
// loopback, link-local (the metadata services of most clouds among them),
// and the cloud metadata addresses outside it.
var alwaysDenied = []string{
	"127.0.0.0/8", "169.254.0.0/16", "100.100.100.200/32", "168.63.129.16/32",
	"::1/128", "fe80::/10", "fd00:ec2::254/128",
}

// everywhere is every address of each family; a NetworkPolicy's exceptions
// must lie inside the block they are cut from.
var everywhere = []string{"0.0.0.0/0", "::/0"}

// networkPolicy renders the NetworkPolicy of a build's pods: no ingress;
// egress to the cluster's DNS, to the internet but the denied and cluster
// networks, and to the namespaces and networks the defaults allow. Nil when
// the defaults say Unrestricted.
func (b build) networkPolicy() *networkingv1.NetworkPolicy {
	n := b.defaults.Network
	if n.Unrestricted {
		return nil
	}
	cluster := n.ClusterCIDRs
	if len(cluster) == 0 {
		cluster = DefaultClusterCIDRs
	}
	denied := slices.Concat(alwaysDenied, cluster, n.Deny)
	var internet []networkingv1.NetworkPolicyPeer
	for _, all := range everywhere {
		block := &networkingv1.IPBlock{CIDR: all}
		for _, d := range denied {
			if sameFamily(all, d) && !slices.Contains(block.Except, d) {
				block.Except = append(block.Except, d)
			}
		}
		internet = append(internet, networkingv1.NetworkPolicyPeer{IPBlock: block})
	}
	dns := []networkingv1.NetworkPolicyPeer{clusterDNS}
	dnsCIDRs := n.DNSCIDRs
	if len(dnsCIDRs) == 0 {
		dnsCIDRs = DefaultDNSCIDRs
	}
	for _, c := range dnsCIDRs {
		dns = append(dns, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	egress := []networkingv1.NetworkPolicyEgressRule{
		// Port 53 of the cluster's DNS only: of any address, it would
		// reach metadata and other teams' pods.
		{Ports: []networkingv1.NetworkPolicyPort{
			{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))},
			{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(53))},
		}, To: dns},
		{To: internet},
	}
	var allowed []networkingv1.NetworkPolicyPeer
	for _, ns := range n.AllowNamespaces {
		allowed = append(allowed, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
		}})
	}
	always := n.neverReached()
	for _, c := range n.AllowCIDRs {
		// What builds may never reach stays out of every allow rule.
		block := &networkingv1.IPBlock{CIDR: c}
		for _, d := range always {
			if within(d, c) && d != c && !slices.Contains(block.Except, d) {
				block.Except = append(block.Except, d)
			}
		}
		allowed = append(allowed, networkingv1.NetworkPolicyPeer{IPBlock: block})
	}
	if len(allowed) > 0 {
		egress = append(egress, networkingv1.NetworkPolicyEgressRule{To: allowed})
	}
	meta := b.meta()
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: networkingAPIVersion, Kind: "NetworkPolicy"},
		ObjectMeta: meta,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				LabelKind: meta.Labels[LabelKind], LabelResource: meta.Labels[LabelResource],
				LabelComponent: ComponentBuild, LabelBuildIdentity: meta.Labels[LabelBuildIdentity],
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
}

// allowedNetwork refuses an allowCIDRs entry inside a network builds may
// never reach: loopback, link-local, metadata, the API server and the
// networks the provider is told to refuse.
func allowedNetwork(n Network) error {
	if n.Unrestricted {
		return nil
	}
	for _, c := range n.AllowCIDRs {
		for _, d := range n.neverReached() {
			if within(c, d) {
				return errors.Errorf(errFmtAllowDenied, c, d)
			}
		}
	}
	return nil
}

// neverReached are the networks no rule lets builds reach: loopback,
// link-local, metadata and the networks the provider is told to refuse.
func (n Network) neverReached() []string {
	return slices.Concat(alwaysDenied, n.Deny)
}

// within is true when CIDR a lies inside CIDR b.
func within(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	return errA == nil && errB == nil && pa.Addr().Is4() == pb.Addr().Is4() && pb.Bits() <= pa.Bits() && pb.Contains(pa.Addr())
}

// sameFamily is true when two CIDRs are both IPv4 or both IPv6.
func sameFamily(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	return errA == nil && errB == nil && pa.Addr().Is4() == pb.Addr().Is4()
}
