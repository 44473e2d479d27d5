package counter_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/demo/counter"
)

func TestDemoTools(t *testing.T) {
	state := counter.New()
	svc := toolkittest.Start(t, "demo", state.Tools())

	got, isErr := svc.Call(t, "demo_echo", map[string]any{"text": "hello"}, "")
	if isErr || got["text"] != "hello" {
		t.Fatalf("echo: %v", got)
	}

	writes := []struct {
		tool    string
		args    map[string]any
		preview map[string]any
		after   int64
	}{
		{"demo_counter_add", map[string]any{"amount": 7}, map[string]any{"current": float64(0), "new": float64(7)}, 7},
		{"demo_counter_add", map[string]any{"amount": 3}, map[string]any{"current": float64(7), "new": float64(10)}, 10},
		{"demo_counter_reset", map[string]any{}, map[string]any{"current": float64(10), "new": float64(0)}, 0},
	}
	for i, w := range writes {
		prev, isErr := svc.Call(t, w.tool, w.args, "")
		p, _ := prev["preview"].(map[string]any)
		if isErr || prev["status"] != "preview" || p["current"] != w.preview["current"] || p["new"] != w.preview["new"] {
			t.Fatalf("%s preview: %v", w.tool, prev)
		}
		if i == 0 && state.Value() != 0 {
			t.Fatal("a preview changed the counter")
		}
		tok := svc.Approve(t, "demo", w.tool, w.args, "ticket-"+string(rune('a'+i)))
		done, isErr := svc.Call(t, w.tool, w.args, tok)
		if isErr || done["status"] != "applied" || state.Value() != w.after {
			t.Fatalf("%s apply: %v (value %d)", w.tool, done, state.Value())
		}
	}

	// Resetting a zero counter has nothing to preview.
	if got, isErr := svc.Call(t, "demo_counter_reset", map[string]any{}, ""); !isErr {
		t.Fatalf("reset at zero: %v", got)
	}

	tok := svc.Approve(t, "demo", "demo_note_touch", map[string]any{"note": "hi"}, "note-1")
	if done, isErr := svc.Call(t, "demo_note_touch", map[string]any{"note": "hi"}, tok); isErr || done["status"] != "applied" {
		t.Fatalf("note: %v", done)
	}
	if got, _ := svc.Call(t, "demo_counter_get", map[string]any{}, ""); got["note"] != "hi" || got["value"] != float64(0) {
		t.Fatalf("get: %v", got)
	}
}

func TestDemoDocTable(t *testing.T) {
	svc := toolkittest.Start(t, "demo", counter.New().Tools())
	svc.CheckDocTable(t, "../../../docs/services/demo.md")
}
