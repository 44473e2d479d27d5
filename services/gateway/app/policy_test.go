package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// TestPolicyDirIsRead: with PolicyDir set the gateway evaluates the files on
// disk, so an operator's edit (here: demo_counter_add becomes low-risk)
// takes effect without a rebuild.
func TestPolicyDirIsRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, policies.FS); err != nil {
		t.Fatal(err)
	}
	toolsFile := filepath.Join(dir, "data", "toolgate", "tools.json")
	b, err := os.ReadFile(toolsFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"low_risk": [`, `"low_risk": ["demo_counter_add",`, 1)
	if edited == string(b) {
		t.Fatal("tools.json has no low_risk list to edit")
	}
	if err := os.WriteFile(toolsFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *app.Config) { c.PolicyDir = dir })
	got, isErr := call(t, h.client("openwebui", "", "/mcp"), "demo_counter_add", map[string]any{"amount": 4})
	if isErr || got["status"] != "applied" || h.demo.counter.Load() != 4 {
		t.Fatalf("the edited policy was not used: %v", got)
	}
}

// stricter asks for a person on every write once tightened.
type stricter struct {
	policy.Engine
	tight atomic.Bool
}

func (s *stricter) Decide(ctx context.Context, in policy.Input) (policy.Decision, error) {
	d, err := s.Engine.Decide(ctx, in)
	if err == nil && s.tight.Load() && d.Decision == policy.Confirm {
		d.Approval = approval.Human
	}
	return d, err
}

// TestPolicyTightenedAfterPreview: a model ticket cannot confirm a write the
// policy has since put behind a person's approval.
func TestPolicyTightenedAfterPreview(t *testing.T) {
	embedded, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	engine := &stricter{Engine: embedded}
	h := newHarness(t, func(o *app.Options) { o.Policy = engine })
	c := h.client("openwebui", "", "/mcp")
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 2})
	if prev["approval"] != "model" {
		t.Fatalf("preview: %v", prev)
	}
	engine.tight.Store(true)
	got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": prev["ticket"]})
	if !isErr || errCode(got) != toolerr.Forbidden || !strings.Contains(errMessage(got), "person") {
		t.Fatalf("want refusal, got %v", got)
	}
	if h.demo.counter.Load() != 0 {
		t.Fatal("the write applied")
	}
}

// TestSidecarPolicy runs the write flow with the policy in a real OPA
// server (POLICY_MODE=remote), as compose deploys it.
func TestSidecarPolicy(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "policies"))
	if err != nil {
		t.Fatal(err)
	}
	sidecar := opatest.Start(t, dir)
	h := newHarness(t, func(c *app.Config) {
		c.PolicyMode, c.PolicyURL, c.PolicyToken = "remote", sidecar.URL, sidecar.Token
	})
	c := h.client("openwebui", "", "/mcp")
	if got, isErr := call(t, c, "demo_echo", map[string]any{"text": "via opa"}); isErr || got["text"] != "via opa" {
		t.Fatalf("read: %v", got)
	}
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 3})
	if prev["status"] != "confirmation_required" {
		t.Fatalf("preview: %v", prev)
	}
	got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 3, "confirm": true, "ticket": prev["ticket"]})
	if isErr || h.demo.counter.Load() != 3 {
		t.Fatalf("confirm: %v", got)
	}
	res, err := http.Get(h.URL + "/readyz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("readyz with a healthy sidecar: %v %v", res, err)
	}
	res.Body.Close()
}

// TestSidecarDownDenies: with the sidecar unreachable every call is denied
// and the gateway says it is not ready.
func TestSidecarDownDenies(t *testing.T) {
	h := newHarness(t, func(c *app.Config) { c.PolicyMode, c.PolicyURL = "remote", "http://127.0.0.1:1" })
	res, err := http.Get(h.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz: HTTP %d", res.StatusCode)
	}
	c := h.client("openwebui", "", "/mcp")
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 0 {
		t.Fatalf("tools visible without a policy: %v %v", list, err)
	}
}

// outage is a policy engine whose sidecar can be taken away and brought
// back, answering as policy.Remote does when it cannot connect.
type outage struct {
	policy.Engine
	down atomic.Bool
}

func (o *outage) Decide(ctx context.Context, in policy.Input) (policy.Decision, error) {
	if o.down.Load() {
		return policy.Decision{}, fmt.Errorf("%w: dial tcp: lookup policy: no such host", policy.ErrUnavailable)
	}
	return o.Engine.Decide(ctx, in)
}

// TestSidecarStopsAndComesBack: with the sidecar gone mid-session every
// way of calling a tool is refused with a tool error that says the policy
// service is unavailable (not "tool not found", as if the tool were gone),
// the lists hide everything, nothing reaches the service; once the sidecar
// is back the same calls work, on the same sessions.
func TestSidecarStopsAndComesBack(t *testing.T) {
	embedded, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	engine := &outage{Engine: embedded}
	h := newHarness(t, func(o *app.Options) { o.Policy = engine })
	mcpClient := h.client("openwebui", "", "/mcp")
	discover := h.client("openwebui", "", "/mcp/discover")
	raw := h.rawSession("openwebui", "/mcp")
	echo := map[string]any{"text": "still there"}
	// Each way answers the structured content of its result and whether it
	// was an error.
	ways := []struct {
		name string
		call func(t *testing.T) (map[string]any, bool)
	}{
		{"mcp-go client", func(t *testing.T) (map[string]any, bool) { return call(t, mcpClient, "demo_echo", echo) }},
		{"direct path", func(t *testing.T) (map[string]any, bool) { return rawResult(t, raw.call("demo_echo", echo, false)) }},
		{"mcp-go path", func(t *testing.T) (map[string]any, bool) { return rawResult(t, raw.call("demo_echo", echo, true)) }},
		{"discovery", func(t *testing.T) (map[string]any, bool) {
			return call(t, discover, "toolgate_call_tool", map[string]any{"name": "demo_echo", "arguments": echo})
		}},
		{"OpenAPI", func(t *testing.T) (map[string]any, bool) {
			res, body := h.post("/openapi/demo/demo_echo", `{"text":"still there"}`, nil)
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("OpenAPI: HTTP %d %s", res.StatusCode, body)
			}
			return m, res.StatusCode != http.StatusOK
		}},
	}
	for _, w := range ways {
		if got, isErr := w.call(t); isErr || got["text"] != "still there" {
			t.Fatalf("%s before the outage: %v", w.name, got)
		}
	}

	engine.down.Store(true)
	// Past the visibility cache: every answer now comes from the outage.
	h.clock.Advance(time.Minute)
	for _, w := range ways {
		t.Run("down/"+w.name, func(t *testing.T) {
			got, isErr := w.call(t)
			if !isErr || errCode(got) != toolerr.Forbidden || !strings.Contains(errMessage(got), "policy service is unavailable") {
				t.Fatalf("want a refusal that names the policy service, got %v", got)
			}
		})
	}
	if list, err := mcpClient.ListTools(t.Context(), mcp.ListToolsRequest{}); err != nil || len(list.Tools) != 0 {
		t.Errorf("tools listed without a policy: %v %v", list, err)
	}
	if got, _ := call(t, discover, "toolgate_find_tools", map[string]any{}); fmt.Sprint(got["matches"]) != "0" {
		t.Errorf("tools found without a policy: %v", got)
	}

	engine.down.Store(false)
	for _, w := range ways {
		t.Run("back/"+w.name, func(t *testing.T) {
			if got, isErr := w.call(t); isErr || got["text"] != "still there" {
				t.Fatalf("after the outage: %v", got)
			}
		})
	}
}

// rawResult is the structured content of a raw tools/call response.
func rawResult(t *testing.T, msg map[string]any) (map[string]any, bool) {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", msg)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return sc, isErr
}
