package main

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBuildIsTheImagesBuild: the bench measures the binary users run, so
// it builds with the script scripts/images.sh builds the images with, and
// that script's flags are in the binary it makes.
func TestBuildIsTheImagesBuild(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	images, err := os.ReadFile(filepath.Join(repo, "scripts/images.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(buildScript) + ` "\$bin/" "\$\{build\[@\]\}"$`).Match(images) {
		t.Errorf("scripts/images.sh does not build the images' binaries with %s", buildScript)
	}
	if regexp.MustCompile(`(?m)^\s*(CGO_ENABLED=\S+\s+)?go\s+build\b`).Match(images) {
		t.Errorf("scripts/images.sh runs go build itself: its flags belong in %s", buildScript)
	}

	out := filepath.Join(t.TempDir(), "probe")
	if err := build(context.Background(), repo, repo, "./compose/e2e/probe", out); err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// -ldflags is not recorded with -trimpath; the ELF file shows it.
	want := map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"}
	for _, s := range info.Settings {
		if v, ok := want[s.Key]; ok {
			if s.Value != v {
				t.Errorf("build setting %s=%q, want %q", s.Key, s.Value, v)
			}
			delete(want, s.Key)
		}
	}
	for k, v := range want {
		t.Errorf("build setting %s missing, want %q", k, v)
	}
	// -buildvcs=false: a checkout with git and one without (a tarball, the
	// Go container's mount) build the same bytes.
	for _, s := range info.Settings {
		if strings.HasPrefix(s.Key, "vcs") {
			t.Errorf("build setting %s=%q: the binary is stamped with VCS data (-buildvcs=false)", s.Key, s.Value)
		}
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("section %s: the binary is not stripped (-ldflags=-s -w)", s.Name)
		}
	}
}
