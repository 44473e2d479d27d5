package toolkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tok := string(serviceToken)
	call := modernCall(t, 1, "test_echo", map[string]any{"text": "hi"}, nil)
	cases := []struct {
		name   string
		method string
		auth   string
	}{
		{name: "missing", method: http.MethodPost},
		{name: "empty bearer", method: http.MethodPost, auth: "Bearer "},
		{name: "wrong token", method: http.MethodPost, auth: "Bearer wrong-token-0123456789abcdef"},
		{name: "token prefix", method: http.MethodPost, auth: "Bearer " + tok[:len(tok)-1]},
		{name: "token with suffix", method: http.MethodPost, auth: "Bearer " + tok + "x"},
		{name: "basic scheme", method: http.MethodPost, auth: "Basic " + tok},
		{name: "no scheme", method: http.MethodPost, auth: tok},
		{name: "GET without token", method: http.MethodGet},
		{name: "DELETE without token", method: http.MethodDelete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.url, strings.NewReader(call))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range modernHeaders("tools/call", "test_echo") {
				req.Header.Set(k, v)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
			}
			if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer ") {
				t.Errorf("WWW-Authenticate = %q", h)
			}
			if strings.Contains(string(body), tok) {
				t.Errorf("401 body echoes the token")
			}
		})
	}
	if n := f.echoCalls(); n != 0 {
		t.Errorf("tool ran %d times without the service token", n)
	}
	// The scheme is case-insensitive (RFC 7235), and the right token works.
	for _, scheme := range []string{"Bearer", "bearer"} {
		status, body := f.post(call, map[string]string{"Authorization": scheme + " " + tok,
			"Mcp-Protocol-Version": modernVersion, "Mcp-Method": "tools/call", "Mcp-Name": "test_echo"})
		if status != http.StatusOK {
			t.Errorf("%s: status %d: %s", scheme, status, body)
		}
	}
	if n := f.echoCalls(); n != 2 {
		t.Errorf("tool ran %d times with the token, want 2", n)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		ready      func(context.Context) error
		wantStatus int
		wantCode   string
	}{
		{name: "no probe", wantStatus: http.StatusOK},
		{name: "probe ok", ready: func(context.Context) error { return nil }, wantStatus: http.StatusOK},
		{
			name: "upstream refuses credentials",
			ready: func(context.Context) error {
				return toolerr.New(toolerr.AuthFailed, "sonarr rejected key "+upstreamSecret)
			},
			wantStatus: http.StatusServiceUnavailable, wantCode: "auth_failed",
		},
		{
			name:       "plain error",
			ready:      func(context.Context) error { return errors.New("dial tcp: " + upstreamSecret) },
			wantStatus: http.StatusServiceUnavailable, wantCode: "internal",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(o *toolkit.Options) { o.Ready = tc.ready })
			// Health endpoints need no token: the container healthcheck
			// has none.
			resp, err := f.srv.Client().Get(f.srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz = %d", resp.StatusCode)
			}
			resp, err = f.srv.Client().Get(f.srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("/readyz = %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if strings.Contains(string(body), upstreamSecret) {
				t.Errorf("/readyz leaks the secret: %s", body)
			}
			if tc.wantCode != "" {
				var r struct {
					Status string
					Error  toolkit.ErrorDetail
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				if r.Status != "not_ready" || string(r.Error.Code) != tc.wantCode {
					t.Errorf("/readyz body = %s", body)
				}
			}
		})
	}
}

func TestRequestBodyLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	// A syntactically valid call whose arguments are padded past the limit.
	big := modernCall(t, 1, "test_echo", map[string]any{"text": strings.Repeat("a", toolkit.MaxRequestBytes)}, nil)
	cases := []struct {
		name    string
		chunked bool
	}{
		{name: "content-length"},
		{name: "chunked", chunked: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if tc.chunked {
				// Hiding the length makes the client send chunks.
				body = io.MultiReader(strings.NewReader(big))
			}
			req, err := http.NewRequest(http.MethodPost, f.url, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+string(serviceToken))
			for k, v := range modernHeaders("tools/call", "test_echo") {
				req.Header.Set(k, v)
			}
			if tc.chunked && req.ContentLength != 0 {
				t.Fatalf("request is not chunked (length %d)", req.ContentLength)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413: %.200s", resp.StatusCode, data)
			}
		})
	}
	// A body under the limit reaches validation (the text is too long for
	// the schema), and the service still serves after the refusals.
	res, _ := f.callRaw("test_echo", map[string]any{"text": strings.Repeat("a", 1000)}, nil)
	if code := errorCode(t, res); code != toolerr.InvalidArgument {
		t.Errorf("code %q, want invalid_argument", code)
	}
	if n := f.echoCalls(); n != 0 {
		t.Errorf("tool ran %d times", n)
	}
}

func TestResultsOverHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)

	t.Run("redaction", func(t *testing.T) {
		res, raw := f.callRaw("test_leak", map[string]any{}, nil)
		if res.IsError {
			t.Fatalf("result = %+v", res)
		}
		for _, leak := range []string{upstreamSecret, "plain-key-value-abc", "hunter2-value"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("raw response body contains %q: %s", leak, raw)
			}
		}
		if res.StructuredContent["api_key"] != redacted {
			t.Errorf("api_key = %v", res.StructuredContent["api_key"])
		}
		if !strings.Contains(res.Content[0].Text, redacted) {
			t.Errorf("text mirror not redacted: %s", res.Content[0].Text)
		}
	})

	t.Run("internal error hides its cause", func(t *testing.T) {
		res, raw := f.callRaw("test_fail", map[string]any{}, nil)
		if code := errorCode(t, res); code != toolerr.Internal {
			t.Errorf("code %q", code)
		}
		if errorMessage(res) != "internal error" {
			t.Errorf("message %q", errorMessage(res))
		}
		for _, leak := range []string{"secret-xyz", upstreamSecret, "query upstream"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("raw response contains %q: %s", leak, raw)
			}
		}
	})

	t.Run("coded error keeps its code and message", func(t *testing.T) {
		res, _ := f.callRaw("test_notfound", map[string]any{}, nil)
		if code := errorCode(t, res); code != toolerr.NotFound {
			t.Errorf("code %q", code)
		}
		if errorMessage(res) != "no series named that" {
			t.Errorf("message %q", errorMessage(res))
		}
		var mirror toolkit.ErrorBody
		if err := json.Unmarshal([]byte(res.Content[0].Text), &mirror); err != nil || mirror.Error.Code != toolerr.NotFound {
			t.Errorf("text mirror = %q (%v)", res.Content[0].Text, err)
		}
	})

	t.Run("coded error message is redacted", func(t *testing.T) {
		res, raw := f.callRaw("test_quote", map[string]any{}, nil)
		if code := errorCode(t, res); code != toolerr.NotFound {
			t.Errorf("code %q", code)
		}
		if strings.Contains(string(raw), upstreamSecret) {
			t.Errorf("raw response contains the secret: %s", raw)
		}
		if !strings.Contains(errorMessage(res), redacted) {
			t.Errorf("message %q, want the redaction marker", errorMessage(res))
		}
	})

	t.Run("deadline becomes timeout", func(t *testing.T) {
		res, _ := f.callRaw("test_slow", map[string]any{}, nil)
		if code := errorCode(t, res); code != toolerr.Timeout {
			t.Errorf("code %q, want timeout", code)
		}
	})

	t.Run("non-object result is wrapped", func(t *testing.T) {
		res, _ := f.callRaw("test_list", map[string]any{}, nil)
		got, _ := json.Marshal(res.StructuredContent)
		if string(got) != `{"result":[1,2,3]}` {
			t.Errorf("structuredContent = %s", got)
		}
	})

	t.Run("panic is contained", func(t *testing.T) {
		status, raw := f.post(modernCall(t, 1, "test_panic", map[string]any{}, nil), modernHeaders("tools/call", "test_panic"))
		if status >= 500 {
			t.Errorf("status %d", status)
		}
		if strings.Contains(string(raw), upstreamSecret) || strings.Contains(string(raw), "boom") {
			t.Errorf("panic value leaks: %s", raw)
		}
		r := decodeRPC(t, raw)
		if r.Error != nil {
			t.Fatalf("panic became a JSON-RPC error: %s", raw)
		}
		var res toolResult
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		if code := errorCode(t, res); code != toolerr.Internal || errorMessage(res) != "internal error" {
			t.Errorf("panic result = %+v", res)
		}
		// The server still serves.
		if res, _ := f.callRaw("test_echo", map[string]any{"text": "after"}, nil); res.IsError {
			t.Errorf("call after panic failed: %+v", res)
		}
	})
}

