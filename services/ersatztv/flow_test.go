package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// Without ERSATZTV_ALLOW_WRITES the write tools do not exist, in either
// mode, and a call to one is refused as an unknown tool.
func TestWritesAbsentWithoutTheOptIn(t *testing.T) {
	for _, mode := range []string{"v1", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			st := startStack(t, mode, false)
			c := st.g.ClientAt("openwebui", "ann@example.org", "/mcp/ersatztv")
			list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
					t.Errorf("%s is listed without the opt-in", tool.Name)
				}
			}
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "ersatztv_delete_smart_collection", map[string]any{"id": 20}
			if res, err := c.CallTool(t.Context(), req); err == nil && !res.IsError {
				t.Fatalf("a write ran: %v", res)
			}
			st.store.Lock()
			defer st.store.Unlock()
			if len(st.store.SmartCollections) != 2 {
				t.Fatal("the smart collection was deleted")
			}
		})
	}
}

// update_channel through the gateway: the preview changes nothing and
// shows the diff; the confirm applies once and keeps every field the user
// did not mention; a replay is refused; a change upstream between preview
// and confirm refuses the confirm and writes nothing.
func TestFullReplaceFlowThroughTheGateway(t *testing.T) {
	st := startStack(t, "v1", true)
	c := st.g.ClientAt("openwebui", "ann@example.org", "/mcp/ersatztv")
	args := map[string]any{"id": 1, "name": "Movies!"}
	prev, isErr := gatewaytest.Call(t, c, "ersatztv_update_channel", args)
	if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "model" || len(st.v1.Writes()) != 0 {
		t.Fatalf("preview: %v", prev)
	}
	if !strings.Contains(st.g.Wire.String(), `"field":"name"`) || !strings.Contains(st.g.Wire.String(), `"graphicsElementIds":[7]`) {
		t.Fatal("the preview did not show the diff and the complete request")
	}
	ticket := prev["ticket"]
	done, isErr := gatewaytest.Call(t, c, "ersatztv_update_channel", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || done["status"] != "applied" || len(st.v1.Writes()) != 1 {
		t.Fatalf("confirm: %v", done)
	}
	st.store.Lock()
	ch := *st.store.Channel(1)
	st.store.Unlock()
	if ch.Name != "Movies!" || len(ch.GraphicsElementIDs) != 1 || ch.GraphicsElementIDs[0] != 7 || ch.Logo == nil || ch.WatermarkID == nil {
		t.Fatalf("channel after the update: %+v", ch)
	}
	again, isErr := gatewaytest.Call(t, c, "ersatztv_update_channel", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(st.v1.Writes()) != 1 {
		t.Fatalf("replay: %v", again)
	}

	// The schedule changes between preview and confirm: the recomputed
	// preview differs from the approved one, so nothing is written.
	sargs := map[string]any{"id": 30, "name": "Film Nights"}
	prev, isErr = gatewaytest.Call(t, c, "ersatztv_update_schedule", sargs)
	if isErr || prev["status"] != "confirmation_required" {
		t.Fatalf("schedule preview: %v", prev)
	}
	st.store.Lock()
	*st.store.Schedule(30).PadToNearestMinute = 30
	st.store.Unlock()
	stale, isErr := gatewaytest.Call(t, c, "ersatztv_update_schedule", gatewaytest.With(sargs, map[string]any{"confirm": true, "ticket": prev["ticket"]}))
	if !isErr || gatewaytest.ErrorCode(stale) != "forbidden" || len(st.v1.Writes()) != 1 {
		t.Fatalf("scope change: %v", stale)
	}
	st.store.Lock()
	defer st.store.Unlock()
	if s := st.store.Schedule(30); s.Name != "Movie Nights" || *s.PadToNearestMinute != 30 {
		t.Fatalf("schedule %+v", s)
	}
}

// A delete (and the playout reset) stays pending until a person approves
// it outside the chat; the model's confirm alone changes nothing.
func TestDeletesWaitForAPerson(t *testing.T) {
	st := startStack(t, "v1", true)
	c := st.g.ClientAt("openwebui", "ann@example.org", "/mcp/ersatztv")
	for _, w := range []struct {
		tool  string
		args  map[string]any
		done  func() bool
		write string
	}{
		{"ersatztv_delete_channel", map[string]any{"id": 2}, func() bool { return st.store.Channel(2) == nil }, "DELETE /api/v1/channels/2"},
		{"ersatztv_reset_channel_playout", map[string]any{"id": 3}, func() bool { return st.store.Playout(1).Resets == 1 }, "POST /api/v1/channels/3/playout/reset"},
		{"ersatztv_remove_collection_item", map[string]any{"id": 10, "mediaItemId": 101}, func() bool { return len(st.store.Collection(10).Members) == 2 }, "DELETE /api/v1/collections/10/items/101"},
	} {
		t.Run(w.tool, func(t *testing.T) {
			st.v1.Reset()
			prev, isErr := gatewaytest.Call(t, c, w.tool, w.args)
			if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "human" {
				t.Fatalf("preview: %v", prev)
			}
			ticket := prev["ticket"].(string)
			early, _ := gatewaytest.Call(t, c, w.tool, gatewaytest.With(w.args, map[string]any{"confirm": true, "ticket": ticket}))
			st.store.Lock()
			done := w.done()
			st.store.Unlock()
			if early["status"] != "pending" || early["applied"] != false || done || len(st.v1.Writes()) != 0 {
				t.Fatalf("confirm before approval: %v", early)
			}
			if code := st.g.Approve(ticket); code != http.StatusOK {
				t.Fatalf("approve: HTTP %d", code)
			}
			ok, isErr := gatewaytest.Call(t, c, w.tool, gatewaytest.With(w.args, map[string]any{"confirm": true, "ticket": ticket}))
			st.store.Lock()
			done = w.done()
			st.store.Unlock()
			writes := st.v1.Writes()
			if isErr || ok["status"] != "applied" || !done || len(writes) != 1 || writes[0].Method+" "+writes[0].Path != w.write {
				t.Fatalf("confirm after approval: %v, writes %+v", ok, writes)
			}
		})
	}
}

// The custom-order replace through the gateway with the official SDK: a
// change that lands between the confirm's read and its PUT is refused by
// ErsatzTV (412) and the client is told that nothing was written.
func TestStaleIfMatchThroughTheGateway(t *testing.T) {
	st := startStack(t, "v1", true)
	wire := &capture.Buffer{}
	sess := st.g.SDKClientAt("openwebui", "/mcp/ersatztv", wire)
	call := func(args map[string]any) (map[string]any, bool) {
		res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "ersatztv_update_collection_custom_order", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &m)
		return m, res.IsError
	}
	args := map[string]any{"id": 11, "order": []any{map[string]any{"mediaItemId": 121, "customIndex": 9}}, "ifMatch": `"4"`}
	prev, isErr := call(args)
	if isErr || prev["status"] != "confirmation_required" {
		t.Fatalf("preview: %v", prev)
	}
	st.v1.BeforeWrite = func(*http.Request) {
		st.store.Lock()
		defer st.store.Unlock()
		st.store.Collection(11).Version++
	}
	got, isErr := call(gatewaytest.With(args, map[string]any{"confirm": true, "ticket": prev["ticket"]}))
	msg, _ := got["error"].(map[string]any)["message"].(string)
	if !isErr || !strings.Contains(msg, "nothing was written") {
		t.Fatalf("confirm: %v", got)
	}
	st.store.Lock()
	defer st.store.Unlock()
	for _, m := range st.store.Collection(11).Members {
		if m.MediaItemID == 121 && *m.CustomIndex != 2 {
			t.Fatalf("written anyway: %+v", m)
		}
	}
	st.g.NoLeaks(t, []string{gwKey}, map[string]string{"go-sdk wire": wire.String()})
}

// The legacy API's writes pass the same flow; its reset takes the channel
// number and needs a person.
func TestLegacyFlowThroughTheGateway(t *testing.T) {
	st := startStack(t, "legacy", true)
	c := st.g.ClientAt("openwebui", "ann@example.org", "/mcp/ersatztv")
	args := map[string]any{"id": 20, "name": "Eighties"}
	prev, isErr := gatewaytest.Call(t, c, "ersatztv_update_smart_collection", args)
	if isErr || prev["approval"] != "model" {
		t.Fatalf("preview: %v", prev)
	}
	if done, isErr := gatewaytest.Call(t, c, "ersatztv_update_smart_collection", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": prev["ticket"]})); isErr {
		t.Fatalf("confirm: %v", done)
	}
	w := st.legacy.Writes()
	if len(w) != 1 || w[0].Path != "/api/collections/smart/update" || !strings.Contains(w[0].Body, `"query":"type:movie AND release_date:[19800101 TO 19891231]"`) {
		t.Fatalf("writes %+v", w)
	}
	reset, isErr := gatewaytest.Call(t, c, "ersatztv_reset_channel_playout", map[string]any{"number": "3.1"})
	if isErr || reset["approval"] != "human" {
		t.Fatalf("reset preview: %v", reset)
	}
}
