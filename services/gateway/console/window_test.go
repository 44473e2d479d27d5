package console

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/audit"
)

var t0 = time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)

func outcome(client, service, tool, decision, outcome, reasonID string) audit.Record {
	return audit.Record{Time: t0, Event: audit.EventOutcome, Client: client, Service: service, Tool: tool,
		Decision: decision, Outcome: outcome, ReasonID: reasonID, Reason: "because " + reasonID, DurationMS: 2}
}

// What became of a call, from its audit line alone.
func TestClassOfACall(t *testing.T) {
	cases := []struct {
		rec  audit.Record
		want string
	}{
		{audit.Record{Decision: "allow", Outcome: "ok"}, ClassOK},
		{audit.Record{Decision: "confirm", Outcome: "preview", Approval: approval.Model}, ClassPreview},
		{audit.Record{Decision: "confirm", Outcome: "preview", Approval: approval.Human}, ClassWaiting},
		{audit.Record{Decision: "confirm", Outcome: "pending", Approval: approval.Human}, ClassWaiting},
		{audit.Record{Decision: "deny", Outcome: "not_found", ReasonID: "not_visible"}, ClassRefused},
		{audit.Record{Decision: "deny", Outcome: "denied"}, ClassRefused},
		{audit.Record{Decision: "confirm", Outcome: "denied"}, ClassRefused}, // a read the policy wants confirmed
		{audit.Record{Decision: "allow", Outcome: "upstream_unavailable"}, ClassFailed},
		{audit.Record{Decision: "confirm", Outcome: "ticket_rejected"}, ClassFailed},
	}
	for _, tc := range cases {
		if got := classOf(tc.rec); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.rec, got, tc.want)
		}
	}
}

// The window keeps the latest calls only, newest first; filters select by
// client, service, outcome and reason id; the reasons of refused and held
// calls are counted, most frequent first; only call outcomes are calls.
func TestWindowKeepsTheLatestCallsAndFilters(t *testing.T) {
	w := NewWindow(5)
	w.Add(audit.Record{Time: t0, Event: audit.EventDecision, Client: "x"}, nil)
	w.Add(audit.Record{Time: t0, Event: audit.EventPin, Service: "demo", Outcome: "accepted"}, nil)
	recs := []audit.Record{
		outcome("old", "demo", "demo_echo", "allow", "ok", "read"),
		outcome("owui", "demo", "demo_echo", "allow", "ok", "read"),
		outcome("owui", "arr", "sonarr_x", "deny", "not_found", "not_visible"),
		outcome("kiosk", "demo", "demo_counter_add", "deny", "not_found", "not_visible"),
		outcome("kiosk", "demo", "demo_counter_add", "deny", "denied", "read_only_group"),
		outcome("owui", "demo", "demo_counter_reset", "confirm", "preview", "needs_person:destructive"),
	}
	recs[5].Approval = approval.Human
	for i, r := range recs {
		w.Add(r, []byte(fmt.Sprintf(`{"i":%d}`, i)))
	}
	all := w.Latest(Filter{}, 100)
	if all.Held != 5 || all.Matched != 5 || len(all.Entries) != 5 || all.Entries[0].Tool != "demo_counter_reset" || all.Entries[4].Client != "owui" {
		t.Fatalf("all: %+v", all)
	}
	if strings.Join(all.Clients, ",") != "kiosk,owui" || strings.Join(all.Services, ",") != "arr,demo" {
		t.Errorf("choices %v %v", all.Clients, all.Services)
	}
	if got := fmt.Sprint(all.Reasons); got != "[{not_visible because not_visible 2} {needs_person:destructive because needs_person:destructive 1} {read_only_group because read_only_group 1}]" {
		t.Errorf("reasons %s", got)
	}
	for _, tc := range []struct {
		f    Filter
		want int
	}{
		{Filter{Client: "kiosk"}, 2},
		{Filter{Service: "arr"}, 1},
		{Filter{Class: ClassRefused}, 3},
		{Filter{Class: ClassWaiting}, 1},
		{Filter{ReasonID: "not_visible"}, 2},
		{Filter{Client: "kiosk", ReasonID: "not_visible"}, 1},
		{Filter{Client: "nobody"}, 0},
	} {
		if a := w.Latest(tc.f, 100); a.Matched != tc.want || len(a.Entries) != tc.want {
			t.Errorf("%+v: %d matched", tc.f, a.Matched)
		}
	}
	// The reasons ignore the filter's own reason (so the other groups stay
	// clickable) but follow the rest of it.
	if a := w.Latest(Filter{Client: "kiosk", ReasonID: "read_only_group"}, 100); len(a.Reasons) != 2 {
		t.Errorf("kiosk's reasons: %v", a.Reasons)
	}
	if a := w.Latest(Filter{}, 2); len(a.Entries) != 2 || a.Matched != 5 {
		t.Errorf("limit: %d of %d", len(a.Entries), a.Matched)
	}

	// Ids: the newest is 6, the evicted first one is gone.
	if _, ok := w.Get(1); ok {
		t.Error("the evicted entry is still there")
	}
	for _, id := range []uint64{0, 7, math.MaxUint64} {
		if _, ok := w.Get(id); ok {
			t.Errorf("Get(%d) found something", id)
		}
	}
	e, ok := w.Get(3)
	if !ok || e.Tool != "sonarr_x" || string(e.Args) != `{"i":2}` {
		t.Errorf("Get(3): %+v %v", e, ok)
	}
}

