//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// faultStack is what the fault tests need of TestStack's running demo
// stack.
type faultStack struct {
	project string
	// token is OpenWebUI's client token; userJWT mints its signed user
	// token (short-lived, so one per request).
	token   string
	userJWT func() string
}

// survivesFaults breaks the running stack the ways a home lab does — a
// tool service crashing in the middle of a call, the policy sidecar
// stopping, the gateway restarting — and checks that clients get clear
// answers meanwhile and that everything comes back without a hand on the
// gateway. The client is a real MCP client (the official Go SDK) on the
// host, which reaches the gateway on the clients network by its address
// there; it drives the steps between the faults.
func survivesFaults(ctx context.Context, t *testing.T, st faultStack) {
	start := time.Now()
	defer func() { t.Logf("faults took %s", time.Since(start).Round(time.Second)) }()
	s := st.connect(ctx, t)
	defer s.Close()
	gatewayStarted := st.inspect(ctx, t, "gateway", "{{.State.StartedAt}}")

	t.Run("a tool service killed mid-call", func(t *testing.T) {
		mustRead(ctx, t, s, "sonarr_series_list", nil)
		// Sonarr (the fakes container) stops answering, so the call waits
		// inside the arr service when the service dies.
		st.docker(ctx, t, "pause", st.container("fakes"))
		paused := true
		unpause := func() {
			if paused {
				paused = false
				st.docker(context.Background(), t, "unpause", st.container("fakes"))
			}
		}
		defer unpause()
		restarts := st.inspect(ctx, t, "arr-demo", "{{.RestartCount}}")
		done := make(chan toolAnswer, 1)
		go func() { done <- callTool(ctx, s, "sonarr_series_list", nil) }()
		select {
		case a := <-done:
			t.Fatalf("the call ended before the service was killed: %+v", a)
		case <-time.After(2 * time.Second):
		}
		// A crash, not `docker kill`: Docker keeps a killed container down
		// (its restart policy is off until the next start), a crashed one
		// it restarts.
		pid, err := strconv.Atoi(st.inspect(ctx, t, "arr-demo", "{{.State.Pid}}"))
		if err != nil || pid <= 1 {
			t.Fatalf("arr-demo's process: %d %v", pid, err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill arr-demo's process (the test needs the Docker host's root): %v", err)
		}
		killed := time.Now()
		var a toolAnswer
		select {
		case a = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the call in flight did not end after its service died")
		}
		t.Logf("the call in flight ended %s after the kill: %s: %s", time.Since(killed).Round(time.Millisecond), a.code, a.message)
		if a.err != nil || a.code != "upstream_unavailable" || !strings.Contains(a.message, "arr") {
			t.Errorf("want upstream_unavailable naming the arr service, got %+v", a)
		}
		// The demo has no upstream: it answers while arr is down.
		mustRead(ctx, t, s, "demo_echo", map[string]any{"text": "still here"})
		unpause()
		mustRead(ctx, t, s, "frigate_list_cameras", nil)
		// arr comes back by itself (restart policy), and so do its tools,
		// on the same client session and the same gateway process.
		back := retryUntil(ctx, 90*time.Second, func() error {
			return callTool(ctx, s, "sonarr_series_list", nil).failure()
		})
		if back != nil {
			t.Fatalf("arr's tools did not come back: %v", back)
		}
		t.Logf("arr's tools answered again %s after the kill", time.Since(killed).Round(time.Second))
		if after := st.inspect(ctx, t, "arr-demo", "{{.RestartCount}}"); after == restarts {
			t.Errorf("arr-demo was not restarted by its restart policy (restart count %s)", after)
		}
		if !listed(ctx, t, s, "sonarr_series_list") {
			t.Error("tools/list lost sonarr_series_list")
		}
	})

	t.Run("the policy sidecar stopped", func(t *testing.T) {
		policy := st.container("policy")
		st.docker(ctx, t, "stop", "--time", "5", policy)
		stopped := true
		defer func() {
			if stopped {
				st.docker(context.Background(), t, "start", policy)
			}
		}()
		// Every call is refused, reads and writes, whatever the service.
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"demo_echo", map[string]any{"text": "no policy"}},
			{"sonarr_series_list", nil},
			{"demo_counter_add", map[string]any{"amount": 1}},
		} {
			began := time.Now()
			a := callTool(ctx, s, c.tool, c.args)
			t.Logf("%s without the sidecar (%s): %s: %s", c.tool, time.Since(began).Round(time.Millisecond), a.code, a.message)
			if a.err != nil || a.code != "forbidden" || !strings.Contains(a.message, "policy service is unavailable") {
				t.Errorf("%s: want a refusal naming the policy service, got %+v", c.tool, a)
			}
		}
		// Lists show nothing once the gateway's visibility answers (cached
		// for 10 s) have expired.
		if err := retryUntil(ctx, 20*time.Second, func() error {
			tools, err := s.ListTools(ctx, nil)
			if err == nil && len(tools.Tools) != 0 {
				err = fmt.Errorf("%d tools listed without the sidecar", len(tools.Tools))
			}
			return err
		}); err != nil {
			t.Error(err)
		}
		st.docker(ctx, t, "start", policy)
		stopped = false
		began := time.Now()
		if err := retryUntil(ctx, 60*time.Second, func() error {
			return callTool(ctx, s, "demo_echo", map[string]any{"text": "policy back"}).failure()
		}); err != nil {
			t.Fatalf("calls did not work again once the sidecar was back: %v", err)
		}
		t.Logf("calls worked again %s after the sidecar's start", time.Since(began).Round(time.Second))
	})

	t.Run("the gateway restarted", func(t *testing.T) {
		if now := st.inspect(ctx, t, "gateway", "{{.State.StartedAt}}"); now != gatewayStarted {
			t.Fatalf("the gateway restarted during the faults before (%s → %s): the services must come back on their own", gatewayStarted, now)
		}
		before := mustRead(ctx, t, s, "demo_counter_get", nil)
		prev := callTool(ctx, s, "demo_counter_add", map[string]any{"amount": 2})
		ticket, _ := prev.out["ticket"].(string)
		if prev.failure() != nil || !strings.HasPrefix(ticket, "tkt_") {
			t.Fatalf("want a preview with a ticket, got %+v", prev)
		}
		began := time.Now()
		st.docker(ctx, t, "restart", "--time", "10", st.container("gateway"))
		waitHealthy(ctx, t, st.container("gateway"))
		// The old session died with the process; what it answers now is
		// the client library's business, as long as it answers.
		octx, cancel := context.WithTimeout(ctx, 15*time.Second)
		old := callTool(octx, s, "demo_echo", map[string]any{"text": "old session"})
		cancel()
		t.Logf("the old session after the restart: err=%v code=%s", old.err, old.code)
		s2 := st.connect(ctx, t)
		defer s2.Close()
		t.Logf("a new session %s after the restart began", time.Since(began).Round(time.Second))
		mustRead(ctx, t, s2, "demo_echo", map[string]any{"text": "new session"})
		done := callTool(ctx, s2, "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": ticket})
		if done.failure() != nil || fmt.Sprint(done.out["value"]) == fmt.Sprint(before["value"]) {
			t.Fatalf("the ticket issued before the restart did not apply: %+v", done)
		}
	})
}

