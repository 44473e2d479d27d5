package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
)

// Rule names, one per property of the security model (docs/security.md).
const (
	RuleReadOnlyRoot    = "read-only root"
	RuleCapabilities    = "capabilities dropped"
	RuleNoNewPrivileges = "no-new-privileges"
	RuleNonRoot         = "non-root user"
	RuleLimits          = "memory, pid and CPU limits"
	RulePorts           = "no published ports"
	RuleClientsNetwork  = "only the gateway on clients"
	RuleToolsInternal   = "tools network internal"
	RuleSecretsReadOnly = "secrets read-only"
	RuleHealthy         = "healthy"
	RulePolicyIsolated  = "policy reachable only by the gateway"
	RulePolicyAuth      = "policy requires a token"
	RulePolicyNoInputs  = "policy logs no call inputs"
	RuleOwnImages       = "images of this project"
)

// Finding is one rule checked for one container (or network).
type Finding struct {
	Subject string // container service name, or "network <name>"
	Rule    string
	OK      bool
	Detail  string // why it failed; empty when OK
}

// Stack is what doctor inspected: one compose project.
type Stack struct {
	Project    string
	Containers []container.InspectResponse
	Networks   []network.Inspect
	// Publish is the host address the gateway may be published on
	// (TOOLGATE_PUBLISH, e.g. "127.0.0.1:8080"); empty means none.
	Publish string
	// Approvals is the host address the approval page (the gateway's
	// admin listener, port 8081) may be published on (TOOLGATE_APPROVALS).
	Approvals string
	// Tag is the tag of the project's own images (install.sh: the project's
	// name, or TOOLGATE_TAG); empty skips the check.
	Tag string
}

// gatewayService is the only container that may sit on the clients
// network or publish a port.
const gatewayService = "gateway"

// policyService is the OPA sidecar: it shares networks with the gateway
// only, and serves only with token authentication and its authorization
// policy (policies/system/authz.rego).
const policyService = "policy"

// Check applies every rule to every container and network of the stack.
func Check(s Stack) []Finding {
	var out []Finding
	for _, c := range s.Containers {
		out = append(out, checkContainer(s, c)...)
	}
	tools := Finding{Subject: "network " + s.Project + "_tools", Rule: RuleToolsInternal, Detail: "the tools network is missing"}
	for _, n := range s.Networks {
		if n.Name == s.Project+"_tools" {
			tools.OK, tools.Detail = n.Internal, ""
			if !n.Internal {
				tools.Detail = "the tools network must be internal (no way out)"
			}
		}
	}
	return append(out, tools)
}

// Failed reports whether any finding failed.
func Failed(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return !f.OK })
}

