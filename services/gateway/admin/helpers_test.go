package admin

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

const testToken = "admin-token-0123456789abcdef"

// events records metric events.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) Ticket(event string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, event)
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// env is an admin API over real stores, served on loopback.
type env struct {
	clock   *fakeclock.Clock
	tickets *tickets.Store
	pins    *pins.Store
	events  *events
	logs    *capture.Buffer
	srv     *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		clock:  fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		events: &events{},
		logs:   &capture.Buffer{},
	}
	e.tickets = tickets.NewStore(e.clock.Now, 100, 0)
	ps, err := pins.Load("")
	if err != nil {
		t.Fatal(err)
	}
	e.pins = ps
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := NewHandler([]byte(testToken+"\n"), e.tickets, e.pins, e.events, logger)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

func binding(tool string) tickets.Binding {
	return tickets.Binding{Client: "openwebui", User: "alice", Service: "homeassistant", Tool: tool, ArgsDigest: "d-" + tool}
}

// issue creates a ticket with a small preview.
func (e *env) issue(t *testing.T, tool string, approvalKind approval.Kind) tickets.Ticket {
	t.Helper()
	tk, err := e.tickets.Issue(binding(tool), "pd-"+tool, approvalKind, 10*time.Minute,
		json.RawMessage(`{"entity":"lock.front_door","from":"locked","to":"unlocked"}`))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	var e ErrorReply
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", r.body, err)
	}
	return string(e.Error.Code)
}

// call sends a request with the given Authorization header value (none when
// empty).
func (e *env) call(t *testing.T, method, path, authz, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// do sends an authorized request.
func (e *env) do(t *testing.T, method, path, body string) reply {
	t.Helper()
	return e.call(t, method, path, "Bearer "+testToken, body)
}

func newServerFor(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
