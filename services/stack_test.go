// Package services_test checks that every tool service under services/ is
// wired into every place outside Go that the stack reads: a new service
// that misses one fails here with the place named (docs/adding-a-service.md
// walks through them).
package services_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// notToolServices are the directories under services/ with no tool service
// of their own: the gateway and the policy sidecar are the stack's core,
// fakes only plays the upstreams of the demo profile.
var notToolServices = []string{"gateway", "policy", "fakes"}

// exempt lists, per place, the services that rightly are not there.
var exempt = map[string]map[string]string{
	"install.sh profile detection": {
		"web":        "always on, no profile",
		"demo":       "started by ./install.sh --demo",
		"unraid-ssh": "profile extended starts only with ./install.sh --extended, never because its settings file exists (compose/install_test.go)",
	},
	"secrets.example/":  {"demo": "no upstream application, so no settings or credentials"},
	"docs/services/":    {"unraid-ssh": "documented with unraid on docs/services/unraid.md (issue 13)"},
	"deploy/kubernetes": {"unraid-ssh": "its component is components/extended/, named for its profile"},
	"services/fakes": {
		"unraid-ssh": "its upstream is an SSH server with the forced-command script; its tests run a real sshd, the demo has none",
		"demo":       "no upstream application to fake"},
}

// stack is what the checks read once.
type stack struct {
	compose  composeFile
	gateway  map[string]string // the gateway container's environment
	install  string
	images   string
	policies string // services.json
	groups   string // groups.json
	fakes    string
	catalog  string // services/catalogtest/catalogtest.go
}

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Profiles    []string          `yaml:"profiles"`
		Environment map[string]string `yaml:"environment"`
		Secrets     []any             `yaml:"secrets"`
	} `yaml:"services"`
	Secrets map[string]any `yaml:"secrets"`
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// places are the checks, each named as the failure message names it.
var places = []struct {
	name  string
	check func(s *stack, svc string) error
}{
	{"compose/toolgate.yaml", func(s *stack, svc string) error {
		c, ok := s.compose.Services[svc]
		switch {
		case !ok:
			return fmt.Errorf("no service %q", svc)
		case !strings.HasPrefix(c.Image, "toolgate/"+svc+":"):
			return fmt.Errorf("service %q runs image %q, want toolgate/%s:${TOOLGATE_TAG:-local}", svc, c.Image, svc)
		case c.Environment["TOOLGATE_SERVICE_TOKEN_FILE"] == "":
			return fmt.Errorf("service %q has no TOOLGATE_SERVICE_TOKEN_FILE", svc)
		}
		if _, ok := s.compose.Secrets["service_token_"+svc]; !ok {
			return fmt.Errorf("no secret service_token_%s", svc)
		}
		return nil
	}},
	{"the gateway's TOOLGATE_SERVICES default (compose/toolgate.yaml)", func(s *stack, svc string) error {
		def := s.gateway["TOOLGATE_SERVICES"]
		if !strings.Contains(def, svc+"=http://"+svc+":8000/mcp") {
			return fmt.Errorf("%q lacks %s=http://%s:8000/mcp", def, svc, svc)
		}
		env := "TOOLGATE_SERVICE_TOKEN_" + strings.ToUpper(strings.ReplaceAll(svc, "-", "_")) + "_FILE"
		if s.gateway[env] == "" {
			return fmt.Errorf("the gateway has no %s", env)
		}
		return nil
	}},
	{"its own approval key, only with write tools (compose/toolgate.yaml, install.sh write_services)", func(s *stack, svc string) error {
		writes := listed(s.install, `write_services=\(([^)]*)\)`, svc)
		found := 0
		for name, c := range s.compose.Services {
			if !strings.HasPrefix(c.Image, "toolgate/"+svc+":") {
				continue
			}
			found++
			var keys []string
			for _, sec := range c.Secrets {
				source := fmt.Sprint(sec)
				if m, ok := sec.(map[string]any); ok {
					source = fmt.Sprint(m["source"])
				}
				if strings.HasPrefix(source, "approval_key") {
					keys = append(keys, source)
				}
			}
			env := c.Environment["TOOLGATE_APPROVAL_KEY_FILE"]
			switch {
			case writes && (len(keys) != 1 || keys[0] != "approval_key_"+svc || env == ""):
				return fmt.Errorf("compose service %q has write tools but mounts %v (want only approval_key_%s, and TOOLGATE_APPROVAL_KEY_FILE)", name, keys, svc)
			case !writes && (len(keys) > 0 || env != ""):
				return fmt.Errorf("compose service %q mounts %v but %s is not in write_services=(…): a key it never uses is one it can leak", name, keys, svc)
			}
		}
		if found == 0 {
			return fmt.Errorf("no compose service runs toolgate/%s", svc)
		}
		if _, ok := s.compose.Secrets["approval_key_"+svc]; writes && !ok {
			return fmt.Errorf("no secret approval_key_%s", svc)
		}
		return nil
	}},
	{"install.sh profile detection", func(s *stack, svc string) error {
		if !listed(s.install, `known_services=\(([^)]*)\)`, svc) {
			return fmt.Errorf("known_services=(…) lacks %s, so secrets/%s.env does not turn its profile on", svc, svc)
		}
		return nil
	}},
	{"install.sh secret generation", func(s *stack, svc string) error {
		if !strings.Contains(s.install, "gateway/service_token_"+svc) {
			return fmt.Errorf("install.sh never generates gateway/service_token_%s", svc)
		}
		return nil
	}},
	{"scripts/images.sh", func(s *stack, svc string) error {
		if !listed(s.images, `for optional in ([^;]*);`, svc) && !strings.Contains(s.images, "["+svc+"]=./services/"+svc) {
			return fmt.Errorf("no image is built for %s", svc)
		}
		return nil
	}},
	{"policies/data/toolgate/services.json", func(s *stack, svc string) error {
		if !strings.Contains(s.policies, `"`+svc+`": {"prefixes"`) {
			return fmt.Errorf("no entry %q with its tool prefixes, so the policy denies every tool", svc)
		}
		return nil
	}},
	{"policies/data/toolgate/groups.json", func(s *stack, svc string) error {
		if !strings.Contains(s.groups, `"`+svc+`"`) {
			return fmt.Errorf("no group may use %s", svc)
		}
		return nil
	}},
	{"secrets.example/", func(_ *stack, svc string) error {
		for _, p := range []string{svc + ".env.example", svc} {
			if _, err := os.Stat(filepath.Join("..", "secrets.example", p)); err == nil {
				return nil
			}
		}
		return fmt.Errorf("neither secrets.example/%s.env.example nor secrets.example/%s/ exists", svc, svc)
	}},
	{"docs/services/", func(_ *stack, svc string) error {
		if _, err := os.Stat(filepath.Join("..", "docs", "services", svc+".md")); err != nil {
			return fmt.Errorf("no page docs/services/%s.md", svc)
		}
		return nil
	}},
	{"deploy/kubernetes", func(_ *stack, svc string) error {
		for _, p := range []string{filepath.Join("components", svc, "kustomization.yaml"), filepath.Join("base", svc+".yaml")} {
			if _, err := os.Stat(filepath.Join("..", "deploy", "kubernetes", p)); err == nil {
				return nil
			}
		}
		return fmt.Errorf("neither the component deploy/kubernetes/components/%s/ nor deploy/kubernetes/base/%s.yaml exists", svc, svc)
	}},
	{"services/catalogtest", func(s *stack, svc string) error {
		if !strings.Contains(s.catalog, `Name: "`+svc+`"`) {
			return fmt.Errorf("catalogtest.All lacks %s (its env and fx modules), so no test holds its endpoints to the 12 KB catalog budget", svc)
		}
		return nil
	}},
	{"services/fakes", func(s *stack, svc string) error {
		if !strings.Contains(s.fakes, `"github.com/toolgate/toolgate/services/`+svc+`/`) {
			return fmt.Errorf("the demo profile's fakes serve no fake upstream of %s", svc)
		}
		return nil
	}},
}

