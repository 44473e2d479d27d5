package openapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/demo/counter"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// demo runs the demo service (counter, note, echo) behind a real gateway.
func demo(t *testing.T, opts ...func(*gatewaytest.Options)) (*gatewaytest.Gateway, *counter.State) {
	t.Helper()
	state := counter.New()
	o := gatewaytest.Options{Service: "demo", Tools: state.Tools(), AllowWrites: true}
	for _, f := range opts {
		f(&o)
	}
	return gatewaytest.Start(t, o), state
}

// openwebui is an OpenWebUI tool-server connection with the document loaded.
func openwebui(t *testing.T, g *gatewaytest.Gateway, client string) *gatewaytest.ToolServer {
	t.Helper()
	ts := g.ToolServer(client, "alice@example.org", "demo")
	if status, body := ts.Load(); status != http.StatusOK {
		t.Fatalf("GET openapi.json: %d %s", status, body)
	}
	return ts
}

func errorCode(m map[string]any) string { return gatewaytest.ErrorCode(m) }

func TestReadAnswersTheToolResult(t *testing.T) {
	g, _ := demo(t)
	ts := openwebui(t, g, "openwebui")
	status, body := ts.Call("demo_echo", map[string]any{"text": "hello"})
	if status != http.StatusOK || body["text"] != "hello" {
		t.Fatalf("echo: %d %v", status, body)
	}
	// A tool without arguments, called as OpenWebUI calls it: with {}.
	status, body = ts.Call("demo_counter_get", nil)
	if status != http.StatusOK || body["value"] == nil {
		t.Fatalf("counter_get: %d %v", status, body)
	}
	if !strings.Contains(g.Audit.String(), `"event":"outcome"`) || !strings.Contains(g.Audit.String(), `"tool":"demo_echo"`) {
		t.Fatalf("the read left no audit outcome:\n%s", g.Audit)
	}
}

// A write answers a preview and a ticket; the same call with confirm and the
// ticket applies it exactly once; a replay is refused and changes nothing.
func TestWritePreviewTicketConfirmAppliesOnce(t *testing.T) {
	g, state := demo(t)
	ts := openwebui(t, g, "openwebui")
	args := map[string]any{"amount": 7}

	status, preview := ts.Call("demo_counter_add", args)
	if status != http.StatusOK || preview["status"] != "confirmation_required" || preview["approval"] != "model" {
		t.Fatalf("preview: %d %v", status, preview)
	}
	ticket, _ := preview["ticket"].(string)
	if !strings.HasPrefix(ticket, "tkt_") || state.Value() != 0 {
		t.Fatalf("ticket %q, counter %d after the preview", ticket, state.Value())
	}

	confirm := map[string]any{"amount": 7, "confirm": true, "ticket": ticket}
	status, applied := ts.Call("demo_counter_add", confirm)
	if status != http.StatusOK || applied["status"] != "applied" || state.Value() != 7 {
		t.Fatalf("confirm: %d %v, counter %d", status, applied, state.Value())
	}

	status, replay := ts.Call("demo_counter_add", confirm)
	if status != http.StatusForbidden || errorCode(replay) != "forbidden" || state.Value() != 7 {
		t.Fatalf("replay: %d %v, counter %d", status, replay, state.Value())
	}

	// A ticket only confirms the call it was issued for.
	_, p2 := ts.Call("demo_counter_add", args)
	status, other := ts.Call("demo_counter_add", map[string]any{"amount": 8, "confirm": true, "ticket": p2["ticket"]})
	if status != http.StatusForbidden || !strings.Contains(other["error"].(map[string]any)["message"].(string), "exact call") || state.Value() != 7 {
		t.Fatalf("mismatched confirm: %d %v, counter %d", status, other, state.Value())
	}
	// confirm without a ticket is a bad argument, not a write.
	status, bad := ts.Call("demo_counter_add", map[string]any{"amount": 7, "confirm": true})
	if status != http.StatusUnprocessableEntity || errorCode(bad) != "invalid_argument" || state.Value() != 7 {
		t.Fatalf("confirm without ticket: %d %v", status, bad)
	}
	for _, want := range []string{`"outcome":"issued"`, `"outcome":"ticket_rejected"`, ticket} {
		if !strings.Contains(g.Audit.String(), want) {
			t.Errorf("audit lacks %s", want)
		}
	}
}