func checkContainer(s Stack, c container.InspectResponse) []Finding {
	name := serviceName(c)
	hc := c.HostConfig
	if hc == nil {
		hc = &container.HostConfig{}
	}
	var out []Finding
	add := func(rule string, ok bool, format string, args ...any) {
		f := Finding{Subject: name, Rule: rule, OK: ok}
		if !ok {
			f.Detail = fmt.Sprintf(format, args...)
		}
		out = append(out, f)
	}

	add(RuleReadOnlyRoot, hc.ReadonlyRootfs, "the root filesystem is writable (read_only: true)")

	dropsAll := slices.ContainsFunc(hc.CapDrop, func(c string) bool { return strings.EqualFold(c, "ALL") })
	switch {
	case hc.Privileged:
		add(RuleCapabilities, false, "the container is privileged")
	case !dropsAll:
		add(RuleCapabilities, false, "not every capability is dropped (cap_drop: [ALL])")
	case len(hc.CapAdd) > 0:
		add(RuleCapabilities, false, "capabilities added back: %s", strings.Join(hc.CapAdd, ", "))
	default:
		add(RuleCapabilities, true, "")
	}

	nnp := slices.ContainsFunc(hc.SecurityOpt, func(o string) bool {
		return o == "no-new-privileges" || o == "no-new-privileges:true" || o == "no-new-privileges=true"
	})
	add(RuleNoNewPrivileges, nnp, "no-new-privileges is not set")

	user := ""
	if c.Config != nil {
		user = c.Config.User
	}
	add(RuleNonRoot, !isRoot(user), "runs as root (user %q)", user)

	pids := int64(0)
	if hc.PidsLimit != nil {
		pids = *hc.PidsLimit
	}
	// A CPU limit is NanoCPUs (compose cpus:) or a CFS quota.
	cpu := hc.NanoCPUs > 0 || hc.CPUQuota > 0
	add(RuleLimits, hc.Memory > 0 && pids > 0 && cpu, "memory limit %d bytes, pid limit %d, CPU limit %v: all three must be set (mem_limit, pids_limit, cpus)", hc.Memory, pids, cpu)

	var published []string
	for port, bindings := range hc.PortBindings {
		for _, b := range bindings {
			addr := b.HostPort
			if b.HostIP.IsValid() {
				addr = b.HostIP.String() + ":" + b.HostPort
			}
			if name == gatewayService && s.Publish != "" && addr == s.Publish {
				continue
			}
			if name == gatewayService && s.Approvals != "" && addr == s.Approvals && port.Num() == 8081 {
				continue
			}
			published = append(published, fmt.Sprintf("%s→%s", addr, port))
		}
	}
	slices.Sort(published)
	add(RulePorts, len(published) == 0, "publishes %s", strings.Join(published, ", "))

	onClients := false
	if c.NetworkSettings != nil {
		_, onClients = c.NetworkSettings.Networks[s.Project+"_clients"]
	}
	add(RuleClientsNetwork, name == gatewayService || !onClients, "a service on the clients network is reachable by every client, past the gateway")

	var writable []string
	for _, m := range c.Mounts {
		if strings.HasPrefix(m.Destination, "/run/secrets") && m.RW {
			writable = append(writable, m.Destination)
		}
	}
	add(RuleSecretsReadOnly, len(writable) == 0, "secrets mounted writable: %s", strings.Join(writable, ", "))

	health := "no healthcheck"
	if c.State != nil && c.State.Health != nil {
		health = string(c.State.Health.Status)
	}
	add(RuleHealthy, health == string(container.Healthy), "health is %s", health)

	// A toolgate image under another tag was built by another checkout (or
	// before images were tagged per project): what runs is not this tree.
	if image := imageOf(c); s.Tag != "" && strings.HasPrefix(image, "toolgate/") {
		_, tag, _ := strings.Cut(strings.TrimPrefix(image, "toolgate/"), ":")
		add(RuleOwnImages, tag == s.Tag, "runs %s, not this project's tag %s: built by another checkout, or before images were tagged per project; run ./install.sh (or doctor -tag TAG for a TOOLGATE_TAG of your own)", image, s.Tag)
	}

	if name == policyService {
		shared := sharedWithOthers(s, c)
		add(RulePolicyIsolated, len(shared) == 0, "reachable from %s: any of them could query or rewrite the policy", strings.Join(shared, ", "))
		var args []string
		if c.Config != nil {
			args = c.Config.Cmd
		}
		var missing []string
		for _, want := range []struct{ flag, value string }{{"--authentication", "token"}, {"--authorization", "basic"}} {
			if !hasFlag(args, want.flag, want.value) {
				missing = append(missing, want.flag+"="+want.value)
			}
		}
		add(RulePolicyAuth, len(missing) == 0, "OPA runs without %s: whoever reaches it can replace the policy", strings.Join(missing, " "))
		consoleLog := slices.ContainsFunc(args, func(a string) bool {
			return strings.Contains(strings.ReplaceAll(a, " ", ""), "decision_logs.console=true")
		})
		add(RulePolicyNoInputs, !consoleLog, "OPA's console decision log writes every call's arguments to docker logs")
	}
	return out
}

func imageOf(c container.InspectResponse) string {
	if c.Config == nil {
		return ""
	}
	return c.Config.Image
}

// sharedWithOthers lists "container (network)" for every container other
// than the gateway and c that shares a network with c.
func sharedWithOthers(s Stack, c container.InspectResponse) []string {
	if c.NetworkSettings == nil {
		return nil
	}
	var out []string
	for _, other := range s.Containers {
		name := serviceName(other)
		if other.Name == c.Name || name == gatewayService || other.NetworkSettings == nil {
			continue
		}
		for net := range c.NetworkSettings.Networks {
			if _, ok := other.NetworkSettings.Networks[net]; ok {
				out = append(out, fmt.Sprintf("%s (%s)", name, net))
			}
		}
	}
	slices.Sort(out)
	return out
}

// hasFlag reports whether args set flag to value, as --flag=value or
// --flag value (OPA's command line accepts both); the last one counts.
func hasFlag(args []string, flag, value string) bool {
	got := ""
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, flag+"="):
			got = strings.TrimPrefix(a, flag+"=")
		case a == flag && i+1 < len(args):
			got = args[i+1]
		}
	}
	return got == value
}

// isRoot reports whether a container user spec runs as root: empty (the
// image default, root for these images only if they forgot USER), "root",
// or uid 0, with or without a group.
func isRoot(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u == "" || u == "0" || u == "root"
}

func serviceName(c container.InspectResponse) string {
	if c.Config != nil {
		if s := c.Config.Labels["com.docker.compose.service"]; s != "" {
			return s
		}
	}
	return strings.TrimPrefix(c.Name, "/")
}
