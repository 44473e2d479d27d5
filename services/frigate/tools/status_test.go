package tools

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/frigate/client"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

func TestSystemStatus(t *testing.T) {
	t.Run("healthy and authorized", func(t *testing.T) {
		h := newHarness(t, harnessOpts{})
		out := h.mustOK(t, "frigate_get_system_status", nil)
		if out["ok"] != true || out["authorizedApiAccess"] != "confirmed" || out["version"] != fakefrigate.Release017.Version() {
			t.Fatalf("status = %v", out)
		}
		if c := out["compatibility"].(map[string]any)["classification"]; c != "supported" {
			t.Errorf("classification = %v", c)
		}
		if len(out["cameras"].([]any)) != 3 || len(out["detectors"].([]any)) != 1 {
			t.Errorf("cameras/detectors = %v / %v", out["cameras"], out["detectors"])
		}
		assertNoSecrets(t, h)
	})
	// On the authenticated port nothing answers without a session, health
	// and version included: rejected credentials fail the whole status.
	t.Run("bad credentials fail it", func(t *testing.T) {
		h := newHarness(t, harnessOpts{settings: func(s *Settings) { s.Password = []byte("wrong-password-123") }})
		h.mustFail(t, "frigate_get_system_status", nil, "auth_failed")
	})
	t.Run("Frigate down", func(t *testing.T) {
		h := newHarness(t, harnessOpts{front: func(_ *harness, _ http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "<html>"+errorBody, http.StatusServiceUnavailable)
			})
		}})
		h.mustFail(t, "frigate_get_system_status", nil, "upstream_unavailable")
		assertNoSecrets(t, h)
	})
}

// Health and version sit behind Frigate's nginx auth_request on port 8971
// like every other /api path (nginx.conf, 0.14-0.18). They used to be read
// without credentials, so status lost both and capabilities failed on
// every real Frigate with authentication; each mode now sends its own.
func TestHealthAndVersionAreReadWithTheCredentials(t *testing.T) {
	for _, mode := range []struct {
		name string
		set  func(*Settings)
	}{
		{"managed session", nil},
		{"bearer token", func(s *Settings) { s.Auth, s.Username, s.Password, s.Token = client.Bearer, "", nil, []byte(testToken) }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{settings: mode.set})
			out := h.mustOK(t, "frigate_get_system_status", nil)
			comps := out["components"].(map[string]any)
			if out["ok"] != true || comps["health"].(map[string]any)["ok"] != true || comps["version"].(map[string]any)["ok"] != true {
				t.Fatalf("status = %v", out)
			}
			if caps := h.mustOK(t, "frigate_get_capabilities", nil); caps["version"] != fakefrigate.Release017.Version() {
				t.Errorf("capabilities = %v", caps)
			}
			assertNoSecrets(t, h)
		})
	}
}

// Every tool works against every checked release, on the authenticated
// port with a managed session.
func TestEveryToolOnEveryCheckedRelease(t *testing.T) {
	for _, rel := range fakefrigate.Releases {
		t.Run(string(rel), func(t *testing.T) {
			h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.Release = rel }})
			status := h.mustOK(t, "frigate_get_system_status", nil)
			if status["ok"] != true || status["version"] != rel.Version() || status["compatibility"].(map[string]any)["classification"] != "supported" {
				t.Fatalf("status = %v", status)
			}
			caps := h.mustOK(t, "frigate_get_capabilities", nil)
			h.mustOK(t, "frigate_list_cameras", nil)
			list := h.mustOK(t, "frigate_list_events", window())
			if len(ids(list)) != len(demoEvents()) {
				t.Errorf("listed %d events", len(ids(list)))
			}
			var snap fakefrigate.Event
			for _, e := range demoEvents() {
				if e.HasSnapshot {
					snap = e
				}
			}
			h.mustOK(t, "frigate_get_event", map[string]any{"eventId": snap.ID})
			if res := h.raw(t, "frigate_get_event_snapshot", map[string]any{"eventId": snap.ID}); res.IsError {
				t.Errorf("snapshot: %v", res.Content)
			}
			if res := h.raw(t, "frigate_get_latest_frame", map[string]any{"camera": "driveway", "height": 240}); res.IsError {
				t.Errorf("latest frame: %v", res.Content)
			}
			search := h.mustOK(t, "frigate_search_events", with(window(), "query", "person"))
			want := "supported"
			if rel == fakefrigate.Release014 {
				want = "unsupported"
			}
			if search["semanticSearch"] != want || caps["capabilities"].(map[string]any)["semanticSearch"] != map[bool]string{true: "unsupported", false: "unknown"}[rel == fakefrigate.Release014] {
				t.Errorf("search %v, capabilities %v", search["semanticSearch"], caps["capabilities"])
			}
			assertNoSecrets(t, h)
		})
	}
}

