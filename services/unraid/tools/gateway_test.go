package tools

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// startGateway runs the unraid tools (with key against the demo fake)
// behind a real gateway. Clients: "operator" is in group nas, "openwebui"
// in users (which may not use unraid), "kiosk" in readonly.
func startGateway(t *testing.T, key string, writes bool) (*harness, *gatewaytest.Gateway) {
	t.Helper()
	return startGatewayWith(t, key, writes, fakeunraid.Options{}, nil)
}

// startGatewayWith is startGateway with the fake's options (the release
// it plays) and a change to the gateway's configuration.
func startGatewayWith(t *testing.T, key string, writes bool, fo fakeunraid.Options, config func(*app.Config)) (*harness, *gatewaytest.Gateway) {
	t.Helper()
	h := newHarness(t, key, fo, 0)
	tokens, bearer := gatewaytest.ClientTokens(t, map[string][]string{"operator": {"nas"}, "openwebui": {"users"}, "kiosk": {"readonly"}})
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "unraid", Tools: h.svc.Tools(), AllowWrites: writes,
		Secrets: [][]byte{[]byte(viewerKey), []byte(adminKey)}, Instructions: Instructions,
		Config: func(c *app.Config) {
			c.Tokens = tokens
			if config != nil {
				config(c)
			}
		}})
	for name, tok := range bearer {
		g.Tokens[name] = tok
	}
	t.Cleanup(func() { g.NoLeaks(t, []string{viewerKey, adminKey}, nil) })
	return h, g
}

// mutations counts the mutations the fake received.
func mutations(h *harness) []string {
	var out []string
	for _, c := range h.fake.Calls() {
		if c.Mutation {
			out = append(out, c.Operation)
		}
	}
	return out
}

