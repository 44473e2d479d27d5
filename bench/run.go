package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
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
	// Before is another checkout (e.g. a git worktree of an older commit)
	// whose gateway is measured beside this repository's, in the same
	// rounds; services, proxies and client stay this repository's.
	Before string
	// Variants are more checkouts measured the same way, each as
	// LABEL=DIR (its rows start with "LABEL: "): a build with one piece
	// switched off, say, beside the build with it.
	Variants []string
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

// maxPreviews bounds the timed previews one client makes in a round: every
// preview through the gateway opens a ticket, and one client may hold only
// so many (the gateway's per-client bound, 200), warm-up included.
const maxPreviews = 150

// warmPreviews are the untimed previews each round's new preview client
// makes first. A client's first writes of a tool are slower by design (the
// gateway learns the policy's residual for it, then checks it against the
// whole policy on 17 calls); reads are measured on a client past its first
// calls, and so are previews. Their latencies are reported on their own.
const warmPreviews = 20

// Target kinds.
const (
	kindDirect = "direct"
	kindProxy  = "proxy"
	// kindProxyOneP is the bare proxy on one P, as the gateway runs
	// (services/gateway/app/procs.go): the floor with the same scheduler
	// setting, so what the setting gains and what the gateway's own work
	// costs are told apart.
	kindProxyOneP = "proxy-one-p"
	kindGateway   = "gateway"
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
	// cpuOf are the processes whose CPU time a call of this row costs
	// beyond the client: the service, the proxy, or the gateway (with its
	// OPA sidecar); the service behind a proxy or gateway is the same for
	// every row of a group and not counted.
	cpuOf    []*proc
	cpu      time.Duration
	cpuCalls int
	// soak names the gateway when this row is the one its RSS soak runs
	// on (per gateway variant: the embedded policy's, and the sidecar's,
	// which is how compose and Kubernetes run it).
	soak string
	// soakPolicy is the OPA sidecar behind a soaked gateway: its memory
	// is read too, since moving the policy out of the gateway moves its
	// memory, it does not save it.
	soakPolicy *proc

	lat []time.Duration
	// first are the latencies of the warm-up previews of each round's new
	// client.
	first  []time.Duration
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
	rep := &Report{Config: cfg, LoadStart: loadAverage()}
	for _, g := range gateways {
		if !slices.Contains(rep.Gateways, g.rev) {
			rep.Gateways = append(rep.Gateways, g.rev)
		}
	}
	if err := measure(ctx, cfg, hc, targets, log); err != nil {
		return nil, err
	}
	for _, g := range gateways {
		rep.rss(g.label+", after the rounds", g.proc)
	}
	if cfg.Soak > 0 {
		var soaked []*target
		for _, t := range targets {
			if t.soak != "" {
				soaked = append(soaked, t)
			}
		}
		// Run i of every variant before run i+1 of any: the same noise.
		for i := range cfg.SoakRuns {
			for _, t := range soaked {
				fmt.Fprintf(log, "soak %d/%d: %d calls from %d clients to %s\n", i+1, cfg.SoakRuns, cfg.Soak, cfg.Clients, t.name)
				cps, err := soak(ctx, hc, t, cfg.Clients, cfg.Soak)
				if err != nil {
					return nil, fmt.Errorf("soak: %w", err)
				}
				rep.rss(fmt.Sprintf("%s, after soak %d (%d calls, %.0f calls/s)", t.soak, i+1, cfg.Soak, cps), t.proc)
				if t.soakPolicy != nil {
					rep.rss(fmt.Sprintf("%s: its OPA sidecar process, after soak %d", t.soak, i+1), t.soakPolicy)
				}
			}
		}
	}
	rep.LoadEnd = loadAverage()
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
	rev   string // "after: <commit>" or "before: <commit>"
	proc  *proc
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures: the bench
// shares its cores, and the report says how busy they were.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// variant is one gateway build: this repository's, or with -before an
// older checkout's, measured in the same rounds so that noise on the
// shared cores hits both alike.
type variant struct {
	prefix string // "" for this repository's gateway, "before: " for the other
	repo   string // where the gateway is built and its sidecar's compose is read
	rev    string // the checkout's commit, for the report
	bin    string
	// policy is the checkout's policy sidecar (services/policy: OPA's own
	// command in the image, run as compose runs it).
	policy string
}

// setUp builds the binaries and starts: the echo service, the demo service
// (writes on), a bare proxy in front of each, and for each gateway variant
// a gateway with the embedded policy in front of each service and, unless
// turned off, OPA as that checkout's compose runs it with a gateway in
// remote mode in front of each service.
func setUp(ctx context.Context, cfg Config, st *stack, log io.Writer) ([]*target, []gatewayProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	variants := []*variant{{repo: cfg.Repo}}
	if cfg.Before != "" {
		variants = append(variants, &variant{prefix: "before: ", repo: cfg.Before})
	}
	for _, lv := range cfg.Variants {
		label, dir, ok := strings.Cut(lv, "=")
		if !ok || label == "" || dir == "" {
			return nil, nil, fmt.Errorf("-variant %q: want LABEL=DIR", lv)
		}
		variants = append(variants, &variant{prefix: label + ": ", repo: dir})
	}
	demoBin := filepath.Join(st.dir, "demo")
	fmt.Fprintln(log, "building the gateway and the demo service")
	if err := build(ctx, cfg.Repo, cfg.Repo, "./services/demo", demoBin); err != nil {
		return nil, nil, err
	}
	for i, v := range variants {
		v.bin = filepath.Join(st.dir, fmt.Sprintf("gateway-%d", i))
		if err := build(ctx, cfg.Repo, v.repo, "./services/gateway", v.bin); err != nil {
			return nil, nil, err
		}
		if !cfg.NoSidecar {
			v.policy = filepath.Join(st.dir, fmt.Sprintf("policy-%d", i))
			if err := build(ctx, cfg.Repo, v.repo, "./services/policy", v.policy); err != nil {
				return nil, nil, err
			}
		}
		v.rev = revision(ctx, v.repo)
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
	// As compose runs it, the gateway has an admin token: the admin API,
	// the approval page and the operator console (which reads every
	// audit line) are on.
	adminTokenFile, err := st.secretFile("admin_token", "bench-admin-token-0123456789abcdef")
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
	// One reading client, and a fresh client per preview row and round:
	// one client may hold only so many open tickets.
	var lines []string
	bearer := map[string]string{}
	clientNames := []string{"bench"}
	for row := range previewRowsPer * len(variants) {
		for r := range cfg.Rounds {
			clientNames = append(clientNames, previewClient(row, r))
		}
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
	names := []string{"echo", "demo", "echo-proxy", "demo-proxy", "echo-proxy-one-p", "demo-proxy-one-p"}
	for i := range variants {
		for _, n := range []string{"gw-echo", "gw-demo", "opa", "gw-sidecar-echo", "gw-sidecar-demo"} {
			names = append(names, fmt.Sprintf("%s-%d", n, i))
		}
	}
	for _, n := range names {
		if addrs[n], err = freeAddr(); err != nil {
			return nil, nil, err
		}
	}
	addr := func(name string) string { return addrs[name] }
	health := func(name string) string { return "http://" + addr(name) + "/healthz" }
	mcpURL := func(name, path string) string { return "http://" + addr(name) + path }

	fmt.Fprintln(log, "starting the services and the proxies")
	procs := map[string]*proc{}
	if procs["echo"], err = st.start(ctx, "echo", self, nil, []string{roleEnv + "=" + roleEcho, listenEnv + "=" + addr("echo")}, health("echo")); err != nil {
		return nil, nil, err
	}
	if procs["demo"], err = st.start(ctx, "demo", demoBin, nil, []string{
		"TOOLGATE_LISTEN=" + addr("demo"), "TOOLGATE_SERVICE_TOKEN_FILE=" + svcTokenFile,
		"TOOLGATE_APPROVAL_KEY_FILE=" + demoKeyFile, "DEMO_ALLOW_WRITES=true",
	}, health("demo")); err != nil {
		return nil, nil, err
	}
	for _, svc := range []string{"echo", "demo"} {
		for _, p := range []struct{ name, procs string }{{svc + "-proxy", ""}, {svc + "-proxy-one-p", "GOMAXPROCS=1"}} {
			env := []string{roleEnv + "=" + roleProxy, listenEnv + "=" + addr(p.name), targetEnv + "=http://" + addr(svc)}
			if p.procs != "" {
				env = append(env, p.procs)
			}
			if procs[p.name], err = st.start(ctx, p.name, self, nil, env, health(p.name)); err != nil {
				return nil, nil, err
			}
		}
	}

	gatewayEnv := func(name, service string, policy ...string) []string {
		return append([]string{
			"TOOLGATE_LISTEN=" + addr(name),
			"TOOLGATE_ADMIN_LISTEN=127.0.0.1:0",
			"TOOLGATE_CLIENT_TOKENS_FILE=" + tokensFile,
			"TOOLGATE_APPROVAL_KEY_FILE=" + keyFile,
			"TOOLGATE_SERVICES=demo=" + mcpURL(service, "/mcp"),
			"TOOLGATE_SERVICE_TOKEN_DEMO_FILE=" + svcTokenFile,
			"TOOLGATE_PINS_FILE=" + filepath.Join(st.dir, name+"-pins.json"),
			// As compose runs it: tickets survive a restart.
			"TOOLGATE_TICKETS_FILE=" + filepath.Join(st.dir, name+"-tickets.db"),
			"TOOLGATE_ADMIN_TOKEN_FILE=" + adminTokenFile,
			// and the audit lines go to the data volume too.
			"TOOLGATE_AUDIT_FILE=" + filepath.Join(st.dir, name+"-audit.jsonl"),
			// 16 clients must never be answered busy.
			"TOOLGATE_SERVICE_CONCURRENCY=64",
		}, policy...)
	}
	reader := func(int) string { return bearer["bench"] }
	service := func(int) string { return serviceToken }
	previewRow := 0
	previewer := func() func(int) string {
		row := previewRow
		previewRow++
		return func(r int) string { return bearer[previewClient(row, r)] }
	}
	echoArgs := json.RawMessage(`{"text":"benchmark"}`)
	addArgs := json.RawMessage(`{"amount":1}`)
	const (
		gEcho    = "read: demo_echo on a plain mcp-go echo service"
		gDemo    = "read: demo_echo on services/demo"
		gPreview = "preview of a write: demo_counter_add on services/demo"
	)
	targets := []*target{
		{group: gEcho, name: "service directly", kind: kindDirect, url: mcpURL("echo", "/mcp"), token: service, cpuOf: []*proc{procs["echo"]}},
		{group: gEcho, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("echo-proxy", "/mcp"), token: service, cpuOf: []*proc{procs["echo-proxy"]}},
		{group: gEcho, name: proxyOnePName, kind: kindProxyOneP, url: mcpURL("echo-proxy-one-p", "/mcp"), token: service, cpuOf: []*proc{procs["echo-proxy-one-p"]}},
		{group: gDemo, name: "service directly", kind: kindDirect, url: mcpURL("demo", "/mcp"), token: service, cpuOf: []*proc{procs["demo"]}},
		{group: gDemo, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("demo-proxy", "/mcp"), token: service, cpuOf: []*proc{procs["demo-proxy"]}},
		{group: gDemo, name: proxyOnePName, kind: kindProxyOneP, url: mcpURL("demo-proxy-one-p", "/mcp"), token: service, cpuOf: []*proc{procs["demo-proxy-one-p"]}},
		{group: gPreview, name: "service directly", kind: kindDirect, url: mcpURL("demo", "/mcp"), token: service, preview: true, cpuOf: []*proc{procs["demo"]}},
		{group: gPreview, name: "bare reverse proxy", kind: kindProxy, url: mcpURL("demo-proxy", "/mcp"), token: service, preview: true, cpuOf: []*proc{procs["demo-proxy"]}},
		{group: gPreview, name: proxyOnePName, kind: kindProxyOneP, url: mcpURL("demo-proxy-one-p", "/mcp"), token: service, preview: true, cpuOf: []*proc{procs["demo-proxy-one-p"]}},
	}
	var gateways []gatewayProc
	for i, v := range variants {
		fmt.Fprintf(log, "starting the gateways built from %s\n", v.rev)
		name := func(n string) string { return fmt.Sprintf("%s-%d", n, i) }
		rev := "gateway built from " + v.rev
		if v.prefix != "" {
			rev = strings.TrimSuffix(v.prefix, ": ") + ": " + rev
		}
		gwEcho, err := st.start(ctx, name("gw-echo"), v.bin, nil, gatewayEnv(name("gw-echo"), "echo", "POLICY_MODE=embedded"), health(name("gw-echo")))
		if err != nil {
			return nil, nil, err
		}
		gwDemo, err := st.start(ctx, name("gw-demo"), v.bin, nil, gatewayEnv(name("gw-demo"), "demo", "POLICY_MODE=embedded"), health(name("gw-demo")))
		if err != nil {
			return nil, nil, err
		}
		gateways = append(gateways,
			gatewayProc{v.prefix + "gateway (embedded policy) in front of the echo service", rev, gwEcho},
			gatewayProc{v.prefix + "gateway (embedded policy) in front of services/demo", rev, gwDemo})
		gw := func(group, label, gwName string, p *proc, path string, preview bool) *target {
			token := reader
			if preview {
				token = previewer()
			}
			return &target{group: group, name: v.prefix + label, kind: kindGateway, url: mcpURL(gwName, path), token: token, proc: p, preview: preview, cpuOf: []*proc{p}}
		}
		soak := gw(gEcho, "gateway /mcp/demo, embedded policy", name("gw-echo"), gwEcho, "/mcp/demo", false)
		soak.soak = v.prefix + "gateway (embedded policy) in front of the echo service"
		targets = append(targets,
			soak,
			gw(gEcho, "gateway /mcp, embedded policy", name("gw-echo"), gwEcho, "/mcp", false),
			gw(gDemo, "gateway /mcp/demo, embedded policy", name("gw-demo"), gwDemo, "/mcp/demo", false),
			gw(gDemo, "gateway /mcp, embedded policy", name("gw-demo"), gwDemo, "/mcp", false),
			gw(gPreview, "gateway /mcp/demo, embedded policy", name("gw-demo"), gwDemo, "/mcp/demo", true),
			gw(gPreview, "gateway /mcp, embedded policy", name("gw-demo"), gwDemo, "/mcp", true),
		)
		if cfg.NoSidecar {
			continue
		}
		args, err := sidecarArgs(v.repo, addr(name("opa")))
		if err != nil {
			return nil, nil, err
		}
		// The image's binary reads the token's file and hands OPA its hash,
		// as in compose.
		opaEnv := []string{"TOOLGATE_POLICY_TOKEN_FILE=" + policyTokenFile}
		opaProc, err := st.start(ctx, name("opa"), v.policy, args, opaEnv, "http://"+addr(name("opa"))+"/health", "Authorization", "Bearer "+policyToken)
		if err != nil {
			return nil, nil, err
		}
		remote := []string{"POLICY_MODE=remote", "POLICY_URL=http://" + addr(name("opa")), "TOOLGATE_POLICY_TOKEN_FILE=" + policyTokenFile}
		scEcho, err := st.start(ctx, name("gw-sidecar-echo"), v.bin, nil, gatewayEnv(name("gw-sidecar-echo"), "echo", remote...), health(name("gw-sidecar-echo")))
		if err != nil {
			return nil, nil, err
		}
		scDemo, err := st.start(ctx, name("gw-sidecar-demo"), v.bin, nil, gatewayEnv(name("gw-sidecar-demo"), "demo", remote...), health(name("gw-sidecar-demo")))
		if err != nil {
			return nil, nil, err
		}
		gateways = append(gateways,
			gatewayProc{v.prefix + "gateway (OPA sidecar) in front of the echo service", rev, scEcho},
			gatewayProc{v.prefix + "gateway (OPA sidecar) in front of services/demo", rev, scDemo})
		sidecarRows := []*target{
			gw(gEcho, "gateway /mcp/demo, OPA sidecar", name("gw-sidecar-echo"), scEcho, "/mcp/demo", false),
			gw(gEcho, "gateway /mcp, OPA sidecar", name("gw-sidecar-echo"), scEcho, "/mcp", false),
			gw(gPreview, "gateway /mcp/demo, OPA sidecar", name("gw-sidecar-demo"), scDemo, "/mcp/demo", true),
		}
		for _, t := range sidecarRows {
			t.cpuOf = append(t.cpuOf, opaProc) // the policy's work is the sidecar's
		}
		sidecarRows[0].soak = v.prefix + "gateway (OPA sidecar) in front of the echo service"
		sidecarRows[0].soakPolicy = opaProc
		targets = append(targets, sidecarRows...)
	}
	for _, t := range targets {
		t.tool, t.args = "demo_echo", echoArgs
		if t.preview {
			t.tool, t.args = "demo_counter_add", addArgs
		}
	}
	// Rows in group order, this repository's gateway before the other.
	slices.SortStableFunc(targets, func(a, b *target) int {
		return slices.Index([]string{gEcho, gDemo, gPreview}, a.group) - slices.Index([]string{gEcho, gDemo, gPreview}, b.group)
	})
	return targets, gateways, nil
}

// proxyOnePName is the one-P proxy's row.
const proxyOnePName = "bare reverse proxy, one P (GOMAXPROCS=1, as the gateway runs)"

// previewRowsPer is how many preview rows a gateway variant has (embedded
// /mcp/demo and /mcp, sidecar /mcp/demo), each with its own client per
// round.
const previewRowsPer = 3

func previewClient(row, round int) string { return fmt.Sprintf("bench-preview-%d-%d", row, round) }

// revision names a checkout's commit ("unknown" outside git).
func revision(ctx context.Context, repo string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "log", "-1", "--format=%h %s").Output()
	if err != nil {
		return "unknown"
	}
	return truncateLine(strings.TrimSpace(string(out)), 80)
}

func truncateLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
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
			if t.preview {
				for range warmPreviews {
					t0 := time.Now()
					if err := s.call(ctx, t.tool, t.args); err != nil {
						return fmt.Errorf("%s / %s: warm-up: %w", t.group, t.name, err)
					}
					t.first = append(t.first, time.Since(t0))
				}
			}
			cpu0, cpuErr := cpuTime(t.cpuOf)
			start := time.Now()
			for range n {
				t0 := time.Now()
				if err := s.call(ctx, t.tool, t.args); err != nil {
					return fmt.Errorf("%s / %s: %w", t.group, t.name, err)
				}
				t.lat = append(t.lat, time.Since(t0))
			}
			t.seqCPS = append(t.seqCPS, float64(n)/time.Since(start).Seconds())
			if cpu1, err := cpuTime(t.cpuOf); err == nil && cpuErr == nil {
				t.cpu += cpu1 - cpu0
				t.cpuCalls += n
			}
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
