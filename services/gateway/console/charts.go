package console

import (
	"fmt"
	"math"
	"strings"
)

// Charts are drawn here, as SVG the page embeds: no script, no resource
// from anywhere, and the page's Content-Security-Policy stays as strict
// as the approval page's. Only numbers reach the drawing; every label is
// text the template escapes.

const (
	chartW    = 272.0
	chartH    = 110.0
	padLeft   = 44.0
	padBottom = 16.0
	plotW     = chartW - padLeft - 4
	plotH     = chartH - padBottom - 6
)

type chart struct {
	W, H  float64
	Base  float64 // the x axis
	Bars  []bar
	Lines []line
	Ticks []tick // y axis
	Xs    []tick // x axis
	Title string
	Empty bool
}

type bar struct {
	X, Y, W, H float64
	Class      string // a fixed CSS class
	Title      string
}

type line struct {
	Points string
	Class  string
}

type tick struct {
	X, Y   float64
	Label  string
	Anchor string // SVG text-anchor: a fixed word
}

func xOf(i int) float64 { return padLeft + float64(i)*plotW/minutes }

func newChart(title string) chart {
	c := chart{W: chartW, H: chartH, Base: plotH + 6, Title: title}
	for _, m := range []int{0, 15, 30, 45, 59} {
		label := fmt.Sprintf("−%dm", minutes-1-m)
		if m == minutes-1 {
			label = "now"
		}
		t := tick{X: xOf(m) + plotW/minutes/2, Y: chartH - 3, Label: label, Anchor: "middle"}
		if m == minutes-1 {
			t.X, t.Anchor = chartW-1, "end"
		}
		c.Xs = append(c.Xs, t)
	}
	return c
}

// callsChart: calls per minute, the ones that failed or were refused in
// their own colours on top of those that ran.
func callsChart(f ServiceFigures) chart {
	c := newChart("calls per minute")
	top := 0
	for _, n := range f.Calls {
		top = max(top, n)
	}
	if top == 0 {
		c.Empty = true
		return c
	}
	scale := niceCeil(float64(top))
	c.Ticks = yTicks(scale, func(v float64) string { return fmt.Sprintf("%.0f", v) }, func(v float64) float64 { return v / scale })
	w := plotW/minutes - 1
	for i, n := range f.Calls {
		if n == 0 {
			continue
		}
		x := xOf(i)
		y := plotH + 6
		for _, part := range []struct {
			n     int
			class string
		}{{n - f.Failed[i] - f.Refused[i], "ok"}, {f.Refused[i], "refused"}, {f.Failed[i], "failed"}} {
			if part.n <= 0 {
				continue
			}
			h := float64(part.n) / scale * plotH
			y -= h
			c.Bars = append(c.Bars, bar{X: round(x), Y: round(y), W: round(w), H: round(h), Class: part.class,
				Title: fmt.Sprintf("%s: %d %s", minuteLabel(i), part.n, part.class)})
		}
	}
	return c
}

// latencyChart: p50 and p99 per minute, on a log scale (a home lab's
// calls range from a millisecond to a slow indexer's half minute).
func latencyChart(f ServiceFigures) chart {
	c := newChart("latency per minute (p50, p99)")
	hi := 0.0
	lo := math.Inf(1)
	for i := range f.P99 {
		if f.P99[i] > 0 {
			hi = max(hi, f.P99[i])
			lo = min(lo, f.P50[i])
		}
	}
	if hi == 0 {
		c.Empty = true
		return c
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	frac := func(v float64) float64 { return math.Log10(v/lo) / math.Log10(hi/lo) }
	for v := lo; v <= hi*1.0001; v *= 10 {
		c.Ticks = append(c.Ticks, tick{X: padLeft - 4, Y: round(plotH + 6 - frac(v)*plotH), Label: axisMS(v)})
	}
	for _, s := range []struct {
		vals  []float64
		class string
	}{{f.P99, "p99"}, {f.P50, "p50"}} {
		var pts []string
		for i, v := range s.vals {
			if v <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%g,%g", round(xOf(i)+plotW/minutes/2), round(plotH+6-frac(v)*plotH)))
		}
		c.Lines = append(c.Lines, line{Points: strings.Join(pts, " "), Class: s.class})
	}
	return c
}

// axisMS labels a power of ten of milliseconds briefly.
func axisMS(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%g s", ms/1000)
	case ms >= 1:
		return fmt.Sprintf("%g ms", ms)
	}
	return fmt.Sprintf("%g µs", ms*1000)
}

func minuteLabel(i int) string {
	if i == minutes-1 {
		return "this minute"
	}
	return fmt.Sprintf("%d min ago", minutes-1-i)
}

// yTicks are 0, half (when it is a whole number) and the top of a
// linear axis.
func yTicks(scale float64, label func(float64) string, frac func(float64) float64) []tick {
	var out []tick
	vals := []float64{0, scale / 2, scale}
	if scale < 2 {
		vals = []float64{0, scale}
	}
	for _, v := range vals {
		out = append(out, tick{X: padLeft - 4, Y: round(plotH + 6 - frac(v)*plotH), Label: label(v)})
	}
	return out
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func round(v float64) float64 { return math.Round(v*10) / 10 }
