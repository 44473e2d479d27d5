package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// Readiness is one tool service's answer to `/app readycheck`: whether its
// upstream is reachable with its credentials accepted, or what to fix.
type Readiness struct {
	Service string
	Ready   bool
	Message string
}

// noReadiness are the services without an upstream of their own: the
// core, the demo's fakes and SearXNG (web reports whether it answers).
var noReadiness = map[string]bool{gatewayService: true, policyService: true, "fakes": true, "searxng": true}

// ReadinessTargets are the running tool-service containers of s, by
// service name: those that serve /readyz and have the readycheck command.
func ReadinessTargets(s Stack) map[string]string {
	out := map[string]string{}
	for _, c := range s.Containers {
		if c.Config == nil || c.State == nil || !c.State.Running {
			continue
		}
		svc := c.Config.Labels["com.docker.compose.service"]
		if svc == "" || noReadiness[svc] || !strings.HasPrefix(c.Config.Image, "toolgate/") {
			continue
		}
		out[svc] = c.ID
	}
	return out
}

// readycheck runs /app readycheck in the container and returns its one line.
func readycheck(ctx context.Context, cli *client.Client, id string) (Readiness, error) {
	ex, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: []string{"/app", "readycheck"}, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return Readiness{}, fmt.Errorf("exec readycheck: %w", err)
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return Readiness{}, fmt.Errorf("attach readycheck: %w", err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, io.LimitReader(att.Reader, 64<<10)); err != nil {
		return Readiness{}, fmt.Errorf("read readycheck: %w", err)
	}
	res, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return Readiness{}, fmt.Errorf("inspect readycheck: %w", err)
	}
	return Readiness{Ready: res.ExitCode == 0, Message: strings.TrimSpace(out.String())}, nil
}

// checkReadiness asks every target at once (each answers within about 8
// s); a failed exec is reported as the service's message, not as doctor's
// own failure.
func checkReadiness(ctx context.Context, cli *client.Client, s Stack) []Readiness {
	targets := ReadinessTargets(s)
	out := make([]Readiness, 0, len(targets))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for svc, id := range targets {
		wg.Go(func() {
			r, err := readycheck(ctx, cli, id)
			if err != nil {
				r = Readiness{Message: err.Error()}
			}
			r.Service = svc
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// printReadiness writes one line per service, sorted: OK or what to fix.
// Readiness never fails doctor: an application that is down is not a
// breach of the security model.
func printReadiness(w io.Writer, rs []Readiness) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Service < rs[j].Service })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tREADINESS (upstream reachable, credentials accepted)")
	notReady := 0
	for _, r := range rs {
		msg := "OK"
		if !r.Ready {
			msg = r.Message
			if msg == "" {
				msg = "not ready"
			}
			notReady++
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Service, msg)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d services, %d not ready (not counted as failures)\n", len(rs), notReady)
}
