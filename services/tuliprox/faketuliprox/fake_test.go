package faketuliprox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
)

type served struct {
	url   string
	clock *fakeclock.Clock
	fake  *faketuliprox.Fake
}

func serve(t *testing.T, o faketuliprox.Options) served {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	o.Now = clock.Now
	f := faketuliprox.New(o)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return served{url: srv.URL + o.WebPath, clock: clock, fake: f}
}

func do(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func signIn(t *testing.T, s served, user, pass string) string {
	t.Helper()
	code, _, body := do(t, "POST", s.url+"/auth/token", "", `{"username":"`+user+`","password":"`+pass+`"}`)
	if code != 200 {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	var tr struct{ Token, Username string }
	if err := json.Unmarshal([]byte(body), &tr); err != nil || tr.Username != user {
		t.Fatalf("sign-in answer %s", body)
	}
	return tr.Token
}

// The sign-in and the permission layer answer as Tuliprox's do.
func TestAuthAnswersAsTuliprox(t *testing.T) {
	s := serve(t, faketuliprox.Options{WebPath: "/admin", TokenTTL: 10 * time.Minute})
	if code, _, _ := do(t, "POST", s.url+"/auth/token", "", `{"username":"assistant","password":"wrong"}`); code != 401 {
		t.Fatalf("wrong password: %d", code)
	}
	tok := signIn(t, s, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword)
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", tok, ""); code != 200 {
		t.Fatalf("status: %d", code)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", "", ""); code != 403 {
		t.Fatalf("no Authorization header: %d, want 403 (AuthBearer)", code)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/geoip/update", tok, ""); code != 403 {
		t.Fatalf("missing system.write: %d", code)
	}
	s.clock.Advance(11 * time.Minute)
	code, hdr, _ := do(t, "GET", s.url+"/api/v1/status", tok, "")
	if code != 401 || hdr.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("expired token: %d %q", code, hdr.Get("WWW-Authenticate"))
	}
	tok = signIn(t, s, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword)
	s.fake.RevokeTokens()
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", tok, ""); code != 401 {
		t.Fatalf("revoked token: %d", code)
	}
}

func TestWithoutWebAuthentication(t *testing.T) {
	s := serve(t, faketuliprox.Options{NoAuth: true})
	code, _, body := do(t, "POST", s.url+"/auth/token", "", `{"username":"","password":""}`)
	if code != 200 || strings.TrimSpace(body) != `{"token":"authorized","username":"admin"}` {
		t.Fatalf("%d %s", code, body)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/streams", "", ""); code != 200 {
		t.Fatalf("streams without a token: %d", code)
	}
}

// A queued update answers 409 until it has run; the status follows it.
func TestPlaylistUpdateQueue(t *testing.T) {
	s := serve(t, faketuliprox.Options{})
	tok := signIn(t, s, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword)
	state := func() string {
		_, _, body := do(t, "GET", s.url+"/api/v1/playlist/update/status", tok, "")
		var st struct{ State string }
		_ = json.Unmarshal([]byte(body), &st)
		return st.State
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `["nope"]`); code != 400 {
		t.Fatalf("unknown target: %d", code)
	}
	code, _, body := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `["main"]`)
	if code != 202 || !strings.Contains(body, `"run_id":1`) {
		t.Fatalf("update: %d %s", code, body)
	}
	if state() != "queued" {
		t.Fatal("not queued")
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `[]`); code != 409 {
		t.Fatalf("second update while queued: %d", code)
	}
	s.clock.Advance(faketuliprox.UpdateQueued)
	if state() != "running" {
		t.Fatal("not running")
	}
	s.clock.Advance(faketuliprox.UpdateRuns)
	if state() != "idle" {
		t.Fatal("not idle")
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `[]`); code != 202 {
		t.Fatalf("update after the run: %d", code)
	}
}

// Each release has the routes its source registers; a route it lacks
// answers 404 with an empty body (the Web UI's static-file fallback), or
// 405 for a POST.
func TestEachReleaseHasTheRoutesOfItsSource(t *testing.T) {
	seedOnly := []string{"/events/stats", "/playlist/update/status", "/playlist/sources", "/playlist/items?target=main&cluster=live",
		"/playlist/epg/channels?target=main", "/playlist/epg/channel?target=main&channel_id=zdf.de"}
	historyRoutes := []string{"/stream-history?from=2026-12-03", "/stream-history/summary?from=2026-12-03", "/qos-snapshots", "/qos-snapshots/sik-1001"}
	common := []string{"/status", "/streams", "/config", "/ipinfo"}
	cases := []struct {
		release     faketuliprox.Release
		has, hasNot []string
	}{
		{faketuliprox.ReleaseSeed, append(append(slices.Clone(common), historyRoutes...), seedOnly...), nil},
		{faketuliprox.ReleasePublic, append(slices.Clone(common), historyRoutes...), seedOnly},
		{faketuliprox.Release330, common, append(slices.Clone(historyRoutes), seedOnly...)},
	}
	for _, c := range cases {
		t.Run(string(c.release), func(t *testing.T) {
			s := serve(t, faketuliprox.Options{Release: c.release})
			tok := signIn(t, s, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword)
			for _, p := range c.has {
				if code, _, body := do(t, "GET", s.url+"/api/v1"+p, tok, ""); code != 200 {
					t.Errorf("%s: %d %s", p, code, body)
				}
			}
			for _, p := range c.hasNot {
				if code, _, body := do(t, "GET", s.url+"/api/v1"+p, tok, ""); code != 404 || body != "" {
					t.Errorf("%s: %d %q, want 404 without a body", p, code, body)
				}
			}
			if code, _, _ := do(t, "POST", s.url+"/api/v1/no/such/route", tok, "[]"); code != 405 {
				t.Errorf("POST to a missing route: %d, want 405", code)
			}
			_, _, body := do(t, "GET", s.url+"/api/v1/status", tok, "")
			if want := `"version":"` + string(c.release) + `"`; c.release != faketuliprox.ReleaseSeed && !strings.Contains(body, want) {
				t.Errorf("status %s lacks %s", body, want)
			}
		})
	}
}