// A destructive write waits for a person: the confirm answers pending
// until the ticket is approved on the admin side, then applies.
func TestHumanApprovalThroughOpenAPI(t *testing.T) {
	g, state := demo(t)
	ts := openwebui(t, g, "openwebui")
	if _, p := ts.Call("demo_counter_add", map[string]any{"amount": 3}); p["ticket"] == nil {
		t.Fatal("no ticket")
	} else if _, a := ts.Call("demo_counter_add", map[string]any{"amount": 3, "confirm": true, "ticket": p["ticket"]}); a["status"] != "applied" {
		t.Fatalf("setup: %v", a)
	}
	status, preview := ts.Call("demo_counter_reset", nil)
	if status != http.StatusOK || preview["approval"] != "human" {
		t.Fatalf("reset preview: %d %v", status, preview)
	}
	confirm := map[string]any{"confirm": true, "ticket": preview["ticket"]}
	status, pending := ts.Call("demo_counter_reset", confirm)
	if status != http.StatusOK || pending["status"] != "pending" || pending["applied"] != false || state.Value() != 3 {
		t.Fatalf("pending: %d %v, counter %d", status, pending, state.Value())
	}
	if code := g.Approve(preview["ticket"].(string)); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	status, applied := ts.Call("demo_counter_reset", confirm)
	if status != http.StatusOK || applied["status"] != "applied" || state.Value() != 0 {
		t.Fatalf("after approval: %d %v, counter %d", status, applied, state.Value())
	}
}

// A client whose groups allow nothing gets a valid, empty document, and a
// direct POST to a real tool answers exactly like one to a tool that does
// not exist.
func TestClientWithoutRightsSeesNothing(t *testing.T) {
	g, state := demo(t)
	ts := openwebui(t, g, "stranger")
	validate(t, mustJSON(t, ts.Doc))
	if paths := ts.Doc["paths"].(map[string]any); len(paths) != 0 {
		t.Fatalf("stranger sees %d operations", len(paths))
	}
	for _, tool := range []string{"demo_echo", "demo_counter_add", "demo_counter_reset"} {
		hidden := rawPost(t, g, "stranger", "/openapi/demo/"+tool, `{"text":"x","amount":1}`)
		unknown := rawPost(t, g, "stranger", "/openapi/demo/demo_nosuch", `{"text":"x","amount":1}`)
		if hidden.status != http.StatusNotFound || hidden.status != unknown.status ||
			!bytes.Equal(hidden.body, bytes.Replace(unknown.body, []byte("demo_nosuch"), []byte(tool), 1)) {
			t.Errorf("%s: hidden %d %s, unknown %d %s", tool, hidden.status, hidden.body, unknown.status, unknown.body)
		}
	}
	if state.Value() != 0 {
		t.Fatal("a hidden write changed something")
	}
}

