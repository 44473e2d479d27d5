package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

func (e *env) cli(out *bytes.Buffer) *CLI {
	return &CLI{BaseURL: e.srv.URL + "/", Token: []byte(testToken + "\n"), HTTPClient: e.srv.Client(), Out: out}
}

// newCLIEnv serves the admin API over a store on the real clock, since the
// CLI computes ages against time.Now.
func newCLIEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.clock.Set(time.Now())
	return e
}

func run(t *testing.T, e *env, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := e.cli(&out).Run(context.Background(), args)
	return out.String(), err
}

func TestCLIList(t *testing.T) {
	e := newCLIEnv(t)
	out, err := run(t, e, "approvals", "list")
	if err != nil || !strings.Contains(out, "no tickets waiting") {
		t.Fatalf("empty list: %q, %v", out, err)
	}
	pending := e.issue(t, "lock_door", approval.Human)
	ready := e.issue(t, "light_on", approval.Model)

	out, err = run(t, e, "approvals", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ID", "CLIENT", "STATE", pending.ID, "lock_door", "openwebui", "alice", "homeassistant", "human", "pending", "EXPIRES", " in "} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ready.ID) {
		t.Errorf("default list shows a ticket that needs no approval:\n%s", out)
	}

	out, err = run(t, e, "approvals", "list", "--all")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, pending.ID) || !strings.Contains(out, ready.ID) || !strings.Contains(out, "light_on") {
		t.Errorf("--all list:\n%s", out)
	}
}

func TestCLIShow(t *testing.T) {
	e := newCLIEnv(t)
	b := binding("set_level")
	b.User = "eve\x1b]0;owned\x07"
	preview := json.RawMessage(`{"entity":"light.kitchen","level":{"from":10,"to":40},"note":"a<b & \u202egnp.exe"}`)
	tk, err := e.tickets.Issue(b, "pd", approval.Human, 10*time.Minute, preview)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, e, "approvals", "show", tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		tk.ID, "set_level", "homeassistant", "openwebui", "waits for a person's approval", "d-set_level",
		"Preview:\n{\n",
		"\n  \"entity\": \"light.kitchen\",\n",
		"\n    \"to\": 40\n",
		`"note": "a<b & \u202egnp.exe"`,
		`eve\u001b]0;owned\u0007`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"\u202e", "\x1b", "\x07"} {
		if strings.Contains(out, bad) {
			t.Errorf("show prints raw %q", bad)
		}
	}
}

func TestCLIDecisions(t *testing.T) {
	e := newCLIEnv(t)
	a := e.issue(t, "lock_door", approval.Human)
	d := e.issue(t, "unlock_door", approval.Human)
	c := e.issue(t, "garage", approval.Human)

	out, err := run(t, e, "approvals", "approve", a.ID, "--by", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "approved") || !strings.Contains(out, a.ID) || !strings.Contains(out, "lock_door") || !strings.Contains(out, "by alice") {
		t.Errorf("approve output: %q", out)
	}
	if got, _ := e.tickets.Get(a.ID); got.State != tickets.Ready || got.DecidedBy != "alice" {
		t.Fatalf("after approve: %+v", got)
	}

	out, err = run(t, e, "approvals", "deny", "--by=bob", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "denied") || !strings.Contains(out, d.ID) || !strings.Contains(out, "unlock_door") {
		t.Errorf("deny output: %q", out)
	}
	if got, _ := e.tickets.Get(d.ID); got.State != tickets.Denied || got.DecidedBy != "bob" {
		t.Fatalf("after deny: %+v", got)
	}

	// Without --by the server's default names the decider.
	if _, err := run(t, e, "approvals", "approve", c.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.tickets.Get(c.ID); got.DecidedBy != DefaultDecider {
		t.Fatalf("default decider = %q", got.DecidedBy)
	}

	// A second decision is refused with the server's reason.
	_, err = run(t, e, "approvals", "approve", d.ID)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code != "forbidden" ||
		!strings.Contains(err.Error(), "already decided") {
		t.Fatalf("approve denied ticket: %v", err)
	}
	_, err = run(t, e, "approvals", "show", "tkt_nosuchticket")
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("show unknown: %v", err)
	}
	if got := e.events.list(); strings.Join(got, ",") != "approved,denied,approved" {
		t.Fatalf("events = %v", got)
	}
}

