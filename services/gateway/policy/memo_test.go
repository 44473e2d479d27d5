package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/toolgate/toolgate/internal/approval"
)

// TestInputReads: what a residual program reads decides whether its
// answers may be remembered, and by which values.
func TestInputReads(t *testing.T) {
	cases := []struct {
		name  string
		rego  string
		reads []string // nil: not remembered
	}{
		{"paths", `p if { input.args.force == true; input.ticket.force == false }`, []string{"args.force", "ticket.force"}},
		{"a path read twice", `p if input.args.force
q if input.args.force`, []string{"args.force"}},
		{"a variable key reads the object", `p if { some k; input.args[k] == 1 }`, []string{"args"}},
		{"a key read from the input", `p if input.args[input.user] == 1`, []string{"args", "user"}},
		{"an array index", `p if input.args.items[0] == 1`, []string{"args.items[0]"}},
		{"in a function", `f(x) := x + input.args.n
p if f(1) > 2`, []string{"args.n"}},
		{"in a comprehension", `p if count([x | some x in input.args.list; x > 1]) > 0`, []string{"args.list"}},
		{"the whole input", `p if object.get(input, "user", "") == "a"`, nil},
		{"the time", `p if input.time > "2026"`, nil},
		{"the input replaced", `q if input.user == "a"
p if q with input.user as "a"`, nil},
		{"the clock", `p if { time.now_ns() > 0; input.user == "a" }`, nil},
		{"a random number", `p if { rand.intn("x", 10) > 0; input.user == "a" }`, nil},
		{"an HTTP request", `p if { http.send({"method": "get", "url": "http://x"}).status_code == 200 }`, nil},
		{"no input at all", `p if data.x == 1`, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mod, err := ast.ParseModuleWithOpts("t.rego", "package t\n\n"+tc.rego, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			c := ast.NewCompiler()
			c.Compile(map[string]*ast.Module{"t.rego": mod})
			if c.Failed() {
				t.Fatal(c.Errors)
			}
			reads, ok := inputReads(c.Modules)
			if tc.reads == nil {
				if ok {
					t.Fatalf("remembered by %v, want not remembered", reads)
				}
				return
			}
			if !ok {
				t.Fatal("not remembered")
			}
			got := []string{}
			for _, r := range reads {
				got = append(got, r.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.reads) {
				t.Fatalf("reads %v, want %v", got, tc.reads)
			}
		})
	}
}

// TestPreviewDecisionsAreRemembered: a write of the shipped policy is
// decided by its residual, whose answers are remembered per the values it
// reads (force in the arguments and the ticket, the preview's unresolved
// fact); other arguments, users and times share them, and a forced write
// or an unresolved preview still gets the person's approval it needs.
func TestPreviewDecisionsAreRemembered(t *testing.T) {
	e, ref := newShipped(t), newShipped(t)
	base := with(write("demo_counter_add"), func(in *Input) { in.Service = "demo" })
	unresolved := haFacts([]any{"light"}, nil)
	unresolved["unresolved"] = true
	var hits int64
	for i := range 200 {
		in := base
		in.Args = map[string]any{"amount": i}
		in.User = []string{"alice", "bob", ""}[i%3]
		in.Time = base.Time.Add(time.Duration(i) * time.Second)
		switch i % 5 {
		case 1:
			in.Preview = &Preview{}
		case 2:
			in.Preview = &Preview{Facts: haFacts([]any{"light"}, nil)}
		case 3:
			in.Args["force"] = true
		case 4:
			in.Preview = &Preview{Facts: unresolved}
		}
		got, gerr := e.Decide(t.Context(), in)
		want, werr := ref.evaluate(t.Context(), in)
		if gerr != nil || werr != nil || got != want {
			t.Fatalf("call %d: %+v, %v; full evaluation %+v, %v", i, got, gerr, want, werr)
		}
		if human := i%5 == 3 || i%5 == 4; human != (got.Approval == approval.Human) {
			t.Fatalf("call %d: approval %s", i, got.Approval)
		}
		key, _ := in.staticKey()
		k, _ := e.plans.get(key)
		if k.residual == nil || k.residual.answers == nil {
			t.Fatal("the write's residual is not remembered")
		}
		hits = k.residual.hits.Load()
	}
	if e.fullEvals.Load() != 1+residualChecks {
		t.Errorf("%d full evaluations, want %d", e.fullEvals.Load(), 1+residualChecks)
	}
	// 183 decisions by the residual alone; the distinct values it reads
	// are few, so all but their first answers come from memory.
	if hits < 150 {
		t.Errorf("%d answers from memory of 200 decisions", hits)
	}
}

// TestFindReadsWhatThePolicySees: the values a memory key is made of are
// exactly those at the same paths of the input the policy evaluates.
func TestFindReadsWhatThePolicySees(t *testing.T) {
	paths := []string{
		"args", "args.force", "args.nested.force", "args.list[1]", "args.list[1].x", "args.nested[0]", "args.missing.x",
		"user", "ticket", "ticket.force", "ticket.state.x", "preview", "preview.facts", "preview.facts.unresolved",
		"preview.facts.domains[0]", "preview.other", "client.name", "client.groups[0]", "tool", "nosuch",
	}
	var inputs []Input
	for _, in := range shippedCases() {
		inputs = append(inputs, variants(in)...)
	}
	inputs = append(inputs,
		with(write("t"), func(in *Input) {
			in.Args = map[string]any{"list": []any{"a", map[string]any{"x": true}}, "nested": map[string]any{"force": 1.5}}
		}),
		with(write("t"), func(in *Input) { in.Args = nil }),
		with(write("t"), func(in *Input) { in.Args = map[string]any{"nested": []any{map[string]any{}}, "list": "s"} }),
		with(write("t"), func(in *Input) { in.Preview = &Preview{Facts: nil} }),
	)
	for _, p := range paths {
		ref := ast.MustParseRef("input." + p)[1:]
		for _, in := range inputs {
			whole, err := in.astValue()
			if err != nil {
				t.Fatal(err)
			}
			want, werr := whole.Find(ref)
			got, present, err := in.find(ref)
			if err != nil {
				t.Fatalf("%s of %+v: %v", p, in, err)
			}
			if present != (werr == nil) || (present && got.Compare(want) != 0) {
				t.Fatalf("%s of %+v: %v (present %t), want %v (%v)", p, in, got, present, want, werr)
			}
		}
	}
}
