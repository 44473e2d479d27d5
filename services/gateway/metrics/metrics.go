// Package metrics exposes the gateway's Prometheus metrics from a registry
// of its own, so tests and embedders never share global state.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Label bounds. A label value longer than MaxLabelLen or with a character
// outside [A-Za-z0-9_.-] is reported as Other; so is every tool name beyond
// the first MaxTools distinct ones. Tool names come from callers (an unknown
// tool is still counted as a denied call), so without these bounds a client
// could create unlimited series.
const (
	MaxLabelLen = 64
	MaxTools    = 500
	Other       = "_other"
)

// TicketEvents are the ticket events counted by name; any other event is
// counted as Other.
var TicketEvents = []string{"issued", "confirmed", "expired", "rejected", "approved", "denied", "pending"}

// Metrics holds the gateway's collectors and their registry.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tickets  *prometheus.CounterVec
	up       *prometheus.GaugeVec

	mu    sync.Mutex
	tools map[string]struct{} // distinct tool label values in use
}

// New returns Metrics registered in a new registry together with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_calls_total",
			Help: "Tool calls by service, tool, policy decision and outcome.",
		}, []string{"service", "tool", "decision", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolgate_call_duration_seconds",
			Help: "Tool call duration in seconds, as seen by the gateway.",
			// From sub-millisecond policy denials to the slowest upstreams.
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"service"}),
		tickets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_tickets_total",
			Help: "Write-confirmation ticket events.",
		}, []string{"event"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_service_up",
			Help: "1 if the tool service answered its last health check, else 0.",
		}, []string{"service"}),
		tools: make(map[string]struct{}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.duration, m.tickets, m.up,
	)
	// Known ticket events start at zero so rate() works from the first scrape.
	for _, e := range TicketEvents {
		m.tickets.WithLabelValues(e)
	}
	return m
}

// ObserveCall counts one call and records its duration.
func (m *Metrics) ObserveCall(service, tool, decision, outcome string, d time.Duration) {
	service = Normalize(service)
	m.calls.WithLabelValues(service, m.toolLabel(tool), Normalize(decision), Normalize(outcome)).Inc()
	m.duration.WithLabelValues(service).Observe(d.Seconds())
}

// Ticket counts one ticket event.
func (m *Metrics) Ticket(event string) {
	for _, e := range TicketEvents {
		if e == event {
			m.tickets.WithLabelValues(e).Inc()
			return
		}
	}
	m.tickets.WithLabelValues(Other).Inc()
}

// ServiceUp records whether service is healthy.
func (m *Metrics) ServiceUp(service string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.up.WithLabelValues(Normalize(service)).Set(v)
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Sessions are the figures of the MCP session store that /metrics reports.
type Sessions struct {
	// Open is the sessions held now.
	Open int
	// EvictedPerClient and EvictedTotal count the sessions ended to make
	// room for a new one, under the per-client cap and under the total.
	EvictedPerClient, EvictedTotal uint64
	// InitializesRefused counts the initializes refused by the rate limit.
	InitializesRefused uint64
}

// The values of toolgate_sessions_evicted_total's cap label: the cap that
// made a session give way.
const (
	CapPerClient = "per_client"
	CapTotal     = "total"
)

// WatchSessions reports the figures read returns, calling it once per
// scrape, so the session store does no work per request for its metrics.
// read must be safe for concurrent use. A second call returns an error.
func (m *Metrics) WatchSessions(read func() Sessions) error {
	return m.reg.Register(&sessionCollector{
		read: read,
		open: prometheus.NewDesc("toolgate_sessions_open",
			"MCP sessions the gateway holds (clients of the 2025 revisions), those still initializing included.", nil, nil),
		evicted: prometheus.NewDesc("toolgate_sessions_evicted_total",
			"MCP sessions ended to make room for a new one, by the cap that was reached (per_client or total).", []string{"cap"}, nil),
		refused: prometheus.NewDesc("toolgate_session_initializes_refused_total",
			"MCP initializes refused by the per-client rate limit (answered 429).", nil, nil),
	})
}

// sessionCollector reads the session figures at scrape time. Its label
// values are constants, so its series are exactly four.
type sessionCollector struct {
	read                   func() Sessions
	open, evicted, refused *prometheus.Desc
}

func (c *sessionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.evicted
	ch <- c.refused
}

func (c *sessionCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.Open))
	ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(s.EvictedPerClient), CapPerClient)
	ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(s.EvictedTotal), CapTotal)
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(s.InitializesRefused))
}

// Registry returns the registry, for callers that add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// toolLabel normalizes tool and caps the number of distinct values.
func (m *Metrics) toolLabel(tool string) string {
	tool = Normalize(tool)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tools[tool]; ok {
		return tool
	}
	if len(m.tools) >= MaxTools {
		return Other
	}
	m.tools[tool] = struct{}{}
	return tool
}

// Normalize returns v if it is a safe label value (1..MaxLabelLen characters
// of [A-Za-z0-9_.-]) and Other otherwise.
func Normalize(v string) string {
	if len(v) == 0 || len(v) > MaxLabelLen {
		return Other
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return Other
		}
	}
	return v
}