// A container stop (the NVR, say) needs a person: the preview shows the
// container and changes nothing, a confirm before a person approved
// changes nothing, a changed scope cannot use the ticket, the confirm after
// the approval stops it exactly once, a replay is refused.
func TestContainerStopFlow(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "ann@example.org")
	args := map[string]any{"container": "sonarr", "action": "stop"}

	prev, isErr := gatewaytest.Call(t, c, "unraid_container_control", args)
	if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "human" || len(mutations(h)) != 0 {
		t.Fatalf("preview: %v, mutations %v", prev, mutations(h))
	}
	if !strings.Contains(g.Wire.String(), `"current_state":"RUNNING"`) || !strings.Contains(g.Wire.String(), "linuxserver/sonarr") {
		t.Fatal("the preview did not show the container's current state and image")
	}
	ticket := prev["ticket"].(string)
	early, isErr := gatewaytest.Call(t, c, "unraid_container_control", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || early["status"] != "pending" || len(mutations(h)) != 0 {
		t.Fatalf("confirm before a person approved: %v, mutations %v", early, mutations(h))
	}
	if code := g.Approve(ticket); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	changed, isErr := gatewaytest.Call(t, c, "unraid_container_control", gatewaytest.With(args, map[string]any{"container": "radarr", "confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(changed) != "forbidden" || len(mutations(h)) != 0 {
		t.Fatalf("changed scope: %v", changed)
	}
	done, isErr := gatewaytest.Call(t, c, "unraid_container_control", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || len(mutations(h)) != 1 || mutations(h)[0] != "ContainerStop" {
		t.Fatalf("confirm: %v, mutations %v", done, mutations(h))
	}
	again, isErr := gatewaytest.Call(t, c, "unraid_container_control", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(mutations(h)) != 1 {
		t.Fatalf("replay: %v", again)
	}
	list, _ := gatewaytest.Call(t, c, "unraid_container_list", map[string]any{"name": "sonarr"})
	if !strings.Contains(jsonOf(list), `"state":"EXITED"`) {
		t.Fatalf("sonarr not stopped: %v", list)
	}
}

// Which container and VM actions wait for a person: only starting a
// stopped container or VM is left to the user's confirmation in the chat;
// a restart stops the container too, a VM stop shuts it down.
func TestWhichActionsNeedAPerson(t *testing.T) {
	_, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "")
	for _, tc := range []struct {
		tool     string
		args     map[string]any
		approval string
	}{
		{"unraid_container_control", map[string]any{"container": "nextcloud", "action": "start"}, "model"},
		{"unraid_container_control", map[string]any{"container": "plex", "action": "restart"}, "human"},
		{"unraid_container_control", map[string]any{"container": "plex", "action": "stop"}, "human"},
		{"unraid_vm_control", map[string]any{"vm": "Windows 11", "action": "start"}, "model"},
		{"unraid_vm_control", map[string]any{"vm": "pfSense-lab", "action": "stop"}, "human"},
	} {
		got, isErr := gatewaytest.Call(t, c, tc.tool, tc.args)
		if isErr || got["status"] != "confirmation_required" || got["approval"] != tc.approval {
			t.Errorf("%s %v: %v, want approval %s", tc.tool, tc.args, got, tc.approval)
		}
	}
}

// A parity check needs a person: confirm before approval does nothing;
// after the approval it is requested exactly once.
func TestParityCheckNeedsAPerson(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "ann@example.org")
	args := map[string]any{"action": "start", "correct": true}
	prev, isErr := gatewaytest.Call(t, c, "unraid_parity_check", args)
	if isErr || prev["approval"] != "human" || !strings.Contains(g.Wire.String(), "WRITES corrections") {
		t.Fatalf("preview: %v", prev)
	}
	ticket := prev["ticket"].(string)
	early, _ := gatewaytest.Call(t, c, "unraid_parity_check", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if early["status"] != "pending" || len(mutations(h)) != 0 {
		t.Fatalf("confirm before approval: %v", early)
	}
	if code := g.Approve(ticket); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	done, isErr := gatewaytest.Call(t, c, "unraid_parity_check", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || len(mutations(h)) != 1 || mutations(h)[0] != "ParityStart" {
		t.Fatalf("confirm: %v, mutations %v", done, mutations(h))
	}
	if v := h.fake.Calls()[len(h.fake.Calls())-1].Vars["correct"]; v != true {
		t.Fatalf("correct not sent: %v", v)
	}
}

// Previews refuse what would do nothing or makes no sense, before any
// ticket: starting a running container, pausing a check that does not
// run, archiving a notification that is not unread.
func TestPreviewsRefuseNoOps(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "")
	for _, tc := range []struct {
		tool string
		args map[string]any
		code string
		has  string
	}{
		{"unraid_container_control", map[string]any{"container": "plex", "action": "start"}, "invalid_argument", "already running"},
		{"unraid_container_control", map[string]any{"container": "nextcloud", "action": "restart"}, "invalid_argument", "use action start"},
		{"unraid_container_control", map[string]any{"container": "ghost", "action": "stop"}, "not_found", "unraid_container_list"},
		{"unraid_vm_control", map[string]any{"vm": "Windows 11", "action": "stop"}, "invalid_argument", "already stopped"},
		{"unraid_parity_check", map[string]any{"action": "pause"}, "invalid_argument", "no parity check is running"},
		{"unraid_parity_check", map[string]any{"action": "cancel", "correct": true}, "invalid_argument", "only to action start"},
		{"unraid_notification_archive", map[string]any{"ids": []any{fakeunraid.DemoServerID + ":1730000000-array"}}, "not_found", "not unread"},
	} {
		got, isErr := gatewaytest.Call(t, c, tc.tool, tc.args)
		if !isErr || gatewaytest.ErrorCode(got) != tc.code || !strings.Contains(jsonOf(got), tc.has) || got["ticket"] != nil {
			t.Errorf("%s %v: %v", tc.tool, tc.args, got)
		}
	}
	if m := mutations(h); len(m) != 0 {
		t.Fatalf("a refused preview reached Unraid: %v", m)
	}
}

// issue 24: the previews say what Unraid's API really does. A VM stop asks
// the guest to shut down, powers the VM off hard after about 10 seconds
// and returns when it is off (not "a clean shutdown in the background"); a
// container stop kills the container after 10 seconds. After a person's
// approval the stop returns the VM's state as Unraid reads it then.
func TestPreviewsSayWhatUnraidDoes(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "ann@example.org")
	for _, tc := range []struct {
		tool string
		args map[string]any
		has  []string
	}{
		{"unraid_vm_control", map[string]any{"vm": "pfSense-lab", "action": "stop"},
			[]string{"asks the guest to shut down", "after about 10 seconds", "POWERS IT OFF HARD", "the call returns when it is off"}},
		{"unraid_container_control", map[string]any{"container": "plex", "action": "stop"},
			[]string{"stop signal", "KILLS it if it has not exited after 10 seconds", "returns when it has stopped"}},
		{"unraid_container_control", map[string]any{"container": "plex", "action": "restart"},
			[]string{"KILLED after 10 seconds", "starts it again"}},
	} {
		g.Wire.Reset()
		prev, isErr := gatewaytest.Call(t, c, tc.tool, tc.args)
		if isErr || prev["approval"] != "human" {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, prev)
		}
		for _, want := range tc.has {
			if !strings.Contains(g.Wire.String(), want) {
				t.Errorf("%s %v: the preview does not say %q", tc.tool, tc.args, want)
			}
		}
		if strings.Contains(g.Wire.String(), "cleanly") || strings.Contains(g.Wire.String(), "background") {
			t.Errorf("%s: the preview still promises a clean or background stop", tc.tool)
		}
	}

	h.fake.Update(func(s *fakeunraid.State) { s.VMs[1].State = "PAUSED" })
	args := map[string]any{"vm": "pfSense-lab", "action": "stop"}
	g.Wire.Reset()
	prev, _ := gatewaytest.Call(t, c, "unraid_vm_control", args)
	if !strings.Contains(g.Wire.String(), "is paused, so its guest cannot answer") {
		t.Fatalf("a paused VM's stop: %v", prev)
	}
	if code := g.Approve(prev["ticket"].(string)); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	done, isErr := gatewaytest.Call(t, c, "unraid_vm_control", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": prev["ticket"]}))
	if isErr || !strings.Contains(jsonOf(done), `"state":"SHUTOFF"`) || strings.Contains(jsonOf(done), "background") || mutations(h)[0] != "VMStop" {
		t.Fatalf("stop: %v, mutations %v", done, mutations(h))
	}
}

// issue 24: Unraid's API acts only from some states and answers "true"
// for others without doing anything (a stop of an idle VM) or refuses them
// (a start of a crashed VM). The preview refuses those before any ticket.
func TestVMStatesUnraidWouldNotActOnAreRefused(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "")
	for _, tc := range []struct {
		state, action, has string
	}{
		{"IDLE", "stop", "report success without doing anything"},
		{"PMSUSPENDED", "stop", "report success without doing anything"},
		{"CRASHED", "start", "refuse to start it"},
		{"NOSTATE", "start", "refuse to start it"},
		{"SHUTDOWN", "start", "is shutting down"},
		{"PAUSED", "start", "resuming is not offered"},
	} {
		h.fake.Update(func(s *fakeunraid.State) { s.VMs[0].State = tc.state })
		got, isErr := gatewaytest.Call(t, c, "unraid_vm_control", map[string]any{"vm": "Windows 11", "action": tc.action})
		if !isErr || gatewaytest.ErrorCode(got) != "invalid_argument" || !strings.Contains(jsonOf(got), tc.has) || got["ticket"] != nil {
			t.Errorf("%s VM, %s: %v", tc.state, tc.action, got)
		}
	}
	if m := mutations(h); len(m) != 0 {
		t.Fatalf("a refused preview reached Unraid: %v", m)
	}
}

// issue 24: a mutation that can kill a container or power a VM off hard
// needs a person even when an operator's policy data leaves the action to
// the model (as the docs once suggested for restarts): the preview reports
// the effect and the gateway raises the approval on it.
func TestAHardStopNeedsAPersonWhateverTheActionData(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, policies.FS); err != nil {
		t.Fatal(err)
	}
	toolsJSON := filepath.Join(dir, "data", "toolgate", "tools.json")
	raw, err := os.ReadFile(toolsJSON)
	if err != nil {
		t.Fatal(err)
	}
	loose := strings.Replace(strings.Replace(string(raw), `"unraid_container_control": {"action": ["start"]}`, `"unraid_container_control": {"action": ["start", "stop", "restart"]}`, 1),
		`"unraid_vm_control": {"action": ["start"]}`, `"unraid_vm_control": {"action": ["start", "stop"]}`, 1)
	if loose == string(raw) {
		t.Fatal("tools.json changed shape; update this test")
	}
	if err := os.WriteFile(toolsJSON, []byte(loose), 0o600); err != nil {
		t.Fatal(err)
	}
	h, g := startGatewayWith(t, adminKey, true, fakeunraid.Options{}, func(c *app.Config) { c.PolicyDir = dir })
	c := g.Client("operator", "")
	for _, tc := range []struct {
		tool     string
		args     map[string]any
		approval string
	}{
		{"unraid_container_control", map[string]any{"container": "plex", "action": "restart"}, "human"},
		{"unraid_container_control", map[string]any{"container": "plex", "action": "stop"}, "human"},
		{"unraid_vm_control", map[string]any{"vm": "pfSense-lab", "action": "stop"}, "human"},
		{"unraid_container_control", map[string]any{"container": "nextcloud", "action": "start"}, "model"},
	} {
		got, isErr := gatewaytest.Call(t, c, tc.tool, tc.args)
		if isErr || got["status"] != "confirmation_required" || got["approval"] != tc.approval {
			t.Errorf("%s %v: %v, want approval %s", tc.tool, tc.args, got, tc.approval)
		}
	}
	if m := mutations(h); len(m) != 0 {
		t.Fatalf("previews changed something: %v", m)
	}
}

