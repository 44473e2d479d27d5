package kubernetes

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The repository as the builds see it: an in-memory copy of the manifests
// and policies/, so an overlay and its secret files can be written without
// touching the working tree.
const (
	repo    = "/repo"
	overlay = repo + "/deploy/kubernetes/local"
)

// Profiles are the components, by the marker the example overlay uses.
var Profiles = []string{"homeassistant", "arr", "unraid", "extended", "frigate", "ersatztv", "tuliprox", "demo"}

// newFS copies the manifests and the policies into memory.
func newFS(t testing.TB) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	copyTree := func(disk, dst string) {
		err := filepath.WalkDir(disk, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
				return err
			}
			rel, _ := filepath.Rel(disk, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return mem.WriteFile(path.Join(dst, filepath.ToSlash(rel)), b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"base", "components", "example"} {
		copyTree(dir, repo+"/deploy/kubernetes/"+dir)
	}
	copyTree("../../policies", repo+"/policies")
	copyTree("../../secrets.example", repo+"/secrets.example")
	return mem
}

var marker = regexp.MustCompile(`#\s*\[([a-z.|-]+)\]\s*$`)

// Enable turns profiles on in the example overlay the way its header tells
// users to: every line whose marker names one of them loses the "# " after
// its indentation.
func Enable(example string, on ...string) string {
	want := map[string]bool{}
	for _, p := range on {
		want[p] = true
	}
	lines := strings.Split(example, "\n")
	for i, line := range lines {
		m := marker.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		hit := false
		for _, p := range strings.Split(m[1], "|") {
			hit = hit || want[p]
		}
		body := strings.TrimLeft(line, " ")
		if hit && strings.HasPrefix(body, "# ") {
			lines[i] = line[:len(line)-len(body)] + body[2:]
		}
	}
	return strings.Join(lines, "\n")
}

// build writes the example overlay with the given profiles on, creates
// every file its generators name (the secrets.example template for a
// settings file when there is one) and runs kustomize.
func build(t testing.TB, mem filesys.FileSystem, on ...string) (resmap.ResMap, error) {
	t.Helper()
	example, err := mem.ReadFile(repo + "/deploy/kubernetes/example/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := Enable(string(example), on...)
	if err := mem.WriteFile(overlay+"/kustomization.yaml", []byte(text)); err != nil {
		t.Fatal(err)
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict([]byte(text), &k); err != nil {
		return nil, fmt.Errorf("overlay with %v is not a valid kustomization: %w", on, err)
	}
	for _, g := range k.SecretGenerator {
		for _, f := range g.FileSources {
			_, p, found := strings.Cut(f, "=")
			if !found {
				p = f
			}
			writeIfMissing(t, mem, p, "test-"+path.Base(p)+"-0123456789abcdef")
		}
	}
	for _, g := range k.ConfigMapGenerator {
		for _, p := range g.EnvSources {
			name := strings.TrimSuffix(path.Base(p), ".env")
			tmpl, err := mem.ReadFile(repo + "/secrets.example/" + name + ".env.example")
			switch {
			case err == nil:
			case name == "gateway":
				tmpl = []byte("TOOLGATE_ALLOWED_ORIGINS=https://openwebui.lan\nTOOLGATE_LOG_LEVEL=debug\n")
			default: // a service whose template does not exist yet
				tmpl = []byte(strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_URL=http://192.168.1.30:8000\n")
			}
			writeIfMissing(t, mem, p, string(tmpl))
		}
	}
	return runKustomize(mem)
}

// runKustomize builds the overlay as `kubectl apply -k` would.
func runKustomize(mem filesys.FileSystem) (resmap.ResMap, error) {
	return krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, overlay)
}

// objectsFor builds the overlay with the given profiles and decodes it.
func objectsFor(t testing.TB, mem filesys.FileSystem, on ...string) *Objects {
	t.Helper()
	return decoder(t, mem, on...)()
}

// decoder builds once and returns a function that decodes a fresh copy of
// the build each time (for tests that change objects).
func decoder(t testing.TB, mem filesys.FileSystem, on ...string) func() *Objects {
	t.Helper()
	m, err := build(t, mem, on...)
	if err != nil {
		t.Fatalf("kustomize build with %v: %v", on, err)
	}
	return func() *Objects {
		t.Helper()
		o, err := decodeResMap(m)
		if err != nil {
			t.Fatalf("decoding the build with %v: %v", on, err)
		}
		return o
	}
}

func writeIfMissing(t testing.TB, mem filesys.FileSystem, rel, content string) {
	t.Helper()
	p := path.Join(overlay, rel)
	if mem.Exists(p) {
		return
	}
	if err := mem.WriteFile(p, []byte(content)); err != nil {
		t.Fatal(err)
	}
}
