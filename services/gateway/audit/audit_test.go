package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end in a newline: %q", out)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not a JSON object: %v: %q", err, sc.Text())
		}
		recs = append(recs, m)
	}
	return recs
}

func TestFieldNames(t *testing.T) {
	ts := time.Date(2026, 3, 1, 12, 30, 0, 123456789, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		rec  Record
		want map[string]any
	}{
		{
			name: "all fields",
			rec: Record{Time: ts, Event: EventOutcome, Client: "owui", User: "ann@example.org", Service: "sonarr",
				Tool: "add_series", Decision: "confirm", Reason: "write needs a ticket", Approval: "human",
				TicketID: "tk_1", ArgsDigest: "sha256:ab", DurationMS: 12.5, Outcome: "ok", Bytes: 2048},
			want: map[string]any{"time": "2026-03-01T11:30:00.123456789Z", "event": "outcome", "client": "owui",
				"user": "ann@example.org", "service": "sonarr", "tool": "add_series", "decision": "confirm",
				"reason": "write needs a ticket", "approval": "human", "ticket_id": "tk_1", "args_digest": "sha256:ab",
				"duration_ms": 12.5, "outcome": "ok", "bytes": float64(2048)},
		},
		{
			name: "empty fields omitted",
			rec:  Record{Time: ts, Event: EventTicket, TicketID: "tk_2", Outcome: "expired"},
			want: map[string]any{"time": "2026-03-01T11:30:00.123456789Z", "event": "ticket", "ticket_id": "tk_2", "outcome": "expired"},
		},
		{
			name: "NaN duration dropped, record kept",
			rec:  Record{Time: ts, Event: EventOutcome, DurationMS: math.NaN(), Outcome: "timeout"},
			want: map[string]any{"time": "2026-03-01T11:30:00.123456789Z", "event": "outcome", "outcome": "timeout"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			New(&buf).Log(tc.rec)
			recs := decodeLines(t, buf.String())
			if len(recs) != 1 {
				t.Fatalf("got %d lines", len(recs))
			}
			got := recs[0]
			if len(got) != len(tc.want) {
				t.Errorf("keys = %v, want %v", keys(got), keys(tc.want))
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
		})
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestZeroTimeIsNow(t *testing.T) {
	var buf bytes.Buffer
	before := time.Now().Add(-time.Second)
	New(&buf).Log(Record{Event: EventDecision})
	recs := decodeLines(t, buf.String())
	ts, err := time.Parse(time.RFC3339Nano, recs[0]["time"].(string))
	if err != nil || ts.Before(before) {
		t.Fatalf("time = %v (%v), want about now", recs[0]["time"], err)
	}
}

func TestInjectionCannotSplitLines(t *testing.T) {
	forged := `{"time":"2026-01-01T00:00:00Z","event":"decision","decision":"allow"}`
	hostile := []string{
		"ann\n" + forged,
		"ann\r\n" + forged,
		"ann\r" + forged,
		"ann\u2028" + forged,
		"ann\u0085" + forged,
		"ann\x00\x1b[2J\x7f",
		"ann\xff\xfe",
	}
	for _, h := range hostile {
		var buf bytes.Buffer
		New(&buf).Log(Record{Event: EventDecision, User: h, Tool: h, Reason: h, Decision: "deny"})
		out := buf.String()
		if strings.Count(out, "\n") != 1 || strings.ContainsAny(out, "\r\u2028\u0085") {
			t.Fatalf("hostile value %q produced %q", h, out)
		}
		rec := decodeLines(t, out)[0]
		for _, k := range []string{"user", "tool", "reason"} {
			v := rec[k].(string)
			if !strings.HasPrefix(v, "ann") || strings.ContainsFunc(v, func(r rune) bool {
				return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\ufffd'
			}) {
				t.Errorf("%s = %q still holds control characters", k, v)
			}
		}
		if rec["decision"] != "deny" {
			t.Errorf("decision = %v", rec["decision"])
		}
	}
}

func TestLongFieldCapped(t *testing.T) {
	var buf bytes.Buffer
	New(&buf).Log(Record{Event: EventOutcome, Reason: strings.Repeat("é", 4*maxField)})
	r := decodeLines(t, buf.String())[0]["reason"].(string)
	if len(r) > maxField || len(r) < maxField-1 || strings.ContainsRune(r, '\ufffd') {
		t.Fatalf("reason len %d, want about %d on a rune boundary", len(r), maxField)
	}
}

// writeRecorder keeps every Write call separately. It has no lock of its
// own: the Logger must serialize writes, and -race catches it if not.
type writeRecorder struct {
	writes [][]byte
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

func TestConcurrentLinesStayWhole(t *testing.T) {
	const workers, per = 16, 200
	var w writeRecorder
	l := New(&w)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range per {
				l.Log(Record{Event: EventOutcome, Client: fmt.Sprintf("c%d", g), TicketID: fmt.Sprintf("%d-%d", g, i),
					Reason: strings.Repeat("x", 500) + "\nforged", Outcome: "ok"})
			}
		})
	}
	wg.Wait()

	if len(w.writes) != workers*per {
		t.Fatalf("%d writes, want %d", len(w.writes), workers*per)
	}
	seen := make(map[string]bool)
	for _, p := range w.writes {
		if bytes.Count(p, []byte("\n")) != 1 || p[len(p)-1] != '\n' {
			t.Fatalf("write is not exactly one line: %q", p)
		}
		rec := decodeLines(t, string(p))[0]
		id := rec["ticket_id"].(string)
		if seen[id] {
			t.Fatalf("record %s written twice", id)
		}
		seen[id] = true
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorKept(t *testing.T) {
	l := New(failWriter{})
	l.Log(Record{Event: EventDecision})
	if err := l.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err = %v", err)
	}
}

func TestDiscardAndNil(t *testing.T) {
	Discard().Log(Record{Event: EventDecision})
	if err := Discard().Err(); err != nil {
		t.Fatal(err)
	}
	var l *Logger
	l.Log(Record{Event: EventDecision}) // must not panic
}

// syncRecorder is a writeRecorder safe to read while a timer writes.
type syncRecorder struct {
	mu sync.Mutex
	writeRecorder
}

func (w *syncRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeRecorder.Write(p)
}

func (w *syncRecorder) lines() (writes int, lines []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.writes {
		lines = append(lines, strings.SplitAfter(strings.TrimSuffix(string(p), "\n"), "\n")...)
	}
	return len(w.writes), lines
}

func TestBufferedLinesWaitForTheInterval(t *testing.T) {
	var w syncRecorder
	l := NewBuffered(&w, 50*time.Millisecond)
	for i := range 3 {
		l.Log(Record{Event: EventOutcome, TicketID: fmt.Sprint(i)})
	}
	if n, _ := w.lines(); n != 0 {
		t.Fatalf("%d writes at once, want the lines to wait", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, lines := w.lines(); n > 0 {
			if n != 1 || len(lines) != 3 {
				t.Fatalf("%d writes of %d lines, want one batch of 3", n, len(lines))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting lines were never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSyncRecordWritesItAndEverythingBefore(t *testing.T) {
	var w syncRecorder
	l := NewBuffered(&w, time.Hour)
	l.Log(Record{Event: EventOutcome, TicketID: "read-1"})
	l.Log(Record{Event: EventOutcome, TicketID: "read-2"})
	l.Log(Record{Event: EventDecision, TicketID: "write", Sync: true})
	n, lines := w.lines()
	if n != 1 || len(lines) != 3 {
		t.Fatalf("%d writes, lines %q; want the three lines in one write", n, lines)
	}
	for i, id := range []string{"read-1", "read-2", "write"} {
		if !strings.Contains(lines[i], `"ticket_id":"`+id+`"`) {
			t.Errorf("line %d = %s, want %s", i, lines[i], id)
		}
	}
	if strings.Contains(lines[2], "Sync") || strings.Contains(lines[2], "sync") {
		t.Errorf("the flag reached the line: %s", lines[2])
	}
}

// TestCloseLosesNoLine: lines from many goroutines, some batches forced
// by size, every write of whole lines only, and everything out by Close.
func TestCloseLosesNoLine(t *testing.T) {
	const workers, per = 16, 300
	var w syncRecorder
	l := NewBuffered(&w, time.Hour)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range per {
				l.Log(Record{Event: EventOutcome, TicketID: fmt.Sprintf("%d-%d", g, i), Reason: strings.Repeat("r", 300)})
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Log(Record{Event: EventOutcome, TicketID: "after-close"})
	writes, _ := w.lines()
	if writes < 2 {
		t.Fatalf("%d writes: the size bound never made a batch", writes)
	}
	seen := map[string]bool{}
	w.mu.Lock()
	for _, p := range w.writes {
		if p[len(p)-1] != '\n' {
			t.Fatalf("a write ends inside a line: ...%q", p[max(0, len(p)-40):])
		}
		for _, rec := range decodeLines(t, string(p)) {
			id := rec["ticket_id"].(string)
			if seen[id] {
				t.Fatalf("%s written twice", id)
			}
			seen[id] = true
		}
	}
	w.mu.Unlock()
	if len(seen) != workers*per+1 || !seen["after-close"] {
		t.Fatalf("%d distinct lines, want %d and the one after Close", len(seen), workers*per+1)
	}
}

func TestBufferedWriteErrorKept(t *testing.T) {
	l := NewBuffered(failWriter{}, time.Hour)
	l.Log(Record{Event: EventOutcome})
	if err := l.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close = %v", err)
	}
	if err := l.Err(); err == nil {
		t.Fatal("Err lost the write error")
	}
}
