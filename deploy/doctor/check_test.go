package main

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
)

// good returns a container that keeps every rule.
func good(service string, networks ...string) container.InspectResponse {
	pids := int64(64)
	nets := map[string]*network.EndpointSettings{}
	for _, n := range networks {
		nets["tg_"+n] = &network.EndpointSettings{}
	}
	return container.InspectResponse{
		Name:   "/tg-" + service + "-1",
		Config: &container.Config{User: "65532:65532", Labels: map[string]string{"com.docker.compose.service": service}},
		HostConfig: &container.HostConfig{
			ReadonlyRootfs: true, CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges:true"},
			Resources: container.Resources{Memory: 128 << 20, PidsLimit: &pids, NanoCPUs: 5e8},
		},
		Mounts:          []container.MountPoint{{Destination: "/run/secrets/service_token", RW: false}, {Destination: "/data", RW: true}},
		State:           &container.State{Health: &container.Health{Status: container.Healthy}},
		NetworkSettings: &container.NetworkSettings{Networks: nets},
	}
}

// goodPolicy is the OPA sidecar as compose starts it.
func goodPolicy() container.InspectResponse {
	c := good("policy", "policy")
	c.Config.Cmd = []string{"run", "--server", "--addr=0.0.0.0:8181", "--authentication=token", "--authorization=basic", "/policies"}
	return c
}

func goodStack() Stack {
	return Stack{
		Project:    "tg",
		Containers: []container.InspectResponse{good("gateway", "clients", "tools", "policy"), good("arr", "tools", "upstream"), goodPolicy()},
		Networks:   []network.Inspect{{Network: network.Network{Name: "tg_tools", Internal: true}}, {Network: network.Network{Name: "tg_clients"}}},
	}
}

func TestDoctorPassesAGoodStack(t *testing.T) {
	fs := Check(goodStack())
	if Failed(fs) {
		t.Fatalf("a good stack failed: %+v", fs)
	}
	if len(fs) != 3*9+3+1 {
		t.Fatalf("want 31 findings (9 rules × 3 containers + 3 policy rules + the network), got %d", len(fs))
	}
}

// Each rule broken once: doctor must catch exactly that rule.
func TestDoctorCatchesEachBrokenRule(t *testing.T) {
	binding := func(ip string) network.PortMap {
		p, _ := network.ParsePort("8000/tcp")
		return network.PortMap{p: {{HostIP: netip.MustParseAddr(ip), HostPort: "8000"}}}
	}
	cases := []struct {
		rule    string
		breakIt func(s *Stack)
	}{
		{RuleReadOnlyRoot, func(s *Stack) { s.Containers[1].HostConfig.ReadonlyRootfs = false }},
		{RuleCapabilities, func(s *Stack) { s.Containers[1].HostConfig.CapDrop = []string{"NET_RAW"} }},
		{RuleCapabilities, func(s *Stack) { s.Containers[1].HostConfig.CapAdd = []string{"NET_ADMIN"} }},
		{RuleCapabilities, func(s *Stack) { s.Containers[1].HostConfig.Privileged = true }},
		{RuleNoNewPrivileges, func(s *Stack) { s.Containers[1].HostConfig.SecurityOpt = nil }},
		{RuleNonRoot, func(s *Stack) { s.Containers[1].Config.User = "" }},
		{RuleNonRoot, func(s *Stack) { s.Containers[1].Config.User = "0:0" }},
		{RuleNonRoot, func(s *Stack) { s.Containers[1].Config.User = "root" }},
		{RuleLimits, func(s *Stack) { s.Containers[1].HostConfig.Memory = 0 }},
		{RuleLimits, func(s *Stack) { s.Containers[1].HostConfig.PidsLimit = nil }},
		// No CPU limit: one hostile call could take every core.
		{RuleLimits, func(s *Stack) { s.Containers[1].HostConfig.NanoCPUs = 0 }},
		{RulePorts, func(s *Stack) { s.Containers[1].HostConfig.PortBindings = binding("0.0.0.0") }},
		{RulePorts, func(s *Stack) {
			// The gateway on an address other than the one asked for.
			s.Publish = "127.0.0.1:8080"
			s.Containers[0].HostConfig.PortBindings = binding("0.0.0.0")
		}},
		{RuleClientsNetwork, func(s *Stack) { s.Containers[1].NetworkSettings.Networks["tg_clients"] = &network.EndpointSettings{} }},
		{RuleToolsInternal, func(s *Stack) { s.Networks[0].Internal = false }},
		{RuleToolsInternal, func(s *Stack) { s.Networks = s.Networks[1:] }},
		{RuleSecretsReadOnly, func(s *Stack) { s.Containers[1].Mounts[0].RW = true }},
		{RuleHealthy, func(s *Stack) { s.Containers[1].State.Health.Status = container.Unhealthy }},
		{RuleHealthy, func(s *Stack) { s.Containers[1].State.Health = nil }},
		// The policy sidecar on a tool service's network.
		{RulePolicyIsolated, func(s *Stack) { s.Containers[2].NetworkSettings.Networks["tg_tools"] = &network.EndpointSettings{} }},
		{RulePolicyIsolated, func(s *Stack) { s.Containers[1].NetworkSettings.Networks["tg_policy"] = &network.EndpointSettings{} }},
		// OPA started without token authentication or without its
		// authorization policy, or with either turned off again.
		{RulePolicyAuth, func(s *Stack) { s.Containers[2].Config.Cmd = []string{"run", "--server", "/policies"} }},
		{RulePolicyAuth, func(s *Stack) {
			s.Containers[2].Config.Cmd = []string{"run", "--server", "--authentication=token", "/policies"}
		}},
		{RulePolicyAuth, func(s *Stack) {
			s.Containers[2].Config.Cmd = []string{"run", "--server", "--authorization=basic", "/policies"}
		}},
		{RulePolicyAuth, func(s *Stack) {
			s.Containers[2].Config.Cmd = append(s.Containers[2].Config.Cmd, "--authentication", "off")
		}},
		// Decision logs on the console put call arguments into docker logs.
		{RulePolicyNoInputs, func(s *Stack) {
			s.Containers[2].Config.Cmd = append(s.Containers[2].Config.Cmd, "--set=decision_logs.console=true")
		}},
		{RulePolicyNoInputs, func(s *Stack) {
			s.Containers[2].Config.Cmd = append(s.Containers[2].Config.Cmd, "--set", "decision_logs.console=true")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			s := goodStack()
			tc.breakIt(&s)
			fs := Check(s)
			var failed []Finding
			for _, f := range fs {
				if !f.OK {
					failed = append(failed, f)
				}
			}
			if len(failed) != 1 || failed[0].Rule != tc.rule || failed[0].Detail == "" {
				t.Fatalf("want exactly %q to fail with a reason, got %+v", tc.rule, failed)
			}
			var out bytes.Buffer
			printTable(&out, fs)
			if !strings.Contains(out.String(), "FAIL: "+failed[0].Detail) || !strings.Contains(out.String(), "1 failed") {
				t.Fatalf("the table does not show the failure:\n%s", out.String())
			}
		})
	}
}

