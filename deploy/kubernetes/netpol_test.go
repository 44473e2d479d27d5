package kubernetes

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Peer is one end of a connection: a pod (its namespace, the namespace's
// labels, its labels and container ports) or an address outside the
// cluster's pods.
type Peer struct {
	Name      string
	Namespace string
	NSLabels  map[string]string
	Labels    map[string]string
	Ports     []corev1.ContainerPort
	IP        netip.Addr
}

func (p Peer) isPod() bool { return !p.IP.IsValid() }

func (p Peer) ours() bool { return p.isPod() && p.Namespace == Namespace }

func (p Peer) String() string {
	if !p.isPod() {
		return p.IP.String()
	}
	return p.Namespace + "/" + p.Name
}

// Conn is one connection attempt.
type Conn struct {
	From, To Peer
	Port     int32
	Proto    corev1.Protocol
}

func (c Conn) String() string {
	return fmt.Sprintf("%s -> %s %d/%s", c.From, c.To, c.Port, c.Proto)
}

// Allowed evaluates NetworkPolicies the way Kubernetes defines them: a pod
// selected by any policy of a direction is isolated in that direction and
// may only use what some rule of those policies allows; the connection
// needs both the source's egress and the destination's ingress. Only
// toolgate's namespace has policies here; other pods and addresses are
// not isolated.
func Allowed(nps []networkingv1.NetworkPolicy, c Conn) bool {
	return newEvaluator(nps).allowed(c)
}

// evaluator keeps the policies' selectors parsed (parsing dominates
// otherwise).
type evaluator struct {
	nps       []networkingv1.NetworkPolicy
	selectors map[*metav1.LabelSelector]labels.Selector
}

func newEvaluator(nps []networkingv1.NetworkPolicy) *evaluator {
	return &evaluator{nps: nps, selectors: map[*metav1.LabelSelector]labels.Selector{}}
}

func (e *evaluator) allowed(c Conn) bool {
	return e.directionAllows(c.From, c.To, c, networkingv1.PolicyTypeEgress) &&
		e.directionAllows(c.To, c.From, c, networkingv1.PolicyTypeIngress)
}

// directionAllows: may self (the isolated side) talk to other?
func (e *evaluator) directionAllows(self, other Peer, c Conn, dir networkingv1.PolicyType) bool {
	if !self.isPod() {
		return true
	}
	isolated := false
	for i := range e.nps {
		np := &e.nps[i]
		if np.Namespace != self.Namespace || !hasType(np, dir) || !e.matches(&np.Spec.PodSelector, self.Labels) {
			continue
		}
		isolated = true
		if dir == networkingv1.PolicyTypeEgress {
			for _, r := range np.Spec.Egress {
				if e.peersMatch(np, r.To, other) && portsMatch(r.Ports, c) {
					return true
				}
			}
		} else {
			for _, r := range np.Spec.Ingress {
				if e.peersMatch(np, r.From, other) && portsMatch(r.Ports, c) {
					return true
				}
			}
		}
	}
	return !isolated
}

// hasType applies the API's default: Ingress always, Egress when the
// policy has egress rules.
func hasType(np *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return t == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
	}
	return slices.Contains(np.Spec.PolicyTypes, t)
}

func (e *evaluator) peersMatch(np *networkingv1.NetworkPolicy, peers []networkingv1.NetworkPolicyPeer, other Peer) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		if e.peerMatches(np, p, other) {
			return true
		}
	}
	return false
}

func (e *evaluator) peerMatches(np *networkingv1.NetworkPolicy, p networkingv1.NetworkPolicyPeer, other Peer) bool {
	if p.IPBlock != nil {
		if other.isPod() {
			return false
		}
		cidr, err := netip.ParsePrefix(p.IPBlock.CIDR)
		if err != nil || !cidr.Contains(other.IP) {
			return false
		}
		for _, e := range p.IPBlock.Except {
			if ex, err := netip.ParsePrefix(e); err != nil || ex.Contains(other.IP) {
				return false
			}
		}
		return true
	}
	if !other.isPod() {
		return false
	}
	if p.NamespaceSelector == nil {
		if other.Namespace != np.Namespace {
			return false
		}
	} else if !e.matches(p.NamespaceSelector, other.NSLabels) {
		return false
	}
	return p.PodSelector == nil || e.matches(p.PodSelector, other.Labels)
}

