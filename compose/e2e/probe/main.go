// Command probe is the end-to-end test's client, run as a container on the
// stack's clients network: it drives a real MCP client (the official Go SDK)
// through the gateway — tools/list, a read, a write that answers with a
// preview and a ticket, the confirm — and proves that nothing behind the
// gateway can be reached from where the clients sit. It prints one line per
// check and exits non-zero if any failed.
//
//	probe -url http://gateway:8080/mcp -token-file /run/secrets/token -unreachable demo:8000,policy:8181
//
// With -openapi it is an OpenWebUI-style client instead: it reads a
// service's OpenAPI tool server document and calls its tools as OpenWebUI
// does (JSON bodies, bearer token, its signed user token in
// X-OpenWebUI-User-Jwt), previews a write that needs a person, and
// confirms until a person has approved it on the approval page.
//
//	probe -openapi http://gateway:8080/openapi/demo -token tg_… -user-jwt eyJ…
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	url := flag.String("url", "http://gateway:8080/mcp", "the gateway's MCP endpoint")
	token := flag.String("token", "", "client bearer token (or -token-file)")
	tokenFile := flag.String("token-file", "", "file holding the client bearer token")
	unreachable := flag.String("unreachable", "", "comma-separated host:port that must NOT be reachable from here")
	userJWT := flag.String("user-jwt", "", "OpenWebUI's signed user token, sent as X-OpenWebUI-User-Jwt")
	openapiURL := flag.String("openapi", "", "a service's OpenAPI tool server (…/openapi/demo): run the OpenWebUI-style flow instead of MCP")
	var reads readList
	flag.Var(&reads, "read", "tool=JSON-arguments of a read that must succeed (repeatable)")
	flag.Parse()
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(2)
		}
		*token = strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := &report{}
	auth := bearer{token: *token, userJWT: *userJWT}
	if *openapiURL != "" {
		// A person has to find and approve the ticket meanwhile.
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		r.openapiFlow(ctx, strings.TrimRight(*openapiURL, "/"), auth)
		if r.failed > 0 {
			fmt.Printf("FAIL %d checks failed\n", r.failed)
			os.Exit(1)
		}
		fmt.Println("PASS")
		return
	}
	r.mcpFlow(ctx, *url, auth, reads)
	// Dials to an internal network's addresses time out rather than fail
	// fast, so they run side by side; results print in the given order.
	var addrs []string
	for _, a := range strings.Split(*unreachable, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	results := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() { results[i] = isolated(ctx, a) })
	}
	wg.Wait()
	for i, a := range addrs {
		r.check("unreachable "+a, results[i])
	}
	if r.failed > 0 {
		fmt.Printf("FAIL %d checks failed\n", r.failed)
		os.Exit(1)
	}
	fmt.Println("PASS")
}

type report struct{ failed int }

func (r *report) check(name string, err error) bool {
	if err != nil {
		r.failed++
		fmt.Printf("fail %s: %v\n", name, err)
		return false
	}
	fmt.Printf("ok   %s\n", name)
	return true
}

// bearer adds the client token and, when set, the user token to every
// request, as OpenWebUI does.
type bearer struct{ token, userJWT string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	if b.userJWT != "" {
		req.Header.Set("X-OpenWebUI-User-Jwt", b.userJWT)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// readList is the -read flag: tool=JSON arguments.
type readList []string

func (l *readList) String() string     { return strings.Join(*l, " ") }
func (l *readList) Set(v string) error { *l = append(*l, v); return nil }

func (r *report) mcpFlow(ctx context.Context, url string, auth bearer, reads readList) {
	client := sdk.NewClient(&sdk.Implementation{Name: "toolgate-e2e-probe", Version: "1"}, nil)
	var s *sdk.ClientSession
	// The gateway may still be refreshing its services just after start.
	err := retry(ctx, func() error {
		var err error
		s, err = client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: auth}}, nil)
		return err
	})
	if !r.check("connect "+url, err) {
		return
	}
	defer s.Close()

	err = retry(ctx, func() error {
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range tools.Tools {
			if t.Name == "demo_counter_add" {
				return nil
			}
		}
		return fmt.Errorf("demo_counter_add not among %d tools", len(tools.Tools))
	})
	r.check("tools/list offers the demo tools", err)

	out, err := call(ctx, s, "demo_echo", map[string]any{"text": "hello from the clients network"})
	if err == nil && out["text"] != "hello from the clients network" {
		err = fmt.Errorf("echo returned %v", out)
	}
	r.check("read demo_echo", err)

	// Reads of the other services, each against its fake upstream.
	for _, spec := range reads {
		tool, raw, _ := strings.Cut(spec, "=")
		args := map[string]any{}
		err := json.Unmarshal([]byte(raw), &args)
		if err == nil {
			var out map[string]any
			out, err = call(ctx, s, tool, args)
			if err == nil && len(out) == 0 {
				err = errors.New("empty result")
			}
		}
		r.check("read "+tool, err)
	}

	before, err := call(ctx, s, "demo_counter_get", map[string]any{})
	r.check("read demo_counter_get", err)
	prev, err := call(ctx, s, "demo_counter_add", map[string]any{"amount": 7})
	ticket, _ := prev["ticket"].(string)
	if err == nil && (prev["status"] != "confirmation_required" || !strings.HasPrefix(ticket, "tkt_")) {
		err = fmt.Errorf("want a preview with a ticket, got %v", prev)
	}
	if !r.check("write returns a preview and a ticket", err) {
		return
	}
	after, err := call(ctx, s, "demo_counter_get", map[string]any{})
	if err == nil && fmt.Sprint(after["value"]) != fmt.Sprint(before["value"]) {
		err = fmt.Errorf("the preview changed the counter: %v → %v", before["value"], after["value"])
	}
	r.check("the preview changed nothing", err)
	done, err := call(ctx, s, "demo_counter_add", map[string]any{"amount": 7, "confirm": true, "ticket": ticket})
	if err == nil && fmt.Sprint(done["value"]) == fmt.Sprint(before["value"]) {
		err = fmt.Errorf("confirm did not apply: %v", done)
	}
	r.check("confirm applies the write", err)
	_, err = call(ctx, s, "demo_counter_add", map[string]any{"amount": 7, "confirm": true, "ticket": ticket})
	if err == nil {
		err = errors.New("a replayed ticket applied again")
	} else if strings.Contains(err.Error(), "forbidden") {
		err = nil
	}
	r.check("a replayed ticket is refused", err)
}

// call returns the structured result, or an error carrying the tool's
// error body when the call failed.
func call(ctx context.Context, s *sdk.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("structured content is not an object: %s", b)
	}
	if res.IsError {
		return m, fmt.Errorf("tool error: %s", b)
	}
	return m, nil
}

// isolated returns nil when addr cannot be reached: its name does not
// resolve here, or nothing answers a TCP connection to it.
func isolated(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	conn.Close()
	return fmt.Errorf("%s accepted a connection from the clients network", addr)
}

func retry(ctx context.Context, f func() error) error {
	var err error
	for range 30 {
		if err = f(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}
