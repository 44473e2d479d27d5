package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// Config sizes a run.
type Config struct {
	Repo      string
	Rounds    int // interleaved rounds
	Calls     int // sequential calls per target and round
	Clients   int // concurrent clients in the throughput phase
	PerClient int // calls per client and round in the throughput phase
	Soak      int // calls from all clients before each RSS reading
	SoakRuns  int
	NoSidecar bool
	// Keep leaves the work directory (logs, audit lines) in place.
	Keep bool
}

// DefaultConfig is the full run behind docs/performance.md.
func DefaultConfig() Config {
	return Config{Rounds: 10, Calls: 300, Clients: 16, PerClient: 100, Soak: 100_000, SoakRuns: 3}
}

// QuickConfig is a smoke run: every row, a few hundred calls, no soak.
func QuickConfig(c Config) Config {
	c.Rounds, c.Calls, c.Clients, c.PerClient, c.Soak, c.SoakRuns = 2, 10, 4, 3, 0, 0
	return c
}

// maxPreviews bounds the previews one client makes in a round: every
// preview through the gateway opens a ticket, and one client may hold only
// so many (tickets.NewStore's per-client bound).
const maxPreviews = 150

// Target kinds.
const (
	kindDirect  = "direct"
	kindProxy   = "proxy"
	kindGateway = "gateway"
)

// target is one row: where a call goes and which call.
type target struct {
	group string
	name  string
	kind  string
	url   string
	tool  string
	args  json.RawMessage
	// token returns the bearer token of the client for a round (previews
	// use a fresh client each round to stay under the ticket bound).
	token func(round int) string
	// preview rows make no throughput run: 16 clients would open
	// thousands of tickets.
	preview bool
	proc    *proc // the gateway, for RSS

	lat    []time.Duration
	seqCPS []float64
	parCPS []float64
	par    []*session
}

// Run builds and starts the stack, measures every target and stops the
// stack again. Progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	dir, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	st := &stack{dir: dir}
	defer st.stop()
	targets, gateways, err := setUp(ctx, cfg, st, log)
	if err != nil {
		return nil, err
	}
	hc := newHTTPClient()
	rep := &Report{Config: cfg}
	if err := measure(ctx, cfg, hc, targets, log); err != nil {
		return nil, err
	}
	for _, g := range gateways {
		rep.rss(g.label+", after the rounds", g.proc)
	}
	if cfg.Soak > 0 {
		soakTarget := targets[slices.IndexFunc(targets, func(t *target) bool { return t.kind == kindGateway })]
		for i := range cfg.SoakRuns {
			fmt.Fprintf(log, "soak %d/%d: %d calls from %d clients to %s\n", i+1, cfg.SoakRuns, cfg.Soak, cfg.Clients, soakTarget.name)
			cps, err := soak(ctx, hc, soakTarget, cfg.Clients, cfg.Soak)
			if err != nil {
				return nil, fmt.Errorf("soak: %w", err)
			}
			rep.rss(fmt.Sprintf("%s, after soak %d (%d calls, %.0f calls/s)", gateways[0].label, i+1, cfg.Soak, cps), soakTarget.proc)
		}
	}
	for _, t := range targets {
		for _, s := range t.par {
			s.close(ctx)
		}
	}
	rep.collect(targets)
	return rep, nil
}

type gatewayProc struct {
	label string
	proc  *proc
}

