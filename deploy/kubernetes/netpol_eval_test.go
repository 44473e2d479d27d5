package kubernetes

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestAllowedFollowsKubernetesSemantics pins the evaluator the
// reachability check relies on to the rules of the NetworkPolicy API.
func TestAllowedFollowsKubernetesSemantics(t *testing.T) {
	ns := map[string]string{"kubernetes.io/metadata.name": Namespace}
	a := Peer{Name: "a", Namespace: Namespace, NSLabels: ns, Labels: map[string]string{"app": "a"}}
	b := Peer{Name: "b", Namespace: Namespace, NSLabels: ns, Labels: map[string]string{"app": "b"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}
	other := Peer{Name: "o", Namespace: "other", NSLabels: map[string]string{"kubernetes.io/metadata.name": "other", "team": "x"}, Labels: map[string]string{"app": "b"}}
	ip := Peer{IP: netip.MustParseAddr("192.168.1.10")}
	sel := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	pol := func(name string, spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicy {
		return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, Spec: spec}
	}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	port := func(p intstr.IntOrString) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Port: &p}}
	}
	ingressB := func(rules ...networkingv1.NetworkPolicyIngressRule) networkingv1.NetworkPolicy {
		return pol("b-in", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "b"), Ingress: rules})
	}
	end := int32(8100)
	for _, tc := range []struct {
		name string
		nps  []networkingv1.NetworkPolicy
		c    Conn
		want bool
	}{
		{"no policy: open", nil, Conn{a, b, 8000, tcp}, true},
		{"selected without rules: isolated", []networkingv1.NetworkPolicy{ingressB()}, Conn{a, b, 8000, tcp}, false},
		{"policyTypes default to Ingress only", []networkingv1.NetworkPolicy{pol("a", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a")})}, Conn{a, b, 8000, tcp}, true},
		{"egress rules imply Egress", []networkingv1.NetworkPolicy{pol("a", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a"),
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}}}}}})}, Conn{a, b, 8000, tcp}, false},
		{"empty from: any source on the port", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: port(intstr.FromInt32(8000))})}, Conn{other, b, 8000, tcp}, true},
		{"port given: others refused", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: port(intstr.FromInt32(8000))})}, Conn{a, b, 8001, tcp}, false},
		{"protocol defaults to TCP", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: port(intstr.FromInt32(8000))})}, Conn{a, b, 8000, udp}, false},
		{"named port resolves on the destination", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: port(intstr.FromString("http"))})}, Conn{a, b, 8000, tcp}, true},
		{"named port: another number refused", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: port(intstr.FromString("http"))})}, Conn{a, b, 8080, tcp}, false},
		{"endPort range", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr(intstr.FromInt32(8000)), EndPort: &end}}})}, Conn{a, b, 8050, tcp}, true},
		{"podSelector alone: own namespace only", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "b")}}})}, Conn{other, b, 8000, tcp}, false},
		{"namespace and pod selector: both must match", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("team", "x"), PodSelector: sel("app", "a")}}})}, Conn{other, b, 8000, tcp}, false},
		{"namespace selector alone: every pod there", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("team", "x")}}})}, Conn{other, b, 8000, tcp}, true},
		{"ipBlock does not match pods", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}})}, Conn{a, b, 8000, tcp}, false},
		{"ipBlock except", []networkingv1.NetworkPolicy{pol("a", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a"), PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.0/16", Except: []string{"192.168.1.0/24"}}}}}}})}, Conn{a, ip, 443, tcp}, false},
		{"both directions needed", []networkingv1.NetworkPolicy{ingressB(networkingv1.NetworkPolicyIngressRule{}),
			pol("a", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a"), PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}})}, Conn{a, b, 8000, tcp}, false},
		{"policies add up", []networkingv1.NetworkPolicy{ingressB(), ingressB(networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "a")}}})}, Conn{a, b, 8000, tcp}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Allowed(tc.nps, tc.c); got != tc.want {
				t.Fatalf("%s: allowed=%v, want %v", tc.c, got, tc.want)
			}
		})
	}
}
