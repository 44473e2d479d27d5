package prowlarr_test

import (
	"slices"
	"testing"
)

// prowlarrCalls are the operations of Prowlarr's API the service uses, as
// its OpenAPI document names them (docs/services/arr.md, Upstream).
var prowlarrCalls = []string{
	"GET /api/v1/health",
	"GET /api/v1/indexer",
	"GET /api/v1/indexer/{id}",
	"GET /api/v1/indexerstats",
	"GET /api/v1/indexerstatus",
	"GET /api/v1/search",
	"GET /api/v1/system/status",
}

// Every tool sends only operations of Prowlarr's OpenAPI document with
// parameters it declares, the fake answers in the document's shapes
// (arrspec checks each exchange), and the tools use exactly prowlarrCalls.
func TestEveryCallIsAnOperationOfProwlarrsDocument(t *testing.T) {
	e := start(t, apiKey, 0)
	for _, r := range []struct {
		tool string
		args map[string]any
	}{
		{"prowlarr_indexer_list", map[string]any{}},
		{"prowlarr_indexer_get", map[string]any{"id": 2}},
		{"prowlarr_indexer_status", map[string]any{}},
		{"prowlarr_indexer_stats", map[string]any{"start": "2025-11-01T00:00:00Z", "end": "2025-11-02T00:00:00Z", "indexer_ids": []int{1, 2}}},
		{"prowlarr_health", map[string]any{}},
		{"prowlarr_search", map[string]any{"query": "matrix", "type": "movie", "categories": []int{2000}, "indexer_ids": []int{2, 3}}},
	} {
		if got, isErr := e.svc.Call(t, r.tool, r.args, ""); isErr {
			t.Fatalf("%s: %v", r.tool, got)
		}
	}
	if got := e.spec.Used(); !slices.Equal(got, prowlarrCalls) {
		t.Errorf("operations used:\n%q\nwant\n%q", got, prowlarrCalls)
	}
}