// issue 24: what an older Unraid API does differently is said before a
// ticket: API 4.34.0 has no container restart (it came with 4.36.0), and
// its parity resume starts a new check from the beginning (unraid/api#1815,
// fixed in 4.35.0).
func TestPreviewsKnowTheAPIRelease(t *testing.T) {
	h, g := startGatewayWith(t, adminKey, true, fakeunraid.Options{Release: "4.34.0"}, nil)
	c := g.Client("operator", "")
	got, isErr := gatewaytest.Call(t, c, "unraid_container_control", map[string]any{"container": "plex", "action": "restart"})
	if !isErr || gatewaytest.ErrorCode(got) != "invalid_argument" || !strings.Contains(jsonOf(got), "came with API 4.36.0") || got["ticket"] != nil {
		t.Fatalf("restart on 4.34.0: %v", got)
	}
	h.fake.Update(func(s *fakeunraid.State) {
		tr := true
		s.Array.ParityCheckStatus = &unraidapi.ParityCheck{Status: "PAUSED", Running: &tr, Paused: &tr}
	})
	g.Wire.Reset()
	prev, isErr := gatewaytest.Call(t, c, "unraid_parity_check", map[string]any{"action": "resume"})
	if isErr || prev["ticket"] == nil || !strings.Contains(g.Wire.String(), "STARTS A NEW CHECK FROM THE BEGINNING") {
		t.Fatalf("resume on 4.34.0: %v", prev)
	}
	if m := mutations(h); len(m) != 0 {
		t.Fatalf("previews changed something: %v", m)
	}

	_, g = startGateway(t, adminKey, true)
	g.Wire.Reset()
	if prev, _ := gatewaytest.Call(t, g.Client("operator", ""), "unraid_container_control", map[string]any{"container": "plex", "action": "restart"}); prev["ticket"] == nil {
		t.Fatalf("restart on 4.37.2: %v", prev)
	}
}