// setUp builds the binaries and starts: the echo service, the demo service
// (writes on), a bare proxy in front of each, a gateway with the embedded
// policy in front of each, and, unless turned off, OPA as compose runs it
// with a gateway in remote mode in front of the echo service.
func setUp(ctx context.Context, cfg Config, st *stack, log io.Writer) ([]*target, []gatewayProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	gatewayBin, demoBin := filepath.Join(st.dir, "gateway"), filepath.Join(st.dir, "demo")
	fmt.Fprintln(log, "building the gateway and the demo service")
	for pkg, out := range map[string]string{"./services/gateway": gatewayBin, "./services/demo": demoBin} {
		if err := build(ctx, cfg.Repo, pkg, out); err != nil {
			return nil, nil, err
		}
	}
	serviceToken := "bench-service-token-0123456789abcdef"
	svcTokenFile, err := st.secretFile("service_token", serviceToken)
	if err != nil {
		return nil, nil, err
	}
	const approvalKey = "bench-approval-key-0123456789abcdef0123456789"
	keyFile, err := st.secretFile("approval_key", approvalKey)
	if err != nil {
		return nil, nil, err
	}
	// The demo verifies with its own key, derived from the gateway's.
	demoKey, err := approval.ServiceKey([]byte(approvalKey), "demo")
	if err != nil {
		return nil, nil, err
	}
	demoKeyFile, err := st.secretFile("approval_key_demo", string(demoKey))
	if err != nil {
		return nil, nil, err
	}
	// The sidecar answers only the gateway's policy token; like
	// services/policy in the image, it is given the token's hash.
	const policyToken = "bench-policy-token-0123456789abcdef0123456789"
	policyTokenFile, err := st.secretFile("policy_token", policyToken)
	if err != nil {
		return nil, nil, err
	}
	// One reading client, and a fresh client per round for each preview
	// row.
	var lines []string
	bearer := map[string]string{}
	clientNames := []string{"bench"}
	for r := range cfg.Rounds {
		clientNames = append(clientNames, fmt.Sprintf("bench-preview-%d", r))
	}
	for _, n := range clientNames {
		tok, line, err := auth.NewToken(n, []string{"users"}, auth.UserNone)
		if err != nil {
			return nil, nil, err
		}
		bearer[n], lines = tok, append(lines, line)
	}
	tokensFile, err := st.secretFile("client_tokens", strings.Join(lines, "\n"))
	if err != nil {
		return nil, nil, err
	}

	addrs := map[string]string{}
	for _, n := range []string{"echo", "demo", "echo-proxy", "demo-proxy", "gw-echo", "gw-demo", "gw-sidecar", "opa"} {
		if addrs[n], err = freeAddr(); err != nil {
			return nil, nil, err
		}
	}
	health := func(name string) string { return "http://" + addrs[name] + "/healthz" }
	mcpURL := func(name, path string) string { return "http://" + addrs[name] + path }

	fmt.Fprintln(log, "starting the services and the proxies")
	if _, err := st.start(ctx, "echo", self, nil, []string{roleEnv + "=" + roleEcho, listenEnv + "=" + addrs["echo"]}, health("echo")); err != nil {
		return nil, nil, err
	}
	if _, err := st.start(ctx, "demo", demoBin, nil, []string{
		"TOOLGATE_LISTEN=" + addrs["demo"], "TOOLGATE_SERVICE_TOKEN_FILE=" + svcTokenFile,
		"TOOLGATE_APPROVAL_KEY_FILE=" + demoKeyFile, "DEMO_ALLOW_WRITES=true",
	}, health("demo")); err != nil {
		return nil, nil, err
	}
	for _, svc := range []string{"echo", "demo"} {
		env := []string{roleEnv + "=" + roleProxy, listenEnv + "=" + addrs[svc+"-proxy"], targetEnv + "=http://" + addrs[svc]}
		if _, err := st.start(ctx, svc+"-proxy", self, nil, env, health(svc+"-proxy")); err != nil {
			return nil, nil, err
		}
	}

	gatewayEnv := func(name, service string, policy ...string) []string {
		return append([]string{
			"TOOLGATE_LISTEN=" + addrs[name],
			"TOOLGATE_ADMIN_LISTEN=127.0.0.1:0",
			"TOOLGATE_CLIENT_TOKENS_FILE=" + tokensFile,
			"TOOLGATE_APPROVAL_KEY_FILE=" + keyFile,
			"TOOLGATE_SERVICES=demo=" + mcpURL(service, "/mcp"),
			"TOOLGATE_SERVICE_TOKEN_DEMO_FILE=" + svcTokenFile,
			"TOOLGATE_PINS_FILE=" + filepath.Join(st.dir, name+"-pins.json"),
			// As compose runs it: tickets survive a restart.
			"TOOLGATE_TICKETS_FILE=" + filepath.Join(st.dir, name+"-tickets.db"),
			// 16 clients must never be answered busy.
			"TOOLGATE_SERVICE_CONCURRENCY=64",
		}, policy...)
	}
	fmt.Fprintln(log, "starting the gateways")
	gwEcho, err := st.start(ctx, "gw-echo", gatewayBin, nil, gatewayEnv("gw-echo", "echo", "POLICY_MODE=embedded"), health("gw-echo"))
	if err != nil {
		return nil, nil, err
	}
	gwDemo, err := st.start(ctx, "gw-demo", gatewayBin, nil, gatewayEnv("gw-demo", "demo", "POLICY_MODE=embedded"), health("gw-demo"))
	if err != nil {
		return nil, nil, err
	}
	gateways := []gatewayProc{{"gateway (embedded policy) in front of the echo service", gwEcho}, {"gateway (embedded policy) in front of services/demo", gwDemo}}
	var gwSidecar *proc
	if !cfg.NoSidecar {
		opa, err := opaBinary()
		if err != nil {
			return nil, nil, fmt.Errorf("%w; or run with -no-sidecar", err)
		}
		args, err := sidecarArgs(cfg.Repo, addrs["opa"])
		if err != nil {
			return nil, nil, err
		}
		opaEnv := []string{policies.SidecarTokenHashEnv + "=" + policies.SidecarTokenHash([]byte(policyToken))}
		if _, err := st.start(ctx, "opa", opa, args, opaEnv, "http://"+addrs["opa"]+"/health", "Authorization", "Bearer "+policyToken); err != nil {
			return nil, nil, err
		}
		gwSidecar, err = st.start(ctx, "gw-sidecar", gatewayBin, nil,
			gatewayEnv("gw-sidecar", "echo", "POLICY_MODE=remote", "POLICY_URL=http://"+addrs["opa"], "TOOLGATE_POLICY_TOKEN_FILE="+policyTokenFile), health("gw-sidecar"))
		if err != nil {
			return nil, nil, err
		}
		gateways = append(gateways, gatewayProc{"gateway (OPA sidecar) in front of the echo service", gwSidecar})
	}

	reader := func(int) string { return bearer["bench"] }
	service := func(int) string { return serviceToken }
	previewer := func(r int) string { return bearer[fmt.Sprintf("bench-preview-%d", r)] }
	echoArgs := json.RawMessage(`{"text":"benchmark"}`)
	addArgs := json.RawMessage(`{"amount":1}`)
	const (
		gEcho    = "read: demo_echo on a plain mcp-go echo service"
		gDemo    = "read: demo_echo on services/demo"
		gPreview = "preview of a write: demo_counter_add on services/demo"
	)
	targets := []*target{
		{group: gEcho, name: "service directly", kind: kindDirect, url: mcpURL("echo", "/mcp"), token: service},
		{group: gEcho, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("echo-proxy", "/mcp"), token: service},
		{group: gEcho, name: "gateway /mcp/demo, embedded policy", kind: kindGateway, url: mcpURL("gw-echo", "/mcp/demo"), token: reader, proc: gwEcho},
		{group: gEcho, name: "gateway /mcp, embedded policy", kind: kindGateway, url: mcpURL("gw-echo", "/mcp"), token: reader, proc: gwEcho},
	}
	if gwSidecar != nil {
		targets = append(targets,
			&target{group: gEcho, name: "gateway /mcp/demo, OPA sidecar", kind: kindGateway, url: mcpURL("gw-sidecar", "/mcp/demo"), token: reader, proc: gwSidecar})
	}
	targets = append(targets,
		&target{group: gDemo, name: "service directly", kind: kindDirect, url: mcpURL("demo", "/mcp"), token: service},
		&target{group: gDemo, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("demo-proxy", "/mcp"), token: service},
		&target{group: gDemo, name: "gateway /mcp/demo, embedded policy", kind: kindGateway, url: mcpURL("gw-demo", "/mcp/demo"), token: reader, proc: gwDemo},
		&target{group: gDemo, name: "gateway /mcp, embedded policy", kind: kindGateway, url: mcpURL("gw-demo", "/mcp"), token: reader, proc: gwDemo},
		&target{group: gPreview, name: "service directly", kind: kindDirect, url: mcpURL("demo", "/mcp"), token: service, preview: true},
		&target{group: gPreview, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("demo-proxy", "/mcp"), token: service, preview: true},
		&target{group: gPreview, name: "gateway /mcp/demo, embedded policy", kind: kindGateway, url: mcpURL("gw-demo", "/mcp/demo"), token: previewer, proc: gwDemo, preview: true},
	)
	for _, t := range targets {
		t.tool, t.args = "demo_echo", echoArgs
		if t.preview {
			t.tool, t.args = "demo_counter_add", addArgs
		}
	}
	return targets, gateways, nil
}