func TestCLIPins(t *testing.T) {
	e := newCLIEnv(t)
	out, err := run(t, e, "pins", "list")
	if err != nil || !strings.Contains(out, "no changed definitions") {
		t.Fatalf("empty pins: %q %v", out, err)
	}
	def := func(desc string) json.RawMessage {
		d, _, _ := pins.Definition(map[string]any{"name": "add_series", "description": desc})
		return d
	}
	oldHash, newHash := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	e.pins.Check("sonarr", "add_series", oldHash, def("Adds a series."))
	// A hostile service writes terminal escapes into its definition.
	e.pins.Check("sonarr", "add_series", newHash, def("Adds a series.\x1b[2J and deletes the old ones."))
	out, err = run(t, e, "pins", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sonarr tool add_series changed", oldHash, newHash,
		"gateway pins accept sonarr add_series " + newHash,
		`-  "description": "Adds a series.",`,
		`+  "description": "Adds a series.\u001b[2J and deletes the old ones.",`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pins list lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("pins list passed a terminal escape through:\n%q", out)
	}
	out, err = run(t, e, "pins", "show", "sonarr", "add_series")
	if err != nil || !strings.Contains(out, "Pending definition:") || !strings.Contains(out, `"name": "add_series"`) || !strings.Contains(out, "+++ pending "+newHash) {
		t.Fatalf("pins show: %q %v", out, err)
	}
	// Accepting the hash that was pinned before is not accepting the change.
	_, err = run(t, e, "pins", "accept", "sonarr", "add_series", oldHash)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
		t.Fatalf("accept of a stale hash: %v", err)
	}
	out, err = run(t, e, "pins", "accept", "sonarr", "add_series", newHash)
	if err != nil || !strings.Contains(out, "sonarr/add_series") || !strings.Contains(out, newHash) {
		t.Fatalf("accept: %q %v", out, err)
	}
	if len(e.pins.Pending()) != 0 {
		t.Fatal("change still pending after accept")
	}
	if ok, _ := e.pins.Check("sonarr", "add_series", newHash, nil); !ok {
		t.Fatal("accepted definition still withheld")
	}
	_, err = run(t, e, "pins", "accept", "sonarr", "add_series", newHash)
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("second accept: %v", err)
	}
}

func TestCLIBadToken(t *testing.T) {
	e := newCLIEnv(t)
	e.issue(t, "lock_door", approval.Human)
	const wrong = "not-the-admin-token-0123456789"
	for _, args := range [][]string{{"approvals", "list"}, {"pins", "list"}, {"approvals", "approve", "tkt_abc"}} {
		var out bytes.Buffer
		c := e.cli(&out)
		c.Token = []byte(wrong)
		err := c.Run(context.Background(), args)
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("%v: err = %v", args, err)
		}
		if !strings.Contains(err.Error(), "rejected the admin token") {
			t.Errorf("unclear error: %v", err)
		}
		if strings.Contains(err.Error()+out.String(), wrong) {
			t.Fatal("the token was printed")
		}
	}
	for _, tok := range []string{"", "  \n", "has space-in-the-middle-0123"} {
		var out bytes.Buffer
		c := e.cli(&out)
		c.Token = []byte(tok)
		err := c.Run(context.Background(), []string{"approvals", "list"})
		if err == nil || (strings.TrimSpace(tok) != "" && strings.Contains(err.Error(), strings.TrimSpace(tok))) {
			t.Errorf("token %q: err = %v", tok, err)
		}
	}
}

func TestCLIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var out bytes.Buffer
	c := &CLI{BaseURL: url, Token: []byte(testToken), Out: &out}
	err := c.Run(context.Background(), []string{"approvals", "list"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the admin API") || strings.Contains(err.Error(), testToken) {
		t.Fatalf("err = %v", err)
	}
}

func TestCLIUsage(t *testing.T) {
	e := newCLIEnv(t)
	tests := []struct {
		name string
		args []string
	}{
		{"no args", nil},
		{"only group", []string{"approvals"}},
		{"unknown group", []string{"tickets", "list"}},
		{"unknown subcommand", []string{"approvals", "frobnicate"}},
		{"show without id", []string{"approvals", "show"}},
		{"show two ids", []string{"approvals", "show", "tkt_a", "tkt_b"}},
		{"bad id", []string{"approvals", "approve", "../../pins"}},
		{"by without value", []string{"approvals", "approve", "tkt_a", "--by"}},
		{"unknown flag", []string{"approvals", "list", "--force"}},
		{"value on bare flag", []string{"approvals", "list", "--all=yes"}},
		{"list with args", []string{"approvals", "list", "extra"}},
		{"accept one name", []string{"pins", "accept", "sonarr"}},
		{"accept without hash", []string{"pins", "accept", "sonarr", "add_series"}},
		{"accept dot-dot", []string{"pins", "accept", "..", "x", "sha256:x"}},
		{"show one name", []string{"pins", "show", "sonarr"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := e.cli(&out).Run(context.Background(), tc.args)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "usage:") || !strings.Contains(err.Error(), "approvals approve ID") {
				t.Fatalf("err = %v", err)
			}
			if out.Len() != 0 {
				t.Fatalf("printed %q", out.String())
			}
		})
	}
}

func TestPrettyJSONEscapesHidden(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, "{\n  \"a\": 1\n}"},
		{`{"big":12345678901234567890}`, "{\n  \"big\": 12345678901234567890\n}"},
		{`"tag\udb40\udc41"`, `"tag\udb40\udc41"`},
		{`"line\u2028sep"`, `"line\u2028sep"`},
		{`not json`, "not json"},
		{``, "(none)"},
	}
	for _, tc := range tests {
		if got := prettyJSON(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("prettyJSON(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
