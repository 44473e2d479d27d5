package arrapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolerr"
)

const testKey = "arrapi-test-key-0123456789abcdef"

func keyFile(t *testing.T, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func loader(env map[string]string) *config.Loader {
	return config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestLoadConfig(t *testing.T) {
	kf := keyFile(t, testKey)
	tests := []struct {
		name    string
		env     map[string]string
		ok      bool
		wantErr []string // substrings of the error; empty means no error
	}{
		{"unconfigured", map[string]string{}, false, nil},
		{"https", map[string]string{"SONARR_URL": "https://sonarr.lan:8989", "SONARR_API_KEY_FILE": kf}, true, nil},
		{"http with opt-in", map[string]string{"SONARR_URL": "http://nas:8989/sonarr", "SONARR_API_KEY_FILE": kf, "SONARR_ALLOW_HTTP": "true"}, true, nil},
		{"http without opt-in", map[string]string{"SONARR_URL": "http://nas:8989", "SONARR_API_KEY_FILE": kf}, true, []string{"SONARR_ALLOW_HTTP"}},
		{"url without key", map[string]string{"SONARR_URL": "https://sonarr.lan"}, true, []string{"SONARR_API_KEY_FILE"}},
		{"key without url", map[string]string{"SONARR_API_KEY_FILE": kf}, true, []string{"SONARR_URL"}},
		{"key in environment", map[string]string{"SONARR_API_KEY": testKey}, false, []string{"SONARR_API_KEY_FILE instead"}},
		{"bad timeout", map[string]string{"SONARR_URL": "https://s", "SONARR_API_KEY_FILE": kf, "SONARR_SEARCH_TIMEOUT": "soon"}, true, []string{"SONARR_SEARCH_TIMEOUT"}},
		{"userinfo url", map[string]string{"SONARR_URL": "https://u:" + testKey + "@s", "SONARR_API_KEY_FILE": kf}, true, []string{"SONARR_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := fromLoader(loader(tt.env), "sonarr", "/api/v3", nil)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if (c != nil) != tt.ok {
					t.Fatalf("configured = %v, want %v", c != nil, tt.ok)
				}
				if c != nil && string(c.Secret()) != testKey {
					t.Fatal("key not read from the file")
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error shows the key: %v", err)
			}
		})
	}
}

// fakeApp answers like an *arr application and records how it was called.
type fakeApp struct {
	hits    atomic.Int32
	lastURL atomic.Value
}

func (f *fakeApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	f.lastURL.Store(r.URL.String())
	if r.Header.Get("X-Api-Key") != testKey {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/base/api/v3/system/status":
		_, _ = w.Write([]byte(`{"appName":"Sonarr","version":"4.0.14.2939","startupPath":"/app","authentication":"forms","isDocker":true}`))
	case "/base/api/v3/health":
		_, _ = w.Write([]byte(`[{"id":1,"source":"IndexerStatusCheck","type":"warning","message":"Indexers unavailable","wikiUrl":"https://wiki.servarr.com/x"}]`))
	case "/base/api/v3/diskspace":
		_, _ = w.Write([]byte(`[{"id":1,"path":"/tv","label":"tv","freeSpace":100,"totalSpace":1000}]`))
	case "/base/api/v3/command/7":
		_, _ = w.Write([]byte(`{"id":7,"name":"EpisodeSearch","commandName":"Episode Search","status":"completed","result":"successful","queued":"2024-01-01T00:00:00Z","trigger":"manual","body":{"episodeIds":[1]}}`))
	case "/base/api/v3/command":
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": 8, "name": body["name"], "status": "queued"})
	case "/base/api/v3/wanted/missing":
		_, _ = w.Write([]byte(`{"page":2,"pageSize":1,"sortKey":"airDateUtc","sortDirection":"descending","totalRecords":5,"records":[{"id":3}]}`))
	case "/base/api/v3/boom":
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"message":"secret stack ` + testKey + `"}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func startFake(t *testing.T, key string) (*Client, *fakeApp) {
	t.Helper()
	f := &fakeApp{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(Config{App: "sonarr", URL: srv.URL + "/base", APIKey: []byte(key), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

func TestClientCalls(t *testing.T) {
	ctx := context.Background()
	c, f := startFake(t, testKey)

	st, err := c.SystemStatus(ctx)
	if err != nil || st.AppName != "Sonarr" || st.Version != "4.0.14.2939" || !st.IsDocker {
		t.Fatalf("status %+v %v", st, err)
	}
	if u, _ := f.lastURL.Load().(string); strings.Contains(strings.ToLower(u), "apikey") || strings.Contains(u, testKey) {
		t.Fatalf("API key in the URL: %s", u)
	}
	h, err := c.Health(ctx)
	if err != nil || len(h) != 1 || h[0].Type != "warning" || h[0].Source != "IndexerStatusCheck" {
		t.Fatalf("health %+v %v", h, err)
	}
	d, err := c.DiskSpace(ctx)
	if err != nil || len(d) != 1 || d[0].FreeSpace != 100 || d[0].TotalSpace != 1000 {
		t.Fatalf("diskspace %+v %v", d, err)
	}
	cmd, err := c.Command(ctx, 7)
	if err != nil || cmd.Status != "completed" || cmd.Result != "successful" || cmd.Name != "EpisodeSearch" {
		t.Fatalf("command %+v %v", cmd, err)
	}
	started, err := c.StartCommand(ctx, map[string]any{"name": "EpisodeSearch", "episodeIds": []int{1}})
	if err != nil || started.ID != 8 || started.Name != "EpisodeSearch" {
		t.Fatalf("start %+v %v", started, err)
	}
	var page Page[struct {
		ID int `json:"id"`
	}]
	if err := c.Get(ctx, "/wanted/missing", PageQuery(2, 1, "airDateUtc", "descending"), &page); err != nil {
		t.Fatal(err)
	}
	if page.TotalRecords != 5 || page.Page != 2 || len(page.Records) != 1 || page.Records[0].ID != 3 {
		t.Fatalf("page %+v", page)
	}
	if u, _ := f.lastURL.Load().(string); !strings.Contains(u, "page=2") || !strings.Contains(u, "pageSize=1") {
		t.Fatalf("paging query not sent: %s", u)
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	good, _ := startFake(t, testKey)
	bad, _ := startFake(t, "wrong-key-0123456789")

	// An address nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down, err := New(Config{App: "sonarr", URL: "http://" + addr, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		call   func() error
		code   toolerr.Code
		status int
		msg    string
	}{
		{"401", func() error { _, err := bad.Health(ctx); return err }, toolerr.AuthFailed, 401, "check the API key in SONARR_API_KEY_FILE"},
		{"404", func() error { return good.Get(ctx, "/nope", nil, nil) }, toolerr.NotFound, 404, "Sonarr has no such item"},
		{"404 command", func() error { _, err := good.Command(ctx, 99); return err }, toolerr.NotFound, 404, "no command 99"},
		{"bad command id", func() error { _, err := good.Command(ctx, 0); return err }, toolerr.InvalidArgument, 0, "positive"},
		{"500", func() error { return good.Get(ctx, "/boom", nil, nil) }, toolerr.UpstreamUnavailable, 500, "Sonarr"},
		{"unreachable", func() error { _, err := down.SystemStatus(ctx); return err }, toolerr.UpstreamUnavailable, 0, "SONARR_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if toolerr.CodeOf(err) != tt.code || Status(err) != tt.status {
				t.Fatalf("got %v (status %d), want %s/%d", err, Status(err), tt.code, tt.status)
			}
			msg := toolerr.MessageOf(err)
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q does not contain %q", msg, tt.msg)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error carries the key: %v", err)
			}
		})
	}
}

func TestSlowNeverRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c, err := New(Config{App: "sonarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.GetSlow(context.Background(), "/release", nil, nil); toolerr.CodeOf(err) != toolerr.UpstreamUnavailable {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Fatalf("slow search sent %d requests, want 1", hits.Load())
	}
}

func TestScrub(t *testing.T) {
	in := map[string]any{
		"title":       "Show.S01E01.1080p",
		"downloadUrl": "http://prowlarr:9696/1/download?apikey=" + testKey + "&link=abc",
		"magnetUrl":   "magnet:?xt=urn:btih:abc",
		"infoUrl":     "https://tracker/details/1",
		"guid":        "https://tracker/dl/1?passkey=p4ss",
		"nested":      []any{map[string]any{"DownloadURL": "x", "note": "magnet:?xt=urn:btih:def", "ok": "https://tvdb.com/series/1"}},
		"size":        float64(10),
	}
	out := Scrub(in).(map[string]any)
	raw, _ := json.Marshal(out)
	for _, leak := range []string{testKey, "magnet:", "passkey", "download?", "tracker/details"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("scrubbed value still holds %q: %s", leak, raw)
		}
	}
	if out["title"] != "Show.S01E01.1080p" || out["size"] != float64(10) || out["guid"] != Removed {
		t.Fatalf("scrub changed or missed plain members: %s", raw)
	}
	if n := out["nested"].([]any)[0].(map[string]any); n["ok"] != "https://tvdb.com/series/1" || n["note"] != Removed {
		t.Fatalf("nested: %v", n)
	}
	if in["downloadUrl"] == nil {
		t.Fatal("Scrub modified its input")
	}
}

func TestSensitiveLinkAndGUID(t *testing.T) {
	tests := []struct {
		s         string
		sensitive bool
	}{
		{"abc-123", false},
		{"https://indexer/details/123", false},
		{"https://indexer/details?id=123", false},
		{"https://indexer/getnzb?id=1&apikey=k", true},
		{"https://indexer/dl?id=1&r=k&passkey=p", true},
		{"https://user:pw@indexer/x", true},
		{"MAGNET:?xt=urn:btih:abc", true},
		{"https://i/x?access_token=a", true},
	}
	for _, tt := range tests {
		if got := SensitiveLink(tt.s); got != tt.sensitive {
			t.Errorf("SensitiveLink(%q) = %v", tt.s, got)
		}
		pub := PublicGUID(tt.s)
		if tt.sensitive == (pub == tt.s) {
			t.Errorf("PublicGUID(%q) = %q", tt.s, pub)
		}
		if !MatchGUID(pub, tt.s) {
			t.Errorf("MatchGUID(%q, %q) = false", pub, tt.s)
		}
		if MatchGUID(pub+"x", tt.s) || MatchGUID("", tt.s) {
			t.Errorf("MatchGUID accepted a different GUID for %q", tt.s)
		}
	}
}

func TestReady(t *testing.T) {
	ctx := context.Background()
	ok := Check{App: "sonarr", Ready: func(context.Context) error { return nil }}
	fail := Check{App: "radarr", Ready: func(context.Context) error { return toolerr.New(toolerr.AuthFailed, "Radarr rejected the API key") }}
	tests := []struct {
		name   string
		checks []Check
		want   string
	}{
		{"none configured", []Check{{}, {}}, "no application configured"},
		{"all ready", []Check{ok, {}}, ""},
		{"one failing", []Check{ok, fail}, "radarr: auth_failed"},
	}
	for _, tt := range tests {
		err := Ready(tt.checks)(ctx)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	var nilClient *Client
	if nilClient.Check().Ready != nil || nilClient.Secret() != nil {
		t.Fatal("nil client must give a zero check and no secret")
	}
	c, _ := startFake(t, testKey)
	if err := Ready([]Check{c.Check()})(ctx); err != nil {
		t.Fatal(err)
	}
	bad, _ := startFake(t, "wrong-key-0123456789")
	if err := Ready([]Check{bad.Check()})(ctx); !errors.Is(err, toolerr.New(toolerr.AuthFailed, "")) {
		t.Fatalf("bad key: %v", err)
	}
}