// measure warms every target up and runs the interleaved rounds.
func measure(ctx context.Context, cfg Config, hc *http.Client, targets []*target, log io.Writer) error {
	fmt.Fprintln(log, "opening sessions and warming up")
	for _, t := range targets {
		if err := ready(ctx, hc, t); err != nil {
			return err
		}
		if t.preview {
			continue
		}
		for range cfg.Clients {
			s, err := openSession(ctx, hc, t.url, t.token(0))
			if err != nil {
				return err
			}
			t.par = append(t.par, s)
		}
		if _, err := parallel(ctx, t, min(cfg.PerClient, 20)); err != nil {
			return fmt.Errorf("%s / %s: warm-up: %w", t.group, t.name, err)
		}
	}
	for r := range cfg.Rounds {
		fmt.Fprintf(log, "round %d/%d\n", r+1, cfg.Rounds)
		// Rotating the order spreads any drift over every target.
		order := append(slices.Clone(targets[r%len(targets):]), targets[:r%len(targets)]...)
		for _, t := range order {
			n := cfg.Calls
			if t.preview {
				n = min(n, maxPreviews)
			}
			s, err := openSession(ctx, hc, t.url, t.token(r))
			if err != nil {
				return err
			}
			start := time.Now()
			for range n {
				t0 := time.Now()
				if err := s.call(ctx, t.tool, t.args); err != nil {
					return fmt.Errorf("%s / %s: %w", t.group, t.name, err)
				}
				t.lat = append(t.lat, time.Since(t0))
			}
			t.seqCPS = append(t.seqCPS, float64(n)/time.Since(start).Seconds())
			s.close(ctx)
		}
		for _, t := range order {
			if t.preview {
				continue
			}
			cps, err := parallel(ctx, t, cfg.PerClient)
			if err != nil {
				return fmt.Errorf("%s / %s: %w", t.group, t.name, err)
			}
			t.parCPS = append(t.parCPS, cps)
		}
	}
	return nil
}

// ready waits until the target answers its call (a gateway offers a
// service's tools only after its first refresh).
func ready(ctx context.Context, hc *http.Client, t *target) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := openSession(ctx, hc, t.url, t.token(0))
		if err == nil {
			err = s.call(ctx, "demo_echo", json.RawMessage(`{"text":"ready"}`))
			s.close(ctx)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s / %s never answered: %w", t.group, t.name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// parallel runs per calls on each of the target's sessions at once and
// returns calls per second.
func parallel(ctx context.Context, t *target, per int) (float64, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(t.par))
	start := time.Now()
	for i, s := range t.par {
		wg.Go(func() {
			for range per {
				if err := s.call(ctx, t.tool, t.args); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(per*len(t.par)) / el.Seconds(), nil
}

// soak sends total calls from the target's sessions and returns calls/s.
func soak(ctx context.Context, _ *http.Client, t *target, clients, total int) (float64, error) {
	return parallel(ctx, t, max(total/max(clients, 1), 1))
}
