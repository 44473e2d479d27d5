package policy

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// TestRemoteRememberedDecisionsEqualFullEvaluation runs every static part of
// the shipped policy with every variant of its per-call fields through a
// real sidecar, in an order where a remembered answer would be reused
// wherever one exists, and holds each answer to the sidecar's own
// evaluation of that very input.
func TestRemoteRememberedDecisionsEqualFullEvaluation(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second})
	ref := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second})
	calls := holdToReference(t, r.Decide, ref.evaluate, 3, 2)
	if n := r.fullEvals.Load(); n >= int64(calls) {
		t.Errorf("nothing was remembered: %d decisions asked for %d calls", n, calls)
	}
}

// restrictedPolicies is a copy of policies/ in which the users group may
// use nothing but web.
func restrictedPolicies(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(policiesDir(t))); err != nil {
		t.Fatal(err)
	}
	groups := `{"groups": {"users": {"services": ["web"], "read_only": false}}}`
	if err := os.WriteFile(filepath.Join(dir, "data", "toolgate", "groups.json"), []byte(groups), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// learn decides in until the answer comes from memory, and returns it.
func learn(t *testing.T, r *Remote, in Input) Decision {
	t.Helper()
	for range 3 {
		before := r.fullEvals.Load()
		d, err := r.Decide(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if r.fullEvals.Load() == before {
			return d
		}
	}
	t.Fatalf("%+v is not remembered", in)
	return Decision{}
}

// waitForConnectionChange waits until r has seen one of its connections to
// the sidecar end (the sidecar stopped). Without that a remembered decision
// would outlive the sidecar that made it, and this fails.
func waitForConnectionChange(t *testing.T, r *Remote, since uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); r.changes.Load() == since; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gateway did not notice that the sidecar went away")
		}
	}
}

// TestRemoteForgetsWhatARestartedSidecarMayDecideOtherwise: compose changes
// the sidecar's policy by restarting it; a decision remembered from the old
// one must not answer for the new one.
func TestRemoteForgetsWhatARestartedSidecarMayDecideOtherwise(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{})
	in := read()
	if d := learn(t, r, in); d.Decision != Allow {
		t.Fatalf("shipped policy: %+v", d)
	}
	conns := r.changes.Load()
	opatest.Restart(t, sidecar, restrictedPolicies(t))
	waitForConnectionChange(t, r, conns)
	for range 3 {
		if d, err := r.Decide(t.Context(), in); err != nil || d.Decision != Deny {
			t.Fatalf("after the restart with changed data: %+v, %v; want deny", d, err)
		}
	}
}

// TestRemoteStoppedSidecarMeansDeny: once the sidecar is gone, a
// remembered allow is not used; every call is denied as unavailable.
func TestRemoteStoppedSidecarMeansDeny(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 2 * time.Second})
	in := read()
	learn(t, r, in)
	conns := r.changes.Load()
	sidecar.Stop()
	waitForConnectionChange(t, r, conns)
	if d, err := r.Decide(t.Context(), in); !errors.Is(err, ErrUnavailable) || d.Decision != Deny {
		t.Fatalf("with the sidecar stopped: %+v, %v; want deny, unavailable", d, err)
	}
	if err := r.Probe(t.Context()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Probe with the sidecar stopped: %v", err)
	}
}

// fakeSidecar answers decisions with decision and partial evaluations
// with compile (a status code, or the body of a 200), and counts both.
type fakeSidecar struct {
	*httptest.Server
	decisions, compiles atomic.Int64
	mu                  sync.Mutex
	compileBodies       []map[string]any
}

