package policy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

func newShipped(t testing.TB) *Embedded {
	t.Helper()
	e, err := NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// variants returns in with every per-call field changed in ways the shipped
// policy cares about (force in the arguments or the ticket) and ways it
// does not (other arguments, ticket state, user, time, no arguments).
func variants(in Input) []Input {
	return []Input{
		in,
		with(in, func(in *Input) { in.Args = map[string]any{} }),
		with(in, func(in *Input) { in.Args = map[string]any{"force": true} }),
		with(in, func(in *Input) { in.Args = map[string]any{"force": false, "x": 1} }),
		with(in, func(in *Input) { in.Args = map[string]any{"nested": map[string]any{"force": true}} }),
		with(in, func(in *Input) { in.Args = map[string]any{"action": "start"} }),
		with(in, func(in *Input) { in.Args = map[string]any{"action": "stop"} }),
		with(in, func(in *Input) { in.Args = map[string]any{"action": "start", "force": true} }),
		with(in, func(in *Input) { in.Args = map[string]any{"action": []any{"start"}} }),
		with(in, func(in *Input) { in.Ticket = Ticket{State: "valid"} }),
		with(in, func(in *Input) { in.Ticket = Ticket{State: "valid", Force: true} }),
		with(in, func(in *Input) { in.Args = map[string]any{}; in.Ticket = Ticket{State: "none", Force: true} }),
		with(in, func(in *Input) { in.User = "" }),
		with(in, func(in *Input) { in.User = "mallory@example.org" }),
		with(in, func(in *Input) { in.Time = in.Time.Add(7 * time.Hour) }),
		with(in, func(in *Input) { in.Preview = &Preview{} }),
		with(in, func(in *Input) { in.Preview = &Preview{Facts: haFacts([]any{"lock"}, nil)} }),
		with(in, func(in *Input) { in.Preview = &Preview{Facts: haFacts([]any{"light"}, nil)} }),
		with(in, func(in *Input) {
			in.Args = map[string]any{}
			in.Preview = &Preview{Facts: haFacts([]any{"switch"}, nil)}
		}),
	}
}

// shippedCases are static parts across every outcome of the shipped policy.
func shippedCases() []Input {
	var out []Input
	for _, tc := range decisionTable {
		out = append(out, tc.in)
	}
	for _, in := range []Input{
		read(),
		with(read(), func(in *Input) { in.Service, in.Tool = "demo", "demo_echo" }),
		write("ha_climate_set_temperature"),
		write("ha_HassTurnOn"),
		write("ha_HassUnlock"),
		with(write("demo_counter_reset"), func(in *Input) { in.Service = "demo"; in.Annotations.Destructive = true }),
		with(write("demo_note_touch"), func(in *Input) { in.Service = "demo" }),
		with(write("ha_climate_set_temperature"), groups("readonly")),
		with(read(), groups("guests")),
		with(read(), groups()),
		with(read(), func(in *Input) { in.Client.Groups = nil }),
		with(read(), func(in *Input) { in.Service, in.Tool = "unraid", "unraid_array_status" }),
		// End-user roles narrow what the client's groups allow.
		with(read(), func(in *Input) {
			in.Client.Groups, in.UserRole, in.Service, in.Tool = []string{"admins"}, "admin", "unraid", "unraid_array_status"
		}),
		with(read(), func(in *Input) {
			in.Client.Groups, in.UserRole, in.Service, in.Tool = []string{"admins"}, "user", "unraid", "unraid_array_status"
		}),
		with(read(), func(in *Input) { in.UserRole = "pending" }),
		with(read(), func(in *Input) { in.UserRole = "owner" }),
		with(write("ha_HassLightSet"), func(in *Input) { in.UserRole = "user" }),
	} {
		out = append(out, in, with(in, func(in *Input) { in.Action = ActionList }))
	}
	return out
}

// TestRememberedDecisionsEqualFullEvaluation runs every static part of the
// shipped policy with every variant of its per-call fields, in an order
// where a remembered answer would be reused wherever one exists, and holds
// each answer to a full evaluation of the real Rego.
func TestRememberedDecisionsEqualFullEvaluation(t *testing.T) {
	e, ref := newShipped(t), newShipped(t)
	calls := holdToReference(t, e.Decide, ref.evaluate, 1, 3)
	if e.fullEvals.Load() >= int64(calls) {
		t.Errorf("nothing was remembered: %d full evaluations for %d decisions", e.fullEvals.Load(), calls)
	}
}

// TestForceIsNeverRemembered: the first call of a write without force
// must not decide a later one with force, in the arguments or the ticket.
func TestForceIsNeverRemembered(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newEngine func(*testing.T) *decisionCache) {
		e := newEngine(t)
		unforced := write("ha_climate_set_temperature")
		for range 3 {
			if d, err := e.Decide(t.Context(), unforced); err != nil || d.Approval != approval.Model {
				t.Fatalf("unforced write: %+v, %v", d, err)
			}
		}
		for _, forced := range []Input{
			with(unforced, func(in *Input) { in.Args = map[string]any{"force": true} }),
			with(unforced, func(in *Input) { in.Ticket.Force = true }),
		} {
			if d, err := e.Decide(t.Context(), forced); err != nil || d.Approval != approval.Human {
				t.Fatalf("forced write: %+v, %v; want human approval", d, err)
			}
		}
	})
}

