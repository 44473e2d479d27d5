package kubernetes

import (
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func dep(t *testing.T, o *Objects, name string) *appsv1.Deployment {
	t.Helper()
	for i := range o.Deployments {
		if o.Deployments[i].Name == name {
			return &o.Deployments[i]
		}
	}
	t.Fatalf("no Deployment %s", name)
	return nil
}

func ctr(t *testing.T, o *Objects, name string) *corev1.Container {
	return &dep(t, o, name).Spec.Template.Spec.Containers[0]
}

func netpol(t *testing.T, o *Objects, name string) *networkingv1.NetworkPolicy {
	t.Helper()
	for i := range o.NetworkPolicies {
		if o.NetworkPolicies[i].Name == name {
			return &o.NetworkPolicies[i]
		}
	}
	t.Fatalf("no NetworkPolicy %s", name)
	return nil
}

func ptr[T any](v T) *T { return &v }

// TestCheckerCatchesEachViolation: a build that passes, changed in one
// place, fails with a message naming the problem. Each case is something a
// future edit could plausibly do.
func TestCheckerCatchesEachViolation(t *testing.T) {
	mem := newFS(t)
	real := decoder(t, mem, "arr", "frigate")
	demo := decoder(t, mem, "demo")
	if errs := Check(real(), DefaultSpec); len(errs) > 0 {
		t.Fatalf("the unchanged build fails: %v", errors.Join(errs...))
	}
	if errs := Check(demo(), DefaultSpec); len(errs) > 0 {
		t.Fatalf("the unchanged demo build fails: %v", errors.Join(errs...))
	}
	for _, tc := range []struct {
		name   string
		demo   bool
		change func(*Objects)
		want   string
	}{
		{"writable root filesystem", false, func(o *Objects) {
			ctr(t, o, "web").SecurityContext.ReadOnlyRootFilesystem = ptr(false)
		}, "web/web: readOnlyRootFilesystem must be true"},
		{"root allowed", false, func(o *Objects) {
			dep(t, o, "arr").Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
		}, "Deployment/arr: pod runAsNonRoot must be true"},
		{"runs as root", false, func(o *Objects) {
			ctr(t, o, "arr").SecurityContext.RunAsUser = ptr(int64(0))
		}, "Pod Security restricted: runAsUser=0"},
		{"another uid", false, func(o *Objects) {
			dep(t, o, "gateway").Spec.Template.Spec.SecurityContext.RunAsUser = ptr(int64(1000))
		}, "pod runAsUser, runAsGroup and fsGroup must be 65532"},
		{"capability kept", false, func(o *Objects) {
			ctr(t, o, "frigate").SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		}, "frigate/frigate: capabilities must drop ALL"},
		{"privilege escalation", false, func(o *Objects) {
			ctr(t, o, "policy").SecurityContext.AllowPrivilegeEscalation = ptr(true)
		}, "policy/policy: allowPrivilegeEscalation must be false"},
		{"no seccomp", false, func(o *Objects) {
			dep(t, o, "web").Spec.Template.Spec.SecurityContext.SeccompProfile = nil
			ctr(t, o, "web").SecurityContext.SeccompProfile = nil
		}, "Pod Security restricted: seccompProfile"},
		{"host path", false, func(o *Objects) {
			s := &dep(t, o, "arr").Spec.Template.Spec
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, "Pod Security restricted: restricted volume types"},
		{"no memory limit", false, func(o *Objects) {
			delete(ctr(t, o, "arr").Resources.Limits, corev1.ResourceMemory)
		}, "arr/arr: memory request and limit are both required"},
		{"request above limit", false, func(o *Objects) {
			ctr(t, o, "web").Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, "web/web: cpu request above its limit"},
		{"liveness on the wrong path", false, func(o *Objects) {
			ctr(t, o, "frigate").LivenessProbe.HTTPGet.Path = "/health"
		}, "liveness probe path \"/health\", want /healthz"},
		{"no readiness probe", false, func(o *Objects) {
			ctr(t, o, "gateway").ReadinessProbe = nil
		}, "gateway/gateway: readiness probe must be an HTTP GET of /readyz"},
		{"policy probe not its healthcheck", false, func(o *Objects) {
			ctr(t, o, "policy").LivenessProbe.Exec.Command = []string{"/app", "version"}
		}, "policy/policy: liveness probe must run /app healthcheck"},
		{"service account token", false, func(o *Objects) {
			dep(t, o, "web").Spec.Template.Spec.AutomountServiceAccountToken = ptr(true)
		}, "Deployment/web: automountServiceAccountToken must be false"},
		{"image pulled", false, func(o *Objects) {
			ctr(t, o, "arr").ImagePullPolicy = corev1.PullIfNotPresent
		}, "imagePullPolicy = \"IfNotPresent\", want Never"},
		{"foreign image", false, func(o *Objects) {
			ctr(t, o, "arr").Image = "docker.io/someone/arr:latest"
		}, "is not a toolgate/<name>:<tag> image"},
		{"another service's image", false, func(o *Objects) {
			ctr(t, o, "arr").Image = "toolgate/frigate:local"
		}, "Deployment/arr: runs image toolgate/frigate:local"},
		{"host port", false, func(o *Objects) {
			ctr(t, o, "gateway").Ports[0].HostPort = 8080
		}, "port 8080 is published on the host"},
		{"writable secret mount", false, func(o *Objects) {
			ctr(t, o, "arr").VolumeMounts[1].ReadOnly = false
		}, "must be readOnly"},
		{"world-readable secret", false, func(o *Objects) {
			dep(t, o, "gateway").Spec.Template.Spec.Volumes[0].Secret.DefaultMode = ptr(int32(0o444))
		}, "defaultMode must be set and give others nothing"},
		{"secret in an env var", false, func(o *Objects) {
			c := ctr(t, o, "arr")
			c.Env = append(c.Env, corev1.EnvVar{Name: "SONARR_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "sonarr_api_key"}}})
		}, "env SONARR_API_KEY takes its value from an object"},
		{"secret key missing", false, func(o *Objects) {
			for i := range o.Secrets {
				delete(o.Secrets[i].Data, "service_token_arr")
			}
		}, "has no key service_token_arr"},
		{"token file not mounted", false, func(o *Objects) {
			c := ctr(t, o, "frigate")
			c.VolumeMounts = c.VolumeMounts[:1]
		}, "FRIGATE_PASSWORD_FILE: /run/secrets/frigate/password is on no mounted volume"},
		{"gateway presents another service's token", false, func(o *Objects) {
			c := ctr(t, o, "gateway")
			for i := range c.Env {
				if c.Env[i].Name == "TOOLGATE_SERVICE_TOKEN_ARR_FILE" {
					c.Env[i].Value = "/run/secrets/gateway/service_token_web"
				}
			}
		}, "want service_token_arr on both sides"},
		{"route lost", false, func(o *Objects) {
			c := ctr(t, o, "gateway")
			for i := range c.Env {
				if c.Env[i].Name == "ROUTE_FRIGATE" {
					c.Env[i].Value = ""
				}
			}
		}, "tool service frigate runs but the gateway does not route to it"},
		{"route defined after its use", false, func(o *Objects) {
			c := ctr(t, o, "gateway")
			for i, e := range c.Env {
				if e.Name == "ROUTE_ARR" {
					c.Env = append(append(c.Env[:i:i], c.Env[i+1:]...), e)
					break
				}
			}
		}, "TOOLGATE_SERVICES keeps an unresolved reference"},
		{"service published", false, func(o *Objects) {
			for i := range o.Services {
				if o.Services[i].Name == "gateway" {
					o.Services[i].Spec.Type = corev1.ServiceTypeLoadBalancer
				}
			}
		}, "Service/gateway: type LoadBalancer publishes toolgate outside the cluster"},
		{"tool service hidden while not ready", false, func(o *Objects) {
			for i := range o.Services {
				if o.Services[i].Name == "arr" {
					o.Services[i].Spec.PublishNotReadyAddresses = false
				}
			}
		}, "Service/arr: a tool service must stay reachable"},
		{"wrong namespace", false, func(o *Objects) {
			dep(t, o, "arr").Namespace = "default"
		}, "Deployment/arr is in namespace \"default\""},
		{"pod security not enforced", false, func(o *Objects) {
			o.Namespaces[0].Labels["pod-security.kubernetes.io/enforce"] = "baseline"
		}, "pod-security.kubernetes.io/enforce = \"baseline\", want restricted"},
		{"upstream label lost", false, func(o *Objects) {
			delete(dep(t, o, "arr").Spec.Template.Labels, labelUpstream)
		}, "Deployment/arr: a tool service that talks to a home-lab application needs toolgate/upstream=lan"},

		{"tickets off the data volume", false, func(o *Objects) {
			c := ctr(t, o, "gateway")
			for i := range c.Env {
				if c.Env[i].Name == "TOOLGATE_TICKETS_FILE" {
					c.Env[i].Value = "/tmp/tickets.db"
				}
			}
		}, "TOOLGATE_TICKETS_FILE (/tmp/tickets.db) is neither a secret file nor on a persistent volume"},
		{"policy engine open to anyone", false, func(o *Objects) {
			c := ctr(t, o, "policy")
			c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return a == "--authorization=basic" })
		}, "policy: OPA runs without --authorization=basic"},
		{"decision log", false, func(o *Objects) {
			c := ctr(t, o, "policy")
			c.Args = append(c.Args, "--set=decision_logs.console=true")
		}, "policy: --set=decision_logs.console=true logs every call's arguments"},
		{"policy token mismatch", false, func(o *Objects) {
			c := ctr(t, o, "gateway")
			for i := range c.Env {
				if c.Env[i].Name == "TOOLGATE_POLICY_TOKEN_FILE" {
					c.Env[i].Value = "/run/secrets/gateway/admin_token"
				}
			}
		}, "policy: the gateway presents {gateway-secrets-"},
		{"policy token not generated", false, func(o *Objects) {
			for i := range o.Secrets {
				delete(o.Secrets[i].Data, "policy_token")
			}
		}, "Deployment/policy/policy: Secret gateway-secrets-"},
		{"policy token item at another path", false, func(o *Objects) {
			for i, v := range dep(t, o, "policy").Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					dep(t, o, "policy").Spec.Template.Spec.Volumes[i].Secret.Items[0].Path = "token"
				}
			}
		}, "policy: TOOLGATE_POLICY_TOKEN_FILE: /run/secrets/policy/policy_token: no item of Secret"},
		{"service links", false, func(o *Objects) {
			dep(t, o, "arr").Spec.Template.Spec.EnableServiceLinks = nil
		}, "Deployment/arr: enableServiceLinks must be false"},
		{"invalid port name", false, func(o *Objects) {
			ctr(t, o, "gateway").Ports[0].Name = "gateway-http-port"
		}, "port name \"gateway-http-port\""},
		{"invalid secret key", false, func(o *Objects) {
			o.Secrets[0].Data["service token"] = []byte("x")
		}, "key \"service token\""},

		// NetworkPolicies.
		{"no default deny", false, func(o *Objects) {
			np := netpol(t, o, "default-deny")
			np.Spec.PodSelector = metav1.LabelSelector{MatchLabels: map[string]string{"nothing": "selected"}}
		}, "no default-deny NetworkPolicy"},
		{"tool services reach the policy engine", false, func(o *Objects) {
			np := netpol(t, o, "policy")
			np.Spec.Ingress[0].From = []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
			gw := netpol(t, o, "gateway")
			tools := netpol(t, o, "lan-upstreams")
			tools.Spec.Egress = append(tools.Spec.Egress, gw.Spec.Egress[1])
		}, "network: toolgate/arr -> toolgate/policy 8181/TCP is allowed, want refused"},
		{"tool services reach each other", false, func(o *Objects) {
			np := netpol(t, o, "tools")
			np.Spec.Ingress[0].From = append(np.Spec.Ingress[0].From, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelComponent: roleTool}}})
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
			np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: np.Spec.Ingress[0].From}}
		}, "network: toolgate/arr -> toolgate/frigate 8000/TCP is allowed, want refused"},
		{"anyone reaches the gateway", false, func(o *Objects) {
			netpol(t, o, "gateway").Spec.Ingress[0].From = nil
		}, "network: openwebui/stranger -> toolgate/gateway 8080/TCP is allowed, want refused"},
		{"web reaches the cluster", false, func(o *Objects) {
			b := netpol(t, o, "web-egress").Spec.Egress[0].To[0].IPBlock
			b.Except = b.Except[2:]
		}, "network: toolgate/web -> 10.42.0.7"},
		{"web reaches cloud metadata", false, func(o *Objects) {
			b := netpol(t, o, "web-egress").Spec.Egress[0].To[0].IPBlock
			var keep []string
			for _, e := range b.Except {
				if e != "169.254.0.0/16" {
					keep = append(keep, e)
				}
			}
			b.Except = keep
		}, "network: toolgate/web -> 169.254.169.254 80/TCP is allowed"},
		{"services reach the internet", false, func(o *Objects) {
			netpol(t, o, "lan-upstreams").Spec.Egress[0].To[0].IPBlock.CIDR = "0.0.0.0/0"
		}, "network: toolgate/arr -> 1.1.1.1 443/TCP is allowed, want refused"},
		{"gateway reaches the LAN", false, func(o *Objects) {
			d := dep(t, o, "gateway")
			d.Spec.Template.Labels[labelUpstream] = "lan"
		}, "network: toolgate/gateway -> 192.168.1.10"},
		{"policy engine reaches DNS", false, func(o *Objects) {
			np := netpol(t, o, "dns")
			np.Spec.PodSelector.MatchExpressions[0].Values = append(np.Spec.PodSelector.MatchExpressions[0].Values, rolePolicy)
		}, "network: toolgate/policy -> kube-system/coredns 53/UDP is allowed, want refused"},
		{"demo fakes reachable by every tool", true, func(o *Objects) {
			np := netpol(t, o, "fakes")
			np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
			e := netpol(t, o, "tools")
			e.Spec.PolicyTypes = append(e.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
			e.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
		}, "network: toolgate/demo -> toolgate/fakes"},
		{"fakes probe not the healthcheck", true, func(o *Objects) {
			ctr(t, o, "fakes").ReadinessProbe.Exec = nil
			ctr(t, o, "fakes").ReadinessProbe.HTTPGet = &corev1.HTTPGetAction{Path: "/readyz"}
		}, "fakes/fakes: readiness probe must run /app healthcheck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := real()
			if tc.demo {
				o = demo()
			}
			tc.change(o)
			errs := Check(o, DefaultSpec)
			if !containsErr(errs, tc.want) {
				t.Fatalf("want an error containing %q, got:\n%v", tc.want, errors.Join(errs...))
			}
		})
	}
}