// connect opens an MCP session as OpenWebUI's client, retrying while the
// gateway (re)starts.
func (st faultStack) connect(ctx context.Context, t *testing.T) *sdk.ClientSession {
	t.Helper()
	var s *sdk.ClientSession
	err := retryUntil(ctx, 60*time.Second, func() error {
		ip, err := run(ctx, "docker", "inspect", "-f", `{{(index .NetworkSettings.Networks "`+st.project+`_clients").IPAddress}}`, st.container("gateway"))
		if err != nil {
			return fmt.Errorf("gateway address: %v %s", err, ip)
		}
		client := sdk.NewClient(&sdk.Implementation{Name: "toolgate-e2e-faults", Version: "1"}, nil)
		s, err = client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint:   "http://" + strings.TrimSpace(ip) + ":8080/mcp",
			HTTPClient: &http.Client{Transport: owuiAuth{st}, Timeout: 60 * time.Second},
		}, nil)
		return err
	})
	if err != nil {
		t.Fatalf("connect to the gateway: %v", err)
	}
	return s
}

// owuiAuth sends OpenWebUI's client token and a fresh user token.
type owuiAuth struct{ st faultStack }

func (a owuiAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+a.st.token)
	req.Header.Set("X-OpenWebUI-User-Jwt", a.st.userJWT())
	return http.DefaultTransport.RoundTrip(req)
}

func (st faultStack) container(service string) string { return st.project + "-" + service + "-1" }

// inspect returns a field of a service's container.
func (st faultStack) inspect(ctx context.Context, t *testing.T, service, format string) string {
	t.Helper()
	out, err := run(ctx, "docker", "inspect", "-f", format, st.container(service))
	if err != nil {
		t.Fatalf("inspect %s: %v %s", service, err, out)
	}
	return strings.TrimSpace(out)
}

func (st faultStack) docker(ctx context.Context, t *testing.T, args ...string) {
	t.Helper()
	if out, err := run(ctx, "docker", args...); err != nil {
		t.Fatalf("docker %s: %v %s", strings.Join(args, " "), err, out)
	}
}

// waitHealthy waits until a container's health check passes.
func waitHealthy(ctx context.Context, t *testing.T, container string) {
	t.Helper()
	if err := retryUntil(ctx, 90*time.Second, func() error {
		st, _ := run(ctx, "docker", "inspect", "-f", "{{.State.Health.Status}}", container)
		if st = strings.TrimSpace(st); st != "healthy" {
			return fmt.Errorf("%s is %s", container, st)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// toolAnswer is how a tools/call ended: a protocol error, or a result
// with its structured content and, for a tool error, its code and message.
type toolAnswer struct {
	out           map[string]any
	code, message string
	err           error
}

func (a toolAnswer) failure() error {
	switch {
	case a.err != nil:
		return a.err
	case a.code != "":
		return fmt.Errorf("%s: %s", a.code, a.message)
	}
	return nil
}

func callTool(ctx context.Context, s *sdk.ClientSession, tool string, args map[string]any) toolAnswer {
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return toolAnswer{err: err}
	}
	var a toolAnswer
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &a.out); err != nil {
		return toolAnswer{err: fmt.Errorf("structured content is not an object: %s", b)}
	}
	if res.IsError {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		a.code, a.message = e.Error.Code, e.Error.Message
		if a.code == "" {
			a.code = "(none)"
		}
	}
	return a
}

// mustRead calls a read that must succeed and returns its result.
func mustRead(ctx context.Context, t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	a := callTool(ctx, s, tool, args)
	if err := a.failure(); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return a.out
}

func listed(ctx context.Context, t *testing.T, s *sdk.ClientSession, tool string) bool {
	t.Helper()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tl := range res.Tools {
		if tl.Name == tool {
			return true
		}
	}
	return false
}

// retryUntil calls f every half second until it succeeds or within has
// passed, and returns its last error.
func retryUntil(ctx context.Context, within time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
