package kubernetes

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// conflicts are profiles that must not be combined: the demo's arr and
// frigate carry the real ones' names.
var conflicts = [][2]string{{"demo", "arr"}, {"demo", "frigate"}}

func conflicting(on []string) bool {
	for _, c := range conflicts {
		if slices.Contains(on, c[0]) && slices.Contains(on, c[1]) {
			return true
		}
	}
	return false
}

// combinations: nothing, each profile alone, every pair, and every profile
// that can run together at once (with a web.env and the LAN patch). Each
// component's patches touch only its own names, so pairs find every
// interaction; all 256 subsets would take minutes under -race for nothing
// more.
func combinations() [][]string {
	out := [][]string{{}}
	for i, a := range Profiles {
		out = append(out, []string{a})
		for _, b := range Profiles[i+1:] {
			out = append(out, []string{a, b})
		}
	}
	var all []string
	for _, p := range Profiles {
		if p != "demo" {
			all = append(all, p)
		}
	}
	extras := []string{"web.env", "gateway.env", "approvers", "notify", "lan"}
	out = append(out, append(all, extras...), append([]string{"demo", "homeassistant", "unraid", "extended", "ersatztv", "tuliprox"}, extras...))
	return out
}

// specFor: what the example's [lan] and [notify] blocks promise.
func specFor(on []string) Spec {
	s := DefaultSpec
	if slices.Contains(on, "lan") {
		s.LAN = netip.MustParsePrefix("10.0.10.0/24")
	}
	if slices.Contains(on, "notify") {
		s.Notify = netip.MustParsePrefix("192.168.1.40/32")
	}
	return s
}

// TestEveryProfileCombinationKeepsTheInvariants builds the example overlay
// with each combination of profiles turned on as its header tells users
// to, decodes every object strictly and checks every invariant.
func TestEveryProfileCombinationKeepsTheInvariants(t *testing.T) {
	mem := newFS(t)
	for _, on := range combinations() {
		t.Run(strings.Join(append([]string{"base"}, on...), "+"), func(t *testing.T) {
			if conflicting(on) {
				_, err := build(t, mem, on...)
				if err == nil || !strings.Contains(err.Error(), "already registered id") {
					t.Fatalf("demo and a real arr or frigate built together (want a conflict on the shared names): %v", err)
				}
				return
			}
			o := objectsFor(t, mem, on...)
			for _, err := range Check(o, specFor(on)) {
				t.Error(err)
			}
			want := []string{"gateway", "policy", "web"}
			for _, p := range on {
				switch p {
				case "extended":
					want = append(want, "unraid-ssh")
				case "demo":
					want = append(want, "arr", "demo", "fakes", "frigate")
				case "web.env", "gateway.env", "approvers", "notify", "lan":
				default:
					want = append(want, p)
				}
			}
			var got []string
			for _, d := range o.Deployments {
				got = append(got, d.Name)
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("Deployments %v, want %v", got, want)
			}
		})
	}
}

// TestLANIsConfigurable: the example's LAN patch moves the services'
// upstream range, and the checker holds the build to the new range.
func TestLANIsConfigurable(t *testing.T) {
	o := objectsFor(t, newFS(t), "arr", "lan")
	if errs := Check(o, specFor([]string{"lan"})); len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	errs := Check(o, DefaultSpec)
	if !containsErr(errs, "toolgate/arr -> 192.168.1.10") || !containsErr(errs, "toolgate/arr -> 10.0.10.7") {
		t.Fatalf("the checker did not notice the LAN moved: %v", errs)
	}
}

// TestNotificationsOpenOneWayOut: the example's [notify] block lets the
// gateway reach exactly its webhook host on 443, and the checker holds the
// build to that.
func TestNotificationsOpenOneWayOut(t *testing.T) {
	o := objectsFor(t, newFS(t), "notify")
	if errs := Check(o, specFor([]string{"notify"})); len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	if errs := Check(o, DefaultSpec); !containsErr(errs, "toolgate/gateway -> 192.168.1.40 443/TCP is allowed, want refused") {
		t.Fatalf("the checker did not notice the gateway's way out: %v", errs)
	}
}

