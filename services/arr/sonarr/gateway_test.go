package sonarr_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

func startGateway(t *testing.T, writes bool) (*fakesonarr.Server, *gatewaytest.Gateway) {
	t.Helper()
	fake, tools := setup(t, apiKey, 0)
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "arr", Tools: tools, AllowWrites: writes, Secrets: [][]byte{[]byte(apiKey)}})
	t.Cleanup(func() { g.NoLeaks(t, secrets[:3], nil) })
	return fake, g
}

func TestGatewayEpisodeSearchFlow(t *testing.T) {
	fake, g := startGateway(t, true)
	c := g.Client("openwebui", "ann@example.org")
	args := map[string]any{"series_id": 1, "season": 1, "episodes": []any{4, 5, 6}}

	prev, isErr := gatewaytest.Call(t, c, "sonarr_episode_search", args)
	if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "model" || len(fake.Writes()) != 0 {
		t.Fatalf("preview: %v, writes %v", prev, fake.Writes())
	}
	ticket := prev["ticket"]
	if !strings.Contains(g.Wire.String(), "skipped_have_file") || !strings.Contains(g.Wire.String(), "S01E04") {
		t.Fatal("the client did not see which episodes were dropped")
	}

	// A different episode list does not fit the ticket.
	changed, isErr := gatewaytest.Call(t, c, "sonarr_episode_search", gatewaytest.With(args, map[string]any{"episodes": []any{5}, "confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(changed) != "forbidden" || len(fake.Commands()) != 0 {
		t.Fatalf("changed scope: %v", changed)
	}
	// Another client cannot use it either.
	other, isErr := gatewaytest.Call(t, g.Client("hermes", "ann@example.org"), "sonarr_episode_search", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || len(fake.Commands()) != 0 {
		t.Fatalf("other client: %v", other)
	}

	done, isErr := gatewaytest.Call(t, c, "sonarr_episode_search", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	cmds := fake.Commands()
	if isErr || len(cmds) != 1 || len(cmds[0].EpisodeIDs) != 2 || len(fake.Writes()) != 1 {
		t.Fatalf("confirm: %v, commands %+v", done, cmds)
	}
	again, isErr := gatewaytest.Call(t, c, "sonarr_episode_search", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(fake.Commands()) != 1 {
		t.Fatalf("replay: %v", again)
	}
}

func TestGatewayGrabFlow(t *testing.T) {
	fake, g := startGateway(t, true)
	c := g.Client("openwebui", "ann@example.org")
	args := map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1}

	prev, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", args)
	if isErr || prev["status"] != "confirmation_required" || len(fake.Writes()) != 0 {
		t.Fatalf("preview: %v", prev)
	}
	ticket := prev["ticket"]
	for name, bad := range map[string]map[string]any{
		"other guid": gatewaytest.With(args, map[string]any{"guid": fakesonarr.GUIDEpisode5}),
		"force":      gatewaytest.With(args, map[string]any{"force": true}),
	} {
		got, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(bad, map[string]any{"confirm": true, "ticket": ticket}))
		if !isErr || len(fake.Grabs()) != 0 {
			t.Fatalf("%s: %v", name, got)
		}
	}
	done, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || len(fake.Grabs()) != 1 || fake.Grabs()[0].GUID != fakesonarr.GUIDSeasonPack {
		t.Fatalf("confirm: %v, grabs %v", done, fake.Grabs())
	}
	again, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(fake.Grabs()) != 1 {
		t.Fatalf("replay: %v", again)
	}
}

// A rejected release: no ticket without force; with force the ticket
// needs a person's approval before confirm does anything.
func TestGatewayForcedGrab(t *testing.T) {
	fake, g := startGateway(t, true)
	c := g.Client("openwebui", "ann@example.org")
	guid := arrapi.PublicGUID(fakesonarr.GUIDNotAllowed)
	args := map[string]any{"series_id": 1, "season": 1, "guid": guid, "indexer_id": 2}

	refused, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", args)
	if !isErr || refused["ticket"] != nil || !strings.Contains(g.Wire.String(), "force: true") {
		t.Fatalf("unforced preview: %v", refused)
	}
	forced := gatewaytest.With(args, map[string]any{"force": true})
	prev, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", forced)
	if isErr || prev["approval"] != "human" {
		t.Fatalf("forced preview: %v", prev)
	}
	ticket := prev["ticket"].(string)
	early, _ := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(forced, map[string]any{"confirm": true, "ticket": ticket}))
	if early["status"] != "pending" || early["applied"] != false || len(fake.Grabs()) != 0 {
		t.Fatalf("confirm before approval: %v", early)
	}
	if code := g.Approve(ticket); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	unforced, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || len(fake.Grabs()) != 0 {
		t.Fatalf("approved ticket used without force: %v", unforced)
	}
	done, isErr := gatewaytest.Call(t, c, "sonarr_release_grab", gatewaytest.With(forced, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || len(fake.Grabs()) != 1 || fake.Grabs()[0].GUID != fakesonarr.GUIDNotAllowed {
		t.Fatalf("forced grab: %v, grabs %v", done, fake.Grabs())
	}
}

// Without ARR_ALLOW_WRITES the write tools do not exist, whatever a
// client asks for.
func TestGatewayWritesAbsent(t *testing.T) {
	fake, g := startGateway(t, false)
	c := g.Client("openwebui", "ann@example.org")
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, tl := range list.Tools {
		if tl.Name == "sonarr_episode_search" || tl.Name == "sonarr_release_grab" {
			t.Fatalf("write tool %s listed", tl.Name)
		}
		if strings.HasPrefix(tl.Name, "sonarr_") {
			reads++
		}
	}
	if reads != 11 {
		t.Fatalf("%d sonarr read tools listed, want 11", reads)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"sonarr_episode_search", map[string]any{"series_id": 1, "season": 1, "episodes": []any{5}}},
		{"sonarr_release_grab", map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1}},
		{"sonarr_episode_search", map[string]any{"series_id": 1, "season": 1, "episodes": []any{5}, "confirm": true, "ticket": "forged"}},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = call.tool, call.args
		res, err := c.CallTool(t.Context(), req)
		if err == nil && !res.IsError {
			t.Fatalf("%s ran without ARR_ALLOW_WRITES: %v", call.tool, res)
		}
	}
	if len(fake.Writes()) != 0 || len(fake.Commands()) != 0 {
		t.Fatalf("writes reached Sonarr: %v", fake.Writes())
	}
}

// Reads pass the gateway without a ticket, and no key leaves.
func TestGatewayReads(t *testing.T) {
	_, g := startGateway(t, false)
	c := g.Client("kiosk", "")
	got, isErr := gatewaytest.Call(t, c, "sonarr_release_search", map[string]any{"series_id": 1, "season": 1})
	if isErr || got["total"] != 6.0 {
		t.Fatalf("%v", got)
	}
	got, isErr = gatewaytest.Call(t, c, "sonarr_history", map[string]any{})
	if isErr || got["total_records"] != 4.0 {
		t.Fatalf("%v", got)
	}
	for _, s := range []string{fakesonarr.ProwlarrKey, fakesonarr.TrackerPasskey, "magnet:"} {
		if strings.Contains(g.Wire.String(), s) {
			t.Fatalf("wire shows %q", s)
		}
	}
}

// With only Sonarr configured, the arr service offers Sonarr's tools only:
// the gateway's endpoint listing (what install.sh prints) names
// /mcp/sonarr for the clients whose groups may use arr, never /mcp/radarr
// or /mcp/prowlarr, which would list no tools, nor /mcp/arr, which the
// toolsets replace; a client whose groups allow nothing gets none.
func TestOnlySonarrConfiguredListsOnlyTheSonarrEndpoint(t *testing.T) {
	_, g := startGateway(t, false)
	code, body := g.Admin(http.MethodGet, "/admin/endpoints", "")
	var list admin.EndpointList
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil {
		t.Fatalf("GET /admin/endpoints: HTTP %d %s", code, body)
	}
	got := map[string][]string{}
	for _, c := range list.Clients {
		for _, e := range c.Endpoints {
			if e.Tools <= 0 {
				t.Errorf("%s: endpoint %s listed with %d tools", c.Client, e.Endpoint, e.Tools)
			}
			got[c.Client] = append(got[c.Client], e.Endpoint)
		}
	}
	for client, want := range map[string][]string{"openwebui": {"sonarr"}, "admin": {"sonarr"}, "kiosk": {"sonarr"}, "stranger": nil} {
		if !slices.Equal(got[client], want) {
			t.Errorf("%s: endpoints %v, want %v", client, got[client], want)
		}
	}
	// The count is what the client's own tools/list shows there.
	res, err := g.ClientAt("openwebui", "", "/mcp/sonarr").ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Clients {
		if c.Client == "openwebui" && (len(c.Endpoints) != 1 || c.Endpoints[0].Tools != len(res.Tools)) {
			t.Errorf("openwebui: listed %v, its tools/list on /mcp/sonarr has %d tools", c.Endpoints, len(res.Tools))
		}
	}
}
