package toolkit_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

var lightArgsHall40 = map[string]any{"room": "hall", "level": 40}

// preview calls the light tool without an approval and returns the digest.
func (f *fixture) preview(args any) (toolResult, string) {
	f.t.Helper()
	res, _ := f.callRaw("test_set_light", args, nil)
	if res.IsError {
		f.t.Fatalf("preview failed: %+v", res)
	}
	d, _ := res.Meta[approval.MetaPreviewDigest].(string)
	if d == "" {
		f.t.Fatalf("preview without %s: %+v", approval.MetaPreviewDigest, res.Meta)
	}
	return res, d
}

// approvalFor is a valid approval of the light call with args and digest.
func (f *fixture) approvalFor(args any, previewDigest, ticket string) approval.Approval {
	f.t.Helper()
	return approval.Approval{
		Service:       "test",
		Tool:          "test_set_light",
		ArgsDigest:    argsDigest(f.t, args),
		PreviewDigest: previewDigest,
		TicketID:      ticket,
		Expires:       f.clock.Now().Add(5 * time.Minute).Unix(),
	}
}

func applyMeta(token string) map[string]any {
	return map[string]any{approval.MetaApproval: token}
}

func TestWritePreviewHasNoSideEffect(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res, digest := f.preview(lightArgsHall40)
	level, applies, previews := f.light.snapshot()
	if level != 10 || applies != 0 || previews != 1 {
		t.Fatalf("after preview: level=%d applies=%d previews=%d, want 10/0/1", level, applies, previews)
	}
	if res.StructuredContent["status"] != "preview" {
		t.Fatalf("status = %v, want preview", res.StructuredContent["status"])
	}
	p, _ := res.StructuredContent["preview"].(map[string]any)
	if p["from"] != float64(10) || p["to"] != float64(40) || p["room"] != "hall" {
		t.Errorf("preview = %v", p)
	}
	want := argsDigest(t, map[string]any{"room": "hall", "from": 10, "to": 40})
	if digest != want {
		t.Errorf("preview digest = %s, want digest of the preview %s", digest, want)
	}
	// An unchanged upstream previews to the same digest.
	if _, again := f.preview(lightArgsHall40); again != digest {
		t.Errorf("second preview digest %s differs from %s", again, digest)
	}
}

func TestWriteApplyOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, digest := f.preview(lightArgsHall40)
	token := sign(t, approvalKey, f.approvalFor(lightArgsHall40, digest, "ticket-1"))

	// The call's arguments arrive with another key order and spacing: the
	// binding is to the canonical arguments.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_set_light",` +
		`"arguments":{ "level" : 40, "room":"hall" },` +
		`"_meta":` + modernMetaJSON(t, applyMeta(token)) + `}}`
	status, raw := f.post(body, modernHeaders("tools/call", "test_set_light"))
	if status != http.StatusOK {
		t.Fatalf("apply: status %d: %s", status, raw)
	}
	var res toolResult
	if err := json.Unmarshal(decodeRPC(t, raw).Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.StructuredContent["status"] != "applied" {
		t.Fatalf("apply result = %+v", res)
	}
	if r, _ := res.StructuredContent["result"].(map[string]any); r["level"] != float64(40) {
		t.Errorf("apply result payload = %v", res.StructuredContent["result"])
	}
	if level, applies, _ := f.light.snapshot(); level != 40 || applies != 1 {
		t.Fatalf("after apply: level=%d applies=%d, want 40/1", level, applies)
	}

	// The same approval again is refused and applies nothing.
	f.light.setLevelOutOfBand(10)
	res, _ = f.callRaw("test_set_light", lightArgsHall40, applyMeta(token))
	if code := errorCode(t, res); code != toolerr.Forbidden {
		t.Errorf("replay: code %q, want forbidden", code)
	}
	if !strings.Contains(errorMessage(res), "already used") {
		t.Errorf("replay message = %q", errorMessage(res))
	}
	if level, applies, _ := f.light.snapshot(); level != 10 || applies != 1 {
		t.Errorf("after replay: level=%d applies=%d, want 10/1", level, applies)
	}
}

func TestWriteRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// token builds the approval token from a valid approval.
		token func(t *testing.T, f *fixture, valid approval.Approval) string
		// before runs between preview and apply.
		before func(f *fixture)
		// args are the arguments of the apply call (default lightArgsHall40).
		args    map[string]any
		code    toolerr.Code
		message string
	}{
		{
			name: "expired at signing",
			token: func(t *testing.T, f *fixture, a approval.Approval) string {
				a.Expires = f.clock.Now().Add(-time.Second).Unix()
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "expired",
		},
		{
			name:   "expired while waiting",
			token:  func(t *testing.T, _ *fixture, a approval.Approval) string { return sign(t, approvalKey, a) },
			before: func(f *fixture) { f.clock.Advance(6 * time.Minute) },
			code:   toolerr.Forbidden, message: "expired",
		},
		{
			name: "expires exactly now",
			token: func(t *testing.T, f *fixture, a approval.Approval) string {
				a.Expires = f.clock.Now().Unix()
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "expired",
		},
		{
			name:  "signed with another key",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string { return sign(t, otherKey, a) },
			code:  toolerr.Forbidden, message: "not valid",
		},
		{
			name: "signature of another payload",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string {
				good := sign(t, approvalKey, a)
				a.TicketID = "ticket-other"
				other := sign(t, approvalKey, a)
				p, _, _ := strings.Cut(other, ".")
				_, s, _ := strings.Cut(good, ".")
				return p + "." + s
			},
			code: toolerr.Forbidden, message: "not valid",
		},
		{
			name:  "malformed token",
			token: func(*testing.T, *fixture, approval.Approval) string { return "not-a-token" },
			code:  toolerr.Forbidden, message: "not valid",
		},
		{
			name:  "approval for other arguments",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string { return sign(t, approvalKey, a) },
			args:  map[string]any{"room": "hall", "level": 41},
			code:  toolerr.Forbidden, message: "does not match",
		},
		{
			name: "approval for another tool",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string {
				a.Tool = "test_echo"
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "does not match",
		},
		{
			name: "approval for another service",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string {
				a.Service = "other"
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "does not match",
		},
		{
			name:   "scope changed since the preview",
			token:  func(t *testing.T, _ *fixture, a approval.Approval) string { return sign(t, approvalKey, a) },
			before: func(f *fixture) { f.light.setLevelOutOfBand(70) },
			code:   toolerr.Forbidden, message: "scope changed",
		},
		{
			name: "approval for another preview",
			token: func(t *testing.T, f *fixture, a approval.Approval) string {
				a.PreviewDigest = argsDigest(t, map[string]any{"room": "hall", "from": 99, "to": 40})
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "scope changed",
		},
		{
			name: "approval without a preview digest",
			token: func(t *testing.T, _ *fixture, a approval.Approval) string {
				a.PreviewDigest = ""
				return sign(t, approvalKey, a)
			},
			code: toolerr.Forbidden, message: "scope changed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			_, digest := f.preview(lightArgsHall40)
			token := tc.token(t, f, f.approvalFor(lightArgsHall40, digest, "ticket-"+tc.name))
			if tc.before != nil {
				tc.before(f)
			}
			levelBefore, _, _ := f.light.snapshot()
			args := tc.args
			if args == nil {
				args = lightArgsHall40
			}
			res, raw := f.callRaw("test_set_light", args, applyMeta(token))
			if code := errorCode(t, res); code != tc.code {
				t.Errorf("code %q, want %q", code, tc.code)
			}
			if msg := errorMessage(res); !strings.Contains(msg, tc.message) || !strings.Contains(msg, "nothing was changed") {
				t.Errorf("message %q, want it to mention %q and that nothing changed", msg, tc.message)
			}
			if level, applies, _ := f.light.snapshot(); applies != 0 || level != levelBefore {
				t.Errorf("refused apply changed the upstream: level=%d (was %d) applies=%d", level, levelBefore, applies)
			}
			if strings.Contains(string(raw), token) {
				t.Errorf("response echoes the approval token")
			}
		})
	}
}

// A refused approval must not burn the ticket when the refusal happened
// before verification (invalid arguments); a valid call afterwards applies.
func TestWriteInvalidArgumentsKeepTicket(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, digest := f.preview(lightArgsHall40)
	token := sign(t, approvalKey, f.approvalFor(lightArgsHall40, digest, "ticket-keep"))
	res, _ := f.callRaw("test_set_light", map[string]any{"room": "attic", "level": 40}, applyMeta(token))
	if code := errorCode(t, res); code != toolerr.InvalidArgument {
		t.Fatalf("code %q, want invalid_argument", code)
	}
	res, _ = f.callRaw("test_set_light", lightArgsHall40, applyMeta(token))
	if res.IsError || res.StructuredContent["status"] != "applied" {
		t.Fatalf("apply after invalid call = %+v", res)
	}
	if _, applies, _ := f.light.snapshot(); applies != 1 {
		t.Errorf("applies = %d, want 1", applies)
	}
}

// An approval that is not a string is no approval: the call is a preview.
func TestWriteNonStringApprovalIsPreview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	res, _ := f.callRaw("test_set_light", lightArgsHall40, map[string]any{approval.MetaApproval: 12345})
	if res.IsError || res.StructuredContent["status"] != "preview" {
		t.Fatalf("result = %+v, want a preview", res)
	}
	if _, applies, _ := f.light.snapshot(); applies != 0 {
		t.Errorf("applies = %d, want 0", applies)
	}
}

func TestWritesAbsentWithoutAllowWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *toolkit.Options) {
		o.AllowWrites = false
		o.ApprovalKey = nil
	})
	if slices.Contains(f.svc.ToolNames(), "test_set_light") {
		t.Fatalf("ToolNames lists the write tool: %v", f.svc.ToolNames())
	}
	status, raw := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":`+modernMetaJSON(t, nil)+`}}`,
		modernHeaders("tools/list", ""))
	if status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", status, raw)
	}
	var list struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(decodeRPC(t, raw).Result, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("tools/list is empty")
	}
	for _, tool := range list.Tools {
		if tool.Name == "test_set_light" || tool.Meta[approval.MetaWrite] != false {
			t.Errorf("read-only service lists %s with %s=%v", tool.Name, approval.MetaWrite, tool.Meta[approval.MetaWrite])
		}
	}

	// Calling it, with or without an approval, is an unknown tool.
	token := sign(t, approvalKey, f.approvalFor(lightArgsHall40, "x", "ticket-ro"))
	for _, meta := range []map[string]any{nil, applyMeta(token)} {
		_, raw := f.post(modernCall(t, 2, "test_set_light", lightArgsHall40, meta), modernHeaders("tools/call", "test_set_light"))
		r := decodeRPC(t, raw)
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("call of an absent write tool: %s", raw)
		}
	}
	if level, applies, previews := f.light.snapshot(); level != 10 || applies != 0 || previews != 0 {
		t.Errorf("absent write tool ran: level=%d applies=%d previews=%d", level, applies, previews)
	}
}