// Arguments too large to keep are only counted; a refusal's reason, which
// the audit line gives as its id, is put in words.
func TestEntryArgumentsAndWords(t *testing.T) {
	w := NewWindow(3)
	w.Add(outcome("c", "demo", "demo_echo", "allow", "ok", "read"), []byte(`{"text":"`+strings.Repeat("x", maxArgsKept)+`"}`))
	e, _ := w.Get(1)
	if e.Args != nil || e.ArgsSize != maxArgsKept+11 || e.Record.Args != nil {
		t.Errorf("large arguments kept: %d %d", len(e.Args), e.ArgsSize)
	}
	r := outcome("c", "", "nope", "deny", "not_found", "unknown_tool")
	r.Reason = "unknown_tool"
	w.Add(r, nil)
	if e, _ := w.Get(2); e.ReasonText() != "no service offers a tool of this name" {
		t.Errorf("words: %q", e.ReasonText())
	}
	if e, _ := w.Get(1); e.ReasonText() != "because read" {
		t.Errorf("the policy's words: %q", e.ReasonText())
	}
}

// The tap's records reach the window; a file's lines too, oldest first,
// marked as read from the file; unreadable lines are counted.
func TestWindowFromTheTapAndTheFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/audit.jsonl"
	f, err := audit.OpenFile(path, audit.MinFileMax)
	if err != nil {
		t.Fatal(err)
	}
	l := audit.New(f)
	l.Log(outcome("a", "demo", "one", "allow", "ok", "read"))
	l.Log(outcome("b", "demo", "two", "allow", "ok", "read"))
	f.Write([]byte("not json\n"))
	f.Close()

	w := NewWindow(10)
	if err := w.Load(path); err != nil {
		t.Fatal(err)
	}
	a := w.Latest(Filter{}, 10)
	if len(a.Entries) != 2 || a.Entries[0].Tool != "two" || !a.Entries[0].FromFile || w.Skipped() != 1 {
		t.Fatalf("from the file: %+v, skipped %d", a.Entries, w.Skipped())
	}

	tap := make(chan audit.Tapped, 4)
	tl := audit.New(&strings.Builder{})
	tl.Tap(tap)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.Run(ctx, tap); close(done) }()
	rec := outcome("c", "demo", "three", "allow", "ok", "read")
	rec.Args = []byte(`{"x":1}`)
	tl.Log(rec)
	deadline := time.Now().Add(5 * time.Second)
	for len(w.Latest(Filter{Client: "c"}, 1).Entries) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	got := w.Latest(Filter{Client: "c"}, 1).Entries
	if len(got) != 1 || got[0].FromFile || string(got[0].Args) != `{"x":1}` {
		t.Fatalf("from the tap: %+v", got)
	}
}

// Per service, the last hour by minute: calls, failures, refusals and
// latency quantiles within a quarter of the true value; minutes older than
// the hour fall away; refusals and unmeasured lines count no latency.
func TestServiceFiguresOfTheLastHour(t *testing.T) {
	w := NewWindow(10)
	now := t0.Add(90 * time.Minute)
	add := func(at time.Time, service, out string, ms float64) {
		r := outcome("c", service, "t", "allow", out, "read")
		r.Time, r.DurationMS = at, ms
		if out == "denied" {
			r.Decision = "deny"
		}
		w.Add(r, nil)
	}
	add(now.Add(-2*time.Hour), "demo", "ok", 1) // long gone
	for i := 1; i <= 100; i++ {
		add(now.Add(-10*time.Minute), "demo", "ok", float64(i)) // 1 … 100 ms
	}
	add(now.Add(-10*time.Minute), "demo", "timeout", 30000)
	add(now.Add(-5*time.Minute), "demo", "denied", 0)
	add(now, "demo", "ok", 0) // no duration on the line
	add(now.Add(-time.Minute), "arr", "ok", 200)
	figs := w.Services(now)
	if len(figs) != 2 || figs[0].Service != "arr" || figs[1].Service != "demo" {
		t.Fatalf("figures: %+v", figs)
	}
	d := figs[1]
	if d.TotalCalls != 103 || d.TotalFailed != 1 || d.TotalRefused != 1 || len(d.Calls) != minutes {
		t.Fatalf("demo totals %d %d %d", d.TotalCalls, d.TotalFailed, d.TotalRefused)
	}
	if d.Calls[minutes-11] != 101 || d.Refused[minutes-6] != 1 || d.Calls[minutes-1] != 1 || d.Calls[0] != 0 {
		t.Errorf("per minute: %v", d.Calls)
	}
	near := func(got, want float64) bool { return got >= want && got <= want*1.25 }
	if !near(d.HourP50, 51) || !near(d.HourP99, 100) || !near(d.P50[minutes-11], 51) {
		t.Errorf("p50 %v p99 %v", d.HourP50, d.HourP99)
	}
	if d.P50[minutes-1] != 0 || d.P50[minutes-6] != 0 {
		t.Errorf("unmeasured minutes have a latency: %v %v", d.P50[minutes-1], d.P50[minutes-6])
	}
	// An hour later only the newest minute's call is left; a record older
	// than what a slot holds does not overwrite it.
	add(now.Add(-61*time.Minute), "arr", "ok", 5)
	later := w.Services(now.Add(59 * time.Minute))
	if len(later) != 1 || later[0].Service != "demo" || later[0].TotalCalls != 1 {
		t.Errorf("an hour later: %+v", later)
	}
}

