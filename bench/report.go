package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Report is what a run measured.
type Report struct {
	Config Config
	// Gateways names the commit each measured gateway was built from.
	Gateways []string
	// LoadStart and LoadEnd are the machine's load averages (1, 5, 15
	// minutes) when the measuring began and ended.
	LoadStart, LoadEnd string
	Groups             []Group
	RSS                []RSSReading
}

// Group is the rows of one kind of call, each compared with the group's
// direct call and bare proxy.
type Group struct {
	Title string
	Rows  []Row
}

// Row is one target's figures.
type Row struct {
	Name    string
	Kind    string // kindDirect, kindProxy, kindGateway
	Samples int
	P50     time.Duration
	P99     time.Duration
	// Seq is calls/s of one client (median over rounds); Par of all
	// clients at once; 0 when not measured.
	Seq float64
	Par float64
	// FirstP50 and FirstMax are of a new client's first previews (the
	// warm-up before the timed ones); 0 for reads.
	FirstP50, FirstMax time.Duration
	// CPU is the CPU time per sequential call of the row's own processes
	// (the service; the proxy; the gateway, with its OPA sidecar); 0 when
	// not measured.
	CPU time.Duration
}

// RSSReading is one process's resident memory at a point of the run:
// VmRSS, and its anonymous and file-backed parts.
type RSSReading struct {
	Label             string
	Bytes, Anon, File int64
	// Err says why there is no reading (-1 bytes).
	Err string
}

func (r *Report) rss(label string, p *proc) {
	vm, anon, file, err := p.rss()
	reading := RSSReading{Label: label, Bytes: vm, Anon: anon, File: file}
	if err != nil {
		reading = RSSReading{Label: label, Bytes: -1, Anon: -1, File: -1, Err: err.Error()}
	}
	r.RSS = append(r.RSS, reading)
}

func (r *Report) collect(targets []*target) {
	for _, t := range targets {
		i := slices.IndexFunc(r.Groups, func(g Group) bool { return g.Title == t.group })
		if i < 0 {
			r.Groups = append(r.Groups, Group{Title: t.group})
			i = len(r.Groups) - 1
		}
		r.Groups[i].Rows = append(r.Groups[i].Rows, Row{
			Name: t.name, Kind: t.kind, Samples: len(t.lat),
			P50: percentile(t.lat, 0.50), P99: percentile(t.lat, 0.99),
			Seq: median(t.seqCPS), Par: median(t.parCPS),
		})
		if len(t.first) > 0 {
			row := &r.Groups[i].Rows[len(r.Groups[i].Rows)-1]
			row.FirstP50, row.FirstMax = percentile(t.first, 0.5), slices.Max(t.first)
		}
		if t.cpuCalls > 0 {
			r.Groups[i].Rows[len(r.Groups[i].Rows)-1].CPU = t.cpu / time.Duration(t.cpuCalls)
		}
	}
}

// Baseline returns the group's row of kind k.
func (g Group) Baseline(k string) (Row, bool) {
	i := slices.IndexFunc(g.Rows, func(r Row) bool { return r.Kind == k })
	if i < 0 {
		return Row{}, false
	}
	return g.Rows[i], true
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p+0.5)]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

func us(d time.Duration) string { return fmt.Sprintf("%+d µs", d.Microseconds()) }

