package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// stubExplainer answers from a table and records what it was asked.
type stubExplainer struct {
	mu    sync.Mutex
	asked []Question
}

func (s *stubExplainer) Explain(_ context.Context, q Question) (router.Explanation, error) {
	s.mu.Lock()
	s.asked = append(s.asked, q)
	s.mu.Unlock()
	switch q.Tool {
	case "demo_counter_reset":
		return router.Explanation{Tool: q.Tool, Service: "demo", Write: true, Person: true, FactsMayRaise: true,
			Decision: &policy.Decision{Decision: policy.Confirm, Reason: "destructive write needs human approval", ReasonID: "needs_person:destructive", Approval: approval.Human, TTLSeconds: 600}}, nil
	case "hidden\x1b[2J":
		return router.Explanation{Tool: q.Tool, Refused: "not_visible", Code: toolerr.NotFound, Message: "no such tool on this endpoint"}, nil
	}
	return router.Explanation{}, toolerr.New(toolerr.NotFound, "no client named %q in the tokens file", q.Client)
}

func newExplainEnv(t *testing.T) (*env, *stubExplainer) {
	t.Helper()
	e := newCLIEnv(t)
	x := &stubExplainer{}
	h, err := NewHandler([]byte(testToken), e.tickets, e.pins, e.events, slog.New(slog.DiscardHandler), WithExplainer(x))
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e, x
}

// policy explain sends the question as given and prints the decision,
// its reason and id, and whether a person is asked, escaped for the
// terminal; --json prints the explanation itself.
func TestCLIPolicyExplain(t *testing.T) {
	e, x := newExplainEnv(t)
	out, err := run(t, e, "policy", "explain", "--client", "openwebui", "--user", "ann@example.org", "--role", "user",
		"--endpoint", "/mcp/demo", "demo_counter_reset", `{"why":"tidy up"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"caller    openwebui, end user ann@example.org (role user)", "endpoint  /mcp/demo",
		"tool      demo_counter_reset on demo (a write)", "decision  confirm: destructive write needs human approval (needs_person:destructive)",
		"a person  is asked", "note      what the preview reports"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if q := x.asked[0]; q.Client != "openwebui" || q.User != "ann@example.org" || q.Role != "user" || q.Endpoint != "/mcp/demo" || string(q.Args) != `{"why":"tidy up"}` {
		t.Errorf("asked %+v", q)
	}

	out, err = run(t, e, "policy", "explain", "--client", "openwebui", "hidden\x1b[2J")
	if err != nil || !strings.Contains(out, "refused   not_visible: no such tool on this endpoint (not_found)") || strings.Contains(out, "\x1b") {
		t.Errorf("refusal: %v\n%q", err, out)
	}

	out, err = run(t, e, "policy", "explain", "--json", "--client", "openwebui", "demo_counter_reset")
	var ex router.Explanation
	if err != nil || json.Unmarshal([]byte(out), &ex) != nil || ex.Decision == nil || ex.Decision.ReasonID != "needs_person:destructive" || !ex.Person {
		t.Errorf("--json: %v %s", err, out)
	}

	_, err = run(t, e, "policy", "explain", "--client", "nobody", "demo_echo")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || !strings.Contains(apiErr.Message, `no client named "nobody"`) {
		t.Errorf("unknown client: %v", err)
	}
	for _, bad := range [][]string{
		{"policy", "explain", "demo_echo"},
		{"policy", "explain", "--client", "c"},
		{"policy", "explain", "--client", "c", "demo_echo", "{not json"},
		{"policy", "explain", "--client", "c", "demo_echo", "{}", "extra"},
	} {
		if _, err := run(t, e, bad...); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if len(x.asked) != 4 {
		t.Errorf("bad command lines reached the gateway: %d questions", len(x.asked))
	}

	// The API wants the admin token and a well-formed question.
	if r := e.call(t, "POST", "/admin/explain", "", `{"client":"openwebui","tool":"demo_echo"}`); r.status != 401 {
		t.Errorf("without a token: %d", r.status)
	}
	if r := e.do(t, "POST", "/admin/explain", `{"client":"openwebui","tool":"demo_echo","extra":1}`); r.status != 400 {
		t.Errorf("unknown field: %d", r.status)
	}
}

// pins reject is hash-bound like accept; a rejected change is listed as
// rejected, still withheld, with no reject command of its own.
func TestCLIPinsReject(t *testing.T) {
	e := newCLIEnv(t)
	old, _ := pins.Hash("old")
	changed, _ := pins.Hash("new")
	def, _, _ := pins.Definition("new")
	oldDef, _, _ := pins.Definition("old")
	if _, err := e.pins.Check("demo", "demo_echo", old, oldDef); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.pins.Check("demo", "demo_echo", changed, def); ok {
		t.Fatal("the change was offered")
	}
	out, _ := run(t, e, "pins", "list")
	if !strings.Contains(out, "gateway pins reject demo demo_echo "+changed) {
		t.Errorf("list offers no reject:\n%s", out)
	}
	_, err := run(t, e, "pins", "reject", "demo", "demo_echo", old)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || !strings.Contains(apiErr.Message, "nothing was rejected") {
		t.Fatalf("reject of another hash: %v", err)
	}
	out, err = run(t, e, "pins", "reject", "demo", "demo_echo", changed)
	if err != nil || !strings.Contains(out, "rejected "+changed+" of demo/demo_echo; it stays withheld") {
		t.Fatalf("reject: %v %q", err, out)
	}
	out, _ = run(t, e, "pins", "list")
	if !strings.Contains(out, "rejected: you rejected this definition") || strings.Contains(out, "gateway pins reject") {
		t.Errorf("list after the reject:\n%s", out)
	}
	if ok, _ := e.pins.Check("demo", "demo_echo", changed, def); ok {
		t.Error("a rejected change is offered")
	}
}