// forEachEngine runs test with a constructor of fresh engines of each kind
// over the shipped policy: embedded, and asking a real sidecar. A sidecar
// engine's first connection is open and its counters at zero (what a call
// learns while a connection opens is not kept).
func forEachEngine(t *testing.T, test func(t *testing.T, newEngine func(*testing.T) *decisionCache)) {
	sidecar := opatest.Start(t, policiesDir(t))
	engines := []struct {
		name string
		new  func(*testing.T) *decisionCache
	}{
		{"embedded", func(t *testing.T) *decisionCache { return newShipped(t).decisionCache }},
		{"sidecar", func(t *testing.T) *decisionCache {
			r := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second})
			if _, err := r.Decide(t.Context(), nobody()); err != nil {
				t.Fatal(err)
			}
			r.fullEvals.Store(0)
			r.partialEvals.Store(0)
			return r.decisionCache
		}},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e.new) })
	}
}

// TestContainerStopIsNeverDecidedAsAStart: a stop of a container that
// follows many starts (past the residual's checks, and with the starts'
// answers remembered) still needs a person, and starts stay the model's.
func TestContainerStopIsNeverDecidedAsAStart(t *testing.T) {
	e := newShipped(t)
	start := unraidWrite("unraid_container_control", map[string]any{"container": "plex", "action": "start"})
	stop := with(start, func(in *Input) { in.Args = map[string]any{"container": "plex", "action": "stop"} })
	for i := range 3 * residualChecks {
		if d, err := e.Decide(t.Context(), start); err != nil || d.Approval != approval.Model || d.Decision != Confirm {
			t.Fatalf("start %d: %+v, %v", i, d, err)
		}
	}
	for i := range 3 {
		if d, err := e.Decide(t.Context(), stop); err != nil || d.Approval != approval.Human {
			t.Fatalf("stop %d after starts: %+v, %v; want human approval", i, d, err)
		}
		if d, err := e.Decide(t.Context(), start); err != nil || d.Approval != approval.Model {
			t.Fatalf("start after a stop: %+v, %v", d, err)
		}
	}
	if e.residualEvals.Load() == 0 {
		t.Error("no decision was made by a residual: the container's action should not cost a full evaluation every call")
	}
}

