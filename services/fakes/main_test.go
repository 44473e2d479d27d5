package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
)

// Each fake answers on its port with the credentials it was given, and
// refuses others as the real application does.
func TestFakesUseTheGivenCredentials(t *testing.T) {
	const key, password = "demo-key-0123456789abcdef", "demo-password-xyz"
	h := fakes(key, password, homeAssistant{token: "demo-ha-token-0123456789"}, "demo-unraid-key-0123456789", tuliproxUser{"demo-tp-user-0a1b", "demo-tp-password-2c3d"})
	if len(h) != len(ports) {
		t.Fatalf("%d fakes for %d ports", len(h), len(ports))
	}
	cases := []struct {
		name, method, path, body string
		port                     int
		header                   map[string]string
		want                     int
	}{
		{"sonarr with key", "GET", "/api/v3/system/status", "", 8989, map[string]string{"X-Api-Key": key}, 200},
		{"sonarr without key", "GET", "/api/v3/system/status", "", 8989, nil, 401},
		{"radarr with key", "GET", "/api/v3/system/status", "", 7878, map[string]string{"X-Api-Key": key}, 200},
		{"radarr wrong key", "GET", "/api/v3/system/status", "", 7878, map[string]string{"X-Api-Key": "nope"}, 401},
		{"prowlarr with key", "GET", "/api/v1/health", "", 9696, map[string]string{"X-Api-Key": key}, 200},
		{"frigate login", "POST", "/api/login", `{"user":"viewer","password":"` + password + `"}`, frigatePort, map[string]string{"Content-Type": "application/json"}, 200},
		{"frigate bad password", "POST", "/api/login", `{"user":"viewer","password":"wrong"}`, frigatePort, map[string]string{"Content-Type": "application/json"}, 401},
		{"ersatztv with key", "GET", "/api/v1/version", "", ersatztvPort, map[string]string{"X-Api-Key": key}, 200},
		{"ersatztv without key", "GET", "/api/v1/channels", "", ersatztvPort, nil, 401},
		{"upstream ErsatzTV takes no key", "GET", "/api/version", "", ersatztvLegacyPort, nil, 200},
		{"upstream ErsatzTV has no /api/v1", "GET", "/api/v1/version", "", ersatztvLegacyPort, nil, 200}, // its web app
		{"searxng json", "GET", "/search?q=nimbus&format=json", "", searxngPort, nil, 200},
		{"home assistant with token", "GET", "/api/", "", fakehass.Port, map[string]string{"Authorization": "Bearer demo-ha-token-0123456789"}, 200},
		{"home assistant wrong token", "GET", "/api/states", "", fakehass.Port, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"tuliprox sign-in", "POST", "/auth/token", `{"username":"demo-tp-user-0a1b","password":"demo-tp-password-2c3d"}`, tuliproxPort, map[string]string{"Content-Type": "application/json"}, 200},
		{"tuliprox bad password", "POST", "/auth/token", `{"username":"demo-tp-user-0a1b","password":"wrong"}`, tuliproxPort, map[string]string{"Content-Type": "application/json"}, 401},
		{"tuliprox without a token", "GET", "/api/v1/status", "", tuliproxPort, nil, 403},
		{"tuliprox 3.3.x sign-in", "POST", "/auth/token", `{"username":"demo-tp-user-0a1b","password":"demo-tp-password-2c3d"}`, tuliproxPublicPort, map[string]string{"Content-Type": "application/json"}, 200},
		{"tuliprox 3.3.x has no playlist sources", "GET", "/api/v1/playlist/sources", "", tuliproxPublicPort, nil, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), tc.method, tc.path, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h[tc.port].ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("HTTP %d, want %d: %.200s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

// The fake Unraid answers the given key and refuses a request without one
// as Unraid does (HTTP 200, UNAUTHENTICATED).
func TestUnraidFakeTakesTheKey(t *testing.T) {
	const unraidKey = "demo-unraid-key-0123456789"
	h := fakes("k", "p", homeAssistant{token: "t"}, unraidKey, tuliproxUser{})[unraidPort]
	for _, tc := range []struct{ key, want string }{{unraidKey, `"state":"SHUTOFF"`}, {"", `"UNAUTHENTICATED"`}} {
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/graphql", strings.NewReader(`{"query":"query Q { vms { domains { id state } } }"}`))
		req.Header.Set("Content-Type", "application/json")
		if tc.key != "" {
			req.Header.Set("X-Api-Key", tc.key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("key %q: HTTP %d %.300s, want %s", tc.key, rec.Code, rec.Body.String(), tc.want)
		}
	}
}