// VM start and notification archive apply what the preview showed.
func TestVMAndArchiveFlows(t *testing.T) {
	h, g := startGateway(t, adminKey, true)
	c := g.Client("operator", "")
	for _, tc := range []struct {
		tool, op string
		args     map[string]any
	}{
		{"unraid_vm_control", "VMStart", map[string]any{"vm": "Windows 11", "action": "start"}},
		{"unraid_notification_archive", "ArchiveNotifications", map[string]any{"ids": []any{fakeunraid.DemoServerID + ":1733206800-docker-update", "1733200000-disk2-temp"}}},
	} {
		prev, isErr := gatewaytest.Call(t, c, tc.tool, tc.args)
		if isErr || prev["ticket"] == nil {
			t.Fatalf("%s preview: %v", tc.tool, prev)
		}
		done, isErr := gatewaytest.Call(t, c, tc.tool, gatewaytest.With(tc.args, map[string]any{"confirm": true, "ticket": prev["ticket"]}))
		if isErr || !slicesContains(mutations(h), tc.op) {
			t.Fatalf("%s confirm: %v, mutations %v", tc.tool, done, mutations(h))
		}
	}
	got, _ := gatewaytest.Call(t, c, "unraid_notification_list", map[string]any{})
	if !strings.Contains(jsonOf(got), `"returned":2`) {
		t.Fatalf("two notifications should be left unread: %v", got)
	}
}