// TestPolicyConfigMapCarriesEveryPolicyFile: the sidecar sees exactly the
// files `opa test policies/` checks (tests aside), each at its path.
func TestPolicyConfigMapCarriesEveryPolicyFile(t *testing.T) {
	want := map[string]string{} // path under policies/ -> content
	err := filepath.WalkDir("../../policies", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("../../policies", p)
		rel = filepath.ToSlash(rel)
		if (strings.HasSuffix(rel, ".rego") && !strings.HasSuffix(rel, "_test.rego")) ||
			(strings.HasPrefix(rel, "data/") && strings.HasSuffix(rel, ".json")) {
			b, err := os.ReadFile(p)
			want[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	o := objectsFor(t, newFS(t))
	var data map[string]string
	for _, cm := range o.ConfigMaps {
		if strings.HasPrefix(cm.Name, "policies-") {
			data = cm.Data
		}
	}
	mounted := map[string]string{} // path under /policies -> key
	for _, d := range o.Deployments {
		if d.Name != "policy" {
			continue
		}
		ct := d.Spec.Template.Spec.Containers[0]
		if !slices.Contains(ct.Args, "/policies") {
			t.Errorf("OPA does not load /policies: %v", ct.Args)
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil {
				for _, it := range v.ConfigMap.Items {
					mounted[it.Path] = it.Key
				}
			}
		}
	}
	for rel, content := range want {
		key, ok := mounted[rel]
		if !ok {
			t.Errorf("policies/%s is not mounted at /policies/%s (policies/Kustomization and base/policy.yaml)", rel, rel)
			continue
		}
		if data[key] != content {
			t.Errorf("ConfigMap key %s does not hold policies/%s", key, rel)
		}
	}
	if len(mounted) != len(want) || len(data) != len(want) {
		t.Errorf("mounted %d and generated %d policy files, want %d", len(mounted), len(data), len(want))
	}
}

// TestExampleMarkers: every profile has a component and markers in the
// example overlay, and every marker names a profile.
func TestExampleMarkers(t *testing.T) {
	b, err := os.ReadFile("example/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := marker.FindStringSubmatch(line); m != nil {
			for _, p := range strings.Split(m[1], "|") {
				seen[p] = true
			}
		}
	}
	known := append(slices.Clone(Profiles), "web.env", "gateway.env", "approvers", "notify", "lan")
	for p := range seen {
		if !slices.Contains(known, p) {
			t.Errorf("marker [%s] names no profile", p)
		}
	}
	entries, err := os.ReadDir("components")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	for _, p := range Profiles {
		if !seen[p] {
			t.Errorf("profile %s has no lines in the example overlay", p)
		}
		if !slices.Contains(dirs, p) {
			t.Errorf("profile %s has no component", p)
		}
	}
	if len(dirs) != len(Profiles) {
		t.Errorf("components %v, profiles %v", dirs, Profiles)
	}
}

// TestBuildFailsWithoutTheSecretFiles: a profile turned on without its
// files does not build (kustomize names the file), rather than deploying
// pods that wait for a Secret.
func TestBuildFailsWithoutTheSecretFiles(t *testing.T) {
	mem := newFS(t)
	example, _ := mem.ReadFile(repo + "/deploy/kubernetes/example/kustomization.yaml")
	if err := mem.WriteFile(overlay+"/kustomization.yaml", []byte(Enable(string(example), "arr"))); err != nil {
		t.Fatal(err)
	}
	_, err := runKustomize(mem)
	if err == nil || !strings.Contains(err.Error(), "/secrets/") || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("built without secret files: %v", err)
	}
}

func containsErr(errs []error, sub string) bool {
	for _, e := range errs {
		if strings.Contains(e.Error(), sub) {
			return true
		}
	}
	return false
}

// TestDocsNameEveryProfile: docs/kubernetes.md covers each component.
func TestDocsNameEveryProfile(t *testing.T) {
	b, err := os.ReadFile("../../docs/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Profiles {
		if !strings.Contains(string(b), "`"+p+"`") {
			t.Errorf("docs/kubernetes.md does not mention the profile `%s`", p)
		}
	}
}

// TestHomeAssistantConfigMount: the homeassistant service finds Home
// Assistant's configuration where compose mounts it (/config, the
// documented HA_CONFIG_DIR), read-only unless an overlay makes it a
// writable claim.
func TestHomeAssistantConfigMount(t *testing.T) {
	compose, err := os.ReadFile(filepath.Join("..", "..", "compose", "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(compose), ":/config:${TOOLGATE_HA_CONFIG_MODE:-ro}") {
		t.Fatal("compose no longer mounts Home Assistant's configuration at /config, read-only by default")
	}
	o := objectsFor(t, newFS(t), "homeassistant")
	for _, d := range o.Deployments {
		if d.Name != "homeassistant" {
			continue
		}
		for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
			if m.MountPath == "/config" {
				if !m.ReadOnly || m.Name != "ha-config" {
					t.Errorf("/config: %+v, want the read-only volume ha-config", m)
				}
				return
			}
		}
	}
	t.Fatal("the homeassistant Deployment mounts nothing at /config")
}
