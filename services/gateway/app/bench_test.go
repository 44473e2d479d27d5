package app_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/backend"
)

// benchClient opens an mcp-go client on a 2025-11-25 session with a tuned
// transport (the default one leaves thousands of sockets in TIME_WAIT).
func benchClient(b *testing.B, url, token string) *client.Client {
	b.Helper()
	hc := backend.NewHTTPClient()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(b.Context(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

func echo(b *testing.B, c *client.Client) time.Duration {
	req := mcp.CallToolRequest{}
	req.Params.Name = "demo_echo"
	req.Params.Arguments = map[string]any{"text": "benchmark"}
	start := time.Now()
	res, err := c.CallTool(b.Context(), req)
	d := time.Since(start)
	if err != nil || res.IsError {
		b.Fatalf("call: %v %v", err, res)
	}
	return d
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkGatewayOverhead calls the same read tool directly at the service
// and through the gateway (embedded policy), interleaved in one run, and
// reports both latency distributions and what the gateway adds.
func BenchmarkGatewayOverhead(b *testing.B) {
	h := newHarness(b)
	direct := benchClient(b, h.ServiceURL+"/mcp", serviceToken)
	gw := benchClient(b, h.URL+"/mcp", h.tokens["openwebui"])
	for range 200 { // warm up connections and caches
		echo(b, direct)
		echo(b, gw)
	}
	var d, g []time.Duration
	b.ResetTimer()
	for b.Loop() {
		d = append(d, echo(b, direct))
		g = append(g, echo(b, gw))
	}
	b.StopTimer()
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	d50, d99, g50, g99 := percentile(d, .5), percentile(d, .99), percentile(g, .5), percentile(g, .99)
	b.ReportMetric(ms(d50), "direct-p50-ms")
	b.ReportMetric(ms(d99), "direct-p99-ms")
	b.ReportMetric(ms(g50), "gateway-p50-ms")
	b.ReportMetric(ms(g99), "gateway-p99-ms")
	b.ReportMetric(ms(g50-d50), "added-p50-ms")
	b.ReportMetric(float64(g50)/float64(d50), "ratio-p50")
	b.ReportMetric(float64(g99)/float64(d99), "ratio-p99")
}

// BenchmarkThroughput16 runs 16 concurrent clients, first directly at the
// service and then through the gateway, and reports calls per second.
func BenchmarkThroughput16(b *testing.B) {
	const clients = 16
	h := newHarness(b, func(c *app.Config) { c.ServiceConcurrency = 2 * clients })
	run := func(url, token string) float64 {
		cs := make([]*client.Client, clients)
		for i := range cs {
			cs[i] = benchClient(b, url, token)
		}
		per := max(b.N/clients, 50)
		var wg sync.WaitGroup
		start := time.Now()
		for _, c := range cs {
			wg.Go(func() {
				for range per {
					echo(b, c)
				}
			})
		}
		wg.Wait()
		return float64(per*clients) / time.Since(start).Seconds()
	}
	direct := run(h.ServiceURL+"/mcp", serviceToken)
	gateway := run(h.URL+"/mcp", h.tokens["openwebui"])
	b.ReportMetric(direct, "direct-calls/s")
	b.ReportMetric(gateway, "gateway-calls/s")
	b.ReportMetric(gateway/direct, "ratio")
	b.ReportMetric(0, "ns/op")
}
