package audit

import (
	"encoding/json"
	"math"
	"testing"
)

// TestAppendLineIsJSONMarshal: the hand-written encoder writes exactly what
// encoding/json writes for the same line, for every field empty or set and
// for strings and numbers that need escapes or odd formats.
func TestAppendLineIsJSONMarshal(t *testing.T) {
	strs := []string{"", "plain", `quo"te`, `back\slash`, "<script>&amp;</script>", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
		"\b\f", "é€😀", "\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x80", "ends with \xe2"}
	nums := []float64{0, 1, 0.5, 12.345, 1e-7, 1.5e-9, 9.99e-7, 1e-6, 1e20, 1e21, 123456789.125, -3.25, math.SmallestNonzeroFloat64, math.MaxFloat64}
	ints := []int{0, 1, -1, 1 << 40}
	for i, s := range strs {
		for j, n := range nums {
			l := line{
				Time: "2026-12-03T10:00:00.123456789Z", Event: s, Client: strs[(i+1)%len(strs)], User: strs[(i+2)%len(strs)],
				UserRole: strs[(i+3)%len(strs)], Service: s, Tool: strs[(i+4)%len(strs)], Decision: strs[(i+5)%len(strs)],
				Reason: s, Endpoint: strs[(i+9)%len(strs)], Phase: strs[(i+10)%len(strs)], ReasonID: strs[(i+11)%len(strs)],
				Approval: strs[(i+6)%len(strs)], TicketID: strs[(i+7)%len(strs)], ArgsDigest: strs[(i+8)%len(strs)],
				DurationMS: n, Outcome: strs[(j+i)%len(strs)], Bytes: ints[(i+j)%len(ints)],
			}
			check(t, l)
		}
	}
	check(t, line{})
}

func FuzzAppendLine(f *testing.F) {
	f.Add("2026", "ev", "client", "reason <&>", 1.25, 10)
	f.Add("", "\u2028", "\xff", "", 1e-9, 0)
	f.Fuzz(func(t *testing.T, tm, ev, client, reason string, d float64, n int) {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return // Log zeroes them
		}
		check(t, line{Time: tm, Event: ev, Client: client, Reason: reason, Outcome: ev + client, DurationMS: d, Bytes: n})
	})
}

func check(t *testing.T, l line) {
	t.Helper()
	want, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendLine(nil, l); string(got) != string(want) {
		t.Fatalf("%+v:\n got  %s\n want %s", l, got, want)
	}
}

// BenchmarkEncodeLine: a read's outcome line, by the hand-written encoder
// and by encoding/json.
func BenchmarkEncodeLine(b *testing.B) {
	l := line{Time: "2026-12-03T10:00:00.123456789Z", Event: EventOutcome, Client: "openwebui", User: "alice@example.org",
		Service: "demo", Tool: "demo_echo", Decision: "allow", Reason: "read allowed", Approval: "model",
		ArgsDigest: "c2b11e657e12fd177359627ca89412018e2274d0873cfbfcf1fc50f685582e9e", DurationMS: 0.523, Outcome: "ok", Bytes: 42}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = appendLine(make([]byte, 0, 384), l)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(l)
		}
	})
}