func TestCapabilities(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.Version = "0.13.0-abcdef0" }})
	out := h.mustOK(t, "frigate_get_capabilities", nil)
	if out["compatibility"] != "unsupported" || out["capabilities"].(map[string]any)["systemStatus"] != "unknown" {
		t.Errorf("capabilities = %v", out)
	}
	labels := out["trackedLabels"].([]any)
	if len(labels) == 0 || out["semanticSearchConfigured"] != true || out["authMode"] != "managed_session" {
		t.Errorf("capabilities = %v", out)
	}
	if n := len(h.requests("snapshot")) + len(h.requests("latest")) + len(h.requests("/events")); n != 0 {
		t.Errorf("capability detection made %d event/media requests", n)
	}
}

func TestClassify(t *testing.T) {
	for v, want := range map[string]string{
		"0.18.0-5f6043a": "supported", "0.18.2": "supported", "0.17.2-3d4dd3a": "supported", "0.16.4": "supported",
		"0.15.2-3bda638": "supported", "0.14.1": "supported", "0.13.2": "unsupported", "0.18.2-XYZ": "unknown",
		"0.19.0": "unknown", "1.0.0": "unknown", "dev": "unknown",
	} {
		if got, _ := classify(v); got != want {
			t.Errorf("classify(%q) = %s, want %s", v, got, want)
		}
	}
	if _, notes := classify("0.14.1-f4f3cfa"); !strings.Contains(strings.Join(notes, " "), "no semantic search") {
		t.Errorf("0.14 notes: %v", notes)
	}
}

func TestDocTable(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.svc.CheckDocTable(t, "../../../docs/services/frigate.md")
}