// listed reports whether word is one of the words the pattern's first
// group captures in text.
func listed(text, pattern, word string) bool {
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	return m != nil && slices.Contains(strings.Fields(m[1]), word)
}

// toolServices are the directories under services/ that hold a command.
func toolServices(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(notToolServices, e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "main.go")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

func loadStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{
		install:  read(t, "install.sh"),
		images:   read(t, "scripts/images.sh"),
		policies: read(t, "policies/data/toolgate/services.json"),
		groups:   read(t, "policies/data/toolgate/groups.json"),
		fakes:    read(t, "services/fakes/main.go"),
		catalog:  read(t, "services/catalogtest/catalogtest.go"),
	}
	if err := yaml.Unmarshal([]byte(read(t, "compose/toolgate.yaml")), &s.compose); err != nil {
		t.Fatalf("compose/toolgate.yaml: %v", err)
	}
	s.gateway = s.compose.Services["gateway"].Environment
	return s
}

// TestEveryServiceIsInTheStack fails for each place a tool service is
// missing from, naming the place and what to add.
func TestEveryServiceIsInTheStack(t *testing.T) {
	s := loadStack(t)
	services := toolServices(t)
	if len(services) < 4 {
		t.Fatalf("found only %v under services/; is the test run from services/?", services)
	}
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			for _, p := range places {
				if why, ok := exempt[p.name][svc]; ok {
					t.Logf("%s: exempt (%s)", p.name, why)
					continue
				}
				if err := p.check(s, svc); err != nil {
					t.Errorf("%s is missing from %s: %v (see docs/adding-a-service.md)", svc, p.name, err)
				}
			}
		})
	}
}

// TestExemptionsAreCurrent keeps the exemption list honest: every place it
// names exists, and every exempt service exists and really is absent
// there (once it is added, the exemption must go).
func TestExemptionsAreCurrent(t *testing.T) {
	s := loadStack(t)
	services := toolServices(t)
	for place, svcs := range exempt {
		i := slices.IndexFunc(places, func(p struct {
			name  string
			check func(s *stack, svc string) error
		}) bool {
			return p.name == place
		})
		if i < 0 {
			t.Errorf("exemption for an unknown place %q", place)
			continue
		}
		for svc := range svcs {
			if !slices.Contains(services, svc) {
				t.Errorf("%s: exemption for %s, which is no service under services/", place, svc)
			} else if places[i].check(s, svc) == nil {
				t.Errorf("%s: %s is exempt but present; remove the exemption", place, svc)
			}
		}
	}
}

// TestAMissingServiceIsNamed proves the checks can fail: a service that
// exists nowhere is reported missing from every place.
func TestAMissingServiceIsNamed(t *testing.T) {
	s := loadStack(t)
	for _, p := range places {
		if err := p.check(s, "newservice"); err == nil || !strings.Contains(err.Error(), "newservice") {
			t.Errorf("%s: a service that is nowhere passes (%v)", p.name, err)
		}
	}
}