// TestWhatIsRemembered counts full evaluations (requests to the sidecar)
// and partial evaluations: a read, and the list question about any tool,
// are evaluated once per static part (and partially evaluated once); a
// write call with arguments (force may be among them) until its residual
// agreed residualChecks times, and by the residual after that.
func TestWhatIsRemembered(t *testing.T) {
	cases := []struct {
		name     string
		in       Input
		vary     bool // change arguments, user and time on every call
		maxEvals int64
	}{
		{"read with changing arguments, users and times", read(), true, 1},
		{"denied read", with(read(), groups("guests")), true, 1},
		{"list a write tool", with(write("ha_HassUnlock"), func(in *Input) { in.Action, in.Args = ActionList, map[string]any{} }), false, 1},
		{"preview of a write", with(write("demo_counter_add"), func(in *Input) {
			in.Service, in.Preview = "demo", &Preview{Facts: map[string]any{"unresolved": false}}
		}), true, 1 + residualChecks},
		{"write without arguments or ticket", with(write("demo_counter_reset"), func(in *Input) {
			in.Service, in.Annotations.Destructive, in.Args = "demo", true, map[string]any{}
		}), false, 1},
		// The first call, then its residual checked against the full
		// evaluation residualChecks times; after that the residual alone.
		{"write with arguments", write("ha_climate_set_temperature"), true, 1 + residualChecks},
		{"write by a read-only group (denied whatever the arguments)", with(write("ha_climate_set_temperature"), groups("readonly")), true, 1},
	}
	forEachEngine(t, func(t *testing.T, newEngine func(*testing.T) *decisionCache) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				e := newEngine(t)
				decideHundredTimes(t, e.Decide, tc.in, tc.vary)
				if n := e.fullEvals.Load(); n != tc.maxEvals {
					t.Errorf("%d full evaluations for 100 decisions, want %d", n, tc.maxEvals)
				}
				if n := e.partialEvals.Load(); n != 1 {
					t.Errorf("%d partial evaluations, want 1", n)
				}
			})
		}
	})
}