func TestLoadSettings(t *testing.T) {
	pw := toolkittest.SecretFile(t, testPassword)
	tok := toolkittest.SecretFile(t, testToken)
	ca := toolkittest.SecretFile(t, "-----BEGIN CERTIFICATE-----")
	base := map[string]string{"FRIGATE_API_ROOT": "https://frigate.lan:8971/api", "FRIGATE_USERNAME": "viewer", "FRIGATE_PASSWORD_FILE": pw}
	tests := []struct {
		name    string
		env     map[string]string
		drop    []string
		wantErr string // "" means valid
		check   func(t *testing.T, s Settings)
	}{
		{name: "managed defaults", check: func(t *testing.T, s Settings) {
			if s.Auth != client.Managed || string(s.Password) != testPassword || s.Timeout.Milliseconds() != 15000 || s.PageSize != 50 ||
				s.MaxResponseBytes != 5<<20 || s.MaxWindow.Seconds() != 86400 || s.CookieName != "frigate_token" || s.Cameras != nil {
				t.Errorf("settings = %+v", s)
			}
		}},
		{name: "bearer", env: map[string]string{"FRIGATE_BEARER_TOKEN_FILE": tok}, drop: []string{"FRIGATE_USERNAME", "FRIGATE_PASSWORD_FILE"},
			check: func(t *testing.T, s Settings) {
				if s.Auth != client.Bearer || string(s.Token) != testToken {
					t.Errorf("settings = %+v", s)
				}
			}},
		{name: "unauthenticated with both flags", env: map[string]string{"FRIGATE_API_ROOT": "http://frigate:5000/api", "FRIGATE_TRUSTED_UNAUTHENTICATED": "true", "FRIGATE_ALLOW_INSECURE_HTTP": "true"},
			drop: []string{"FRIGATE_USERNAME", "FRIGATE_PASSWORD_FILE"},
			check: func(t *testing.T, s Settings) {
				if s.Auth != client.Unauthenticated || !s.AllowHTTP {
					t.Errorf("settings = %+v", s)
				}
			}},
		{name: "camera scope", env: map[string]string{"FRIGATE_CAMERAS": " front_door, driveway ,front_door"}, check: func(t *testing.T, s Settings) {
			if strings.Join(s.Cameras, ",") != "front_door,driveway" {
				t.Errorf("cameras = %v", s.Cameras)
			}
		}},
		{name: "seed CA variable is an alias", env: map[string]string{"FRIGATE_CA_CERT_FILE": ca}, check: func(t *testing.T, s Settings) {
			if s.CAFile != ca {
				t.Errorf("CAFile = %q", s.CAFile)
			}
		}},
		{name: "FRIGATE_URL is the base URL", env: map[string]string{"FRIGATE_URL": "https://frigate.lan:8971/"}, drop: []string{"FRIGATE_API_ROOT"},
			check: func(t *testing.T, s Settings) {
				if s.APIRoot.String() != "https://frigate.lan:8971/api" {
					t.Errorf("API root = %s", s.APIRoot)
				}
			}},
		{name: "FRIGATE_TOKEN_FILE", env: map[string]string{"FRIGATE_TOKEN_FILE": tok}, drop: []string{"FRIGATE_USERNAME", "FRIGATE_PASSWORD_FILE"},
			check: func(t *testing.T, s Settings) {
				if s.Auth != client.Bearer || string(s.Token) != testToken {
					t.Errorf("settings = %+v", s)
				}
			}},
		{name: "the duration timeout", env: map[string]string{"FRIGATE_TIMEOUT": "20s"}, check: func(t *testing.T, s Settings) {
			if s.Timeout != 20*time.Second {
				t.Errorf("timeout = %s", s.Timeout)
			}
		}},
		{name: "no credentials and no flag", drop: []string{"FRIGATE_USERNAME", "FRIGATE_PASSWORD_FILE"}, wantErr: "FRIGATE_TRUSTED_UNAUTHENTICATED"},
		{name: "plain http without opt-in", env: map[string]string{"FRIGATE_API_ROOT": "http://frigate:5000/api"}, wantErr: "FRIGATE_ALLOW_HTTP"},
		{name: "password in the environment", env: map[string]string{"FRIGATE_PASSWORD": testPassword}, wantErr: "FRIGATE_PASSWORD_FILE instead"},
		{name: "username without password", drop: []string{"FRIGATE_PASSWORD_FILE"}, wantErr: "FRIGATE_PASSWORD_FILE"},
		{name: "two modes", env: map[string]string{"FRIGATE_BEARER_TOKEN_FILE": tok}, wantErr: "choose one"},
		{name: "credentials with the unauthenticated flag", env: map[string]string{"FRIGATE_TRUSTED_UNAUTHENTICATED": "true"}, wantErr: "FRIGATE_TRUSTED_UNAUTHENTICATED"},
		{name: "timeout out of range", env: map[string]string{"FRIGATE_TIMEOUT_MS": "60001"}, wantErr: "FRIGATE_TIMEOUT_MS"},
		{name: "response cap may only be lowered", env: map[string]string{"FRIGATE_MAX_RESPONSE_BYTES": "6000000"}, wantErr: "FRIGATE_MAX_RESPONSE_BYTES"},
		{name: "page size out of range", env: map[string]string{"FRIGATE_EVENTS_PAGE_SIZE": "201"}, wantErr: "FRIGATE_EVENTS_PAGE_SIZE"},
		{name: "bad camera name", env: map[string]string{"FRIGATE_CAMERAS": "front door"}, wantErr: "FRIGATE_CAMERAS"},
		{name: "query on the API root", env: map[string]string{"FRIGATE_API_ROOT": "https://frigate.lan/api?x=1"}, wantErr: "query"},
		{name: "API root with credentials", env: map[string]string{"FRIGATE_API_ROOT": "https://u:" + testPassword + "@frigate.lan/api"}, wantErr: "user:password"},
		{name: "both CA variables", env: map[string]string{"FRIGATE_CA_FILE": "/a.pem", "FRIGATE_CA_CERT_FILE": "/b.pem"}, wantErr: "set only one"},
		{name: "missing URL", drop: []string{"FRIGATE_API_ROOT"}, wantErr: "FRIGATE_URL: is required"},
		{name: "both URL names", env: map[string]string{"FRIGATE_URL": "https://frigate.lan"}, wantErr: "FRIGATE_API_ROOT: is an older name of FRIGATE_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for _, k := range tc.drop {
				delete(env, k)
			}
			for k, v := range tc.env {
				env[k] = v
			}
			s, err := LoadSettings(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, s)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), testToken) {
				t.Errorf("error shows a secret: %v", err)
			}
		})
	}
}
