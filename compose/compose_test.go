// Package compose_test checks the compose definition without a Docker
// engine (these machines cannot pull images): the bundled SearXNG's
// hardening and networks, that the demo's fake never answers as searxng,
// that a bare `docker compose up` before install.sh stops with one line,
// and that docs/install.md lists every profile's containers.
package compose_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// service is what the checks read of a compose service (anchors merged).
type service struct {
	Image       string            `yaml:"image"`
	PullPolicy  string            `yaml:"pull_policy"`
	Profiles    []string          `yaml:"profiles"`
	Networks    yaml.Node         `yaml:"networks"`
	ReadOnly    bool              `yaml:"read_only"`
	CapDrop     []string          `yaml:"cap_drop"`
	CapAdd      []string          `yaml:"cap_add"`
	SecurityOpt []string          `yaml:"security_opt"`
	User        string            `yaml:"user"`
	MemLimit    string            `yaml:"mem_limit"`
	PidsLimit   int               `yaml:"pids_limit"`
	CPUs        float64           `yaml:"cpus"`
	Tmpfs       []string          `yaml:"tmpfs"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Privileged  bool              `yaml:"privileged"`
	Environment map[string]string `yaml:"environment"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// networks maps each network of s to its aliases (list or map form).
func (s service) networks(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	switch s.Networks.Kind {
	case yaml.SequenceNode:
		var names []string
		if err := s.Networks.Decode(&names); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out[n] = nil
		}
	case yaml.MappingNode:
		var m map[string]struct {
			Aliases []string `yaml:"aliases"`
		}
		if err := s.Networks.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for n, v := range m {
			out[n] = v.Aliases
		}
	}
	return out
}

func load(t *testing.T) map[string]service {
	t.Helper()
	b, err := os.ReadFile("toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Services
}

const secretsDir = "${TOOLGATE_SECRETS_DIR:?run ./install.sh first}"

func TestSearXNGService(t *testing.T) {
	t.Parallel()
	svcs := load(t)
	s, ok := svcs["searxng"]
	if !ok {
		t.Fatal("no searxng service")
	}
	nets := s.networks(t)
	checks := []struct {
		what string
		ok   bool
	}{
		{"the official image searxng/searxng", strings.Contains(s.Image, "searxng/searxng:")},
		{"pull_policy: missing (Docker pulls it once; nothing else is pulled)", s.PullPolicy == "missing"},
		{"its own profile, which install.sh turns on, never the demo's", slices.Equal(s.Profiles, []string{"searxng"})},
		{"on egress only", len(nets) == 1 && nets["egress"] == nil && hasKey(nets, "egress")},
		{"read-only root", s.ReadOnly},
		{"all capabilities dropped, none added", slices.Equal(s.CapDrop, []string{"ALL"}) && len(s.CapAdd) == 0 && !s.Privileged},
		{"no-new-privileges", slices.Contains(s.SecurityOpt, "no-new-privileges:true")},
		{"a non-root user", s.User != "" && !strings.HasPrefix(s.User, "0") && !strings.HasPrefix(s.User, "root")},
		{"memory, pid and CPU limits", s.MemLimit != "" && s.PidsLimit > 0 && s.CPUs > 0},
		{"tmpfs where it writes (/tmp, and the image's data VOLUME so Docker adds no writable volume)",
			slices.Contains(s.Tmpfs, "/tmp") && slices.Contains(s.Tmpfs, "/var/cache/searxng")},
		{"the generated settings mounted read-only over the image's configuration VOLUME",
			slices.Contains(s.Volumes, secretsDir+"/searxng:/etc/searxng:ro") && len(s.Volumes) == 1},
		{"no published port", len(s.Ports) == 0},
		{"a healthcheck the image can run (it has wget, not toolgate's /app)",
			len(s.Healthcheck.Test) > 1 && s.Healthcheck.Test[1] == "wget" && strings.Contains(strings.Join(s.Healthcheck.Test, " "), "/healthz")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("searxng: want %s; have %+v", c.what, s)
		}
	}
	// The one image toolgate does not build is the only one pulled.
	for name, o := range svcs {
		if name != "searxng" && o.PullPolicy != "never" {
			t.Errorf("%s: pull_policy %q, want never (built by scripts/images.sh)", name, o.PullPolicy)
		}
	}
}

func hasKey(m map[string][]string, k string) bool { _, ok := m[k]; return ok }

// The demo keeps its fake SearXNG under another name: a real searxng and
// the fake never both answer as searxng, and web in the demo asks the fake.
func TestDemoSearXNGNeverCollides(t *testing.T) {
	t.Parallel()
	svcs := load(t)
	var fakeAlias string
	for name, s := range svcs {
		for net, aliases := range s.networks(t) {
			if net != "egress" {
				continue
			}
			if name != "searxng" && slices.Contains(aliases, "searxng") {
				t.Errorf("%s answers as searxng on egress beside the real one", name)
			}
			if slices.Contains(s.Profiles, "demo") {
				for _, a := range aliases {
					if strings.Contains(a, "searxng") {
						fakeAlias = a
					}
				}
			}
		}
	}
	if fakeAlias == "" {
		t.Fatal("no demo service offers a fake SearXNG on egress")
	}
	demoEnv, err := os.ReadFile("env/web.demo.env")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^WEB_SEARXNG_URL=http://` + regexp.QuoteMeta(fakeAlias) + `:8080$`).Match(demoEnv) {
		t.Errorf("env/web.demo.env does not point web at the demo's fake (%s):\n%s", fakeAlias, demoEnv)
	}
}