// TestPoliciesThatReadPerCallFieldsAreEvaluatedEveryTime: whatever a policy
// reads among the per-call fields, its decisions are never remembered. Each
// policy allows exactly the input built by allow and denies deny, which
// share their static part.
func TestPoliciesThatReadPerCallFieldsAreEvaluatedEveryTime(t *testing.T) {
	const allowAll = `{"decision": "allow", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`
	const denyAll = `{"decision": "deny", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`
	rule := func(cond string) string {
		return header + "default decision := " + denyAll + "\n\ndecision := " + allowAll + " if {\n\t" + cond + "\n}\n"
	}
	cases := []struct {
		name        string
		rego        string
		allow, deny func(*Input)
		// remembered: the residual's answers are remembered per the
		// values it reads (memo.go), so of the residual's six answers
		// four come from memory (the first allow and deny are evaluated).
		remembered bool
	}{
		{"user", rule(`input.user == "alice"`),
			func(in *Input) { in.User = "alice" }, func(in *Input) { in.User = "bob" }, true},
		{"an argument", rule(`input.args.entity_id == "light.kitchen"`),
			func(in *Input) {}, func(in *Input) { in.Args = map[string]any{"entity_id": "lock.door"} }, true},
		{"how many arguments", rule(`count(input.args) == 1`),
			func(in *Input) {}, func(in *Input) { in.Args = map[string]any{"a": 1, "b": 2} }, true},
		{"an argument named by another", rule(`input.args[input.user] == "light.kitchen"`),
			func(in *Input) { in.Args = map[string]any{"alice": "light.kitchen"} }, func(in *Input) { in.Args = map[string]any{"alice": "lock.door"} }, true},
		{"ticket state", rule(`input.ticket.state == "valid"`),
			func(in *Input) { in.Ticket.State = "valid" }, func(in *Input) {}, true},
		{"time of day", rule(`time.clock(time.parse_rfc3339_ns(input.time))[0] < 18`),
			func(in *Input) {}, func(in *Input) { in.Time = in.Time.Add(5 * time.Hour) }, false},
		{"the whole input", rule(`object.get(input, ["args", "entity_id"], "") == "light.kitchen"`),
			func(in *Input) {}, func(in *Input) { in.Args = map[string]any{"entity_id": "lock.door"} }, false},
		{"the input as JSON", rule(`contains(json.marshal(input), "alice")`),
			func(in *Input) {}, func(in *Input) { in.User = "bob" }, false},
		{"the clock besides an argument", rule(`time.now_ns() > 0
	input.args.entity_id == "light.kitchen"`),
			func(in *Input) {}, func(in *Input) { in.Args = map[string]any{"entity_id": "lock.door"} }, false},
		{"an else chain", header + "decision := " + allowAll + " if {\n\tinput.user == \"alice\"\n} else := " + denyAll + "\n",
			func(in *Input) { in.User = "alice" }, func(in *Input) { in.User = "bob" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEmbedded(t.Context(), policyFS(tc.rego, nil))
			if err != nil {
				t.Fatal(err)
			}
			base := read()
			base.User = "alice"
			allow, deny := with(base, tc.allow), with(base, tc.deny)
			ka, _ := allow.staticKey()
			kd, _ := deny.staticKey()
			if ka != kd {
				t.Fatal("test inputs differ in their static part")
			}
			for i := range 6 {
				in, want := allow, Allow
				if i%2 == 1 {
					in, want = deny, Deny
				}
				if d, err := e.Decide(t.Context(), in); err != nil || d.Decision != want {
					t.Fatalf("call %d: %+v, %v; want %s", i, d, err, want)
				}
			}
			if e.fullEvals.Load() != 6 {
				t.Errorf("%d full evaluations for 6 decisions: something was remembered", e.fullEvals.Load())
			}
			// Decided by the residual alone (where one compiles), the
			// answers are the same.
			r, err := NewEmbedded(t.Context(), policyFS(tc.rego, nil))
			if err != nil {
				t.Fatal(err)
			}
			r.residualChecks = 0
			for i := range 6 {
				in, want := allow, Allow
				if i%2 == 1 {
					in, want = deny, Deny
				}
				if d, err := r.Decide(t.Context(), in); err != nil || d.Decision != want {
					t.Fatalf("residual, call %d: %+v, %v; want %s", i, d, err, want)
				}
			}
			t.Logf("%d of 5 later decisions by the residual", r.residualEvals.Load()-1)
			k, _ := r.plans.get(ka)
			hits := int64(0)
			if k.residual != nil {
				hits = k.residual.hits.Load()
				t.Logf("residual reads %v, remembered: %t", k.residual.reads, k.residual.answers != nil)
			}
			switch {
			case tc.remembered && hits != 4:
				t.Errorf("%d of the residual's answers from memory, want 4", hits)
			case !tc.remembered && hits != 0:
				t.Errorf("%d of the residual's answers from memory, want none", hits)
			}
		})
	}
}

// TestResidualDecisionsEqualFullEvaluation: decided by residuals alone (no
// checks against the full evaluation), every static part of the shipped
// policy with every variant of its per-call fields answers exactly as the
// full evaluation of the real Rego.
func TestResidualDecisionsEqualFullEvaluation(t *testing.T) {
	e, ref := newShipped(t), newShipped(t)
	e.residualChecks = 0
	calls := holdToReference(t, e.Decide, ref.evaluate, 3, 3)
	if e.residualEvals.Load() == 0 {
		t.Error("no decision was made by a residual")
	}
	t.Logf("%d decisions: %d full evaluations, %d by residuals", calls, e.fullEvals.Load(), e.residualEvals.Load())
}

