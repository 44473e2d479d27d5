package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scrape fetches the exposition text over loopback.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExposition(t *testing.T) {
	m := New()
	m.ObserveCall("sonarr", "list_series", "allow", "ok", 3*time.Millisecond)
	m.ObserveCall("sonarr", "list_series", "allow", "ok", 40*time.Millisecond)
	m.ObserveCall("sonarr", "add_series", "confirm", "pending", 2*time.Second)
	m.ObserveCall("homeassistant", "unlock_door", "deny", "denied", 200*time.Microsecond)
	m.ObserveCall("homeassistant", strings.Repeat("t", 65), "deny", "denied", time.Millisecond)
	m.ObserveCall("homeassistant", "rm -rf /", "deny", "denied", time.Millisecond)
	m.Ticket("issued")
	m.Ticket("issued")
	m.Ticket("confirmed")
	m.Ticket("made-up")
	m.ServiceUp("sonarr", true)
	m.ServiceUp("frigate", true)
	m.ServiceUp("frigate", false)

	text := scrape(t, m)
	tests := []struct{ name, series string }{
		{"calls counted", `toolgate_calls_total{decision="allow",outcome="ok",service="sonarr",tool="list_series"} 2`},
		{"other call", `toolgate_calls_total{decision="confirm",outcome="pending",service="sonarr",tool="add_series"} 1`},
		{"deny", `toolgate_calls_total{decision="deny",outcome="denied",service="homeassistant",tool="unlock_door"} 1`},
		{"long and odd tools folded", `toolgate_calls_total{decision="deny",outcome="denied",service="homeassistant",tool="_other"} 2`},
		{"half-millisecond bucket", `toolgate_call_duration_seconds_bucket{service="homeassistant",le="0.0005"} 1`},
		{"5ms bucket", `toolgate_call_duration_seconds_bucket{service="sonarr",le="0.005"} 1`},
		{"50ms bucket", `toolgate_call_duration_seconds_bucket{service="sonarr",le="0.05"} 2`},
		{"2.5s bucket", `toolgate_call_duration_seconds_bucket{service="sonarr",le="2.5"} 3`},
		{"60s bucket", `toolgate_call_duration_seconds_bucket{service="sonarr",le="60"} 3`},
		{"histogram count", `toolgate_call_duration_seconds_count{service="sonarr"} 3`},
		{"histogram sum", `toolgate_call_duration_seconds_sum{service="sonarr"} 2.043`},
		{"tickets issued", `toolgate_tickets_total{event="issued"} 2`},
		{"tickets confirmed", `toolgate_tickets_total{event="confirmed"} 1`},
		{"known ticket event starts at zero", `toolgate_tickets_total{event="expired"} 0`},
		{"unknown ticket event folded", `toolgate_tickets_total{event="_other"} 1`},
		{"service up", `toolgate_service_up{service="sonarr"} 1`},
		{"service down", `toolgate_service_up{service="frigate"} 0`},
		{"go collector", `go_goroutines `},
		{"process collector", `process_resident_memory_bytes `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !hasLine(text, tc.series) {
				t.Errorf("exposition lacks %s", tc.series)
			}
		})
	}
	for _, raw := range []string{strings.Repeat("t", 65), "rm -rf", "made-up"} {
		if strings.Contains(text, raw) {
			t.Errorf("raw label value %q reached the exposition", raw)
		}
	}
}