// TestStrictDecoding: a field the API does not know, a field in the wrong
// case, a duplicate field, an unknown kind and a wrong apiVersion are all
// refused, as `kubectl apply` with strict field validation would.
func TestStrictDecoding(t *testing.T) {
	good := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"template":{"spec":{"containers":[{"name":"x","securityContext":{"readOnlyRootFilesystem":true}}]}}}}`
	if err := (&Objects{}).DecodeStrict("apps/v1", "Deployment", []byte(good)); err != nil {
		t.Fatalf("valid Deployment refused: %v", err)
	}
	for _, tc := range []struct{ name, apiVersion, kind, doc, want string }{
		{"unknown field", "apps/v1", "Deployment", strings.Replace(good, `"readOnlyRootFilesystem"`, `"readOnlyRootFileSystem"`, 1), "unknown field"},
		{"lower case", "apps/v1", "Deployment", strings.Replace(good, `"readOnlyRootFilesystem"`, `"readonlyrootfilesystem"`, 1), "unknown field"},
		{"misplaced field", "apps/v1", "Deployment", strings.Replace(good, `"containers"`, `"runAsNonRoot":true,"containers"`, 1), "unknown field"},
		{"duplicate field", "apps/v1", "Deployment", strings.Replace(good, `"name":"x"}`, `"name":"x","name":"y"}`, 1), "duplicate field"},
		{"unknown kind", "apps/v1", "DaemonSet", good, "not one the checks know"},
		{"wrong apiVersion", "extensions/v1beta1", "Deployment", good, "want \"apps/v1\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Objects{}).DecodeStrict(tc.apiVersion, tc.kind, []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
