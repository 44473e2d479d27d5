package tools

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// specFile is Frigate's own API description, docs/static/frigate-api.yaml
// in blakeblackshear/frigate (dev branch at 0.18, commit 6f80bcd1), a copy
// of /work/shared/specs/frigate-dev-0.18-api.yaml.
const specFile = "testdata/frigate-api.yaml"

type specOp struct {
	method string
	path   *regexp.Regexp
	// holes is the number of path parameters: fewer is more specific.
	holes  int
	params []string
}

func loadSpec(t *testing.T) []specOp {
	t.Helper()
	raw, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `yaml:"name"`
				In   string `yaml:"in"`
			} `yaml:"parameters"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []specOp
	for p, methods := range doc.Paths {
		// /{camera_name}/latest.{extension} -> ^/api/[^/]+/latest\.[^/]+$
		re := "^/api" + regexp.MustCompile(`\\\{[^}]+\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$"
		for m, op := range methods {
			o := specOp{method: strings.ToUpper(m), path: regexp.MustCompile(re), holes: strings.Count(p, "{")}
			for _, prm := range op.Parameters {
				if prm.In == "query" {
					o.params = append(o.params, prm.Name)
				}
			}
			ops = append(ops, o)
		}
	}
	return ops
}

// Every request the service sends while running every tool is an
// operation of Frigate's API description, with query parameters it
// declares: the fake cannot drift from Frigate into the client's
// assumptions unnoticed. The login is the only POST.
func TestEveryRequestIsInFrigatesAPIDescription(t *testing.T) {
	ops := loadSpec(t)
	h := newHarness(t, harnessOpts{})
	var snap, anyID string
	for _, e := range demoEvents() {
		anyID = e.ID
		if e.HasSnapshot {
			snap = e.ID
		}
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"frigate_get_system_status", nil},
		{"frigate_get_capabilities", nil},
		{"frigate_list_cameras", nil},
		{"frigate_list_events", with(window(), "cameras", []any{"driveway"}, "labels", []any{"car"}, "zones", []any{"driveway"},
			"subLabels", []any{"Bob"}, "hasClip", true, "hasSnapshot", true, "inProgress", false, "minScore", 0.1, "maxScore", 0.99, "sort", "score_desc")},
		{"frigate_search_events", with(window(), "query", "red car", "searchType", "both", "labels", []any{"car"}, "zones", []any{"street"})},
		{"frigate_get_event", map[string]any{"eventId": anyID}},
		{"frigate_get_event_snapshot", map[string]any{"eventId": snap, "crop": true, "height": 200}},
		{"frigate_get_latest_frame", map[string]any{"camera": "driveway", "height": 200}},
	}
	for _, c := range calls {
		if res := h.raw(t, c.tool, c.args); res.IsError {
			t.Fatalf("%s: %v", c.tool, res.Content)
		}
	}
	for _, r := range h.fake.Requests() {
		method, target, _ := strings.Cut(r, " ")
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		var matched *specOp
		for i := range ops {
			if ops[i].method == method && ops[i].path.MatchString(u.Path) {
				// The most specific template wins (/events/search over
				// /events/{event_id}), as in FastAPI's route order.
				if matched == nil || ops[i].holes < matched.holes {
					matched = &ops[i]
				}
			}
		}
		if matched == nil {
			t.Errorf("%s is not an operation of Frigate's API", r)
			continue
		}
		for name := range u.Query() {
			if !slices.Contains(matched.params, name) {
				t.Errorf("%s: query parameter %q is not declared by Frigate (%v)", r, name, matched.params)
			}
		}
	}
}
