package app_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/app"
)

// TestTruncatedPreviewGetsNoTicket: a preview that does not fit the result
// cap (the service's or the gateway's) is shown to nobody in full, so no
// ticket is issued for it and a low-risk write is not applied; the client
// is told to narrow the request.
func TestTruncatedPreviewGetsNoTicket(t *testing.T) {
	cases := []struct {
		name   string
		pad    int
		config func(*app.Config)
	}{
		{"over the service's cap", toolkit.DefaultMaxResultBytes + 1024, func(*app.Config) {}},
		{"over the gateway's cap", 16 << 10, func(c *app.Config) { c.MaxResultBytes = 8 << 10 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.config)
			h.demo.previewPad.Store(int64(tc.pad))
			c := h.client("openwebui", "", "/mcp")
			for _, tool := range []struct {
				name string
				args map[string]any
			}{
				{"demo_counter_add", map[string]any{"amount": 3}}, // ticket path
				{"demo_note_touch", map[string]any{"note": "x"}},  // low-risk: applied without a ticket
			} {
				got, isErr := call(t, c, tool.name, tool.args)
				if !isErr || errCode(got) != toolerr.TooLarge || !strings.Contains(errMessage(got), "the preview is too large to show; narrow the request") {
					t.Fatalf("%s: want too_large about the preview, got %.300v", tool.name, got)
				}
				if _, has := got["ticket"]; has {
					t.Errorf("%s: a ticket was offered", tool.name)
				}
			}
			if n := len(h.gw.Tickets.List("")); n != 0 {
				t.Errorf("%d tickets issued for previews nobody could see", n)
			}
			if strings.Contains(h.audit.String(), `"outcome":"issued"`) {
				t.Error("the audit records an issued ticket")
			}
			if h.demo.applied.Load() != 0 || h.demo.note.Load() != nil {
				t.Error("a write was applied")
			}

			// The same writes with a preview that fits work as before.
			h.demo.previewPad.Store(0)
			if got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 3}); isErr || got["status"] != "confirmation_required" {
				t.Fatalf("small preview: %v", got)
			}
		})
	}
}
