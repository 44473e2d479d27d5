package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/toolgate/toolgate/policies"
)

// policyFS builds a policy directory with one authz.rego.
func policyFS(rego string, extra fstest.MapFS) fstest.MapFS {
	m := fstest.MapFS{
		"authz.rego":                  {Data: []byte(rego)},
		"data/toolgate/services.json": {Data: []byte(`{"services": {}}`)},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

const header = "package toolgate.authz\n\n"

func TestNewEmbeddedRejectsBrokenPolicy(t *testing.T) {
	tests := []struct {
		name string
		fsys fs.FS
	}{
		{"syntax error", policyFS(header+"decision := {\n", nil)},
		{"rego v0 syntax", policyFS(header+"decision = x { x := 1 }\n", nil)},
		{"compile error", policyFS(header+"decision := x if { y == 1 }\n", nil)},
		{"no entry point", policyFS(header+"other := 1\n", nil)},
		{"no rego at all", fstest.MapFS{"data/toolgate/services.json": {Data: []byte(`{}`)}}},
		{"empty fs", fstest.MapFS{}},
		{"data not json", policyFS(header+"decision := 1\n", fstest.MapFS{
			"data/toolgate/groups.json": {Data: []byte(`{"groups": [`)},
		})},
		{"conflicting data", policyFS(header+"decision := 1\n", fstest.MapFS{
			"data/toolgate/more.json": {Data: []byte(`{"services": ["web"]}`)},
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEmbedded(t.Context(), tc.fsys)
			if err == nil {
				t.Fatalf("NewEmbedded succeeded (%v), want error", e)
			}
		})
	}
}

func TestNewEmbeddedSkipsTestFiles(t *testing.T) {
	fsys := policyFS(header+`decision := {"decision": "allow", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`+"\n",
		fstest.MapFS{
			// Broken on purpose: loading it would fail the constructor, and
			// its rule would conflict with decision.
			"authz_test.rego": {Data: []byte(header + "decision := {\n")},
		})
	e, err := NewEmbedded(t.Context(), fsys)
	if err != nil {
		t.Fatalf("NewEmbedded: %v", err)
	}
	if d, err := e.Decide(t.Context(), read()); err != nil || d.Decision != Allow {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
}

// TestEmbeddedFailsClosed covers policies that load but answer badly.
func TestEmbeddedFailsClosed(t *testing.T) {
	tests := []struct {
		name string
		rego string
		want error
	}{
		{"undefined", `decision := {"decision": "allow", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0} if input.action == "never"`, ErrUndefined},
		{"unknown decision", `decision := {"decision": "maybe", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"unknown approval", `decision := {"decision": "confirm", "reason": "r", "reason_id": "r", "approval": "anyone", "ttl_seconds": 600}`, ErrInvalidDecision},
		{"not an object", `decision := "allow"`, ErrInvalidDecision},
		{"missing reason", `decision := {"decision": "allow", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"reason not a string", `decision := {"decision": "allow", "reason": 1, "reason_id": "r", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"missing reason id", `decision := {"decision": "allow", "reason": "r", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"reason id not a string", `decision := {"decision": "allow", "reason": "r", "reason_id": ["r"], "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"reason id not an id", `decision := {"decision": "allow", "reason": "r", "reason_id": "Read Allowed", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"fractional ttl", `decision := {"decision": "confirm", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 1.5}`, ErrInvalidDecision},
		{"confirm without ttl", `decision := {"decision": "confirm", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": 0}`, ErrInvalidDecision},
		{"builtin error", `decision := {"decision": "allow", "reason": "r", "reason_id": "r", "approval": "model", "ttl_seconds": to_number(input.tool)}`, ErrEvaluation},
		{"conflict", "decision := 1 if input.write == false\n\ndecision := 2 if input.action == \"call\"", ErrEvaluation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEmbedded(t.Context(), policyFS(header+tc.rego+"\n", nil))
			if err != nil {
				t.Fatalf("NewEmbedded: %v", err)
			}
			d, err := e.Decide(t.Context(), read())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if d.Decision != Deny {
				t.Errorf("decision with error = %+v, want deny", d)
			}
		})
	}
}

func TestEmbeddedRejectsArgsWithoutJSONForm(t *testing.T) {
	e, err := NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	in := write("ha_HassLightSet")
	in.Args = map[string]any{"x": math.NaN()}
	if d, err := e.Decide(t.Context(), in); !errors.Is(err, ErrEvaluation) || d.Decision != Deny {
		t.Fatalf("got %+v, %v; want deny and ErrEvaluation", d, err)
	}
}

// TestInputValueMatchesJSON: the embedded engine's directly built input must
// equal what OPA parses from the JSON the Remote engine sends.
func TestInputValueMatchesJSON(t *testing.T) {
	type custom struct {
		A string `json:"a"`
		B []int  `json:"b,omitempty"`
	}
	inputs := map[string]Input{
		"zero":                  {},
		"typical":               write("ha_HassLightSet"),
		"preview without facts": with(write("ha_HassTurnOn"), func(in *Input) { in.Preview = &Preview{} }),
		"preview facts": with(write("ha_HassTurnOn"), func(in *Input) {
			in.Preview = &Preview{Facts: map[string]any{"domains": []any{"lock"}, "unresolved": false, "kind": "intent"}}
		}),
		"nil args": with(read(), func(in *Input) { in.Args = nil; in.Client.Groups = nil }),
		"nested args": with(read(), func(in *Input) {
			in.Args = map[string]any{
				"force": true, "n": 3, "f": 2.5, "big": int64(1) << 53, "num": json.Number("12.50"),
				"list":   []any{"a", 1.0, nil, map[string]any{"k": []any{}}},
				"nilmap": map[string]any(nil), "nilslice": []any(nil),
				"strings": []string{"x", "y"}, "nilstrings": []string(nil),
				"custom": custom{A: "v"}, "ptr": &custom{B: []int{1}},
			}
		}),
		"all flags": with(read(), func(in *Input) {
			in.Annotations = Annotations{ReadOnly: true, Destructive: true, Idempotent: true, OpenWorld: true}
			in.Ticket = Ticket{State: "valid", Force: true}
			in.Action, in.Transport = ActionList, "stdio"
		}),
		"time with nanos and zone": with(read(), func(in *Input) {
			in.Time = time.Date(2026, 12, 2, 16, 0, 0, 123456789, time.FixedZone("CET", 3600))
		}),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got, err := in.astValue()
			if err != nil {
				t.Fatalf("astValue: %v", err)
			}
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ast.ValueFromReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got.Compare(want) != 0 {
				t.Errorf("direct value differs from JSON\n got  %v\n want %v", got, want)
			}
		})
	}
}

func TestEmbeddedConcurrentDecide(t *testing.T) {
	e, err := NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]Decision, len(decisionTable))
	for i, tc := range decisionTable {
		if want[i], err = e.Decide(t.Context(), tc.in); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i, tc := range decisionTable {
				d, err := e.Decide(t.Context(), tc.in)
				if err != nil || d != want[i] {
					t.Errorf("%s: concurrent Decide = %+v, %v; want %+v", tc.name, d, err, want[i])
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkEmbeddedDecide(b *testing.B) {
	e, err := NewEmbedded(b.Context(), policies.FS)
	if err != nil {
		b.Fatal(err)
	}
	in := write("ha_climate_set_temperature")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Decide(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}
