// Command bench measures what the gateway costs per tools/call the way a
// user runs it: client, gateway and tool service as separate processes on
// loopback. It builds the gateway and the demo service, starts a plain
// mcp-go echo service, the real demo service, a bare reverse proxy
// (net/http/httputil, one hop and nothing else; and one on a single P) and
// the gateway (embedded policy, and the OPA sidecar mode with the policy
// image's binary running OPA's `run --server` as compose runs it), then
// drives them with a plain JSON-RPC client on MCP sessions, interleaving
// rounds so noise on the shared cores hits every target alike.
//
//	go run ./bench              # the full run behind docs/performance.md
//	go run ./bench -quick       # a smoke run of a few hundred calls
//	go run ./bench -before DIR  # also the gateway of another checkout
//	                            # (git worktree add DIR <commit>), same rounds
//	go run ./bench -variant off-x=DIR  # more checkouts, rows labelled off-x
//
// It prints p50/p99, what each target adds over the direct call and over
// the bare proxy, calls/s at 1 and 16 clients, and the gateway's RSS after
// a soak of 100,000 calls from 16 clients, repeated to show whether it
// grows. Nothing here asserts a time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	cfg := DefaultConfig()
	quick := flag.Bool("quick", false, "a smoke run: a few hundred calls, no soak")
	flag.StringVar(&cfg.Repo, "repo", "", "repository root (default: found from the working directory)")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "interleaved rounds")
	flag.IntVar(&cfg.Calls, "calls", cfg.Calls, "sequential calls per target and round (1 client)")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients for the throughput phase")
	flag.IntVar(&cfg.PerClient, "per-client", cfg.PerClient, "calls per client and round in the throughput phase")
	flag.IntVar(&cfg.Soak, "soak", cfg.Soak, "calls from all clients before each RSS reading (0: no soak)")
	flag.IntVar(&cfg.SoakRuns, "soak-runs", cfg.SoakRuns, "how often the soak repeats (RSS growth)")
	flag.BoolVar(&cfg.NoSidecar, "no-sidecar", false, "skip the OPA sidecar rows")
	flag.StringVar(&cfg.Before, "before", "", "another checkout (e.g. a git worktree of an older commit) whose gateway is measured beside this one, in the same rounds")
	flag.Func("variant", "LABEL=DIR: one more checkout measured in the same rounds, its rows labelled LABEL (may be given more than once)", func(v string) error {
		cfg.Variants = append(cfg.Variants, v)
		return nil
	})
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the work directory (logs, audit lines)")
	flag.Parse()
	if *quick {
		cfg = QuickConfig(cfg)
	}
	if cfg.Repo == "" {
		root, err := FindRepo()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		cfg.Repo = root
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Print(rep.Markdown())
}
