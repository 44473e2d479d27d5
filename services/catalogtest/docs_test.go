package catalogtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestClientsDocListsEveryRecommendedEndpoint: the endpoint row of
// docs/clients.md names exactly the endpoints users are told to add, so a
// new service or toolset cannot be left out of it (tuliprox and
// unraid-ssh once were).
func TestClientsDocListsEveryRecommendedEndpoint(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	const rowStart = "| URL, one service or toolset |"
	var row string
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, rowStart) {
			row = line
			break
		}
	}
	if row == "" {
		t.Fatalf("docs/clients.md has no row starting %q", rowStart)
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(row, -1) {
		listed = append(listed, m[1])
	}
	var want []string
	for _, s := range All() {
		want = append(want, Recommended(s.Name)...)
	}
	for _, ep := range want {
		if !slices.Contains(listed, ep) {
			t.Errorf("docs/clients.md does not list the endpoint %s", ep)
		}
	}
	for _, ep := range listed {
		if !slices.Contains(want, ep) {
			t.Errorf("docs/clients.md lists %s, which is not an endpoint users are told to add", ep)
		}
	}
}