// Before install.sh has written .env, compose must stop at once with one
// line saying so, not with a bind-mount error about a missing secret.
func TestBareComposeSaysRunInstallFirst(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"toolgate.yaml", "publish.yaml", "approvals.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range regexp.MustCompile(`\$\{TOOLGATE_SECRETS_DIR[^}]*\}`).FindAllString(string(b), -1) {
			if ref != secretsDir {
				t.Errorf("%s: %s has a default; want %s so a bare compose up says to run install.sh", f, ref, secretsDir)
			}
		}
	}
	if exec.Command("docker", "compose", "version").Run() != nil {
		t.Log("no docker compose v2 here: checked the files only")
		return
	}
	// A fresh clone: the compose files and no .env.
	dir := t.TempDir()
	for _, f := range []string{"compose.yaml", "compose/toolgate.yaml", "compose/env/web.env", "compose/env/none.env"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, profile := range []string{"arr", "demo", "searxng"} {
		cmd := exec.Command("docker", "compose", "--profile", profile, "config", "--quiet")
		cmd.Dir = dir
		cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
			return strings.HasPrefix(e, "TOOLGATE_") || strings.HasPrefix(e, "COMPOSE_")
		})
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "run ./install.sh first") {
			t.Errorf("profile %s: bare compose: err %v, output %q; want one line saying to run ./install.sh first", profile, err, out)
		}
	}
}

// docs/install.md's profiles table names exactly the containers each
// compose profile adds, and those without a profile on its "(always)" row:
// no profile is missing or "reserved" (homeassistant and ersatztv once
// were).
func TestInstallDocListsEveryProfile(t *testing.T) {
	t.Parallel()
	want := map[string][]string{}
	for name, s := range load(t) {
		if len(s.Profiles) == 0 {
			want["(always)"] = append(want["(always)"], name)
		}
		for _, p := range s.Profiles {
			want["`"+p+"`"] = append(want["`"+p+"`"], name)
		}
	}
	b, err := os.ReadFile("../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Profiles\n")
	section, _, _ = strings.Cut(section, "\n## ")
	got := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+) \| ([^|]+) \|`).FindAllStringSubmatch(section, -1) {
		if m[1] == "profile" || strings.HasPrefix(m[1], "---") {
			continue
		}
		for _, c := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(m[2], -1) {
			got[m[1]] = append(got[m[1]], c[1])
		}
	}
	for profile, containers := range want {
		slices.Sort(containers)
		have := got[profile]
		slices.Sort(have)
		if !slices.Equal(have, containers) {
			t.Errorf("docs/install.md's profiles table: row %s names %v, want %v (compose/toolgate.yaml)", profile, have, containers)
		}
		delete(got, profile)
	}
	for profile := range got {
		t.Errorf("docs/install.md's profiles table has a row %s that compose/toolgate.yaml has no profile for", profile)
	}
}
