// Command soak is scripts/soak.sh's client: N MCP clients (the official Go
// SDK), each on its own session, call a mix of reads across every demo
// service and the preview → confirm flow of a write, through the gateway,
// until the duration is over. It prints one summary line per tool and a
// total, with the first errors seen, and exits 1 if any call failed. A
// "busy" answer (a service at its concurrency limit) is retried after a
// pause, as it asks, and counted apart.
//
//	go run ./bench/soak -url http://127.0.0.1:8080/mcp -token-file TOKEN -clients 16 -duration 10m
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// step is one call of the mix; write steps preview and then confirm. Only
// the first client runs write and alone steps.
type step struct {
	tool  string
	args  map[string]any
	write bool
	alone bool
}

// mix reads every demo service (each answered by its fake upstream) and
// runs the demo's model-approved write (the first client only), so tickets
// are issued and used.
var mix = []step{
	{tool: "demo_echo", args: map[string]any{"text": "soak"}},
	{tool: "sonarr_series_list"},
	{tool: "radarr_movie_list"},
	{tool: "prowlarr_indexer_list"},
	{tool: "frigate_list_cameras"},
	{tool: "ersatztv_list_playouts"},
	{tool: "tuliprox_list_playlist_sources"},
	{tool: "ha_entity_list"},
	// Unraid's service holds 4 calls at once and 90 requests to Unraid per
	// 10 s (a real Unraid throttles at 100): 16 clients would only measure
	// that limit.
	{tool: "unraid_system_overview", alone: true},
	{tool: "web_search", args: map[string]any{"query": "nimbus nas 3.2"}},
	{tool: "demo_counter_add", args: map[string]any{"amount": 1}, write: true},
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "the gateway's MCP endpoint")
	tokenFile := flag.String("token-file", "", "file holding the client's bearer token")
	clients := flag.Int("clients", 16, "concurrent clients, one MCP session each")
	duration := flag.Duration("duration", 10*time.Minute, "how long to call")
	think := flag.Duration("think", 50*time.Millisecond, "pause between one client's calls (keeps a shared machine usable)")
	only := flag.String("tools", "", "comma-separated tools of the mix to call (default: all)")
	flag.Parse()
	steps := mix
	if *only != "" {
		steps = slices.DeleteFunc(slices.Clone(mix), func(s step) bool { return !slices.Contains(strings.Split(*only, ","), s.tool) })
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tally := newTally()
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var wg sync.WaitGroup
	for i := range *clients {
		wg.Go(func() {
			if err := runClient(runCtx, i, *url, strings.TrimSpace(string(token)), steps, *think, tally); err != nil {
				tally.record("connect", err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	calls, failures, retried := tally.print(os.Stdout)
	fmt.Printf("total: %d calls, %d errors, %d busy answers retried, %d clients, %s, %.1f calls/s\n",
		calls, failures, retried, *clients, elapsed.Round(time.Second), float64(calls)/elapsed.Seconds())
	if failures > 0 || calls == 0 {
		os.Exit(1)
	}
}

// runClient opens one session and loops over the mix until ctx ends; the
// client starts at its own place in the mix so the services share the load.
func runClient(ctx context.Context, n int, url, token string, steps []step, think time.Duration, tally *tally) error {
	client := sdk.NewClient(&sdk.Implementation{Name: "toolgate-soak", Version: "1"}, nil)
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token), Timeout: time.Minute},
	}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := n; ctx.Err() == nil; i++ {
		st := steps[i%len(steps)]
		if (st.write || st.alone) && n != 0 {
			// One writer: a second one would change the counter between
			// another's preview and confirm, which the gateway rightly
			// refuses ("the scope changed since the preview").
			continue
		}
		err := call(ctx, s, st, tally)
		if ctx.Err() != nil {
			return nil // the run ended during the call: not the gateway's fault
		}
		tally.record(st.tool, err)
		// Real clients do not call in lockstep; without jitter the 16
		// bunch up behind the slowest service.
		select {
		case <-ctx.Done():
		case <-time.After(think/2 + rand.N(think)):
		}
	}
	return nil
}

// call runs one step: a read, or a write's preview and its confirm.
func call(ctx context.Context, s *sdk.ClientSession, st step, tally *tally) error {
	args := map[string]any{}
	for k, v := range st.args {
		args[k] = v
	}
	out, err := callPatiently(ctx, s, st.tool, args, tally)
	if err != nil || !st.write {
		return err
	}
	ticket, _ := out["ticket"].(string)
	if out["status"] != "confirmation_required" || ticket == "" {
		return fmt.Errorf("want a preview with a ticket, got %v", out)
	}
	args["confirm"], args["ticket"] = true, ticket
	_, err = callPatiently(ctx, s, st.tool, args, tally)
	return err
}

// callPatiently does what a "busy" answer asks ("retry shortly"): a few
// retries after a pause, each counted; still busy after them is an error.
func callPatiently(ctx context.Context, s *sdk.ClientSession, tool string, args map[string]any, tally *tally) (map[string]any, error) {
	for attempt := 0; ; attempt++ {
		out, err := callTool(ctx, s, tool, args)
		if !errors.Is(err, errBusy) || attempt == 5 || ctx.Err() != nil {
			return out, err
		}
		tally.busy(tool)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(100+rand.N(200)) * time.Millisecond):
		}
	}
}

// errBusy marks a tool error with code busy.
var errBusy = errors.New("busy")

func callTool(ctx context.Context, s *sdk.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("structured content is not an object: %.200s", b)
	}
	if res.IsError {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Code == "busy" {
			return nil, fmt.Errorf("%w: %.300s", errBusy, b)
		}
		return nil, fmt.Errorf("tool error: %.300s", b)
	}
	return m, nil
}

type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

// tally counts calls and errors per tool and keeps the first few errors.
type tally struct {
	mu                 sync.Mutex
	calls, errs, waits map[string]int64
	examples           []string
}

func newTally() *tally {
	return &tally{calls: map[string]int64{}, errs: map[string]int64{}, waits: map[string]int64{}}
}

// busy counts a busy answer that was retried.
func (t *tally) busy(tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.waits[tool]++
}

func (t *tally) record(tool string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls[tool]++
	if err != nil {
		t.errs[tool]++
		if len(t.examples) < 10 {
			t.examples = append(t.examples, tool+": "+err.Error())
		}
	}
}

func (t *tally) print(w *os.File) (calls, failures, retried int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tools := make([]string, 0, len(t.calls))
	for tool := range t.calls {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		c, e := t.calls[tool], t.errs[tool]
		fmt.Fprintf(w, "%-32s %8d calls %6d errors %6d busy, retried\n", tool, c, e, t.waits[tool])
		calls += c
		failures += e
		retried += t.waits[tool]
	}
	for _, e := range t.examples {
		fmt.Fprintln(w, "error:", e)
	}
	return calls, failures, retried
}
