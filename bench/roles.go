package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The bench re-runs its own binary for the processes it needs besides the
// gateway, the demo service and OPA; these variables select the role.
const (
	roleEnv   = "TOOLGATE_BENCH_ROLE"
	listenEnv = "TOOLGATE_BENCH_LISTEN"
	targetEnv = "TOOLGATE_BENCH_TARGET"

	roleEcho  = "echo"
	roleProxy = "proxy"
)

// runRole serves one role until SIGTERM and returns the exit code.
func runRole(role string) int {
	var h http.Handler
	switch role {
	case roleEcho:
		h = echoHandler()
	case roleProxy:
		target, err := url.Parse(os.Getenv(targetEnv))
		if err != nil || target.Host == "" {
			fmt.Fprintln(os.Stderr, "bench proxy: TOOLGATE_BENCH_TARGET must be a base URL")
			return 2
		}
		h = proxyHandler(target)
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown role %q\n", role)
		return 2
	}
	ln, err := net.Listen("tcp", os.Getenv(listenEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// echoHandler is a plain mcp-go service with one read tool, stateless like
// every toolgate service. Its tool is named demo_echo so the shipped policy
// knows it (service "demo", prefix "demo_"). It checks no token: it is the
// cheapest MCP service there is, the floor every other row is measured on.
func echoHandler() http.Handler {
	s := server.NewMCPServer("bench-echo", "1", server.WithToolCapabilities(true))
	tool := mcp.NewToolWithRawSchema("demo_echo", "Return the given text unchanged.",
		json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":500}},"required":["text"],"additionalProperties":false}`))
	tool.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false),
	}
	s.AddTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := req.GetString("text", "")
		return mcp.NewToolResultStructured(map[string]any{"text": text}, text), nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableLocalhostProtection(true)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	return mux
}

// proxyHandler is the floor for "one extra hop": a bare reverse proxy with a
// transport sized like the gateway's, nothing else.
func proxyHandler(target *url.URL) http.Handler {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: t,
	}
}
