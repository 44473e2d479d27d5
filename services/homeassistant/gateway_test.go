package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/notify"
	"github.com/toolgate/toolgate/services/homeassistant/reads"
	"github.com/toolgate/toolgate/services/homeassistant/relay"
	"github.com/toolgate/toolgate/services/homeassistant/yamlguard"
)

// gwToken is the planted long-lived access token of the gateway tests.
const gwToken = "ha-Planted-gateway-token-77e1c0ffee"

// gwHookID is a planted webhook id: whoever knows it triggers the
// automation behind it, so no answer, log or audit line may carry it.
const gwHookID = "-Planted_gateway-webhook-2b7e"

// catalogBudget is every endpoint's tools/list budget.
const catalogBudget = 12 << 10

type stack struct {
	relay     *relay.Relay
	configDir string
	fake      *fakehass.Fake
	g         *gatewaytest.Gateway
	mc        *client.Client
	svc       *toolkit.Service
}

// startStack runs a fake Home Assistant, the homeassistant service's tools
// (reads, the YAML guard over the fake's configuration directory, and the
// relay) over it, and a real gateway in front.
func startStack(t *testing.T, writes bool) *stack {
	t.Helper()
	return startStackNotifying(t, writes, "")
}

// startStackNotifying is startStack with the gateway notifying through
// Home Assistant's notify.<notifyService> when a ticket waits for a person.
func startStackNotifying(t *testing.T, writes bool, notifyService string) *stack {
	t.Helper()
	return startStackNamed(t, writes, notifyService, fakehass.BareNames)
}

// openGarageScript is an exposed script that opens whatever cover is in
// the garage, by area.
const openGarageScript = `
open_garage:
  alias: Open the garage
  sequence:
    - action: cover.open_cover
      target:
        area_id: garage
`

// startStackNamed is startStackNotifying with HA's tools named as names
// says.
func startStackNamed(t *testing.T, writes bool, notifyService string, names fakehass.ToolNames) *stack {
	t.Helper()
	dir := t.TempDir()
	if err := fakehass.SeedConfig(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "scripts.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(openGarageScript); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	o := fakehass.DemoHome(fakehass.Options{Token: gwToken, ConfigDir: dir, ToolNames: names})
	// A careless or hostile HA echoes the token in an attribute.
	o.Entities[0].Attributes["note"] = "token " + gwToken
	// ... and a webhook URL.
	o.Entities[0].Attributes["callback"] = "https://ha.lan:8123/api/webhook/" + gwHookID
	// Outside: what a person must approve besides locks and garage doors.
	o.Areas = append(o.Areas, fakehass.Area{ID: "outside", Name: "Outside", Floor: "ground_floor"})
	o.Entities = append(o.Entities,
		fakehass.Entity{ID: "camera.driveway", Name: "Driveway Camera", State: "recording", Area: "outside", Exposed: true,
			Attributes: map[string]any{"motion_detection": true}},
		fakehass.Entity{ID: "siren.outdoor_siren", Name: "Outdoor Siren", State: "off", Area: "outside", Exposed: true},
		fakehass.Entity{ID: "valve.water_main", Name: "Water Main", State: "open", Area: "outside", Exposed: true,
			Attributes: map[string]any{"device_class": "water", "supported_features": 3}},
		fakehass.Entity{ID: "cover.patio_door", Name: "Patio Door", State: "closed", Area: "outside", Exposed: true,
			Attributes: map[string]any{"device_class": "door", "supported_features": 3}},
		// The front door's name twin: not exposed to Assist, named as the
		// lock's alias.
		fakehass.Entity{ID: "light.hall_lamp", Name: "Main Door", State: "off", Area: "hallway", Exposed: false},
		fakehass.Entity{ID: "script.open_garage", Name: "Open the garage", State: "off", Exposed: true,
			Attributes: map[string]any{"mode": "single", "current": 0}},
	)
	st := &stack{fake: fakehass.New(o)}
	srv := httptest.NewServer(st.fake.Handler())
	t.Cleanup(srv.Close)
	up, err := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: srv.URL, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer " + gwToken}}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ha := hass.New(up)
	cfg, err := yamlguard.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cfg.Close() })
	st.configDir = dir
	guard := yamlguard.New(cfg, ha, yamlguard.Backups{Dir: filepath.Join(t.TempDir(), "backups"), Keep: 5}, true, nil)
	static := append(reads.New(ha, nil).Tools(), guard.Tools()...)
	o2 := gatewaytest.Options{Service: "homeassistant", Tools: static, AllowWrites: writes, Secrets: [][]byte{[]byte(gwToken)}}
	var routes func(*toolkit.Options)
	if notifyService != "" {
		o2.Config = func(c *app.Config) { c.NotifyHomeAssistant, c.ApprovalURL = true, "https://gw.home.lan:8081" }
		routes = func(so *toolkit.Options) {
			so.Routes = map[string]http.Handler{notify.Pattern: notify.New(ha, notifyService, slog.New(slog.DiscardHandler))}
		}
	}
	st.g = gatewaytest.Start(t, o2)
	if routes != nil {
		st.svc = st.g.NewService(static, routes)
	} else {
		st.svc = st.g.NewService(static)
	}
	r := relay.New(relay.Settings{Path: relay.DefaultPath, Refresh: time.Minute}, ha, nil)
	r.Attach(st.svc)
	if err := r.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	st.relay = r
	st.g.SetService(st.svc.Handler())
	st.g.App.Router.RefreshAll(t.Context())
	st.mc = st.g.ClientAt("openwebui", "ann@example.org", "/mcp/homeassistant")
	t.Cleanup(func() { st.g.NoLeaks(t, []string{gwToken, gwHookID}, nil) })
	return st
}

