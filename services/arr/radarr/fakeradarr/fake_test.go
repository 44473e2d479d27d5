package fakeradarr_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
)

func TestStatusCodes(t *testing.T) {
	const key = "fake-radarr-key"
	srv := httptest.NewServer(fakeradarr.NewDemo(key))
	defer srv.Close()
	grab := `{"guid":"` + fakeradarr.GUIDApproved + `","indexerId":1}`
	cases := []struct {
		method, path, key, body string
		want                    int
	}{
		{"GET", "/api/v3/system/status", "", "", 401},
		{"GET", "/api/v3/system/status", "wrong", "", 401},
		{"GET", "/api/v3/system/status", key, "", 200},
		{"GET", "/api/v3/system/status?apikey=" + key, "", "", 200},
		{"GET", "/api/v3/movie/99", key, "", 404},
		{"GET", "/api/v3/command/5", key, "", 404},
		{"POST", "/api/v3/release", key, grab, 404}, // not searched yet: not in the cache
		{"POST", "/api/v3/command", key, `{"name":"RescanMovie"}`, 400},
		{"POST", "/api/v3/command", key, `{"name":"MoviesSearch","movieIds":[2]}`, 200},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if tc.key != "" {
			req.Header.Set("X-Api-Key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s %s: HTTP %d, want %d", tc.method, tc.path, res.StatusCode, tc.want)
		}
	}
}