// The policy hides writes from a read-only client: the document lists its
// reads only and a POST to the write is the unknown-tool 404.
func TestPolicyHiddenToolIsNotFound(t *testing.T) {
	g, state := demo(t)
	ts := openwebui(t, g, "kiosk")
	var ops []string
	for _, s := range ts.Tools() {
		ops = append(ops, s.Name)
	}
	joined := strings.Join(ops, ",")
	if !strings.Contains(joined, "demo_echo") || strings.Contains(joined, "demo_counter_add") || strings.Contains(joined, "demo_counter_reset") {
		t.Fatalf("kiosk sees %v", ops)
	}
	status, body := ts.Post("/demo_counter_add", "post", map[string]any{"amount": 1})
	unknownStatus, unknown := ts.Post("/demo_nosuch", "post", map[string]any{"amount": 1})
	if status != http.StatusNotFound || unknownStatus != status || errorCode(body) != errorCode(unknown) ||
		body["error"].(map[string]any)["message"] != strings.Replace(unknown["error"].(map[string]any)["message"].(string), "demo_nosuch", "demo_counter_add", 1) {
		t.Fatalf("hidden write: %d %v; unknown: %d %v", status, body, unknownStatus, unknown)
	}
	if state.Value() != 0 {
		t.Fatal("the hidden write ran")
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func rawRequest(t *testing.T, g *gatewaytest.Gateway, method, path string, hdr map[string]string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, g.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if hdr["Host"] != "" {
		req.Host = hdr["Host"]
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	_, _ = g.Wire.Write(b)
	return answer{res.StatusCode, res.Header, b}
}

func rawPost(t *testing.T, g *gatewaytest.Gateway, client, path, body string) answer {
	t.Helper()
	return rawRequest(t, g, http.MethodPost, path, map[string]string{
		"Authorization": "Bearer " + g.Tokens[client], "Content-Type": "application/json",
	}, strings.NewReader(body))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Requests the gateway refuses before any call: each with its status, the
// stable code in a JSON body, and nothing run.
func TestRefusals(t *testing.T) {
	g, state := demo(t)
	bearer := "Bearer " + g.Tokens["openwebui"]
	big := `{"amount":1,"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		status int
		code   string // "" for the auth middleware's JSON-RPC shaped refusals
	}{
		{"no token", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Content-Type": "application/json"}, `{"amount":1}`, 401, ""},
		{"wrong token", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": "Bearer tg_wrong", "Content-Type": "application/json"}, `{"amount":1}`, 401, ""},
		{"document without token", "GET", "/openapi/demo/openapi.json", nil, "", 401, ""},
		{"foreign origin", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Origin": "https://evil.example", "Content-Type": "application/json"}, `{"amount":1}`, 403, ""},
		{"bad JSON", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `{"amount":`, 400, "invalid_argument"},
		{"JSON array", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `[1]`, 400, "invalid_argument"},
		{"not JSON media type", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Content-Type": "text/plain"}, `{"amount":1}`, 415, "invalid_argument"},
		{"body over 1 MiB", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, big, 413, "too_large"},
		{"wrong argument type", "POST", "/openapi/demo/demo_counter_add", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `{"amount":"lots"}`, 422, "invalid_argument"},
		{"unknown tool", "POST", "/openapi/demo/demo_nosuch", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `{}`, 404, "not_found"},
		{"unknown service", "GET", "/openapi/nosuch/openapi.json", map[string]string{"Authorization": bearer}, "", 404, "not_found"},
		{"tool of another endpoint's path", "POST", "/openapi/demo/sub/demo_echo", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `{"text":"x"}`, 404, "not_found"},
		{"GET a tool", "GET", "/openapi/demo/demo_echo", map[string]string{"Authorization": bearer}, "", 405, "invalid_argument"},
		{"POST the document", "POST", "/openapi/demo/openapi.json", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, `{}`, 405, "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := rawRequest(t, g, tc.method, tc.path, tc.hdr, strings.NewReader(tc.body))
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			var m map[string]any
			if err := json.Unmarshal(a.body, &m); err != nil {
				t.Fatalf("body is not JSON: %s", a.body)
			}
			if tc.code != "" && errorCode(m) != tc.code {
				t.Fatalf("code %q, want %q: %s", errorCode(m), tc.code, a.body)
			}
			if a.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", a.header.Get("Content-Type"))
			}
		})
	}
	if state.Value() != 0 {
		t.Fatal("a refused request changed the counter")
	}
}

// The document's server URL never comes from the request: a spoofed Host or
// X-Forwarded-Host cannot point a client (and its token) elsewhere. Without
// TOOLGATE_PUBLIC_URL it is relative to where the document was fetched;
// with it, it is that URL. A client that follows servers[0].url reaches
// the same tools as OpenWebUI, which uses its connection URL.
func TestServerURLIgnoresRequestHeaders(t *testing.T) {
	for _, public := range []string{"", "https://lab.example/toolgate"} {
		t.Run("public="+public, func(t *testing.T) {
			g, _ := demo(t, func(o *gatewaytest.Options) { o.PublicURL = public })
			a := rawRequest(t, g, "GET", "/openapi/demo/openapi.json", map[string]string{
				"Authorization": "Bearer " + g.Tokens["openwebui"], "Host": "evil.example",
				"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https", "Forwarded": "host=evil.example",
			}, nil)
			if a.status != http.StatusOK || bytes.Contains(a.body, []byte("evil.example")) {
				t.Fatalf("%d %s", a.status, a.body)
			}
			var doc struct {
				Servers []struct{ URL string } `json:"servers"`
			}
			_ = json.Unmarshal(a.body, &doc)
			want := public + "/openapi/demo"
			if len(doc.Servers) != 1 || doc.Servers[0].URL != want {
				t.Fatalf("servers %+v, want %s", doc.Servers, want)
			}
			if public != "" {
				return
			}
			// Resolve the relative server URL as a generic client would.
			docURL, _ := url.Parse(g.URL + "/openapi/demo/openapi.json")
			rel, _ := url.Parse(doc.Servers[0].URL)
			base := docURL.ResolveReference(rel).String()
			ts := gatewaytest.NewToolServer(t, base, gatewaytest.RecordingClient(g.Wire, map[string]string{"Authorization": "Bearer " + g.Tokens["openwebui"]}))
			ts.Load()
			if status, body := ts.Call("demo_echo", map[string]any{"text": "via servers"}); status != 200 || body["text"] != "via servers" {
				t.Fatalf("call via servers[0].url: %d %v", status, body)
			}
		})
	}
}