// The released /stream-history takes from, to and filter fields only
// (stream_history_viewer.rs) and answers a bare array, oldest first.
func TestReleasedStreamHistoryAnswersAsItsSource(t *testing.T) {
	s := serve(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic})
	tok := signIn(t, s, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword)
	get := func(q string) (int, string) {
		code, _, body := do(t, "GET", s.url+"/api/v1/stream-history?"+q, tok, "")
		return code, body
	}
	refusals := []struct{ query, want string }{
		{"", "At least 'from' or 'to' must be specified"},
		{"from=2026-12-01&page=2", "Unknown filter field: 'page'"},
		{"from=2026-12-01&page_size=25", "Unknown filter field: 'page_size'"},
		{"from=2026-12-01&search=anna", "Unknown filter field: 'search'"},
		{"from=2026-12-01T10:00:00Z", "Invalid date format"},
		{"from=2026-12-03&to=2026-12-01", "is after"},
		{"from=2026-12-01&virtual_id=x", "expects a numeric value"},
		{"from=2026-12-01&title=~(", "Invalid regex"},
	}
	for _, r := range refusals {
		if code, body := get(r.query); code != 400 || !strings.Contains(body, r.want) || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("%q: %d %s, want 400 with %q", r.query, code, body, r.want)
		}
	}
	records := func(q string) []map[string]any {
		t.Helper()
		code, body := get(q)
		var out []map[string]any
		if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil {
			t.Fatalf("%q: %d %.200s", q, code, body)
		}
		return out
	}
	day := records("from=2026-12-03")
	if len(day) == 0 || len(day) == 60 {
		t.Fatalf("one day holds %d records", len(day))
	}
	for i, r := range day {
		if r["partition_day_utc"] != "2026-12-03" {
			t.Fatalf("from alone is one day; got %v", r["partition_day_utc"])
		}
		if i > 0 && r["event_ts_utc"].(float64) < day[i-1]["event_ts_utc"].(float64) {
			t.Fatal("not oldest first")
		}
	}
	if n := len(records("from=2026-11-01&to=2026-12-31")); n != 60 {
		t.Fatalf("%d records in range, want 60", n)
	}
	if n := len(records("from=2026-11-01&to=2026-12-31&api_username=CARLA")); n != 20 {
		t.Fatalf("exact filter ignoring case: %d, want 20", n)
	}
	if n := len(records("from=2026-11-01&to=2026-12-31&title=~^ZDF&api_username=anna")); n != 5 {
		t.Fatalf("regex filter ANDed with an exact one: %d", n)
	}
	if n := len(records("from=2026-11-01%2000:00&to=2026-12-03+11:00:00")); n == 0 || n == 60 {
		t.Fatalf("date-times: %d", n)
	}
}

// The released queue holds one waiting update: a request while one waits
// is answered 202 like any other and dropped.
func TestReleasedPlaylistUpdateDropsARequestWhileOneWaits(t *testing.T) {
	s := serve(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic})
	tok := signIn(t, s, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword)
	post := func(body string) (int, string) {
		code, _, b := do(t, "POST", s.url+"/api/v1/playlist/update", tok, body)
		return code, b
	}
	if code, body := post(`["main","Nope","ZZZ"]`); code != 400 || body != `{"error":"No target found for nope, zzz"}`+"\n" {
		t.Fatalf("unknown targets: %d %q", code, body)
	}
	for i, body := range []string{`["MAIN"]`, `["kids"]`, `["sports"]`} {
		if code, b := post(body); code != 202 || b != "" {
			t.Fatalf("request %d: %d %q, want 202 without a body", i, code, b)
		}
	}
	taken := s.fake.TakenUpdates()
	if len(taken) != 2 || taken[0][0] != "main" || taken[1][0] != "kids" || s.fake.DroppedUpdates() != 1 {
		t.Fatalf("taken %v, dropped %d: want main running, kids waiting, sports dropped", taken, s.fake.DroppedUpdates())
	}
	s.clock.Advance(faketuliprox.UpdateRuns) // main ends, kids starts
	if code, _ := post(`[]`); code != 202 || len(s.fake.TakenUpdates()) != 3 {
		t.Fatalf("a request while kids runs waits: %v", s.fake.TakenUpdates())
	}
}

// The released QoS list ignores target_name (it knows target_id only).
func TestReleasedQoSSnapshotsFilterByTargetIDOnly(t *testing.T) {
	for _, c := range []struct {
		release faketuliprox.Release
		byName  int
	}{{faketuliprox.ReleaseSeed, 4}, {faketuliprox.ReleasePublic, 7}} {
		s := serve(t, faketuliprox.Options{Release: c.release})
		tok := signIn(t, s, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword)
		count := func(q string) int {
			_, _, body := do(t, "GET", s.url+"/api/v1/qos-snapshots?"+q, tok, "")
			var out []any
			_ = json.Unmarshal([]byte(body), &out)
			return len(out)
		}
		if n := count("target_name=main"); n != c.byName {
			t.Errorf("%s: target_name=main gives %d, want %d", c.release, n, c.byName)
		}
		if n := count("target_id=2"); n != 3 {
			t.Errorf("%s: target_id=2 gives %d, want 3", c.release, n)
		}
		if n := count("limit=2"); n != 2 {
			t.Errorf("%s: limit=2 gives %d", c.release, n)
		}
	}
}