// The approval page published where the user asked passes; the same
// address for another port, or another address, does not.
func TestDoctorAllowsTheRequestedApprovalPage(t *testing.T) {
	for _, tc := range []struct {
		name, port, addr string
		ok               bool
	}{
		{"the admin port where asked", "8081/tcp", "127.0.0.1", true},
		{"the MCP port on the approvals address", "8080/tcp", "127.0.0.1", false},
		{"the admin port on every address", "8081/tcp", "0.0.0.0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := goodStack()
			p, _ := network.ParsePort(tc.port)
			s.Containers[0].HostConfig.PortBindings = network.PortMap{p: {{HostIP: netip.MustParseAddr(tc.addr), HostPort: "8081"}}}
			s.Approvals = "127.0.0.1:8081"
			if fs := Check(s); Failed(fs) == tc.ok {
				t.Fatalf("ok=%v, findings %+v", tc.ok, fs)
			}
		})
	}
}

// OPA's two-word flag form counts as well.
func TestDoctorAcceptsPolicyFlagsInEitherForm(t *testing.T) {
	s := goodStack()
	s.Containers[2].Config.Cmd = []string{"run", "--server", "--authentication", "token", "--authorization", "basic", "/policies"}
	if fs := Check(s); Failed(fs) {
		t.Fatalf("flags as two words were refused: %+v", fs)
	}
}

// A gateway published on exactly the address the user asked for passes.
func TestDoctorAllowsTheRequestedPublish(t *testing.T) {
	s := goodStack()
	p, _ := network.ParsePort("8080/tcp")
	s.Containers[0].HostConfig.PortBindings = network.PortMap{p: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "8080"}}}
	s.Publish = "127.0.0.1:8080"
	if fs := Check(s); Failed(fs) {
		t.Fatalf("the requested publish was refused: %+v", fs)
	}
}

// A toolgate image under another tag than the project's was built by
// another checkout: flagged, naming image and tag. Images of others
// (SearXNG's) and a stack checked without a tag are not.
func TestDoctorFlagsImagesOfAnotherCheckout(t *testing.T) {
	s := goodStack()
	s.Tag = "tg"
	s.Containers[0].Config.Image = "toolgate/gateway:tg"
	s.Containers[1].Config.Image = "toolgate/arr:local"
	s.Containers[2].Config.Image = "openpolicyagent/opa:latest"
	var own []Finding
	for _, f := range Check(s) {
		if f.Rule == RuleOwnImages {
			own = append(own, f)
		}
	}
	if len(own) != 2 || !own[0].OK || own[1].OK || !strings.Contains(own[1].Detail, "runs toolgate/arr:local, not this project's tag tg") {
		t.Fatalf("findings %+v, want the gateway OK and arr flagged", own)
	}
	s.Tag = ""
	for _, f := range Check(s) {
		if f.Rule == RuleOwnImages {
			t.Errorf("checked without a tag: %+v", f)
		}
	}
}