// TestDisagreeingResidualIsDropped: a residual that answers otherwise than
// the full evaluation during its checks is never used again for its static
// part.
func TestDisagreeingResidualIsDropped(t *testing.T) {
	const allowAll = `{"decision": "allow", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`
	wrong, err := NewEmbedded(t.Context(), policyFS(header+"decision := "+allowAll+" if input.user != \"\"\n", nil))
	if err != nil {
		t.Fatal(err)
	}
	in := with(write("ha_climate_set_temperature"), groups("readonly")) // denied
	in.User = "alice"
	wrong.residualChecks = 0
	if d, _ := wrong.Decide(t.Context(), in); d.Decision != Allow {
		t.Fatalf("the wrong policy: %+v", d)
	}
	key, _ := in.staticKey()
	k, _ := wrong.plans.get(key)
	if k.residual == nil {
		t.Fatal("the wrong policy has no residual")
	}
	e := newShipped(t)
	e.plans.put(key, plan{residual: k.residual, agreements: new(atomic.Int32)})
	for i := range 3 {
		if d, err := e.Decide(t.Context(), in); err != nil || d.Decision != Deny {
			t.Fatalf("call %d: %+v, %v; want the full evaluation's deny", i, d, err)
		}
	}
	if got, _ := e.plans.get(key); got.residual != nil {
		t.Error("the disagreeing residual is still used")
	}
	if e.residualEvals.Load() != 1 {
		t.Errorf("%d residual evaluations, want the one that disagreed", e.residualEvals.Load())
	}
}

// TestMemoryBelongsToOnePolicy: an engine loaded from changed data answers
// from that data, whatever an engine of the old data remembered.
func TestMemoryBelongsToOnePolicy(t *testing.T) {
	old := newShipped(t)
	in := read()
	if d, _ := old.Decide(t.Context(), in); d.Decision != Allow {
		t.Fatalf("shipped policy: %+v", d)
	}
	changed := fstest.MapFS{}
	for _, name := range []string{"authz.rego", "data/toolgate/services.json", "data/toolgate/tools.json", "data/toolgate/tickets.json"} {
		b, err := policies.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		changed[name] = &fstest.MapFile{Data: b}
	}
	changed["data/toolgate/groups.json"] = &fstest.MapFile{Data: []byte(`{"groups": {"users": {"services": ["web"], "read_only": false}}}`)}
	e, err := NewEmbedded(t.Context(), changed)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d, _ := e.Decide(t.Context(), in); d.Decision != Deny {
			t.Fatalf("changed data: %+v, want deny", d)
		}
	}
	if d, _ := old.Decide(t.Context(), in); d.Decision != Allow {
		t.Fatalf("old engine: %+v", d)
	}
}

// TestEveryInputFieldIsStaticOrPerCall: a field added to Input must be put
// on one side, or remembered decisions could ignore it.
func TestEveryInputFieldIsStaticOrPerCall(t *testing.T) {
	var fields []string
	typ := reflect.TypeFor[Input]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	var sides []string
	for _, it := range read().staticItems() {
		sides = append(sides, strings.Trim(it[0].String(), `"`))
	}
	for _, v := range perCallFields {
		if slices.Contains(sides, v) {
			t.Errorf("%s is both static and per-call", v)
		}
		sides = append(sides, v)
	}
	slices.Sort(fields)
	slices.Sort(sides)
	if !slices.Equal(fields, sides) {
		t.Errorf("Input fields %v, static and per-call fields %v", fields, sides)
	}
}

// TestOddGroupNamesAreNotRemembered: a group name containing the key's
// separator cannot make two clients share an answer.
func TestOddGroupNamesAreNotRemembered(t *testing.T) {
	e := newShipped(t)
	a := with(read(), groups("users\x00admins"))
	b := with(read(), groups("users", "admins"))
	if _, ok := a.staticKey(); ok {
		t.Fatal("a group with a NUL byte got a key")
	}
	da, _ := e.Decide(t.Context(), a)
	db, _ := e.Decide(t.Context(), b)
	if da.Decision != Deny || db.Decision != Allow {
		t.Fatalf("%+v / %+v", da, db)
	}
}