// hasLine reports whether text has the line want; a want ending in a space
// matches any value.
func hasLine(text, want string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == want || (strings.HasSuffix(want, " ") && strings.HasPrefix(l, want)) {
			return true
		}
	}
	return false
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"list_series", "list_series"},
		{"ha.light-toggle_2", "ha.light-toggle_2"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), Other},
		{"", Other},
		{"has space", Other},
		{"quote\"", Other},
		{"new\nline", Other},
		{"ünïcode", Other},
		{"slash/tool", Other},
	}
	for _, tc := range tests {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestToolCardinalityBounded(t *testing.T) {
	m := New()
	for i := range MaxTools + 50 {
		m.ObserveCall("sonarr", fmt.Sprintf("tool%d", i), "deny", "denied", time.Millisecond)
	}
	// A tool seen before the cap keeps its own series afterwards.
	m.ObserveCall("sonarr", "tool0", "deny", "denied", time.Millisecond)

	text := scrape(t, m)
	tools := regexp.MustCompile(`(?m)^toolgate_calls_total\{.*tool="([^"]+)"\}`).FindAllStringSubmatch(text, -1)
	if len(tools) != MaxTools+1 {
		t.Fatalf("%d tool series, want %d (cap plus %s)", len(tools), MaxTools+1, Other)
	}
	for _, s := range []string{
		`toolgate_calls_total{decision="deny",outcome="denied",service="sonarr",tool="_other"} 50`,
		`toolgate_calls_total{decision="deny",outcome="denied",service="sonarr",tool="tool0"} 2`,
	} {
		if !hasLine(text, s) {
			t.Errorf("exposition lacks %s", s)
		}
	}
}

func TestInstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.ObserveCall("sonarr", "list_series", "allow", "ok", time.Millisecond)
	if strings.Contains(scrape(t, b), "toolgate_calls_total{") {
		t.Fatal("second instance sees the first one's calls")
	}
}

// TestSessionFiguresAreReadAtScrape: the session series show what the
// store reports at each scrape (one read per scrape), the eviction counter
// has exactly its two cap series from the start, and the figures can be
// watched only once.
func TestSessionFiguresAreReadAtScrape(t *testing.T) {
	m := New()
	// Set by the test, read by the scrape's goroutine.
	var now atomic.Pointer[Sessions]
	var reads atomic.Int64
	now.Store(&Sessions{})
	if err := m.WatchSessions(func() Sessions { reads.Add(1); return *now.Load() }); err != nil {
		t.Fatal(err)
	}
	scrapes := []struct {
		name  string
		state Sessions
		want  []string
	}{
		{
			name: "nothing yet: every series at zero",
			want: []string{
				`toolgate_sessions_open 0`,
				`toolgate_sessions_evicted_total{cap="per_client"} 0`,
				`toolgate_sessions_evicted_total{cap="total"} 0`,
				`toolgate_session_initializes_refused_total 0`,
			},
		},
		{
			name:  "sessions opened, evicted and refused",
			state: Sessions{Open: 7, EvictedPerClient: 3, EvictedTotal: 2, InitializesRefused: 5},
			want: []string{
				`toolgate_sessions_open 7`,
				`toolgate_sessions_evicted_total{cap="per_client"} 3`,
				`toolgate_sessions_evicted_total{cap="total"} 2`,
				`toolgate_session_initializes_refused_total 5`,
			},
		},
		{
			name:  "sessions closed",
			state: Sessions{Open: 1, EvictedPerClient: 3, EvictedTotal: 2, InitializesRefused: 5},
			want:  []string{`toolgate_sessions_open 1`},
		},
	}
	for i, sc := range scrapes {
		t.Run(sc.name, func(t *testing.T) {
			now.Store(&sc.state)
			text := scrape(t, m)
			if n := reads.Load(); n != int64(i+1) {
				t.Errorf("%d reads after %d scrapes", n, i+1)
			}
			for _, want := range sc.want {
				if !hasLine(text, want) {
					t.Errorf("exposition lacks %s", want)
				}
			}
			for _, want := range []string{
				"# TYPE toolgate_sessions_open gauge",
				"# TYPE toolgate_sessions_evicted_total counter",
				"# TYPE toolgate_session_initializes_refused_total counter",
			} {
				if !hasLine(text, want) {
					t.Errorf("exposition lacks %s", want)
				}
			}
			if n := strings.Count(text, "\ntoolgate_sessions_evicted_total{"); n != 2 {
				t.Errorf("%d eviction series, want 2", n)
			}
		})
	}
	if err := m.WatchSessions(func() Sessions { return Sessions{} }); err == nil {
		t.Error("the session figures were registered twice")
	}
}