func newFakeSidecar(t *testing.T, decision string, compileStatus int, compile string) *fakeSidecar {
	t.Helper()
	f := &fakeSidecar{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case compilePath:
			f.compiles.Add(1)
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Errorf("compile body: %v", err)
			}
			f.mu.Lock()
			f.compileBodies = append(f.compileBodies, body)
			f.mu.Unlock()
			w.WriteHeader(compileStatus)
			io.WriteString(w, compile)
		default:
			f.decisions.Add(1)
			io.WriteString(w, `{"result":`+decision+`}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

const (
	allowRead    = `{"decision":"allow","reason":"read allowed","reason_id":"r","approval":"model","ttl_seconds":0}`
	denyAnything = `{"decision":"deny","reason":"no","reason_id":"r","approval":"model","ttl_seconds":0}`
)

// compiled is a Compile API answer whose queries are the Rego bodies.
func compiled(t *testing.T, support bool, bodies ...string) string {
	t.Helper()
	var queries []ast.Body
	for _, b := range bodies {
		queries = append(queries, ast.MustParseBody(b))
	}
	result := map[string]any{"queries": queries}
	if support {
		result["support"] = []*ast.Module{ast.MustParseModule("package partial.toolgate.authz\n\nx if input.args.force == true\n")}
	}
	b, err := json.Marshal(map[string]any{"result": result})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRemoteMemoryRules: what the sidecar's partial evaluation says decides
// what is remembered, and for how long.
func TestRemoteMemoryRules(t *testing.T) {
	constantAllow := func(t *testing.T) string {
		return compiled(t, false, "count(set()) > 0; toolgate_decision = "+denyAnything, "toolgate_decision = "+allowRead)
	}
	cases := []struct {
		name          string
		compileStatus int
		compile       func(*testing.T) string
		// decisions and partial evaluations asked for 10 calls (the first
		// connection opens during the first; see TestRemoteWhatIsRemembered).
		decisions, compiles int64
	}{
		{"constant", http.StatusOK, constantAllow, 2, 2},
		{"two constants", http.StatusOK, func(t *testing.T) string {
			return compiled(t, false, "toolgate_decision = "+denyAnything, "toolgate_decision = "+allowRead)
		}, 10, 2},
		{"a residual on the arguments", http.StatusOK, func(t *testing.T) string {
			return compiled(t, false, "input.args.force == true; toolgate_decision = "+denyAnything, "toolgate_decision = "+allowRead)
		}, 10, 2},
		{"support rules", http.StatusOK, func(t *testing.T) string { return compiled(t, true, "toolgate_decision = "+allowRead) }, 10, 2},
		{"a constant the decision does not match", http.StatusOK, func(t *testing.T) string {
			return compiled(t, false, "toolgate_decision = "+denyAnything)
		}, 10, 2},
		{"a nondeterministic builtin", http.StatusOK, func(t *testing.T) string {
			return compiled(t, false, "time.now_ns() > 0; toolgate_decision = "+allowRead)
		}, 10, 2},
		{"no queries (undefined)", http.StatusOK, func(*testing.T) string { return `{"result":{}}` }, 10, 2},
		{"not JSON", http.StatusOK, func(*testing.T) string { return `<html>` }, 10, 2},
		{"refused", http.StatusUnauthorized, func(*testing.T) string { return `{}` }, 10, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSidecar(t, allowRead, tc.compileStatus, tc.compile(t))
			r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{})
			for i := range 10 {
				in := read()
				in.Args = map[string]any{"n": i}
				if d, err := r.Decide(t.Context(), in); err != nil || d.Decision != Allow {
					t.Fatalf("call %d: %+v, %v", i, d, err)
				}
			}
			if d, c := f.decisions.Load(), f.compiles.Load(); d != tc.decisions || c != tc.compiles {
				t.Errorf("%d decisions and %d partial evaluations asked, want %d and %d", d, c, tc.decisions, tc.compiles)
			}
		})
	}
}

// TestRemoteDisagreeingResidualIsDropped: a residual that answers otherwise
// than the sidecar, on any call it is checked on, is never used again, even
// when the sidecar hands it out again after the memory expired.
func TestRemoteDisagreeingResidualIsDropped(t *testing.T) {
	f := newFakeSidecar(t, allowRead, http.StatusOK, compiled(t, false,
		`input.user == "mallory@example.org"; toolgate_decision = `+denyAnything,
		`not input.user == "mallory@example.org"; toolgate_decision = `+allowRead))
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{Now: func() time.Time { return now }})
	for range 3 {
		if d, err := r.Decide(t.Context(), read()); err != nil || d.Decision != Allow {
			t.Fatalf("alice: %+v, %v", d, err)
		}
	}
	if r.residualEvals.Load() == 0 {
		t.Fatal("the residual was not used")
	}
	mallory := with(read(), func(in *Input) { in.User = "mallory@example.org" })
	if d, err := r.Decide(t.Context(), mallory); err != nil || d.Decision != Allow {
		t.Fatalf("mallory: %+v, %v; want the sidecar's allow", d, err)
	}
	used, asked := r.residualEvals.Load(), f.decisions.Load()
	for i := range 3 * residualChecks {
		if i == residualChecks {
			// Relearnt after the memory expired, it is still not used.
			now = now.Add(sidecarExpiry)
		}
		if d, err := r.Decide(t.Context(), read()); err != nil || d.Decision != Allow {
			t.Fatalf("alice again: %+v, %v", d, err)
		}
	}
	if r.residualEvals.Load() != used || f.decisions.Load() != asked+3*residualChecks {
		t.Errorf("after the disagreement: %d more residual evaluations, %d more decisions asked; want 0 and %d",
			r.residualEvals.Load()-used, f.decisions.Load()-asked, 3*residualChecks)
	}
}

// TestRemoteResidualsUseNoData: the gateway does not have the sidecar's
// data, so a residual that refers to it is not used, nor one that refers
// to a rule of the policy.
func TestRemoteResidualsUseNoData(t *testing.T) {
	for _, body := range []string{
		"data.data.toolgate.groups.users; toolgate_decision = " + allowRead,
		"data.toolgate.authz.permitted; toolgate_decision = " + allowRead,
	} {
		t.Run(body, func(t *testing.T) {
			f := newFakeSidecar(t, allowRead, http.StatusOK, compiled(t, false, body))
			r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{})
			for range 3 * residualChecks {
				if d, err := r.Decide(t.Context(), read()); err != nil || d.Decision != Allow {
					t.Fatalf("%+v, %v", d, err)
				}
			}
			if n := r.residualEvals.Load(); n != 0 {
				t.Errorf("%d residual evaluations, want none", n)
			}
		})
	}
}

// TestRemoteMemoryExpires: a remembered decision is used for sidecarExpiry,
// then asked and partially evaluated again.
func TestRemoteMemoryExpires(t *testing.T) {
	f := newFakeSidecar(t, allowRead, http.StatusOK, compiled(t, false, "toolgate_decision = "+allowRead))
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{Now: func() time.Time { return now }})
	learn(t, r, read())
	asked := f.decisions.Load()
	now = now.Add(sidecarExpiry - time.Millisecond)
	if _, err := r.Decide(t.Context(), read()); err != nil || f.decisions.Load() != asked {
		t.Fatalf("within %v: asked %d times, want %d (%v)", sidecarExpiry, f.decisions.Load(), asked, err)
	}
	now = now.Add(time.Millisecond)
	if _, err := r.Decide(t.Context(), read()); err != nil || f.decisions.Load() != asked+1 {
		t.Fatalf("after %v: asked %d times, want %d (%v)", sidecarExpiry, f.decisions.Load(), asked+1, err)
	}
	if _, err := r.Decide(t.Context(), read()); err != nil || f.decisions.Load() != asked+1 {
		t.Fatalf("relearnt: asked %d times, want %d (%v)", f.decisions.Load(), asked+1, err)
	}
}

// TestRemoteMemoryEndsWithTheConnections: when the sidecar closes the
// connections a decision was learnt over, it is asked again.
func TestRemoteMemoryEndsWithTheConnections(t *testing.T) {
	f := newFakeSidecar(t, allowRead, http.StatusOK, compiled(t, false, "toolgate_decision = "+allowRead))
	r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{})
	learn(t, r, read())
	asked, conns := f.decisions.Load(), r.changes.Load()
	f.CloseClientConnections()
	waitForConnectionChange(t, r, conns)
	if _, err := r.Decide(t.Context(), read()); err != nil || f.decisions.Load() != asked+1 {
		t.Fatalf("after the connections closed: asked %d times, want %d (%v)", f.decisions.Load(), asked+1, err)
	}
}

// TestRemoteTimeoutForgets: a sidecar that stops answering without closing
// its connections (hung) is noticed by the first request that times out;
// from then on nothing remembered answers, every call waits for the
// sidecar and is denied when it does not answer.
func TestRemoteTimeoutForgets(t *testing.T) {
	var hung atomic.Bool
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hung.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		if r.URL.Path == compilePath {
			io.WriteString(w, compiled(t, false, "toolgate_decision = "+allowRead))
			return
		}
		io.WriteString(w, `{"result":`+allowRead+`}`)
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	r := NewRemote(srv.URL, []byte(policyToken), RemoteOptions{Timeout: 200 * time.Millisecond})
	learn(t, r, read())
	hung.Store(true)
	// A call nothing was remembered for asks, and times out.
	other := with(read(), func(in *Input) { in.Tool = "ha_history" })
	if d, err := r.Decide(t.Context(), other); !errors.Is(err, ErrUnavailable) || d.Decision != Deny {
		t.Fatalf("hung sidecar: %+v, %v; want deny, unavailable", d, err)
	}
	if d, err := r.Decide(t.Context(), read()); !errors.Is(err, ErrUnavailable) || d.Decision != Deny {
		t.Fatalf("the remembered read after a timeout: %+v, %v; want deny, unavailable", d, err)
	}
}

// TestRemoteProbeAsks: readiness is the sidecar's answer now, never a
// remembered one.
func TestRemoteProbeAsks(t *testing.T) {
	f := newFakeSidecar(t, denyAnything, http.StatusOK, compiled(t, false, "toolgate_decision = "+denyAnything))
	r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{})
	for i := range 3 {
		if err := Ready(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		if n := f.decisions.Load(); n != int64(i+1) {
			t.Fatalf("probe %d: %d decisions asked", i+1, n)
		}
	}
}

// TestRemotePartialEvaluationSendsTheKnownPartOnly: the Compile API request
// is exactly what the sidecar's system policy accepts, and carries none of
// the per-call fields (no arguments, user or time twice on the wire).
func TestRemotePartialEvaluationSendsTheKnownPartOnly(t *testing.T) {
	f := newFakeSidecar(t, allowRead, http.StatusOK, `{"result":{}}`)
	r := NewRemote(f.URL, []byte(policyToken), RemoteOptions{})
	withArgs := read()
	noArgs := with(read(), func(in *Input) { in.Args = map[string]any{} })
	for _, in := range []Input{withArgs, noArgs} {
		if _, err := r.Decide(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.compileBodies) != 2 {
		t.Fatalf("%d partial evaluations, want 2", len(f.compileBodies))
	}
	want := []struct {
		unknowns []any
		noArgs   bool
	}{
		{[]any{"input.user", "input.args", "input.ticket", "input.time", "input.preview"}, false},
		{[]any{"input.user", "input.time"}, true},
	}
	for i, body := range f.compileBodies {
		if body["query"] != "toolgate_decision = data.toolgate.authz.decision" || len(body) != 3 {
			t.Errorf("request %d: %v", i, body)
		}
		if !reflect.DeepEqual(body["unknowns"], want[i].unknowns) {
			t.Errorf("request %d: unknowns %v, want %v", i, body["unknowns"], want[i].unknowns)
		}
		in, _ := body["input"].(map[string]any)
		for _, v := range []string{"user", "time", "preview"} {
			if _, ok := in[v]; ok {
				t.Errorf("request %d: input.%s sent: %v", i, v, in)
			}
		}
		_, hasArgs := in["args"]
		_, hasTicket := in["ticket"]
		if hasArgs != want[i].noArgs || hasTicket != want[i].noArgs {
			t.Errorf("request %d: input %v, want args and ticket only when static", i, in)
		}
	}
}

// TestStaticInputIsTheStaticPart: the sidecar's partial evaluation is given
// exactly the fields the memory's key holds, so it cannot prove a decision
// constant over a field the key does not tell apart.
func TestStaticInputIsTheStaticPart(t *testing.T) {
	var items []string
	for _, it := range read().staticItems() {
		items = append(items, strings.Trim(it[0].String(), `"`))
	}
	var sent []string
	typ := reflect.TypeFor[staticInput]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "args" && name != "ticket" { // only with noArgs
			sent = append(sent, name)
		}
	}
	slices.Sort(items)
	slices.Sort(sent)
	if !slices.Equal(items, sent) {
		t.Errorf("static items %v, sent to the sidecar %v", items, sent)
	}
	b, err := json.Marshal(read().staticInput(true))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"args":{}`) || !strings.Contains(string(b), `"ticket":{"state":"none","force":false}`) {
		t.Errorf("static part without arguments: %s", b)
	}
}