func BenchmarkEmbeddedDecideRemembered(b *testing.B) {
	e := newShipped(b)
	in := read()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Decide(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentFirstDecisions: many goroutines meet static parts for the
// first time together (partial evaluation next to full evaluations); under
// -race this holds the engine to sharing nothing it must not.
func TestConcurrentFirstDecisions(t *testing.T) {
	e, ref := newShipped(t), newShipped(t)
	cases := shippedCases()
	want := make([]Decision, len(cases))
	for i, in := range cases {
		want[i], _ = ref.evaluate(t.Context(), in)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range cases {
				i := (k + g*7) % len(cases)
				if d, _ := e.Decide(t.Context(), cases[i]); d != want[i] {
					t.Errorf("%+v: %+v, want %+v", cases[i], d, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkWriteDecision: a write with arguments, decided by the whole
// policy and by its residual (after the checks; the same values again, so
// from the residual's memory, memo.go), in one run.
func BenchmarkWriteDecision(b *testing.B) {
	e := newShipped(b)
	in := with(write("demo_counter_add"), func(in *Input) { in.Service, in.Args = "demo", map[string]any{"amount": 1} })
	for _, name := range []string{"full", "residual"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if name == "full" {
					_, err = e.evaluate(b.Context(), in)
				} else {
					_, err = e.Decide(b.Context(), in)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestResidualsAreShared: static parts whose partial evaluation leaves the
// same program (many clients of one group calling one tool) share one
// compiled residual, so memory grows with distinct residuals only.
func TestResidualsAreShared(t *testing.T) {
	e := newShipped(t)
	for i := range 50 {
		in := with(write("demo_counter_add"), func(in *Input) { in.Service, in.Args = "demo", map[string]any{"amount": i} })
		in.Client.Name = fmt.Sprintf("client-%d", i)
		if _, err := e.Decide(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		key, _ := in.staticKey()
		if k, _ := e.plans.get(key); k.residual == nil {
			t.Fatalf("client %d: no residual", i)
		}
	}
	if n := e.programs.len(); n != 1 {
		t.Errorf("%d compiled residuals for one tool and group, want 1", n)
	}
}

// decideFunc is an engine's Decide, or a reference evaluation.
type decideFunc func(context.Context, Input) (Decision, error)

// holdToReference runs every static part of the shipped policy with every
// variant of its per-call fields, shuffled (seeded), for rounds rounds, in
// an order where a remembered answer would be reused wherever one exists,
// and fails on the first answer of got that differs from want's. It
// returns how many calls it made.
func holdToReference(t *testing.T, got, want decideFunc, seed uint64, rounds int) int {
	t.Helper()
	var inputs []Input
	for _, in := range shippedCases() {
		inputs = append(inputs, variants(in)...)
	}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for round := range rounds {
		rng.Shuffle(len(inputs), func(i, j int) { inputs[i], inputs[j] = inputs[j], inputs[i] })
		for _, in := range inputs {
			g, gerr := got(t.Context(), in)
			w, werr := want(t.Context(), in)
			if g != w || (gerr == nil) != (werr == nil) {
				t.Fatalf("round %d: %+v\n got  %+v, %v\n want %+v, %v", round, in, g, gerr, w, werr)
			}
		}
	}
	return rounds * len(inputs)
}

// decideHundredTimes decides in 100 times, with its per-call fields
// (arguments, user, time) changed every time when vary, and fails unless
// every answer is the first.
func decideHundredTimes(t *testing.T, decide decideFunc, in Input, vary bool) {
	t.Helper()
	var first Decision
	for i := range 100 {
		in := in
		if vary {
			in.Args = map[string]any{"n": i, "entity_id": "light.x"}
			in.User = strings.Repeat("u", i%5)
			in.Time = in.Time.Add(time.Duration(i) * time.Minute)
		}
		d, err := decide(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = d
		} else if d != first {
			t.Fatalf("call %d: %+v, first %+v", i, d, first)
		}
	}
}
