package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the echo service and the proxy, as the
// bench binary does.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

// TestQuickRunMeasuresEveryRow runs the whole bench in its smoke mode (a few
// hundred calls) so it cannot rot: every process starts, every row gets its
// samples, every call succeeded (Run fails on any refused call), and the
// gateways' memory is read. It compares the repository's gateway with
// itself (-before), so the comparison mode cannot rot either.
func TestQuickRunMeasuresEveryRow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the whole stack")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := QuickConfig(DefaultConfig())
	cfg.Repo, cfg.Before = repo, repo
	// One small soak, so the soaked gateways' readings cannot rot either.
	cfg.Soak, cfg.SoakRuns = 64, 1

	var log strings.Builder
	rep, err := Run(t.Context(), cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Groups) != 3 {
		t.Fatalf("groups: %d, want reads on the echo service, reads on services/demo, previews", len(rep.Groups))
	}
	for _, g := range rep.Groups {
		for _, k := range []string{kindDirect, kindProxy, kindProxyOneP, kindGateway} {
			if _, ok := g.Baseline(k); !ok {
				t.Errorf("%s: no %s row", g.Title, k)
			}
		}
		for _, row := range g.Rows {
			if row.Samples != cfg.Rounds*cfg.Calls || row.P50 <= 0 || row.P99 < row.P50 || row.Seq <= 0 || row.CPU <= 0 {
				t.Errorf("%s / %s: %+v", g.Title, row.Name, row)
			}
			preview := strings.Contains(g.Title, "preview")
			if preview != (row.FirstMax > 0) || row.FirstMax < row.FirstP50 {
				t.Errorf("%s / %s: a new client's first previews %v, %v (measured for previews only)", g.Title, row.Name, row.FirstP50, row.FirstMax)
			}
			if preview != (row.Par == 0) {
				t.Errorf("%s / %s: throughput %v (previews run no throughput phase, reads do)", g.Title, row.Name, row.Par)
			}
		}
	}
	// Per variant: embedded in front of each service, and the sidecar's,
	// after the rounds; after the soak the embedded gateway in front of the
	// echo service, and the sidecar's with its OPA.
	wantReadings := 2*4 + 2*3
	if cfg.NoSidecar {
		wantReadings = 2*2 + 2*1
	}
	if len(rep.RSS) != wantReadings {
		t.Errorf("RSS readings: %+v", rep.RSS)
	}
	for _, want := range []string{"gateway (embedded policy) in front of the echo service, after soak 1", "before: gateway (embedded policy) in front of the echo service, after soak 1"} {
		if !slices.ContainsFunc(rep.RSS, func(m RSSReading) bool { return strings.HasPrefix(m.Label, want) }) {
			t.Errorf("no reading %q: %+v", want, rep.RSS)
		}
	}
	if !cfg.NoSidecar {
		for _, want := range []string{"gateway (OPA sidecar) in front of the echo service, after soak 1", "gateway (OPA sidecar) in front of the echo service: its OPA sidecar process, after soak 1", "before: gateway (OPA sidecar) in front of the echo service: its OPA sidecar process, after soak 1"} {
			if !slices.ContainsFunc(rep.RSS, func(m RSSReading) bool { return strings.HasPrefix(m.Label, want) }) {
				t.Errorf("no reading %q: %+v", want, rep.RSS)
			}
		}
	}
	for _, m := range rep.RSS {
		if m.Bytes < 1<<20 || m.Anon <= 0 || m.File <= 0 || m.Anon+m.File > m.Bytes+m.Bytes/10 {
			t.Errorf("RSS %s: %d bytes (anonymous %d, file %d) %s", m.Label, m.Bytes, m.Anon, m.File, m.Err)
		}
	}
	for _, g := range rep.Groups {
		for _, want := range []string{"gateway /mcp/demo, embedded policy", "before: gateway /mcp/demo, embedded policy", "gateway /mcp, embedded policy", "before: gateway /mcp, embedded policy"} {
			if !slices.ContainsFunc(g.Rows, func(r Row) bool { return r.Name == want }) {
				t.Errorf("%s: no row %q", g.Title, want)
			}
		}
	}
	md := rep.Markdown()
	for _, want := range []string{"| bare reverse proxy |", "| gateway /mcp/demo, embedded policy |", "| before: gateway /mcp/demo, embedded policy |",
		"| " + proxyOnePName + " |", "over the proxy on one P: p50 ",
		"added p50 over proxy", "CPU over the proxy's", "A new client's first 20 previews", "Gateway memory", "before: gateway built from", "load average"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestSidecarArgsFollowCompose(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	args, err := sidecarArgs(repo, "127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	if args[0] != "run" || !slices.Contains(args, "--server") {
		t.Errorf("not an OPA server command line: %q", args)
	}
	if !slices.Contains(args, "--addr=127.0.0.1:9999") {
		t.Errorf("listen address not replaced: %q", args)
	}
	if !slices.Contains(args, filepath.Join(repo, "policies")) {
		t.Errorf("the mounted policy directory is not mapped to the repository's: %q", args)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "/") && !strings.HasPrefix(a, repo) {
			t.Errorf("container path %q left unmapped", a)
		}
	}
}