// With a VIEWER key the actions are refused by Unraid and said so; nothing
// changes.
func TestViewerKeyCannotManage(t *testing.T) {
	h, g := startGateway(t, viewerKey, true)
	c := g.Client("operator", "")
	args := map[string]any{"container": "nextcloud", "action": "start"}
	defer func() {
		if m := mutations(h); len(m) != 1 {
			t.Errorf("want exactly the one refused mutation, got %v", m)
		}
	}()
	prev, _ := gatewaytest.Call(t, c, "unraid_container_control", args)
	done, isErr := gatewaytest.Call(t, c, "unraid_container_control", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": prev["ticket"]}))
	if !isErr || gatewaytest.ErrorCode(done) != "auth_failed" || !strings.Contains(jsonOf(done), "more than the VIEWER role") {
		t.Fatalf("viewer key: %v", done)
	}
}

// Without UNRAID_ALLOW_WRITES no action exists, whatever a client sends;
// a client whose group may not use unraid sees nothing of it; a read-only
// group reads. Both Go MCP clients, and no key anywhere.
func TestGatewayReadsAndAbsentWrites(t *testing.T) {
	h, g := startGateway(t, viewerKey, false)
	op := g.Client("operator", "")
	list, err := op.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if strings.HasSuffix(tl.Name, "_control") || tl.Name == "unraid_parity_check" || tl.Name == "unraid_notification_archive" {
			t.Fatalf("action %s listed without UNRAID_ALLOW_WRITES", tl.Name)
		}
	}
	res, err := op.CallTool(t.Context(), callReq("unraid_container_control", map[string]any{"container": "sonarr", "action": "stop", "confirm": true, "ticket": "forged"}))
	if err == nil && !res.IsError {
		t.Fatalf("an action ran without UNRAID_ALLOW_WRITES: %v", res)
	}
	// Groups users and readonly are not given unraid by the shipped data.
	for _, name := range []string{"openwebui", "kiosk"} {
		res, err := g.Client(name, "").CallTool(t.Context(), callReq("unraid_array_status", map[string]any{}))
		if err == nil && !res.IsError {
			t.Fatalf("%s read unraid: %v", name, res)
		}
	}
	before := len(h.fake.Calls())
	if got, isErr := gatewaytest.Call(t, op, "unraid_array_status", map[string]any{}); isErr || len(h.fake.Calls()) != before+1 {
		t.Fatalf("operator read: %v", got)
	}

	// The official SDK client reads as well.
	wire := &capture.Buffer{}
	sc := sdk.NewClient(&sdk.Implementation{Name: "unraid-test", Version: "1"}, nil)
	s, err := sc.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: gatewaytest.RecordingClient(wire, map[string]string{"Authorization": "Bearer " + g.Tokens["operator"]})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "unraid_container_logs", Arguments: map[string]any{"container": "nextcloud", "lines": 2}})
	if err != nil || r.IsError || !strings.Contains(wire.String(), "Allowed memory size") {
		t.Fatalf("sdk read: %v %v", err, r)
	}
	if m := mutations(h); len(m) != 0 {
		t.Fatalf("mutations without writes: %v", m)
	}
	g.NoLeaks(t, []string{viewerKey, adminKey}, map[string]string{"sdk wire": wire.String()})
}

func callReq(name string, args map[string]any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	return req
}

// issue 24: a stop blocks while Unraid waits for the guest (up to about
// 10 seconds, then the power-off). When the service's deadline passes
// first, the answer says the action may still complete, never that
// nothing happened.
func TestASlowMutationSaysItMayStillComplete(t *testing.T) {
	fake := fakeunraid.New(fakeunraid.Options{ViewerKey: viewerKey, AdminKey: adminKey}, fakeunraid.DemoState(testNow))
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"query":"mutation`) {
			time.Sleep(time.Second)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	hc, err := upstream.New(upstream.Config{Name: "Unraid", BaseURL: slow.URL, AllowHTTP: true, Retries: -1, Timeout: 200 * time.Millisecond,
		Header: map[string][]string{"X-Api-Key": {adminKey}}})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(unraidapi.New(hc, unraidapi.NewLimiter(unraidapi.ThrottleLimit, unraidapi.DefaultMaxWait, nil, nil), nil), nil)
	p, err := svc.vmPreview(t.Context(), vmControlArgs{VM: "pfSense-lab", Action: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.vmApply(t.Context(), vmControlArgs{}, p)
	if toolerr.CodeOf(err) != toolerr.Timeout || !strings.Contains(toolerr.MessageOf(err), "may still complete") || !strings.Contains(toolerr.MessageOf(err), "unraid_vm_list") {
		t.Fatalf("got %v", err)
	}
}
