package fakeprowlarr_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake/arrfaketest"
	"github.com/toolgate/toolgate/services/arr/prowlarr/fakeprowlarr"
)

func TestStatusCodes(t *testing.T) {
	const key = "fake-prowlarr-key"
	arrfaketest.Check(t, fakeprowlarr.New(key, "http://prowlarr.test"), []arrfaketest.Case{
		{Name: "no key", Method: "GET", Target: "/api/v1/indexer", Status: 401},
		{Name: "wrong key", Method: "GET", Target: "/api/v1/indexer", Key: "wrong", Status: 401},
		{Name: "key header", Method: "GET", Target: "/api/v1/indexer", Key: key, Status: 200},
		{Name: "key parameter", Method: "GET", Target: "/api/v1/indexer?apikey=" + key, Status: 200},
		{Name: "unknown indexer", Method: "GET", Target: "/api/v1/indexer/99", Key: key, Status: 404},
		{Name: "an unknown search type is a basic search", Method: "GET", Target: "/api/v1/search?query=x&type=audio", Key: key, Status: 200},
		{Name: "only unavailable indexers", Method: "GET", Target: "/api/v1/search?query=x&indexerIds=99", Key: key, Status: 400, Contains: "Search failed due to all selected indexers being unavailable"},
		{Name: "bad indexer ids", Method: "GET", Target: "/api/v1/search?query=x&indexerIds=a", Key: key, Status: 400},
		{Name: "search", Method: "GET", Target: "/api/v1/search?query=matrix", Key: key, Status: 200},
	})
	if _, ok := fakeprowlarr.NewDemo(key).(*fakeprowlarr.Server); !ok {
		t.Fatal("NewDemo is not the fake server")
	}
}

// Prowlarr's API never sends the value of an apiKey or password setting
// (SchemaBuilder.ToSchema answers "********"); a user name and settings
// of privacy normal, such as a Cardigann cookie or an RSS key, it sends as
// they are.
func TestIndexerSettingsAreMaskedAsProwlarrMasksThem(t *testing.T) {
	const key = "fake-prowlarr-key"
	h := fakeprowlarr.New(key, "http://prowlarr.test")
	want := map[int]map[string]any{
		1: {"apiKey": "********", "apiPath": "/api"},
		2: {"password": "********", "username": fakeprowlarr.IndexerUser, "cookie": fakeprowlarr.IndexerCookie},
		4: {"rssKey": fakeprowlarr.IndexerRSSKey},
	}
	for id, fields := range want {
		status, body := arrfaketest.Do(t, h, "GET", "/api/v1/indexer/"+strconv.Itoa(id), key, "")
		var ix struct {
			Fields []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"fields"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &ix) != nil {
			t.Fatalf("indexer %d: %d %s", id, status, body)
		}
		got := map[string]any{}
		for _, f := range ix.Fields {
			got[f.Name] = f.Value
		}
		for name, v := range fields {
			if got[name] != v {
				t.Errorf("indexer %d %s = %v, want %v", id, name, got[name], v)
			}
		}
	}
}
