package admin

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

func TestNewHandlerValidates(t *testing.T) {
	ts := tickets.NewStore(nil, 10, 0)
	ps, _ := pins.Load("")
	tests := []struct {
		name  string
		token string
		t     TicketStore
		p     PinStore
	}{
		{"short token", "short-token", ts, ps},
		{"short after trimming", "  0123456789abcde \n", ts, ps},
		{"no ticket store", testToken, nil, ps},
		{"no pin store", testToken, ts, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewHandler([]byte(tc.token), tc.t, tc.p, nil, nil); err == nil {
				t.Fatal("NewHandler accepted it")
			}
		})
	}
	if _, err := NewHandler([]byte(testToken), ts, ps, nil, nil); err != nil {
		t.Fatalf("valid handler: %v", err)
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		authz string
		want  int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"wrong token", "Bearer admin-token-0123456789abcdeX", http.StatusUnauthorized},
		{"token prefix", "Bearer " + testToken[:20], http.StatusUnauthorized},
		{"token with suffix", "Bearer " + testToken + "x", http.StatusUnauthorized},
		{"basic scheme", "Basic " + testToken, http.StatusUnauthorized},
		{"bare token", testToken, http.StatusUnauthorized},
		{"empty bearer", "Bearer ", http.StatusUnauthorized},
		{"right token", "Bearer " + testToken, http.StatusOK},
		{"scheme is case-insensitive", "bearer " + testToken, http.StatusOK},
	}
	paths := []struct{ method, path string }{
		{"GET", "/admin/tickets"},
		{"GET", "/admin/pins"},
		{"POST", "/admin/tickets/tkt_x/approve"},
		{"GET", "/nowhere"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range paths {
				r := e.call(t, p.method, p.path, tc.authz, "")
				if tc.want == http.StatusUnauthorized {
					if r.status != http.StatusUnauthorized {
						t.Fatalf("%s %s: status %d, want 401", p.method, p.path, r.status)
					}
					if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="toolgate-admin"` {
						t.Errorf("WWW-Authenticate = %q", got)
					}
					if code := r.errorCode(t); code != "auth_failed" {
						t.Errorf("code = %q", code)
					}
				} else if r.status == http.StatusUnauthorized {
					t.Fatalf("%s %s: rejected a valid token", p.method, p.path)
				}
			}
		})
	}
	// A refused request changes nothing.
	tk := e.issue(t, "lock", approval.Human)
	if r := e.call(t, "POST", "/admin/tickets/"+tk.ID+"/approve", "Bearer wrong-token-0123456789", ""); r.status != 401 {
		t.Fatalf("status %d", r.status)
	}
	if got, _ := e.tickets.Get(tk.ID); got.State != tickets.Pending {
		t.Fatalf("state after refused approve = %s", got.State)
	}
}

func TestListTicketsStateFilter(t *testing.T) {
	e := newEnv(t)
	pending := e.issue(t, "lock", approval.Human)
	e.clock.Advance(time.Second)
	ready := e.issue(t, "light", approval.Model)
	e.clock.Advance(time.Second)
	used := e.issue(t, "switch", approval.Model)
	if _, err := e.tickets.Redeem(used.ID, used.Binding); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	denied := e.issue(t, "alarm", approval.Human)
	if _, err := e.tickets.Deny(denied.ID, "bob"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{pending.ID, ready.ID, used.ID, denied.ID}},
		{"?state=pending", []string{pending.ID}},
		{"?state=ready", []string{ready.ID}},
		{"?state=used", []string{used.ID}},
		{"?state=denied", []string{denied.ID}},
	}
	for _, tc := range tests {
		t.Run("q"+tc.query, func(t *testing.T) {
			r := e.do(t, "GET", "/admin/tickets"+tc.query, "")
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var list TicketList
			if err := json.Unmarshal(r.body, &list); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tk := range list.Tickets {
				ids = append(ids, tk.ID)
				if tk.Preview != nil {
					t.Errorf("list carries the preview of %s", tk.ID)
				}
				if tk.Tool == "" || tk.Client != "openwebui" {
					t.Errorf("ticket fields missing: %+v", tk)
				}
			}
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("ids = %v, want %v", ids, tc.want)
			}
		})
	}

	r := e.do(t, "GET", "/admin/tickets?state=bogus", "")
	if r.status != http.StatusBadRequest || r.errorCode(t) != "invalid_argument" {
		t.Fatalf("bad state: %d %s", r.status, r.body)
	}

	// Empty is [] rather than null, so clients need no special case.
	e.clock.Advance(time.Hour)
	r = e.do(t, "GET", "/admin/tickets", "")
	if strings.TrimSpace(string(r.body)) != `{"tickets":[]}` {
		t.Fatalf("empty list = %s", r.body)
	}
}

func TestShowTicket(t *testing.T) {
	e := newEnv(t)
	tk := e.issue(t, "lock", approval.Human)
	r := e.do(t, "GET", "/admin/tickets/"+tk.ID, "")
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got TicketReply
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Ticket.ID != tk.ID || got.Ticket.State != tickets.Pending || got.Ticket.Tool != "lock" ||
		got.Ticket.ArgsDigest != "d-lock" || string(got.Ticket.Preview) != string(tk.Preview) {
		t.Fatalf("ticket = %+v", got.Ticket)
	}

	// A preview that is not JSON still shows, as a string.
	bad, err := e.tickets.Issue(binding("raw"), "pd", approval.Human, time.Minute, json.RawMessage("not json <b>"))
	if err != nil {
		t.Fatal(err)
	}
	r = e.do(t, "GET", "/admin/tickets/"+bad.ID, "")
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != 200 {
		t.Fatalf("status %d, err %v", r.status, err)
	}
	var s string
	if err := json.Unmarshal(got.Ticket.Preview, &s); err != nil || s != "not json <b>" {
		t.Fatalf("preview = %s", got.Ticket.Preview)
	}

	tests := []struct {
		name, path string
		status     int
		code       string
	}{
		{"unknown id", "/admin/tickets/tkt_doesnotexist", 404, "not_found"},
		{"bad id", "/admin/tickets/bad%20id", 400, "invalid_argument"},
		{"long id", "/admin/tickets/" + strings.Repeat("a", 65), 400, "invalid_argument"},
		{"unknown path", "/admin/nothing", 404, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "GET", tc.path, "")
			if r.status != tc.status || r.errorCode(t) != tc.code {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t)
	tests := []struct{ method, path, allow string }{
		{"POST", "/admin/tickets", "GET"},
		{"DELETE", "/admin/tickets/tkt_x", "GET"},
		{"GET", "/admin/tickets/tkt_x/approve", "POST"},
		{"GET", "/admin/tickets/tkt_x/deny", "POST"},
		{"PUT", "/admin/pins", "GET"},
		{"GET", "/admin/pins/svc/tool/accept", "POST"},
	}
	for _, tc := range tests {
		r := e.do(t, tc.method, tc.path, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != tc.allow || r.errorCode(t) != "invalid_argument" {
			t.Errorf("%s %s: %d Allow=%q %s", tc.method, tc.path, r.status, r.header.Get("Allow"), r.body)
		}
	}
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name    string
		kind    approval.Kind          // approval of the ticket
		before  func(*env, string)     // runs before the request
		verb    string                 // approve or deny
		body    string                 // request body
		status  int                    // expected status
		code    string                 // expected error code
		state   tickets.State          // expected state afterwards
		by      string                 // expected DecidedBy afterwards
		events  []string               // expected metric events
		redeem  error                  // expected Redeem result afterwards
		checkFn func(*testing.T, *env) // extra checks
	}{
		{name: "approve", kind: approval.Human, verb: "approve",
			status: 200, state: tickets.Ready, by: "admin", events: []string{"approved"}},
		{name: "approve by name", kind: approval.Human, verb: "approve", body: `{"by":"alice"}`,
			status: 200, state: tickets.Ready, by: "alice", events: []string{"approved"}},
		{name: "null by", kind: approval.Human, verb: "approve", body: `{"by":null}`,
			status: 200, state: tickets.Ready, by: "admin", events: []string{"approved"}},
		{name: "by is sanitized", kind: approval.Human, verb: "approve",
			body:   `{"by":" \u001b[31mmallory\u202e\r\nINFO forged ` + strings.Repeat("x", 100) + `"}`,
			status: 200, state: tickets.Ready, by: ("[31mmalloryINFO forged " + strings.Repeat("x", 100))[:64], events: []string{"approved"}},
		{name: "only control chars", kind: approval.Human, verb: "approve", body: `{"by":"\u0000\u0007"}`,
			status: 200, state: tickets.Ready, by: "admin", events: []string{"approved"}},
		{name: "deny", kind: approval.Human, verb: "deny", body: `{"by":"bob"}`,
			status: 200, state: tickets.Denied, by: "bob", events: []string{"denied"}, redeem: tickets.ErrDenied},
		{name: "double approve", kind: approval.Human, verb: "approve",
			before: func(e *env, id string) { e.tickets.Approve(id, "first") },
			status: 409, code: "forbidden", state: tickets.Ready, by: "first"},
		{name: "deny then approve", kind: approval.Human, verb: "approve",
			before: func(e *env, id string) { e.tickets.Deny(id, "first") },
			status: 409, code: "forbidden", state: tickets.Denied, by: "first", redeem: tickets.ErrDenied},
		{name: "approve then deny", kind: approval.Human, verb: "deny",
			before: func(e *env, id string) { e.tickets.Approve(id, "first") },
			status: 409, code: "forbidden", state: tickets.Ready, by: "first"},
		{name: "approve expired", kind: approval.Human, verb: "approve",
			before: func(e *env, _ string) { e.clock.Advance(11 * time.Minute) },
			status: 409, code: "forbidden", state: tickets.Pending, redeem: tickets.ErrExpired},
		{name: "approve model ticket", kind: approval.Model, verb: "approve",
			status: 409, code: "forbidden", state: tickets.Ready},
		{name: "bad body", kind: approval.Human, verb: "approve", body: `{"by":`,
			status: 400, code: "invalid_argument", state: tickets.Pending, redeem: tickets.ErrPending},
		{name: "unknown field", kind: approval.Human, verb: "approve", body: `{"who":"x"}`,
			status: 400, code: "invalid_argument", state: tickets.Pending, redeem: tickets.ErrPending},
		{name: "trailing data", kind: approval.Human, verb: "approve", body: `{"by":"x"} {}`,
			status: 400, code: "invalid_argument", state: tickets.Pending, redeem: tickets.ErrPending},
		{name: "by not a string", kind: approval.Human, verb: "deny", body: `{"by":7}`,
			status: 400, code: "invalid_argument", state: tickets.Pending, redeem: tickets.ErrPending},
		{name: "body too large", kind: approval.Human, verb: "approve",
			body:   `{"by":"` + strings.Repeat("a", 5000) + `"}`,
			status: 413, code: "too_large", state: tickets.Pending, redeem: tickets.ErrPending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tk := e.issue(t, "lock", tc.kind)
			if tc.before != nil {
				tc.before(e, tk.ID)
			}
			r := e.do(t, "POST", "/admin/tickets/"+tk.ID+"/"+tc.verb, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.code != "" {
				if got := r.errorCode(t); got != tc.code {
					t.Fatalf("code %q, want %q", got, tc.code)
				}
			} else {
				var got TicketReply
				if err := json.Unmarshal(r.body, &got); err != nil {
					t.Fatal(err)
				}
				if got.Ticket.ID != tk.ID || got.Ticket.State != tc.state || got.Ticket.DecidedBy != tc.by {
					t.Fatalf("reply ticket = %+v", got.Ticket)
				}
			}
			stored, _ := e.tickets.Get(tk.ID)
			if stored.State != tc.state || stored.DecidedBy != tc.by {
				t.Fatalf("stored state %s by %q, want %s by %q", stored.State, stored.DecidedBy, tc.state, tc.by)
			}
			if got := e.events.list(); !slices.Equal(got, tc.events) {
				t.Fatalf("events = %v, want %v", got, tc.events)
			}
			// The store really follows the decision: the client's confirm
			// now works, or keeps failing.
			if _, err := e.tickets.Redeem(tk.ID, tk.Binding); !errors.Is(err, tc.redeem) {
				t.Fatalf("Redeem: %v, want %v", err, tc.redeem)
			}
			if tc.status == 200 {
				logs := e.logs.String()
				if !strings.Contains(logs, `"msg":"ticket decision"`) || !strings.Contains(logs, tk.ID) ||
					!strings.Contains(logs, `"by":`+mustJSON(tc.by)) {
					t.Fatalf("decision not logged: %s", logs)
				}
			}
		})
	}
}

func TestDecideUnknownTicket(t *testing.T) {
	e := newEnv(t)
	for _, verb := range []string{"approve", "deny"} {
		r := e.do(t, "POST", "/admin/tickets/tkt_nosuchticket/"+verb, "")
		if r.status != 404 || r.errorCode(t) != "not_found" {
			t.Fatalf("%s: %d %s", verb, r.status, r.body)
		}
	}
	if ev := e.events.list(); len(ev) != 0 {
		t.Fatalf("events = %v", ev)
	}
}

// pinHash is a syntactically valid pin hash made of one repeated digit.
func pinHash(d string) string { return "sha256:" + strings.Repeat(d, 64) }

// pinDef is a tool definition whose description is desc.
func pinDef(t *testing.T, desc string) json.RawMessage {
	t.Helper()
	d, _, err := pins.Definition(map[string]any{"name": "lock_door", "description": desc})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPins(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/admin/pins", "")
	if r.status != 200 || strings.TrimSpace(string(r.body)) != `{"pending":[]}` {
		t.Fatalf("empty pins: %d %s", r.status, r.body)
	}
	oldHash, newHash, evilHash := pinHash("1"), pinHash("2"), pinHash("3")
	for _, c := range []struct{ hash, desc string }{{oldHash, "Locks the door."}, {newHash, "Locks the door. Also unlocks it."}} {
		if _, err := e.pins.Check("homeassistant", "lock_door", c.hash, pinDef(t, c.desc)); err != nil {
			t.Fatal(err)
		}
	}
	r = e.do(t, "GET", "/admin/pins", "")
	var list PinList
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Pending) != 1 {
		t.Fatalf("pending = %+v", list.Pending)
	}
	p := list.Pending[0]
	if p.Service != "homeassistant" || p.Tool != "lock_door" || p.Pinned != oldHash || p.Current != newHash ||
		!strings.Contains(string(p.CurrentDefinition), "Also unlocks it") ||
		!strings.Contains(p.Diff, `+  "description": "Locks the door. Also unlocks it."`) ||
		!strings.Contains(p.Diff, `-  "description": "Locks the door."`) {
		t.Fatalf("pending change = %+v", p)
	}
	r = e.do(t, "GET", "/admin/pins/homeassistant/lock_door", "")
	var one PinReply
	if err := json.Unmarshal(r.body, &one); r.status != 200 || err != nil || one.Pending.Current != newHash || one.Pending.Diff != p.Diff {
		t.Fatalf("show: %d %s", r.status, r.body)
	}
	if r := e.do(t, "GET", "/admin/pins/homeassistant/other", ""); r.status != 404 || r.errorCode(t) != "not_found" {
		t.Fatalf("show of nothing pending: %d %s", r.status, r.body)
	}

	accept := func(hash string) string { return `{"by":"carol","hash":"` + hash + `"}` }
	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"invalid name", "/admin/pins/home%20assistant/lock_door/accept", accept(newHash), 400, "invalid_argument"},
		{"slash in name", "/admin/pins/home%2Fassistant/lock_door/accept", accept(newHash), 400, "invalid_argument"},
		{"nothing pending", "/admin/pins/homeassistant/other/accept", accept(newHash), 404, "not_found"},
		{"bad body", "/admin/pins/homeassistant/lock_door/accept", "[", 400, "invalid_argument"},
		{"no hash", "/admin/pins/homeassistant/lock_door/accept", `{"by":"carol"}`, 400, "invalid_argument"},
		{"empty body", "/admin/pins/homeassistant/lock_door/accept", "", 400, "invalid_argument"},
		{"malformed hash", "/admin/pins/homeassistant/lock_door/accept", accept("sha256:beef"), 400, "invalid_argument"},
		{"hash of what was pinned", "/admin/pins/homeassistant/lock_door/accept", accept(oldHash), 409, "forbidden"},
		{"hash of something else", "/admin/pins/homeassistant/lock_door/accept", accept(evilHash), 409, "forbidden"},
		{"accept the reviewed hash", "/admin/pins/homeassistant/lock_door/accept", accept(newHash), 200, ""},
		{"accept twice", "/admin/pins/homeassistant/lock_door/accept", accept(newHash), 404, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if tc.code != "" && r.errorCode(t) != tc.code {
				t.Fatalf("body %s", r.body)
			}
		})
	}
	if ok, _ := e.pins.Check("homeassistant", "lock_door", newHash, nil); !ok {
		t.Fatal("accepted definition is still withheld")
	}
	if ok, _ := e.pins.Check("homeassistant", "lock_door", oldHash, nil); ok {
		t.Fatal("old definition still passes after accepting the new one")
	}
	if logs := e.logs.String(); !strings.Contains(logs, `"msg":"pin accepted"`) || !strings.Contains(logs, `"by":"carol"`) {
		t.Fatalf("accept not logged: %s", logs)
	}
}

// TestPinAcceptRefusesASwappedDefinition: the service changes its
// definition after the operator reviewed it; accepting the reviewed hash
// answers 409 and leaves the new definition withheld.
func TestPinAcceptRefusesASwappedDefinition(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ hash, desc string }{
		{pinHash("1"), "Locks the door."}, {pinHash("2"), "Locks the door (typo fixed)."},
	} {
		e.pins.Check("homeassistant", "lock_door", c.hash, pinDef(t, c.desc))
	}
	reviewed := e.do(t, "GET", "/admin/pins/homeassistant/lock_door", "")
	if !strings.Contains(string(reviewed.body), "typo fixed") {
		t.Fatalf("review: %s", reviewed.body)
	}
	e.pins.Check("homeassistant", "lock_door", pinHash("3"), pinDef(t, "Unlocks every door."))
	r := e.do(t, "POST", "/admin/pins/homeassistant/lock_door/accept", `{"hash":"`+pinHash("2")+`"}`)
	if r.status != 409 || r.errorCode(t) != "forbidden" || !strings.Contains(string(r.body), pinHash("3")) {
		t.Fatalf("accept after a swap: %d %s", r.status, r.body)
	}
	if ok, _ := e.pins.Check("homeassistant", "lock_door", pinHash("3"), nil); ok {
		t.Fatal("the swapped-in definition was accepted")
	}
}

// failingPins makes Accept fail with an error that must not reach clients.
type failingPins struct{}

func (failingPins) Pending() []pins.Change                           { return nil }
func (failingPins) PendingChange(string, string) (pins.Change, bool) { return pins.Change{}, false }
func (failingPins) Accept(string, string, string) error {
	return errors.New("save pins: open /secret/path: disk full")
}
func (failingPins) Reject(string, string, string) error {
	return errors.New("save pins: open /secret/path: disk full")
}

func TestPinAcceptFailureIsInternal(t *testing.T) {
	h, err := NewHandler([]byte(testToken), tickets.NewStore(nil, 1, 0), failingPins{}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{}
	e.srv = newServerFor(t, h)
	r := e.do(t, "POST", "/admin/pins/a/b/accept", `{"hash":"`+pinHash("4")+`"}`)
	if r.status != 500 || r.errorCode(t) != "internal" || strings.Contains(string(r.body), "secret") {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func TestNoTokenLeak(t *testing.T) {
	e := newEnv(t)
	wrong := "Bearer wrong-admin-token-zzzzzzzzzz"
	tk := e.issue(t, "lock", approval.Human)
	var bodies []string
	for _, authz := range []string{"Bearer " + testToken, wrong} {
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/admin/tickets", ""},
			{"GET", "/admin/tickets/" + tk.ID, ""},
			{"POST", "/admin/tickets/tkt_unknown/deny", ""},
			{"POST", "/admin/tickets/" + tk.ID + "/approve", `{"by":"alice"}`},
			{"POST", "/admin/tickets/" + tk.ID + "/approve", ""},
			{"GET", "/admin/pins", ""},
			{"POST", "/admin/pins/a/b/accept", `{"hash":"` + pinHash("5") + `"}`},
		} {
			r := e.call(t, req.method, req.path, authz, req.body)
			bodies = append(bodies, string(r.body))
			for k, v := range r.header {
				bodies = append(bodies, k+": "+strings.Join(v, ","))
			}
		}
	}
	all := e.logs.String() + strings.Join(bodies, "\n")
	if !strings.Contains(e.logs.String(), "admin request rejected") {
		t.Fatal("the refused requests were not logged; the leak check would prove nothing")
	}
	for _, secret := range []string{testToken, "wrong-admin-token-zzzzzzzzzz"} {
		if strings.Contains(all, secret) {
			t.Fatalf("a token appears in logs or answers")
		}
	}
}

func TestSanitizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"alice", "alice"},
		{"  bob  ", "bob"},
		{"a\x1b[2Jb", "a[2Jb"},
		{"rtl\u202eevil", "rtlevil"},
		{"zero\u200bwidth", "zerowidth"},
		{"bad\xffutf8", "badutf8"},
		{"Zoë Ünïcode", "Zoë Ünïcode"},
		{strings.Repeat("é", 70), strings.Repeat("é", 64)},
		{"\n\t", ""},
	}
	for _, tc := range tests {
		if got := SanitizeName(tc.in); got != tc.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