// Markdown renders the report as the tables docs/performance.md quotes,
// then each gateway row against the goals.
func (r *Report) Markdown() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "%d interleaved rounds; per round and target %d sequential calls on one session, then %d clients × %d calls at once.\n\n",
		c.Rounds, c.Calls, c.Clients, c.PerClient)
	for _, g := range r.Gateways {
		fmt.Fprintf(&b, "- %s\n", g)
	}
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) at the start: %s; at the end: %s\n\n", r.LoadStart, r.LoadEnd)
	var goals []string
	for _, g := range r.Groups {
		direct, _ := g.Baseline(kindDirect)
		proxy, hasProxy := g.Baseline(kindProxy)
		oneP, hasOneP := g.Baseline(kindProxyOneP)
		fmt.Fprintf(&b, "### %s\n\n", g.Title)
		fmt.Fprintf(&b, "| target | p50 | p99 | added p50 over direct | added p50 over proxy | added p99 over direct | calls/s, 1 client | calls/s, %d clients | share of proxy throughput | CPU per call | CPU over the proxy's |\n", c.Clients)
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, row := range g.Rows {
			addD, addP, addD99, share := "—", "—", "—", "—"
			if row.Kind != kindDirect {
				addD, addD99 = us(row.P50-direct.P50), us(row.P99-direct.P99)
			}
			// The one-P proxy's figure over the proxy is what the scheduler
			// setting alone gains a bare hop.
			overProxy := (row.Kind == kindGateway || row.Kind == kindProxyOneP) && hasProxy
			if overProxy {
				addP = us(row.P50 - proxy.P50)
			}
			if row.Kind != kindDirect && hasProxy && proxy.Par > 0 && row.Par > 0 {
				share = fmt.Sprintf("%.0f %%", 100*row.Par/proxy.Par)
			}
			par := "—"
			if row.Par > 0 {
				par = fmt.Sprintf("%.0f", row.Par)
			}
			cpu, cpuP := "—", "—"
			if row.CPU > 0 {
				cpu = fmt.Sprintf("%d µs", row.CPU.Microseconds())
				if overProxy && proxy.CPU > 0 {
					cpuP = us(row.CPU - proxy.CPU)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %s |\n",
				row.Name, ms(row.P50), ms(row.P99), addD, addP, addD99, row.Seq, par, share, cpu, cpuP)
			if row.Kind == kindGateway && hasProxy {
				line := goalLines(g.Title, row, direct, proxy)[0]
				if hasOneP {
					line += fmt.Sprintf("; over the proxy on one P: p50 %s, CPU per call %s", us(row.P50-oneP.P50), us(row.CPU-oneP.CPU))
				}
				goals = append(goals, line)
			}
		}
		b.WriteString("\n")
		var first []string
		for _, row := range g.Rows {
			if row.FirstMax > 0 {
				first = append(first, fmt.Sprintf("%s: p50 %s, slowest %s", row.Name, ms(row.FirstP50), ms(row.FirstMax)))
			}
		}
		if len(first) > 0 {
			fmt.Fprintf(&b, "A new client's first %d previews in each round (untimed above): %s.\n\n", warmPreviews, strings.Join(first, "; "))
		}
	}
	if len(r.RSS) > 0 {
		b.WriteString("### Gateway memory (VmRSS = anonymous + file pages, the binary's mapped code and data)\n\n| when | RSS | anonymous | file |\n|---|---|---|---|\n")
		mib := func(n int64) float64 { return float64(n) / (1 << 20) }
		for _, m := range r.RSS {
			fmt.Fprintf(&b, "| %s | %.1f MiB | %.1f MiB | %.1f MiB |\n", m.Label, mib(m.Bytes), mib(m.Anon), mib(m.File))
		}
		b.WriteString("\n")
	}
	if len(goals) > 0 {
		b.WriteString("### Against the goals (gateway above a bare proxy: p50 ≤ 60 µs; added p99 ≤ 2× the proxy's added p99, taken at least as its added p50; ≥ 80 % of its throughput)\n\n")
		for _, l := range goals {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

func goalLines(group string, row, direct, proxy Row) []string {
	mark := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "misses"
	}
	add := row.P50 - proxy.P50
	line := fmt.Sprintf("%s, %s: p50 %s over the proxy (%s)", group, row.Name, us(add), mark(add <= 60*time.Microsecond))
	gw99, allowed, floored := p99Goal(row, direct, proxy)
	if floored {
		line += fmt.Sprintf("; added p99 %s vs 2× %s (the proxy's added p50: its added p99 %s is below it) (%s)",
			us(gw99), us(allowed), us(proxy.P99-direct.P99), mark(gw99 <= 2*allowed))
	} else {
		line += fmt.Sprintf("; added p99 %s vs 2× %s (%s)", us(gw99), us(allowed), mark(gw99 <= 2*allowed))
	}
	if row.Par > 0 && proxy.Par > 0 {
		line += fmt.Sprintf("; %.0f %% of the proxy's throughput (%s)", 100*row.Par/proxy.Par, mark(row.Par >= 0.8*proxy.Par))
	}
	return []string{line}
}

// p99Goal returns what row adds to the direct call's p99 and what the bare
// proxy adds, against which the goal allows twice as much. The proxy's
// added p99 is a difference of two tails and can come out below its added
// p50, even negative, when the direct call's tail happened to be worse in
// a run; a hop adds at least its median cost at the tail too, so the
// allowance is never taken below the proxy's added p50 (floored).
func p99Goal(row, direct, proxy Row) (added, allowed time.Duration, floored bool) {
	added, allowed = row.P99-direct.P99, proxy.P99-direct.P99
	if p50 := proxy.P50 - direct.P50; allowed < p50 {
		return added, p50, true
	}
	return added, allowed, false
}
