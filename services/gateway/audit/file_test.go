package audit

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Parse reads back exactly the record Log wrote, field by field, hostile
// strings included (as clean left them).
func TestParseIsTheInverseOfLog(t *testing.T) {
	ts := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	recs := []Record{
		{Time: ts, Event: EventOutcome, Client: "owui", User: "ann@example.org", UserRole: "user", Endpoint: "/mcp/demo",
			Service: "demo", Tool: "demo_counter_add", Phase: PhasePreview, Decision: "confirm", Reason: "write needs confirmation",
			ReasonID: "needs_confirmation", Approval: "model", TicketID: "tkt_1", ArgsDigest: "ab12", DurationMS: 1.25, Outcome: "preview", Bytes: 99},
		{Time: ts, Event: EventOutcome, Client: `<img src=x onerror=alert(1)>`, Tool: "a\"b\\c\u2028", Reason: "é€😀", Outcome: "denied"},
		{Time: ts, Event: EventPin, Service: "demo", Tool: "@instructions", Outcome: "accepted"},
	}
	for _, rec := range recs {
		var buf bytes.Buffer
		rec.Args = []byte(`{"never":"written"}`)
		New(&buf).Log(rec)
		if strings.Contains(buf.String(), "never") {
			t.Fatalf("arguments reached the sink: %s", buf.String())
		}
		got, err := Parse(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		want := rec
		want.Args, want.Tool = nil, clean(rec.Tool)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("parsed\n %+v\nwant\n %+v", got, want)
		}
	}
	for _, bad := range []string{``, `{`, `[]`, `{"time":"yesterday"}`, `{"time":"2026-12-03T10:00:00Z","bytes":"x"}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		}
	}
}

// The tap gets every line with its arguments without the Logger waiting;
// once its channel is full, lines are counted and the sink still gets
// every one.
func TestTapNeverBlocksTheLogger(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	ch := make(chan Tapped, 2)
	l.Tap(ch)
	done := make(chan struct{})
	go func() {
		for i := range 5 {
			l.Log(Record{Event: EventOutcome, Tool: fmt.Sprintf("t%d", i), Args: []byte(fmt.Sprintf(`{"i":%d}`, i))})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Log waited for a full tap")
	}
	if n := strings.Count(buf.String(), "\n"); n != 5 {
		t.Fatalf("the sink got %d lines, want 5", n)
	}
	if l.Dropped() != 3 {
		t.Errorf("dropped %d, want 3", l.Dropped())
	}
	for i := range 2 {
		got := <-ch
		if got.Tool != fmt.Sprintf("t%d", i) || string(got.Args) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Errorf("tapped %d: %+v %s", i, got.Record, got.Args)
		}
	}
}

// What the tap hands on is what the line says: the record Parse reads
// back from the very line written, hostile strings and all (and the
// arguments beside it, which the line never holds).
func TestTappedRecordIsTheLine(t *testing.T) {
	ts := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	for _, rec := range []Record{
		{Time: ts, Event: EventOutcome, Client: "owui", User: "ann@example.org", UserRole: "user", Endpoint: "/mcp/demo",
			Service: "demo", Tool: "demo_counter_add", Phase: PhasePreview, Decision: "confirm", Reason: "write needs confirmation",
			ReasonID: "needs_confirmation", Approval: "model", TicketID: "tkt_1", ArgsDigest: "ab12", DurationMS: 1.25, Outcome: "preview", Bytes: 99},
		{Time: ts, Event: EventOutcome, Client: "a\nb\u2028c\x00", Tool: strings.Repeat("<é>", 600), Reason: "bad \xff utf8", DurationMS: math.NaN()},
	} {
		var buf bytes.Buffer
		l := New(&buf)
		ch := make(chan Tapped, 1)
		l.Tap(ch)
		rec.Args = []byte(`{"a":1}`)
		l.Log(rec)
		got := <-ch
		want, err := Parse(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		want.Args = rec.Args
		if fmt.Sprintf("%+v", got.Record) != fmt.Sprintf("%+v", want) {
			t.Errorf("tapped\n %+v\nthe line says\n %+v", got.Record, want)
		}
	}
}

func readAll(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	if err := ReadFile(path, func(b []byte) { out = append(out, string(b)) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The file is rotated before a write would take it past its cap, keeping
// one predecessor; ReadFile reads both, oldest first; lines stay whole.
func TestFileKeepsTheLatestLinesWithinItsCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := OpenFile(path, MinFileMax)
	if err != nil {
		t.Fatal(err)
	}
	l := New(f)
	const n = 2000 // about 3 caps' worth of lines
	for i := range n {
		l.Log(Record{Event: EventOutcome, Client: "c", Tool: fmt.Sprintf("tool_%04d", i), Reason: strings.Repeat("r", 60)})
	}
	if err := f.Close(); err != nil || l.Err() != nil {
		t.Fatal(err, l.Err())
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil || st.Size() > MinFileMax || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, st, err)
		}
	}
	// The predecessor was rotated when the next line no longer fitted.
	if st, _ := os.Stat(path + ".1"); st.Size() < MinFileMax-200 {
		t.Errorf("the predecessor has %d bytes, not about the cap", st.Size())
	}
	lines := readAll(t, path)
	if len(lines) == 0 || len(lines) >= n {
		t.Fatalf("%d lines kept of %d", len(lines), n)
	}
	first := n - len(lines)
	for i, s := range lines {
		rec, err := Parse([]byte(s))
		if err != nil || rec.Tool != fmt.Sprintf("tool_%04d", first+i) {
			t.Fatalf("line %d: %q %v", i, s, err)
		}
	}

	// Reopened, it appends to what is there.
	f, err = OpenFile(path, MinFileMax)
	if err != nil {
		t.Fatal(err)
	}
	New(f).Log(Record{Event: EventOutcome, Tool: "after_restart"})
	f.Close()
	again := readAll(t, path)
	if last := again[len(again)-1]; !strings.Contains(last, "after_restart") {
		t.Fatalf("last line after reopening: %s", last)
	}
}

// A line cut by a crash and a line longer than any the gateway writes are
// skipped; the lines around them are read; no file is no lines.
func TestReadFileSkipsCutAndOverlongLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if got := readAll(t, path); len(got) != 0 {
		t.Fatalf("no file: %v", got)
	}
	content := `{"a":1}` + "\n" + strings.Repeat("x", 3*maxLine) + "\n" + `{"b":2}` + "\n" + `{"cut`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(readAll(t, path), "|"); got != `{"a":1}|{"b":2}` {
		t.Fatalf("read %q", got)
	}
	if _, err := OpenFile(path, MinFileMax-1); err == nil {
		t.Error("a cap below the minimum was accepted")
	}
}

// Tee writes to every writer even when one fails and reports the failure.
func TestTeeWritesEverywhere(t *testing.T) {
	var a, b bytes.Buffer
	broken := errWriter{}
	w := Tee(&a, broken, &b)
	if _, err := w.Write([]byte("x\n")); !errors.Is(err, errBroken) {
		t.Fatalf("error %v", err)
	}
	if a.String() != "x\n" || b.String() != "x\n" {
		t.Fatalf("%q %q", a.String(), b.String())
	}
}

var errBroken = errors.New("broken")

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errBroken }

// Concurrent loggers through one File keep every line whole.
func TestFileConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := OpenFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	l := NewBuffered(f, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				l.Log(Record{Event: EventOutcome, Client: fmt.Sprintf("c%d", g), Tool: fmt.Sprintf("t%d", i)})
			}
		})
	}
	wg.Wait()
	_ = l.Close()
	_ = f.Close()
	lines := readAll(t, path)
	if len(lines) != 800 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, s := range lines {
		if _, err := Parse([]byte(s)); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
}