// The JSON-RPC errors mcp-go answers with, and their HTTP statuses: a
// 2026-07-28 request gets a status that matches the error, an older one 200.
func TestMalformedJSONRPC(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	meta := modernMetaJSON(t, nil)
	cases := []struct {
		name   string
		body   string
		header map[string]string
		code   int
		status int
	}{
		{name: "invalid JSON", body: `{"jsonrpc":"2.0","id":1,"method":`, code: -32700, status: 400},
		{name: "not an object", body: `[1,2,3]`, code: -32700, status: 400},
		{name: "a batch", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: -32700, status: 400},
		{name: "a string", body: `"tools/list"`, code: -32700, status: 400},
		{name: "missing jsonrpc version", body: `{"id":1,"method":"tools/list","params":{"_meta":` + meta + `}}`,
			header: modernHeaders("tools/list", ""), code: -32600, status: 400},
		{name: "missing jsonrpc version, legacy", body: `{"id":1,"method":"tools/list"}`, code: -32600, status: 200},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"tools/destroy","params":{"_meta":` + meta + `}}`,
			header: modernHeaders("tools/destroy", ""), code: -32601, status: 404},
		{name: "unknown method, legacy", body: `{"jsonrpc":"2.0","id":1,"method":"tools/destroy"}`, code: -32601, status: 200},
		{name: "unknown tool", body: modernCall(t, 1, "test_nope", map[string]any{}, nil),
			header: modernHeaders("tools/call", "test_nope"), code: -32602, status: 400},
		{name: "unknown tool, legacy", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_nope"}}`, code: -32602, status: 200},
		{name: "no tool name, legacy", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, code: -32602, status: 200},
		{name: "routing header disagrees with body", body: modernCall(t, 1, "test_echo", map[string]any{"text": "x"}, nil),
			header: modernHeaders("tools/call", "test_other"), code: -32020, status: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := f.post(tc.body, tc.header)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			r := decodeRPC(t, raw)
			if r.Error == nil {
				t.Fatalf("no JSON-RPC error (status %d): %s", status, raw)
			}
			if r.Error.Code != tc.code {
				t.Errorf("code %d, want %d: %s", r.Error.Code, tc.code, raw)
			}
			// The service keeps serving.
			if res, _ := f.callRaw("test_echo", map[string]any{"text": "still here"}, nil); res.IsError {
				t.Errorf("call after malformed request failed: %+v", res)
			}
		})
	}
	if n := f.echoCalls(); n != int64(len(cases)) {
		t.Errorf("echo ran %d times, want %d (only the follow-up calls)", n, len(cases))
	}

	// Arguments that are not an object reach the tool handler as a
	// validation failure, not a protocol error.
	for _, args := range []string{`[1]`, `"x"`, `null`, `3`} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":` + args + `}}`
		status, raw := f.post(body, nil)
		if status != http.StatusOK {
			t.Fatalf("arguments %s: status %d", args, status)
		}
		var res toolResult
		if err := json.Unmarshal(decodeRPC(t, raw).Result, &res); err != nil {
			t.Fatalf("arguments %s: %s", args, raw)
		}
		if code := errorCode(t, res); code != toolerr.InvalidArgument {
			t.Errorf("arguments %s: code %q", args, code)
		}
	}
}

// Older clients use initialize and may send no session id at all; the
// service keeps no session state, so each request stands alone.
func TestLegacyStateless(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	legacy := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}

	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+string(serviceToken))
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("initialize minted session id %q", id)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		Instructions    string `json:"instructions"`
	}
	if err := json.Unmarshal(decodeRPC(t, body).Result, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q", init.ProtocolVersion)
	}
	if !strings.Contains(init.Instructions, toolkit.UntrustedNote) || !strings.HasPrefix(init.Instructions, "Test service.") {
		t.Errorf("instructions = %q", init.Instructions)
	}

	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"legacy"}}}`
	for _, session := range []string{"", "mcp-session-00000000-0000-0000-0000-000000000000", "forged"} {
		h := map[string]string{"Mcp-Protocol-Version": legacy["Mcp-Protocol-Version"], "Mcp-Session-Id": session}
		status, raw := f.post(call, h)
		if status != http.StatusOK {
			t.Errorf("session %q: status %d: %s", session, status, raw)
			continue
		}
		var res toolResult
		if err := json.Unmarshal(decodeRPC(t, raw).Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.IsError || res.StructuredContent["echo"] != "legacy" {
			t.Errorf("session %q: result %+v", session, res)
		}
	}
	if n := f.echoCalls(); n != 3 {
		t.Errorf("tool ran %d times, want 3", n)
	}
}

// TestGetHasNoStream: a stateless service offers no event stream; a GET
// answers 405 at once instead of holding an idle connection open forever.
func TestGetHasNoStream(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name  string
		token string
		want  int
	}{
		{"with the gateway token", string(serviceToken), http.StatusMethodNotAllowed},
		{"without a token", "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("GET /mcp = %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "POST" {
				t.Fatalf("Allow = %q", resp.Header.Get("Allow"))
			}
		})
	}
}