func (st *stack) call(t *testing.T, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	return gatewaytest.Call(t, st.mc, tool, args)
}

func confirmArgs(args map[string]any, ticket string) map[string]any {
	return gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket})
}

// Both Go MCP clients see the relayed tools and read through a real
// gateway; the token is in no answer, log, audit line or wire body even
// when HA echoes it.
func TestRelayThroughTheGatewayWithBothClients(t *testing.T) {
	st := startStack(t, false)
	sdkWire := &capture.Buffer{}
	sess := st.g.SDKClientAt("openwebui", "/mcp/homeassistant", sdkWire)
	list, err := sess.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"ha_GetLiveContext", "ha_GetDateTime", "ha_entity_list"} {
		if !names[want] {
			t.Errorf("go-sdk tools/list lacks %s", want)
		}
	}
	if names["ha_HassTurnOn"] {
		t.Error("a relayed write is listed with writes off")
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		has  string
	}{
		{"ha_GetLiveContext", map[string]any{"domain": "lock"}, "Front Door, Main Door"},
		{"ha_entity_get", map[string]any{"entity_id": "light.bedroom_light"}, `"state":"off"`},
		{"ha_entity_list", map[string]any{"domain": "light"}, "light.bedroom_light"},
	} {
		res, isErr := st.call(t, c.tool, c.args)
		raw, _ := json.Marshal(res)
		if isErr || !strings.Contains(string(raw), c.has) {
			t.Errorf("mcp-go %s: %s", c.tool, raw)
		}
		sres, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || sres.IsError {
			t.Fatalf("go-sdk %s: %v %+v", c.tool, err, sres)
		}
		sraw, _ := json.Marshal(sres.StructuredContent)
		if !strings.Contains(string(sraw), c.has) {
			t.Errorf("go-sdk %s: %s", c.tool, sraw)
		}
	}
	if !strings.Contains(sdkWire.String(), "light.bedroom_light") {
		t.Fatal("the go-sdk wire recorder saw no result; the leak check would prove nothing")
	}
	st.g.NoLeaks(t, []string{gwToken}, map[string]string{"go-sdk wire": sdkWire.String()})
}

