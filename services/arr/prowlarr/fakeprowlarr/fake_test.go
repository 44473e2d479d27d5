package fakeprowlarr_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/services/arr/prowlarr/fakeprowlarr"
)

func TestStatusCodes(t *testing.T) {
	const key = "fake-prowlarr-key"
	srv := httptest.NewServer(fakeprowlarr.New(key, "http://prowlarr.test"))
	defer srv.Close()
	cases := []struct {
		path, key string
		want      int
	}{
		{"/api/v1/indexer", "", 401},
		{"/api/v1/indexer", "wrong", 401},
		{"/api/v1/indexer", key, 200},
		{"/api/v1/indexer?apikey=" + key, "", 200},
		{"/api/v1/indexer/99", key, 404},
		{"/api/v1/search?query=x&type=audio", key, 400},
		{"/api/v1/search?query=x&indexerIds=a", key, 400},
		{"/api/v1/search?query=matrix", key, 200},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
		if tc.key != "" {
			req.Header.Set("X-Api-Key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.path, res.StatusCode, tc.want)
		}
	}
	if _, ok := fakeprowlarr.NewDemo(key).(*fakeprowlarr.Server); !ok {
		t.Fatal("NewDemo is not the fake server")
	}
}
