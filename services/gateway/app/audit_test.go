package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/gateway/app"
)

// TestAuditBatchesReadsAndLosesNoLineOnClose: a read's single audit line
// may wait for the batch, a write's lines never wait, and closing the
// gateway (what shutdown does after the listeners stopped) writes every
// waiting line.
func TestAuditBatchesReadsAndLosesNoLineOnClose(t *testing.T) {
	h := newHarness(t, func(c *app.Config) { c.AuditBatch = time.Hour })
	c := h.client("openwebui", "", "/mcp")
	const reads = 25
	for i := range reads {
		if got, isErr := call(t, c, "demo_echo", map[string]any{"text": strings.Repeat("x", i+1)}); isErr {
			t.Fatalf("read %d: %v", i, got)
		}
	}
	if n := strings.Count(h.audit.String(), `"tool":"demo_echo"`); n != 0 {
		t.Fatalf("%d read lines written before the batch was due", n)
	}
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 1})
	if prev["status"] != "confirmation_required" {
		t.Fatalf("preview: %v", prev)
	}
	// The write's lines are out at once, and took the waiting reads along.
	written := h.audit.String()
	for _, want := range []string{`"event":"decision","client":"openwebui","service":"demo","tool":"demo_counter_add"`, `"outcome":"issued"`, `"tool":"demo_counter_add","decision":"confirm"`} {
		if !strings.Contains(written, want) {
			t.Errorf("write line %s not written at once:\n%s", want, written)
		}
	}
	if n := strings.Count(written, `"tool":"demo_echo"`); n != reads {
		t.Errorf("%d read lines written with the write, want %d", n, reads)
	}
	for range 5 {
		call(t, c, "demo_echo", map[string]any{"text": "late"})
	}
	if err := h.gw.Close(); err != nil {
		t.Fatal(err)
	}
	all := h.audit.String()
	if n := strings.Count(all, `"tool":"demo_echo"`); n != reads+5 {
		t.Fatalf("%d read lines after Close, want %d", n, reads+5)
	}
	// One line per read: its outcome, carrying the decision.
	if strings.Contains(all, `"event":"decision","client":"openwebui","service":"demo","tool":"demo_echo"`) {
		t.Error("a read has a separate decision line")
	}
	if !strings.Contains(all, `"event":"outcome","client":"openwebui","service":"demo","tool":"demo_echo","decision":"allow","reason":"read allowed"`) {
		t.Errorf("read outcome line lacks the decision:\n%s", all)
	}
	if !strings.HasSuffix(all, "\n") {
		t.Error("the audit ends in a partial line")
	}
}