// matches: an invalid selector matches nothing.
func (e *evaluator) matches(sel *metav1.LabelSelector, l map[string]string) bool {
	s, ok := e.selectors[sel]
	if !ok {
		var err error
		if s, err = metav1.LabelSelectorAsSelector(sel); err != nil {
			s = labels.Nothing()
		}
		e.selectors[sel] = s
	}
	return s.Matches(labels.Set(l))
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, c Conn) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if proto != c.Proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.StrVal != "":
			for _, cp := range c.To.Ports {
				if cp.Name == p.Port.StrVal && cp.ContainerPort == c.Port && protoOf(cp) == c.Proto {
					return true
				}
			}
		case p.EndPort != nil:
			if c.Port >= p.Port.IntVal && c.Port <= *p.EndPort {
				return true
			}
		case p.Port.IntVal == c.Port:
			return true
		}
	}
	return false
}

func protoOf(p corev1.ContainerPort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// Spec says which connections toolgate needs; everything else must be
// refused. LAN is where the home-lab applications live.
type Spec struct {
	LAN netip.Prefix
	// Notify is the gateway's webhook or ntfy server (HTTPS), if any.
	Notify netip.Prefix
}

// DefaultSpec matches the base's lan-upstreams CIDR.
var DefaultSpec = Spec{LAN: netip.MustParsePrefix("192.168.0.0/16")}

// Addresses that are not public, written down here independently of the
// manifests: private, shared (CGNAT), loopback, link-local, multicast,
// reserved, IPv4-mapped.
var nonPublic = prefixes("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4",
	"::/128", "::1/128", "::ffff:0:0/96", "fc00::/7", "fe80::/10", "ff00::/8")

// The cluster's own ranges (k3s defaults): never reachable by address.
var clusterRanges = prefixes("10.42.0.0/16", "10.43.0.0/16")

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Want is the connection matrix toolgate promises (docs/kubernetes.md).
func (s Spec) Want(c Conn) bool {
	from, to := c.From, c.To
	role := func(p Peer) string {
		if !p.ours() {
			return ""
		}
		return p.Labels[labelComponent]
	}
	name := func(p Peer) string { return p.Labels[labelName] }
	tcp := c.Proto == corev1.ProtocolTCP
	isDNS := to.isPod() && to.Namespace == "kube-system" && to.Labels["k8s-app"] == "kube-dns" && c.Port == 53
	ip := to.IP
	if !from.ours() {
		// From outside: only labelled clients, only to the gateway's port.
		return from.isPod() && from.Labels[labelClient] == "true" && role(to) == roleGateway && c.Port == 8080 && tcp
	}
	switch role(from) {
	case roleGateway:
		return isDNS || (role(to) == roleTool && c.Port == ServicePort && tcp) ||
			(role(to) == rolePolicy && c.Port == 8181 && tcp) ||
			(!to.isPod() && s.Notify.IsValid() && s.Notify.Contains(ip) && c.Port == 443 && tcp)
	case roleTool:
		if isDNS {
			return true
		}
		if !to.isPod() && inAny(clusterRanges, ip) {
			return false
		}
		demo := from.Labels[labelDemo] == "true"
		fakes := role(to) == roleFixture && tcp
		switch {
		case name(from) == "web":
			return (!to.isPod() && !inAny(nonPublic, ip)) ||
				(to.isPod() && !to.ours() && name(to) == "searxng" && c.Port == 8080 && tcp) ||
				(fakes && c.Port == 8080)
		case demo && name(from) == "arr":
			return fakes && slices.Contains([]int32{8989, 7878, 9696}, c.Port)
		case demo && name(from) == "frigate":
			return fakes && c.Port == 5000
		case from.Labels[labelUpstream] == "lan":
			return !to.isPod() && s.LAN.Contains(ip)
		}
	}
	return false
}

// Outsiders are the pods and addresses the matrix is tried against besides
// toolgate's own pods.
func Outsiders() []Peer {
	ns := func(n string) map[string]string { return map[string]string{"kubernetes.io/metadata.name": n} }
	pod := func(name, namespace string, l map[string]string) Peer {
		return Peer{Name: name, Namespace: namespace, NSLabels: ns(namespace), Labels: l}
	}
	out := []Peer{
		pod("openwebui", "openwebui", map[string]string{labelClient: "true", labelName: "open-webui"}),
		pod("stranger", "openwebui", map[string]string{labelName: "something-else"}),
		pod("coredns", "kube-system", map[string]string{"k8s-app": "kube-dns"}),
		pod("searxng", "searxng", map[string]string{labelName: "searxng"}),
		pod("traefik", "kube-system", map[string]string{labelName: "traefik"}),
		// Pods someone else starts in toolgate's namespace.
		pod("intruder", Namespace, map[string]string{"app": "intruder"}),
		pod("intruder-client", Namespace, map[string]string{labelClient: "true"}),
		pod("intruder-web", Namespace, map[string]string{labelName: "searxng"}),
	}
	for _, a := range []string{
		"1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", // public
		"192.168.1.10", "192.168.1.40", "10.0.10.7", "172.16.5.5", "100.100.100.100", // LANs, Tailscale
		"10.42.0.7", "10.43.0.10", // k3s pods and services
		"169.254.169.254", "127.0.0.1", "0.0.0.0", "224.0.0.251", "255.255.255.255",
		"::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1", "ff02::fb",
	} {
		out = append(out, Peer{IP: netip.MustParseAddr(a)})
	}
	return out
}

var probePorts = []int32{22, 53, 80, 443, 5000, 6443, 7878, 8000, 8080, 8081, 8123, 8181, 8989, 9696, 10250}

// OwnPeers are the pods of a build's Deployments.
func OwnPeers(o *Objects) []Peer {
	var out []Peer
	for _, d := range o.Deployments {
		p := Peer{Name: d.Name, Namespace: d.Namespace, NSLabels: map[string]string{"kubernetes.io/metadata.name": d.Namespace}, Labels: d.Spec.Template.Labels}
		for _, ct := range d.Spec.Template.Spec.Containers {
			p.Ports = append(p.Ports, ct.Ports...)
		}
		out = append(out, p)
	}
	return out
}

// CheckReachability tries every connection between toolgate's pods,
// outside pods and addresses, on every port in use and a few more, and
// reports each one the policies decide differently from s.Want.
func CheckReachability(o *Objects, s Spec) []error {
	var errs []error
	deny := false
	for _, np := range o.NetworkPolicies {
		if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 &&
			hasType(&np, networkingv1.PolicyTypeIngress) && hasType(&np, networkingv1.PolicyTypeEgress) &&
			len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 {
			deny = true
		}
	}
	if !deny {
		errs = append(errs, fmt.Errorf("no default-deny NetworkPolicy (every pod, Ingress and Egress, no rules)"))
	}
	ev := newEvaluator(o.NetworkPolicies)
	peers := append(OwnPeers(o), Outsiders()...)
	ports := map[int32]bool{}
	for _, p := range probePorts {
		ports[p] = true
	}
	for _, p := range peers {
		for _, cp := range p.Ports {
			ports[cp.ContainerPort] = true
		}
	}
	for _, from := range peers {
		for _, to := range peers {
			if from.String() == to.String() || (!from.ours() && !to.ours()) || !to.isPod() && !from.isPod() {
				continue
			}
			for port := range ports {
				for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP} {
					c := Conn{From: from, To: to, Port: port, Proto: proto}
					if got, want := ev.allowed(c), s.Want(c); got != want {
						verb := map[bool]string{true: "allowed", false: "refused"}
						errs = append(errs, fmt.Errorf("network: %s is %s, want %s", c, verb[got], verb[want]))
					}
				}
			}
		}
	}
	return errs
}
