package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/sessions"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

// initialize sends one initialize for clientName straight into the
// gateway's handler (authentication, envelope, rate limit, MCP server)
// without a network round trip, so a test can afford thousands.
func (h *harness) initialize(clientName string) *httptest.ResponseRecorder {
	h.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initializeBody))
	req.Header.Set("Authorization", "Bearer "+h.tokens[clientName])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.gw.Public.ServeHTTP(rec, req)
	return rec
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSessionFloodIsBounded: a client whose groups allow nothing sends
// 20,000 initializes (fast enough for its rate limit). The gateway keeps
// only that client's cap of sessions, its memory stops growing, and another
// client's session opened before the flood is still served, as is a new one.
func TestSessionFloodIsBounded(t *testing.T) {
	const perClient, total = 64, 100
	h := newHarness(t, func(c *app.Config) {
		c.Sessions = sessions.Config{PerClient: perClient, Total: total, InitializesPerMinute: 60_000, InitializeBurst: 100}
	})
	legacy := client.WithProtocolVersion(mcp.ProtocolVersion20251125)
	early := h.client("hermes", "", "/mcp", legacy)

	flood := func(n int) error {
		for range n {
			h.clock.Advance(time.Millisecond) // 1,000 a second: within the rate
			if rec := h.initialize("stranger"); rec.Code != http.StatusOK || rec.Header().Get("Mcp-Session-Id") == "" {
				return fmt.Errorf("initialize: HTTP %d %s", rec.Code, rec.Body)
			}
		}
		return nil
	}
	base := heapInUse()
	if err := flood(1_000); err != nil {
		t.Fatal(err)
	}
	afterFirst := heapInUse()
	// The other 19,000 from four connections at once.
	var g errgroup.Group
	for range 4 {
		g.Go(func() error { return flood(19_000 / 4) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	after := heapInUse()
	if n := h.gw.Sessions.CountFor("stranger"); n != perClient { // 1,000 + 4 × 4,750 opened
		t.Fatalf("the flooding client holds %d sessions, want its cap %d", n, perClient)
	}
	if n := h.gw.Sessions.Count(); n > total {
		t.Fatalf("%d sessions, over the total of %d", n, total)
	}
	// Memory after 20,000 initializes is what it was after 1,000 (without
	// the cap it grew about 10 KB per session, 20 times as much).
	grewFirst, grewAll := int64(afterFirst)-int64(base), int64(after)-int64(base)
	t.Logf("heap grew %d bytes over the first 1,000 initializes, %d over all 20,000", grewFirst, grewAll)
	if limit := 2 * max(grewFirst, 1<<20); grewAll > limit {
		t.Fatalf("heap grew %d bytes over 20,000 initializes, %d over the first 1,000: sessions are kept", grewAll, grewFirst)
	}

	// The other client is still served: its session from before the flood
	// and a new one.
	if _, err := early.ListTools(t.Context(), mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("a session from before the flood was lost: %v", err)
	}
	if got, isErr := call(t, h.client("hermes", "", "/mcp", legacy), "demo_echo", map[string]any{"text": "still here"}); isErr || got["text"] != "still here" {
		t.Fatalf("another client is not served after the flood: %v", got)
	}
}

// TestTooManyInitializesAnswer429: over its budget a client is told to wait
// (HTTP 429 with Retry-After) and opens no session; another client is not
// affected, and after the wait the first may initialize again.
func TestTooManyInitializesAnswer429(t *testing.T) {
	h := newHarness(t) // defaults: 120 a minute, a burst of 64
	for i := range sessions.DefaultInitializeBurst {
		if rec := h.initialize("stranger"); rec.Code != http.StatusOK {
			t.Fatalf("initialize %d of the burst: HTTP %d %s", i+1, rec.Code, rec.Body)
		}
	}
	held := h.gw.Sessions.CountFor("stranger")
	rec := h.initialize("stranger")
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("over the budget: HTTP %d %s", rec.Code, rec.Body)
	}
	wait, code, msg := refusal(t, rec)
	if !strings.Contains(msg, "too many new sessions") {
		t.Fatalf("unclear answer (%d): %s", code, rec.Body)
	}
	if h.gw.Sessions.CountFor("stranger") != held || rec.Header().Get("Mcp-Session-Id") != "" {
		t.Fatal("a refused initialize opened a session")
	}
	if rec := h.initialize("hermes"); rec.Code != http.StatusOK {
		t.Fatalf("another client was limited: HTTP %d", rec.Code)
	}
	h.clock.Advance(time.Duration(wait) * time.Second)
	if rec := h.initialize("stranger"); rec.Code != http.StatusOK {
		t.Fatalf("after Retry-After: HTTP %d %s", rec.Code, rec.Body)
	}
}

// TestASessionServesOnlyTheClientThatOpenedIt: another token cannot use,
// listen on or end a client's session.
func TestASessionServesOnlyTheClientThatOpenedIt(t *testing.T) {
	h := newHarness(t)
	rec := h.initialize("openwebui")
	id := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || id == "" {
		t.Fatalf("initialize: HTTP %d", rec.Code)
	}
	send := func(clientName, method, body string) int {
		req := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+h.tokens[clientName])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		rec := httptest.NewRecorder()
		h.gw.Public.ServeHTTP(rec, req)
		return rec.Code
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if code := send("hermes", http.MethodPost, list); code != http.StatusNotFound {
		t.Fatalf("another client used the session: HTTP %d", code)
	}
	if code := send("hermes", http.MethodGet, ""); code != http.StatusNotFound {
		t.Fatalf("another client listened on the session: HTTP %d", code)
	}
	if code := send("hermes", http.MethodDelete, ""); code == http.StatusOK {
		t.Fatal("another client ended the session")
	}
	if code := send("openwebui", http.MethodPost, list); code != http.StatusOK {
		t.Fatalf("the owner lost its session: HTTP %d", code)
	}
}

// TestMetricsReportSessions: /metrics shows the sessions held (falling when
// a client ends one and when idle ones are pruned), the sessions evicted
// under each cap and the initializes refused with 429, as they happen
// through the gateway's own handler.
func TestMetricsReportSessions(t *testing.T) {
	h := newHarness(t, func(c *app.Config) {
		c.Sessions = sessions.Config{PerClient: 2, Total: 3, InitializesPerMinute: 1, InitializeBurst: 3}
	})
	ids := map[string][]string{}
	initialize := func(clientName string, want int) func(t *testing.T) {
		return func(t *testing.T) {
			h.clock.Advance(time.Second) // a strict order of use
			rec := h.initialize(clientName)
			if rec.Code != want {
				t.Fatalf("initialize of %s: HTTP %d %s", clientName, rec.Code, rec.Body)
			}
			if id := rec.Header().Get("Mcp-Session-Id"); id != "" {
				ids[clientName] = append(ids[clientName], id)
			}
		}
	}
	steps := []struct {
		name                            string
		do                              func(t *testing.T)
		open, perClient, total, refused int
	}{
		{"nothing yet", func(*testing.T) {}, 0, 0, 0, 0},
		{"two sessions opened", func(t *testing.T) {
			initialize("openwebui", http.StatusOK)(t)
			initialize("openwebui", http.StatusOK)(t)
		}, 2, 0, 0, 0},
		{"a client over its cap evicts its oldest", initialize("openwebui", http.StatusOK), 2, 1, 0, 0},
		{"another client's session", initialize("hermes", http.StatusOK), 3, 1, 0, 0},
		{"a full gateway evicts", initialize("hermes", http.StatusOK), 3, 1, 1, 0},
		{"an initialize over the rate is refused", initialize("openwebui", http.StatusTooManyRequests), 3, 1, 1, 1},
		{"a session its client ends", func(t *testing.T) {
			live := ids["hermes"][len(ids["hermes"])-1]
			req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+h.tokens["hermes"])
			req.Header.Set("Mcp-Session-Id", live)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			rec := httptest.NewRecorder()
			h.gw.Public.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("DELETE: HTTP %d %s", rec.Code, rec.Body)
			}
		}, 2, 1, 1, 1},
		{"idle sessions pruned", func(t *testing.T) {
			h.clock.Advance(sessions.DefaultIdleTTL + time.Minute)
			if n := h.gw.Sessions.Prune(); n != 2 {
				t.Fatalf("pruned %d", n)
			}
		}, 0, 1, 1, 1},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do(t)
			text := scrapeMetrics(t, h)
			for _, want := range []string{
				fmt.Sprintf("toolgate_sessions_open %d", st.open),
				fmt.Sprintf(`toolgate_sessions_evicted_total{cap="per_client"} %d`, st.perClient),
				fmt.Sprintf(`toolgate_sessions_evicted_total{cap="total"} %d`, st.total),
				fmt.Sprintf("toolgate_session_initializes_refused_total %d", st.refused),
			} {
				if !slices.Contains(strings.Split(text, "\n"), want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

// scrapeMetrics reads the gateway's /metrics over the network.
func scrapeMetrics(t *testing.T, h *harness) string {
	t.Helper()
	res, err := http.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d %v", res.StatusCode, err)
	}
	return string(b)
}

// heldWriter is the response writer of an initialize held in flight: it
// blocks when the gateway writes the status until release is closed, so
// the initialize has not finished (its session is still opening).
type heldWriter struct {
	*httptest.ResponseRecorder
	writing chan<- struct{}
	release <-chan struct{}
	wrote   bool
}

func (w *heldWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.writing <- struct{}{}
	<-w.release
	w.ResponseRecorder.WriteHeader(code)
}

func (w *heldWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseRecorder.Write(b)
}

// TestInitializesInFlightPastTheCapAnswer429: while a client has as many
// initializes in flight as it may hold sessions, a further one opens no
// session and is told to retry (HTTP 429, Retry-After, a JSON-RPC error,
// counted as refused), never a 200 whose session the gateway does not
// know; below the cap, and once those finish, initializes open sessions.
func TestInitializesInFlightPastTheCapAnswer429(t *testing.T) {
	const perClient = 2
	cases := []struct {
		name     string
		inFlight int
		want     int
	}{
		{"below the cap opens a session", perClient - 1, http.StatusOK},
		{"at the cap is refused with 429", perClient, http.StatusTooManyRequests},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *app.Config) {
				c.Sessions = sessions.Config{PerClient: perClient, InitializesPerMinute: 60_000, InitializeBurst: 100}
			})
			writing, release := make(chan struct{}), make(chan struct{})
			held := make([]*httptest.ResponseRecorder, tc.inFlight)
			var g errgroup.Group
			for i := range held {
				held[i] = httptest.NewRecorder()
				w := &heldWriter{ResponseRecorder: held[i], writing: writing, release: release}
				g.Go(func() error {
					req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initializeBody))
					req.Header.Set("Authorization", "Bearer "+h.tokens["stranger"])
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					h.gw.Public.ServeHTTP(w, req)
					return nil
				})
			}
			for range tc.inFlight {
				<-writing // every held initialize has opened its session
			}

			rec := h.initialize("stranger")
			close(release)
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			id := rec.Header().Get("Mcp-Session-Id")
			if rec.Code != tc.want {
				t.Fatalf("initialize with %d in flight: HTTP %d, session %q, %s", tc.inFlight, rec.Code, id, rec.Body)
			}
			for i, w := range held {
				if w.Code != http.StatusOK || w.Header().Get("Mcp-Session-Id") == "" {
					t.Fatalf("held initialize %d: HTTP %d %s", i+1, w.Code, w.Body)
				}
			}
			refused := 0
			if tc.want == http.StatusTooManyRequests {
				refused = 1
				if _, code, msg := refusal(t, rec); code != -32000 || !strings.Contains(msg, "retry after") {
					t.Fatalf("unclear answer: %s", rec.Body)
				}
				if id != "" {
					t.Fatalf("a refused initialize named session %q", id)
				}
				// Once the held ones finished, the client may open again
				// (its oldest session makes room).
				if rec := h.initialize("stranger"); rec.Code != http.StatusOK || rec.Header().Get("Mcp-Session-Id") == "" {
					t.Fatalf("after the held initializes finished: HTTP %d %s", rec.Code, rec.Body)
				}
			} else if id == "" {
				t.Fatal("no session id")
			}
			if got := h.gw.Sessions.CountFor("stranger"); got > perClient {
				t.Fatalf("client holds %d sessions, cap %d", got, perClient)
			}
			if got := h.gw.Sessions.Stats().InitializesRefused; got != uint64(refused) {
				t.Fatalf("refused = %d, want %d", got, refused)
			}
			if !slices.Contains(strings.Split(scrapeMetrics(t, h), "\n"), fmt.Sprintf("toolgate_session_initializes_refused_total %d", refused)) {
				t.Fatalf("/metrics does not show %d refused", refused)
			}
		})
	}
}

// refusal checks a refused initialize's Retry-After (1–60 s) and returns
// it with the JSON-RPC error code and message; an unreadable body fails the
// test.
func refusal(t *testing.T, rec *httptest.ResponseRecorder) (wait, code int, msg string) {
	t.Helper()
	wait, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || wait < 1 || wait > 60 {
		t.Fatalf("Retry-After = %q", rec.Header().Get("Retry-After"))
	}
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("unclear answer: %s", rec.Body)
	}
	return wait, body.Error.Code, body.Error.Message
}