func TestPercentileAndMedian(t *testing.T) {
	ds := make([]time.Duration, 0, 100)
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 51 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(ds, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("percentile sorted its input in place")
	}
	if percentile(nil, 0.5) != 0 || median(nil) != 0 {
		t.Error("empty input")
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median = %v", got)
	}
}

func TestResponsesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
		ok   bool
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, true},
		{"tool error", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"denied"}]}}`, false},
		{"rpc error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"tool not found"}}`, false},
		{"no result", `{"jsonrpc":"2.0","id":1}`, false},
		{"not json", `<html>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := rpcError([]byte(tc.msg)); (err == nil) != tc.ok {
				t.Errorf("rpcError = %v", err)
			}
		})
	}
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\r\n\r\n"
	if got := string(lastEvent([]byte(stream))); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("lastEvent = %q", got)
	}
}

// TestP99Goal: the p99 goal compares what the gateway adds to the direct
// call's p99 with twice what the bare proxy adds, and a proxy whose added
// p99 came out below its added p50 (even negative, in a noisy run) is held
// to its added p50 instead, so the check cannot demand the impossible.
func TestP99Goal(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	direct := Row{P50: ms(0.2), P99: ms(2.0)}
	cases := []struct {
		name           string
		proxy, gw      Row
		allowed        time.Duration
		floored, meets bool
	}{
		{"proxy adds more at the tail", Row{P50: ms(0.4), P99: ms(3.0)}, Row{P50: ms(0.5), P99: ms(3.9)}, ms(1.0), false, true},
		{"gateway over twice the proxy", Row{P50: ms(0.4), P99: ms(3.0)}, Row{P50: ms(0.5), P99: ms(4.1)}, ms(1.0), false, false},
		{"proxy's tail below the direct call's", Row{P50: ms(0.4), P99: ms(1.5)}, Row{P50: ms(0.5), P99: ms(2.3)}, ms(0.2), true, true},
		{"proxy's tail below the direct call's, gateway far above", Row{P50: ms(0.4), P99: ms(1.5)}, Row{P50: ms(0.5), P99: ms(2.5)}, ms(0.2), true, false},
		{"proxy's added tail below its added median", Row{P50: ms(0.5), P99: ms(2.1)}, Row{P50: ms(0.6), P99: ms(2.5)}, ms(0.3), true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			added, allowed, floored := p99Goal(tc.gw, direct, tc.proxy)
			if added != tc.gw.P99-direct.P99 || allowed != tc.allowed || floored != tc.floored || (added <= 2*allowed) != tc.meets {
				t.Fatalf("added %v, allowed %v, floored %t", added, allowed, floored)
			}
			line := goalLines("g", tc.gw, direct, tc.proxy)[0]
			_, p99, _ := strings.Cut(line, "added p99")
			if strings.HasSuffix(p99, "(meets)") != tc.meets {
				t.Errorf("line: %s", line)
			}
		})
	}
}
