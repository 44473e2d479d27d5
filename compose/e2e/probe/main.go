// Command probe is the end-to-end test's client, run as a container on the
// stack's clients network: it drives a real MCP client (the official Go SDK)
// through the gateway — tools/list, a read, a write that answers with a
// preview and a ticket, the confirm — and proves that nothing behind the
// gateway can be reached from where the clients sit. Run from any network
// with -policy, it attacks the OPA sidecar as a compromised neighbour would
// (replace the policy, read policies and data) and requires a refusal. It
// prints one line per check and exits non-zero if any failed.
//
//	probe -url http://gateway:8080/mcp -token-file /run/secrets/token -unreachable demo:8000,policy:8181
//	probe -url "" -policy http://policy:8181 [-policy-token TOKEN]
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
	demo := flag.Bool("demo", true, "also check the demo service's tools and write flow (false for a client that may use only other services)")
	openapiURL := flag.String("openapi", "", "a service's OpenAPI tool server (…/openapi/demo): run the OpenWebUI-style flow instead of MCP")
	var reads, policies readList
	flag.Var(&reads, "read", "tool=JSON-arguments of a read that must succeed (repeatable)")
	flag.Var(&policies, "policy", "base URL of an OPA sidecar to attack; every attempt must be refused (repeatable)")
	policyToken := flag.String("policy-token", "", "the gateway's policy token: attempts with it must be refused too, and a decision query must work")
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
	if *url != "" {
		r.mcpFlow(ctx, *url, auth, reads, *demo)
	}
	if len(policies) > 0 {
		r.attackPolicy(ctx, policies, *policyToken)
	}
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

func (r *report) mcpFlow(ctx context.Context, url string, auth bearer, reads readList, demo bool) {
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

	if demo {
		r.demoReads(ctx, s)
	} else if len(reads) > 0 {
		// Just after a (re)start the gateway may not have read the
		// service's tools yet.
		want, _, _ := strings.Cut(reads[0], "=")
		r.check("tools/list offers "+want, retry(ctx, func() error {
			tools, err := s.ListTools(ctx, nil)
			if err != nil {
				return err
			}
			for _, t := range tools.Tools {
				if t.Name == want {
					return nil
				}
			}
			return fmt.Errorf("%s not among %d tools", want, len(tools.Tools))
		}))
	}
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

	if demo {
		r.demoWrite(ctx, s)
	}
}

// demoWrite runs the demo's write flow: preview, confirm, replay.
func (r *report) demoWrite(ctx context.Context, s *sdk.ClientSession) {
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

// demoReads checks that the demo's tools are listed and answer.
func (r *report) demoReads(ctx context.Context, s *sdk.ClientSession) {
	err := retry(ctx, func() error {
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

}

// allowEverything is the policy a compromised neighbour would install.
const allowEverything = `package toolgate.authz

decision := {"decision": "allow", "reason": "owned", "approval": "model", "ttl_seconds": 0}
`

// attackPolicy tries to replace the sidecar's policy and to read its
// policies and data. Each attempt must fail: no connection at all, or a
// 401/403 from OPA. With the gateway's token the same attempts must still
// be refused, while the gateway's decision query answers (so the refusals
// are OPA's, not a dead address). Attempts run side by side (a dial into
// an internal network times out rather than fails); results print in order.
func (r *report) attackPolicy(ctx context.Context, bases []string, token string) {
	type attempt struct {
		name                string
		method, path, token string
		body                string
		want                int // 0: refused; else this status
	}
	tokens := []string{""}
	if token != "" {
		tokens = append(tokens, token)
	}
	var all []attempt
	for _, base := range bases {
		for _, tok := range tokens {
			who := "without a token"
			if tok != "" {
				who = "with the gateway's token"
			}
			for _, a := range []struct{ method, path, body string }{
				{http.MethodPut, "/v1/policies/e2e-owned", allowEverything},
				{http.MethodGet, "/v1/data", ""},
				{http.MethodGet, "/v1/policies", ""},
			} {
				all = append(all, attempt{name: fmt.Sprintf("policy refuses %s %s%s %s", a.method, base, a.path, who),
					method: a.method, path: base + a.path, token: tok, body: a.body})
			}
		}
		if token != "" {
			all = append(all, attempt{name: "policy answers the gateway's decision query at " + base,
				method: http.MethodPost, path: base + "/v1/data/toolgate/authz/decision?strict-builtin-errors=true", token: token,
				body: `{"input":{"action":"list","service":"-","tool":"-","ticket":{"state":"none","force":false}}}`, want: http.StatusOK})
		}
	}
	results := make([]string, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, a := range all {
		wg.Go(func() {
			status, err := sendPolicy(ctx, a.method, a.path, a.token, a.body)
			switch {
			case err != nil && a.want == 0 && a.token == "":
				results[i] = " (no connection)"
			case err != nil:
				errs[i] = err
			case a.want == 0 && (status == http.StatusUnauthorized || status == http.StatusForbidden),
				a.want != 0 && status == a.want:
				results[i] = fmt.Sprintf(" (HTTP %d)", status)
			default:
				errs[i] = fmt.Errorf("answered HTTP %d", status)
			}
		})
	}
	wg.Wait()
	for i, a := range all {
		r.check(a.name+results[i], errs[i])
	}
}

// sendPolicy makes one request to the sidecar and returns its status.
func sendPolicy(ctx context.Context, method, url, token, body string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
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