// A webhook id in Home Assistant's answers or in its configuration reaches
// no client, log or audit line through the gateway: an entity attribute, an
// automation's webhook trigger, its raw lines, a search for it.
func TestWebhookIDsNeverLeaveThroughTheGateway(t *testing.T) {
	st := startStack(t, false)
	f, err := os.OpenFile(filepath.Join(st.configDir, "automations.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("- id: '1700000000030'\n  alias: Doorbell\n  triggers:\n    - trigger: webhook\n      webhook_id: " + gwHookID + "\n  actions:\n    - action: light.turn_on\n      target:\n        entity_id: light.kitchen_ceiling\n")
	if cerr := f.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		has  string
	}{
		{"ha_entity_get", map[string]any{"entity_id": "light.living_room_lamp"}, "/api/webhook/[REDACTED]"},
		{"ha_yaml_get", map[string]any{"kind": "automation", "id": "1700000000030"}, `"webhook_id":"[REDACTED]"`},
		{"ha_yaml_read_source", map[string]any{"file": "automations"}, "webhook_id: [REDACTED]"},
		{"ha_yaml_find_source", map[string]any{"query": "Planted_gateway"}, `"total":0`},
	} {
		res, isErr := st.call(t, c.tool, c.args)
		if raw := toJSON(res); isErr || !strings.Contains(raw, c.has) {
			t.Errorf("%s: %s lacks %s", c.tool, raw, c.has)
		}
	}
	// The cleanup's NoLeaks checks every answer, log and audit line.
}

// A lock, an alarm panel, a garage door, a camera, a siren, a valve (the
// water main), a door cover or a script that locks the door is never
// operated without a person's approval, however the call addresses it.
// Until a person approves, a confirm changes nothing.
func TestALockNeedsAPersonHoweverItIsAddressed(t *testing.T) {
	for _, names := range fakehass.Schemes {
		t.Run(names.String(), func(t *testing.T) { lockNeedsAPerson(t, names) })
	}
}

type lockCase struct {
	name   string
	tool   string
	args   map[string]any
	entity string
	reason string
}

func lockNeedsAPerson(t *testing.T, names fakehass.ToolNames) {
	st := startStackNamed(t, true, "", names)
	cases := []lockCase{
		{"by name", "ha_HassTurnOff", map[string]any{"name": "Front Door"}, "lock.front_door", "would operate a lock"},
		{"by alias", "ha_HassTurnOff", map[string]any{"name": "Main Door"}, "lock.front_door", "would operate a lock"},
		{"by the alias an unexposed light is named", "ha_HassTurnOff", map[string]any{"name": " main DOOR "}, "lock.front_door", "would operate a lock"},
		{"a script turned on by name", "ha_HassTurnOn", map[string]any{"name": "Good night"}, "lock.front_door", "would operate a lock"},
		{"a script turned on by entity id", "ha_HassTurnOn", map[string]any{"name": "script.good_night"}, "lock.front_door", "would operate a lock"},
		{"every exposed script turned on", "ha_HassTurnOn", map[string]any{"domain": []any{"script"}}, "lock.front_door", "would operate a lock"},
		{"a script opening the garage by area", "ha_open_garage", map[string]any{}, "cover.garage_door", "cover.garage"},
		{"the same script through an intent", "ha_HassTurnOn", map[string]any{"name": "Open the garage"}, "cover.garage_door", "cover.garage"},
		{"by area", "ha_HassTurnOff", map[string]any{"area": "Hallway"}, "lock.front_door", "would operate a lock"},
		{"HassTurnOn with domain lock", "ha_HassTurnOn", map[string]any{"floor": "Ground Floor", "domain": []any{"lock"}}, "lock.front_door", "would operate a lock"},
		{"alarm panel by area", "ha_HassTurnOff", map[string]any{"area": "hallway", "domain": []any{"alarm_control_panel"}}, "alarm_control_panel.home_alarm", "alarm_control_panel"},
		{"garage door by device class", "ha_HassTurnOn", map[string]any{"area": "Garage", "device_class": []any{"garage"}}, "cover.garage_door", "cover.garage"},
		{"garage door with its light", "ha_HassTurnOn", map[string]any{"area": "Garage"}, "cover.garage_door", "cover.garage"},
		{"script that locks the door", "ha_good_night", map[string]any{}, "lock.front_door", "would operate a lock"},
		{"camera by name", "ha_HassTurnOff", map[string]any{"name": "Driveway Camera"}, "camera.driveway", "would operate a camera"},
		{"camera by area and domain", "ha_HassTurnOff", map[string]any{"area": "outside", "domain": []any{"camera"}}, "camera.driveway", "would operate a camera"},
		{"everything outside", "ha_HassTurnOff", map[string]any{"area": "Outside"}, "camera.driveway", "would operate a camera"},
		{"siren by name", "ha_HassTurnOn", map[string]any{"name": "Outdoor Siren"}, "siren.outdoor_siren", "would operate a siren"},
		{"water main by name", "ha_HassTurnOff", map[string]any{"name": "Water Main"}, "valve.water_main", "would operate a valve"},
		{"water main by position", "ha_HassSetPosition", map[string]any{"name": "Water Main", "position": 0}, "valve.water_main", "would operate a valve"},
		{"door cover by device class", "ha_HassTurnOff", map[string]any{"device_class": []any{"door"}}, "cover.patio_door", "cover.door"},
	}
	if names == fakehass.PrefixedNames {
		cases = append(cases,
			lockCase{"HassUnlock (2026.9)", "ha_HassUnlock", map[string]any{"name": "Front door"}, "lock.front_door", `"ha_HassUnlock" needs human approval`},
			lockCase{"HassUnlock without slots: every lock (2026.9)", "ha_HassUnlock", map[string]any{}, "lock.front_door", `"ha_HassUnlock" needs human approval`},
			// HassOpen acts on covers and valves only: HA matches no lock,
			// and the preview, matching nothing, asks a person.
			lockCase{"HassOpen named for a lock (2026.9)", "ha_HassOpen", map[string]any{"name": "Main Door"}, "lock.front_door", "could not tell everything"},
			lockCase{"HassOpen without slots: every cover and valve (2026.9)", "ha_HassOpen", map[string]any{}, "cover.garage_door", "cover.garage"},
			lockCase{"HassOpen on the garage (2026.9)", "ha_HassOpen", map[string]any{"area": "Garage"}, "cover.garage_door", "cover.garage"},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := st.fake.StateOf(c.entity)
			calls := len(st.fake.Calls())
			res, isErr := st.call(t, c.tool, c.args)
			if isErr || res["status"] != "confirmation_required" || res["approval"] != "human" {
				t.Fatalf("first call: %v", res)
			}
			if reason, _ := res["reason"].(string); !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q lacks %q", reason, c.reason)
			}
			ticket := res["ticket"].(string)
			res, isErr = st.call(t, c.tool, confirmArgs(c.args, ticket))
			if isErr || res["status"] != "pending" || res["applied"] != false {
				t.Fatalf("confirm before approval: %v", res)
			}
			if st.fake.StateOf(c.entity) != before || len(st.fake.Calls()) != calls {
				t.Fatal("something was operated before a person approved")
			}
		})
	}

	// With a person's approval the confirm unlocks, once.
	args := map[string]any{"name": "Front Door"}
	res, _ := st.call(t, "ha_HassTurnOff", args)
	ticket := res["ticket"].(string)
	if status := st.g.Approve(ticket); status != http.StatusOK {
		t.Fatalf("approve: HTTP %d", status)
	}
	if res, isErr := st.call(t, "ha_HassTurnOff", confirmArgs(args, ticket)); isErr || res["status"] != "applied" {
		t.Fatalf("confirm after approval: %v", res)
	}
	if st.fake.StateOf("lock.front_door") != "unlocked" {
		t.Fatal("the approved unlock did not happen")
	}
	if res, isErr := st.call(t, "ha_HassTurnOff", confirmArgs(args, ticket)); !isErr || gatewaytest.ErrorCode(res) != "forbidden" {
		t.Fatalf("replay: %v", res)
	}
}