// The charts draw only numbers, inside the picture, and nothing for a
// service without calls.
func TestChartsStayInsideThePicture(t *testing.T) {
	f := ServiceFigures{Service: "demo"}
	for i := range minutes {
		f.Calls = append(f.Calls, i*3)
		f.Failed = append(f.Failed, i%4)
		f.Refused = append(f.Refused, min(1, i*3-i%4))
		f.P50 = append(f.P50, 1+float64(i))
		f.P99 = append(f.P99, 10+float64(i*500))
	}
	f.Refused[0] = 0
	calls, lat := callsChart(f), latencyChart(f)
	if calls.Empty || lat.Empty || len(calls.Bars) < minutes || len(lat.Lines) != 2 {
		t.Fatalf("charts: %d bars, %d lines", len(calls.Bars), len(lat.Lines))
	}
	for _, b := range calls.Bars {
		if b.X < padLeft || b.X+b.W > chartW+0.5 || b.Y < 0 || b.Y+b.H > plotH+6.5 || b.H <= 0 || math.IsNaN(b.Y) {
			t.Fatalf("bar outside: %+v", b)
		}
	}
	for _, l := range lat.Lines {
		for _, p := range strings.Fields(l.Points) {
			var x, y float64
			if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil || x < padLeft || x > chartW || y < 0 || y > plotH+6.5 {
				t.Fatalf("point outside: %s", p)
			}
		}
	}
	empty := ServiceFigures{Calls: make([]int, minutes), Failed: make([]int, minutes), Refused: make([]int, minutes), P50: make([]float64, minutes), P99: make([]float64, minutes)}
	if !callsChart(empty).Empty || !latencyChart(empty).Empty {
		t.Error("a chart without calls draws something")
	}
}

// Readiness is asked at most every 30 s, only when someone looks, and
// says what each service's /readyz says.
func TestReadinessIsAskedOnlyWhileLooked(t *testing.T) {
	var asked atomic.Int64
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		fmt.Fprint(w, `{"status":"ready"}`)
	}))
	t.Cleanup(ready.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"not_ready","error":{"code":"upstream_unavailable","message":"Sonarr host sonarr.lan cannot be resolved — check SONARR_URL"}}`)
	}))
	t.Cleanup(down.Close)
	u1, _ := ReadyURL(ready.URL + "/mcp?x=1")
	u2, _ := ReadyURL(down.URL + "/mcp")
	clock := fakeclock.New(t0)
	r := newReadiness([]Target{{"demo", u1}, {"arr", u2}}, http.DefaultClient, clock.Now)
	if asked.Load() != 0 {
		t.Fatal("asked before anyone looked")
	}
	got := r.get(t.Context(), 5*time.Second)
	if !got["demo"].Ready || got["demo"].Message != "ready" || got["arr"].Ready ||
		got["arr"].Message != "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL" || asked.Load() != 2 {
		t.Fatalf("first look: %+v (%d asked)", got, asked.Load())
	}
	clock.Advance(10 * time.Second)
	r.get(t.Context(), 5*time.Second)
	if asked.Load() != 2 {
		t.Errorf("asked again after 10 s: %d", asked.Load())
	}
	clock.Advance(25 * time.Second)
	r.get(t.Context(), 5*time.Second)
	if asked.Load() != 4 {
		t.Errorf("not asked again after 35 s: %d", asked.Load())
	}
}

// A service that does not answer at all is down (not running), not a
// service that answers it is not ready.
func TestReadyStateDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	u, _ := ReadyURL(addr + "/mcp")
	r := newReadiness([]Target{{"gone", u}}, http.DefaultClient, fakeclock.New(t0).Now)
	st := r.get(context.Background(), 10*time.Second)["gone"]
	if st.Ready || !st.Down() || !strings.HasPrefix(st.Message, "the service does not answer on 127.0.0.1:") {
		t.Errorf("a service that is gone: %+v", st)
	}
	if (ReadyState{Message: "Sonarr is down"}).Down() {
		t.Error("a service that answers is down")
	}
}
