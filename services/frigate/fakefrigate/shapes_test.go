package fakefrigate

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"

	"go.yaml.in/yaml/v3"
)

func keysOf(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return sortedKeys(m)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// eventResponse reads EventResponse's properties from Frigate's own API
// description (frigate/api/defs/response/event_response.py as FastAPI
// publishes it, docs/static/frigate-api.yaml at 0.18).
func eventResponse(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../tools/testdata/frigate-api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return sortedKeys(doc.Components.Schemas["EventResponse"].Properties)
}

// Each event read answers with the fields Frigate's route really sends,
// which differ: GET /events answers its selected columns as they are (a
// JSONResponse passes its response_model by), GET /events/{id} the
// EventResponse model (0.15 and later; 0.14's Flask route every column),
// GET /events/search its own columns with thumb_path and data cut to a
// list of keys.
func TestEventReadsAnswerTheFieldsFrigateSends(t *testing.T) {
	one := eventResponse(t)
	if len(one) != 17 || !slices.Equal(one, sorted(oneColumns...)) {
		t.Fatalf("EventResponse in Frigate's API description = %v, the fake's = %v", one, sorted(oneColumns...))
	}
	row := sortedKeys(eventRow(Event{ID: "x"}))
	for _, rel := range Releases {
		t.Run(string(rel), func(t *testing.T) {
			f, c := serve(t, Options{Release: rel, SemanticSearch: true, Unauthenticated: true})
			id := f.opts.Events[0].ID
			_, body := c.get("/api/events?limit=1&include_thumbnails=0", nil)
			var list []map[string]any
			if err := json.Unmarshal(body, &list); err != nil || len(list) != 1 {
				t.Fatalf("events: %s", body)
			}
			if got, want := sortedKeys(list[0]), sorted(listColumns...); !slices.Equal(got, want) {
				t.Errorf("GET /events: %v, want %v", got, want)
			}
			_, body = c.get("/api/events?limit=1", nil)
			list = nil
			_ = json.Unmarshal(body, &list)
			if _, ok := list[0]["thumbnail"]; !ok {
				t.Errorf("GET /events with thumbnails has none: %v", sortedKeys(list[0]))
			}
			want := one
			if rel == Release014 {
				want = row
			}
			if _, body = c.get("/api/events/"+id, nil); !slices.Equal(keysOf(t, body), want) {
				t.Errorf("GET /events/{id}: %v, want %v", keysOf(t, body), want)
			}
			if rel == Release014 {
				return
			}
			_, body = c.get("/api/events/search?query=car&include_thumbnails=0", nil)
			list = nil
			if err := json.Unmarshal(body, &list); err != nil || len(list) == 0 {
				t.Fatalf("search: %s", body)
			}
			want = sorted(append(slices.Clone(searchColumns), "search_distance", "search_source")...)
			if got := sortedKeys(list[0]); !slices.Equal(got, want) {
				t.Errorf("GET /events/search: %v, want %v", got, want)
			}
			for k := range list[0]["data"].(map[string]any) {
				if !slices.Contains(searchDataKeys, k) {
					t.Errorf("GET /events/search keeps data.%s", k)
				}
			}
		})
	}
}