// When a lock's ticket starts waiting for a person, the gateway tells them
// through Home Assistant's notify service (the phone's companion app) by
// way of the homeassistant service, which alone holds HA's token: the
// notification carries the link to the ticket's page and the tool, never
// the user, the arguments or a token. Nobody but the gateway may use the
// route.
func TestAWaitingTicketIsAnnouncedThroughHomeAssistant(t *testing.T) {
	st := startStackNotifying(t, true, "mobile_app_pixel_8")
	args := map[string]any{"name": "Front Door"}
	res, _ := st.call(t, "ha_HassTurnOff", args)
	ticket, _ := res["ticket"].(string)
	if res, _ = st.call(t, "ha_HassTurnOff", confirmArgs(args, ticket)); res["status"] != "pending" {
		t.Fatalf("confirm before approval: %v", res)
	}
	st.g.App.Notifier.Wait()
	sent := notifications(st.fake)
	if len(sent) != 1 || sent[0].Service != "mobile_app_pixel_8" {
		t.Fatalf("notifications %+v", sent)
	}
	data, _ := sent[0].Data["data"].(map[string]any)
	link, _ := data["url"].(string)
	msg, _ := sent[0].Data["message"].(string)
	if !strings.HasPrefix(link, "https://gw.home.lan:8081/approvals/") || !strings.Contains(msg, "ha_HassTurnOff") {
		t.Errorf("notification %+v", sent[0].Data)
	}
	b, _ := json.Marshal(sent[0].Data)
	for _, never := range []string{"ann@example.org", "Front Door", gwToken, gatewaytest.ServiceToken} {
		if strings.Contains(string(b), never) {
			t.Errorf("the notification carries %q: %s", never, b)
		}
	}
	// The route sits behind the service token like /mcp.
	resp, err := http.Post(st.g.ServiceURL+"/internal/notify", "application/json", strings.NewReader(`{"title":"t","message":"open the door"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(notifications(st.fake)) != 1 {
		t.Errorf("without the service token: HTTP %d, %d notifications", resp.StatusCode, len(notifications(st.fake)))
	}
}

func notifications(f *fakehass.Fake) []fakehass.ServiceCall {
	var out []fakehass.ServiceCall
	for _, c := range f.Calls() {
		if c.Domain == "notify" {
			out = append(out, c)
		}
	}
	return out
}

// A tool Home Assistant offers that toolgate does not know — a custom
// integration's, or one wearing an intent's name behind a foreign
// namespace — needs a person, whatever its arguments name.
func TestAnUnknownHomeAssistantToolNeedsAPerson(t *testing.T) {
	st := startStackNamed(t, true, "", fakehass.PrefixedNames)
	for _, n := range []string{"fancy__do_thing", "evil__HassTurnOn"} {
		st.fake.AnswerTool(n, `{"success": true}`)
	}
	st.fake.EditTools(func(list []map[string]any) []map[string]any {
		for _, n := range []string{"fancy__do_thing", "evil__HassTurnOn"} {
			list = append(list, map[string]any{"name": n, "description": "A custom tool", "inputSchema": json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		}
		return list
	})
	if err := st.relay.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	st.g.App.Router.RefreshAll(t.Context())
	for _, tool := range []string{"ha_fancy__do_thing", "ha_evil__HassTurnOn"} {
		res, isErr := st.call(t, tool, map[string]any{"name": "Bedroom Light"})
		if isErr || res["status"] != "confirmation_required" || res["approval"] != "human" ||
			!strings.Contains(res["reason"].(string), "does not know what") {
			t.Errorf("%s: %v", tool, res)
		}
	}
	if calls := st.fake.Calls(); len(calls) != 0 {
		t.Fatalf("called: %v", calls)
	}
}

// Lights and media players stay low-risk: applied without a ticket. A
// "turn on" that reaches a switch needs the user's confirmation.
func TestLightsAndMediaStayLowRisk(t *testing.T) {
	st := startStack(t, true)
	for _, c := range []struct {
		tool   string
		args   map[string]any
		entity string
		want   string
	}{
		{"ha_HassTurnOn", map[string]any{"name": "Bedroom Light"}, "light.bedroom_light", "on"},
		{"ha_HassLightSet", map[string]any{"area": "Kitchen", "brightness": 30}, "light.kitchen_ceiling", "on"},
		{"ha_HassMediaPause", map[string]any{"name": "Living Room TV"}, "media_player.living_room_tv", "paused"},
	} {
		res, isErr := st.call(t, c.tool, c.args)
		if isErr || res["status"] != "applied" || st.fake.StateOf(c.entity) != c.want {
			t.Errorf("%s %v: %v, state %s", c.tool, c.args, res, st.fake.StateOf(c.entity))
		}
	}
	res, isErr := st.call(t, "ha_HassTurnOn", map[string]any{"name": "Coffee Maker"})
	if isErr || res["status"] != "confirmation_required" || res["approval"] != "model" || st.fake.StateOf("switch.coffee_maker") != "off" {
		t.Fatalf("a switch behind a low-risk tool: %v", res)
	}
}

// A relayed write: the preview changes nothing, the confirm applies
// exactly once, a replay and a changed scope are refused.
func TestRelayedWriteFlow(t *testing.T) {
	st := startStack(t, true)
	args := map[string]any{"name": "Thermostat", "temperature": 21.5}
	res, isErr := st.call(t, "ha_HassClimateSetTemperature", args)
	if isErr || res["status"] != "confirmation_required" || res["approval"] != "model" || len(st.fake.Calls()) != 0 {
		t.Fatalf("preview: %v (calls %v)", res, st.fake.Calls())
	}
	preview, _ := json.Marshal(res["preview"])
	if !strings.Contains(string(preview), `"entity_id":"climate.thermostat"`) || res["facts"] == nil {
		t.Errorf("preview %s, facts %v", preview, res["facts"])
	}
	ticket := res["ticket"].(string)
	if res, isErr = st.call(t, "ha_HassClimateSetTemperature", confirmArgs(args, ticket)); isErr || res["status"] != "applied" {
		t.Fatalf("confirm: %v", res)
	}
	if n := len(st.fake.Calls()); n != 1 {
		t.Fatalf("%d service calls, want 1", n)
	}
	if res, isErr = st.call(t, "ha_HassClimateSetTemperature", confirmArgs(args, ticket)); !isErr || len(st.fake.Calls()) != 1 {
		t.Fatalf("replay: %v", res)
	}

	// The coffee maker gets a ticket for the user's consent; before the
	// confirm, someone names the front door lock "Coffee Maker" too. The
	// recomputed preview reaches a lock: refused, nothing changed.
	args = map[string]any{"name": "Coffee Maker"}
	res, _ = st.call(t, "ha_HassTurnOn", args)
	if res["approval"] != "model" {
		t.Fatalf("coffee maker: %v", res)
	}
	st.fake.Rename("lock.front_door", "Coffee Maker")
	res, isErr = st.call(t, "ha_HassTurnOn", confirmArgs(args, res["ticket"].(string)))
	if !isErr || !strings.Contains(toJSON(res), "scope changed") {
		t.Fatalf("confirm after the scope changed: %v", res)
	}
	if st.fake.StateOf("lock.front_door") != "locked" || st.fake.StateOf("switch.coffee_maker") != "off" {
		t.Fatal("something was operated after the scope changed")
	}
	// A new preview now asks for a person.
	if res, _ = st.call(t, "ha_HassTurnOn", args); res["approval"] != "human" {
		t.Fatalf("new preview: %v", res)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// /mcp/homeassistant fits the 12 KB budget with writes off (the demo's
// relayed tools included); the size with writes on is logged.
func TestCatalogFitsTheBudget(t *testing.T) {
	for _, writes := range []bool{false, true} {
		st := startStack(t, writes)
		res, err := st.mc.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		t.Logf("/mcp/homeassistant (writes %v): %d tools, %d bytes", writes, len(res.Tools), len(raw))
		if !writes && len(raw) > catalogBudget {
			t.Errorf("tools/list is %d bytes, over the %d-byte budget", len(raw), catalogBudget)
		}
	}
}

// YAML changes through a real gateway, with both Go MCP clients: the
// preview shows the diff and needs a person; until a person approves, a
// confirm writes nothing; after, the file is changed, checked and
// reloaded once, and a replay is refused. The token is in nothing.
func TestYAMLChangeThroughTheGatewayWithBothClients(t *testing.T) {
	st := startStack(t, true)
	sdkWire := &capture.Buffer{}
	sess := st.g.SDKClientAt("openwebui", "/mcp/homeassistant", sdkWire)
	clients := map[string]func(tool string, args map[string]any) (map[string]any, bool){
		"mcp-go": func(tool string, args map[string]any) (map[string]any, bool) { return st.call(t, tool, args) },
		"go-sdk": func(tool string, args map[string]any) (map[string]any, bool) {
			res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var out map[string]any
			_ = json.Unmarshal(raw, &out)
			return out, res.IsError
		},
	}
	morning := map[string]any{"kind": "automation", "id": "1700000000001", "config": map[string]any{
		"alias": "Morning lights", "description": "Kitchen light on at 06:30 on weekdays",
		"trigger":   []any{map[string]any{"platform": "time", "at": "06:45:00"}},
		"condition": []any{map[string]any{"condition": "time", "weekday": []any{"mon", "tue", "wed", "thu", "fri"}}},
		"action":    []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "light.kitchen_ceiling"}}},
		"mode":      "single",
	}}
	scene := map[string]any{"kind": "scene", "id": "1700000000010", "config": map[string]any{"name": "Movie time", "entities": map[string]any{
		"light.living_room_lamp": map[string]any{"state": "on", "brightness": 40}, "cover.living_room_blinds": map[string]any{"state": "closed"},
	}}}
	cases := []struct {
		client, file string
		args         map[string]any
		diff, after  string
		tail         string // where the untouched rest of the file starts; kept byte for byte
	}{
		{"mcp-go", "automations.yaml", morning, `+      at: '06:45:00'`, "weekday: [mon, tue, wed, thu, fri]", "- id: '1700000000002'"},
		{"go-sdk", "scenes.yaml", scene, `+      brightness: 40`, "brightness: 40", ""},
	}
	for _, c := range cases {
		t.Run(c.client, func(t *testing.T) {
			call := clients[c.client]
			path := filepath.Join(st.configDir, c.file)
			before, _ := os.ReadFile(path)
			calls := len(st.fake.Calls())
			if res, isErr := call("ha_yaml_read_source", map[string]any{"file": "configuration"}); isErr ||
				!strings.Contains(toJSON(res), "!include automations.yaml") || strings.Contains(toJSON(res), "mqtt_password") {
				t.Fatalf("read_source: %v", res)
			}
			prev, isErr := call("ha_yaml_update", c.args)
			if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "human" || !strings.Contains(toJSON(prev), c.diff) {
				t.Fatalf("preview: %v", prev)
			}
			ticket := prev["ticket"].(string)
			if res, isErr := call("ha_yaml_update", confirmArgs(c.args, ticket)); isErr || res["status"] != "pending" {
				t.Fatalf("confirm before approval: %v", res)
			}
			if now, _ := os.ReadFile(path); string(now) != string(before) || len(st.fake.Calls()) != calls {
				t.Fatal("written before a person approved")
			}
			if status := st.g.Approve(ticket); status != http.StatusOK {
				t.Fatalf("approve: HTTP %d", status)
			}
			if res, isErr := call("ha_yaml_update", confirmArgs(c.args, ticket)); isErr || res["status"] != "applied" {
				t.Fatalf("confirm: %v", res)
			}
			after, _ := os.ReadFile(path)
			rest := ""
			if c.tail != "" {
				rest = string(before[strings.Index(string(before), c.tail):])
			}
			if !strings.Contains(string(after), c.after) || !strings.HasSuffix(string(after), rest) {
				t.Errorf("the file after the change:\n%s", after)
			}
			if got := st.fake.Calls(); len(got) != calls+1 || got[calls].Service != "reload" {
				t.Errorf("service calls: %v", got)
			}
			if res, isErr := call("ha_yaml_update", confirmArgs(c.args, ticket)); !isErr || gatewaytest.ErrorCode(res) != "forbidden" {
				t.Fatalf("replay: %v", res)
			}
		})
	}
	st.g.NoLeaks(t, []string{gwToken, "demo-mqtt-password-not-for-real-use", "0123-demo-openweathermap-key"}, map[string]string{"go-sdk wire": sdkWire.String()})
}