// Concurrent uses of one approval apply exactly once.
func TestWriteConcurrentApplyOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, digest := f.preview(lightArgsHall40)
	token := sign(t, approvalKey, f.approvalFor(lightArgsHall40, digest, "ticket-race"))
	body := modernCall(t, 1, "test_set_light", lightArgsHall40, applyMeta(token))
	const n = 8
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
			if err != nil {
				answers <- answer{err: err}
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+string(serviceToken))
			for k, v := range modernHeaders("tools/call", "test_set_light") {
				req.Header.Set(k, v)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			answers <- answer{status: resp.StatusCode, body: data, err: err}
		})
	}
	wg.Wait()
	close(answers)
	applied, refused := 0, 0
	for a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("request: %v status %d %s", a.err, a.status, a.body)
		}
		var res toolResult
		if err := json.Unmarshal(decodeRPC(t, a.body).Result, &res); err != nil {
			t.Fatal(err)
		}
		switch {
		case !res.IsError && res.StructuredContent["status"] == "applied":
			applied++
		case res.IsError && errorCode(t, res) == toolerr.Forbidden:
			refused++
		default:
			t.Errorf("unexpected result %+v", res)
		}
	}
	if applied != 1 || refused != n-1 {
		t.Errorf("applied %d, refused %d; want 1 and %d", applied, refused, n-1)
	}
	if _, applies, _ := f.light.snapshot(); applies != 1 {
		t.Errorf("upstream applied %d times", applies)
	}
}

// TestTruncatedPreviewCarriesNoDigest: a preview cut by the result cap was
// seen by nobody in full, so the service sends no digest for it and the
// gateway cannot issue a ticket that would apply it.
func TestTruncatedPreviewCarriesNoDigest(t *testing.T) {
	f := newFixture(t, func(o *toolkit.Options) { o.MaxResultBytes = 40 })
	res, _ := f.callRaw("test_set_light", lightArgsHall40, nil)
	if res.IsError || res.StructuredContent["truncated"] != true {
		t.Fatalf("want a truncated preview, got %+v", res)
	}
	if d, ok := res.Meta[approval.MetaPreviewDigest]; ok {
		t.Fatalf("a truncated preview carries the digest %v", d)
	}
	if _, applies, _ := f.light.snapshot(); applies != 0 {
		t.Fatal("a preview applied something")
	}
}
