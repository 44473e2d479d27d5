package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// policiesDir is the repository's policies/ directory.
func policiesDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "policies"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var testTime = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

// read is an ordinary user's read; cases modify a copy.
func read() Input {
	return Input{
		Action:      ActionCall,
		Client:      Client{Name: "openwebui", Groups: []string{"users"}},
		User:        "alice@example.org",
		Service:     "homeassistant",
		Tool:        "ha_states_list",
		Annotations: Annotations{ReadOnly: true, Idempotent: true},
		Args:        map[string]any{"entity_id": "light.kitchen"},
		Ticket:      Ticket{State: "none"},
		Time:        testTime,
		Transport:   "http",
	}
}

// write is a non-destructive write of tool by an ordinary user.
func write(tool string) Input {
	in := read()
	in.Tool = tool
	in.Write = true
	in.Annotations = Annotations{Idempotent: true}
	return in
}

func with(in Input, f func(*Input)) Input {
	f(&in)
	return in
}

type decisionCase struct {
	name       string
	in         Input
	decision   string
	approval   approval.Kind
	ttl        int
	reasonPart string
}

func allowed(name string, in Input, reason string) decisionCase {
	return decisionCase{name, in, Allow, approval.Model, 0, reason}
}

func denied(name string, in Input, reason string) decisionCase {
	return decisionCase{name, in, Deny, approval.Model, 0, reason}
}

func confirmed(name string, in Input, kind approval.Kind, reason string) decisionCase {
	return decisionCase{name, in, Confirm, kind, 600, reason}
}

func groups(g ...string) func(*Input) { return func(in *Input) { in.Client.Groups = g } }

// facts is a write of tool asked about after its preview reported f.
func facts(tool string, f map[string]any) Input {
	return with(write(tool), func(in *Input) { in.Preview = &Preview{Facts: f} })
}

func haFacts(domains, classes []any) map[string]any {
	if classes == nil {
		classes = []any{}
	}
	return map[string]any{"kind": "intent", "domains": domains, "device_classes": classes, "unresolved": false, "opaque": false}
}

// decisionTable covers every rule of policies/authz.rego and its precedence
// against the shipped data in policies/data.
var decisionTable = []decisionCase{
	// reads
	allowed("read by user", read(), "read allowed"),
	allowed("read by readonly group", with(read(), groups("readonly")), "read allowed"),
	allowed("read listed", with(read(), func(in *Input) { in.Action = ActionList }), "read allowed"),
	allowed("admin reads admin-only service", with(read(), func(in *Input) {
		in.Client.Groups = []string{"admins"}
		in.Service, in.Tool = "unraid-ssh", "unraidssh_disk_usage"
	}), "read allowed"),
	allowed("second prefix of a service", with(read(), func(in *Input) { in.Service, in.Tool = "arr", "radarr_movie_list" }), "read allowed"),
	allowed("force on a read changes nothing", with(read(), func(in *Input) { in.Args = map[string]any{"force": true} }), "read allowed"),

	// deny
	denied("unknown service", with(read(), func(in *Input) { in.Service, in.Tool = "toaster", "toaster_on" }), `unknown service "toaster"`),
	denied("tool without the service prefix", with(read(), func(in *Input) { in.Tool = "sonarr_series_list" }), "unknown tool"),
	denied("prefix not at start", with(read(), func(in *Input) { in.Tool = "x_ha_states_list" }), "unknown tool"),
	denied("user on admin-only service", with(read(), func(in *Input) { in.Service, in.Tool = "unraid", "unraid_array_status" }), "may not use service"),
	denied("client without groups", with(read(), groups()), "may not use service"),
	denied("client with nil groups", with(read(), groups(nil...)), "may not use service"),
	denied("unknown group", with(read(), groups("guests")), "may not use service"),
	denied("unknown action", with(read(), func(in *Input) { in.Action = "delete" }), "unknown action"),
	denied("empty input", Input{}, "unknown action"),
	denied("readonly group write", with(write("ha_climate_set_temperature"), groups("readonly")), "read-only"),
	denied("readonly group low-risk write", with(write("ha_HassLightSet"), groups("readonly")), "read-only"),
	denied("readonly membership beats admins", with(write("ha_climate_set_temperature"), groups("admins", "readonly")), "read-only"),
	denied("readonly group write hidden from list", with(write("ha_climate_set_temperature"), func(in *Input) {
		in.Action = ActionList
		in.Client.Groups = []string{"readonly"}
	}), "read-only"),

	// confirm by the model
	confirmed("write", write("ha_climate_set_temperature"), approval.Model, "write needs confirmation"),
	confirmed("write listed", with(write("ha_climate_set_temperature"), func(in *Input) { in.Action = ActionList }), approval.Model, "write needs confirmation"),
	confirmed("write with valid ticket", with(write("ha_climate_set_temperature"), func(in *Input) { in.Ticket.State = "valid" }), approval.Model, "write needs confirmation"),

	// confirm by a person
	confirmed("destructive write", with(write("ha_automation_delete"), func(in *Input) { in.Annotations.Destructive = true }), approval.Human, "destructive"),
	confirmed("destructive hint makes a write", with(read(), func(in *Input) { in.Tool = "ha_automation_delete"; in.Annotations.Destructive = true }), approval.Human, "destructive"),
	confirmed("ticket force", with(write("ha_climate_set_temperature"), func(in *Input) { in.Ticket.Force = true }), approval.Human, "forced"),
	confirmed("args force", with(write("ha_climate_set_temperature"), func(in *Input) { in.Args = map[string]any{"force": true} }), approval.Human, "forced"),
	confirmed("human tool by name", with(write("demo_counter_reset"), func(in *Input) { in.Service = "demo" }), approval.Human, `"demo_counter_reset" needs human approval`),
	confirmed("lock intent by name", write("ha_HassUnlock"), approval.Human, `"ha_HassUnlock" needs human approval`),
	confirmed("array stop", with(write("unraid_array_stop"), func(in *Input) {
		in.Service = "unraid"
		in.Client.Groups = []string{"admins"}
	}), approval.Human, `"unraid_array_stop" needs human approval`),
	confirmed("container start", unraidWrite("unraid_container_control", map[string]any{"container": "plex", "action": "start"}), approval.Model, "write needs confirmation"),
	confirmed("container stop", unraidWrite("unraid_container_control", map[string]any{"container": "frigate", "action": "stop"}), approval.Human, `"unraid_container_control" needs human approval for any action but start`),
	confirmed("container restart", unraidWrite("unraid_container_control", map[string]any{"container": "frigate", "action": "restart"}), approval.Human, "for any action but start"),
	confirmed("container action missing", unraidWrite("unraid_container_control", map[string]any{"container": "frigate"}), approval.Human, "for any action but start"),
	confirmed("VM start", unraidWrite("unraid_vm_control", map[string]any{"vm": "hassos", "action": "start"}), approval.Model, "write needs confirmation"),
	confirmed("VM stop", unraidWrite("unraid_vm_control", map[string]any{"vm": "hassos", "action": "stop"}), approval.Human, `"unraid_vm_control" needs human approval for any action but start`),
	allowed("human prefix does not cover reads", with(read(), func(in *Input) {
		in.Service, in.Tool = "unraid", "unraid_array_status"
		in.Client.Groups = []string{"admins"}
	}), "read allowed"),

	// low risk
	allowed("low-risk turn on before its preview", write("ha_HassTurnOn"), "low-risk"),
	allowed("low-risk light set", write("ha_HassLightSet"), "low-risk"),
	allowed("low-risk demo write", with(write("demo_note_touch"), func(in *Input) { in.Service = "demo" }), "low-risk"),

	// preview facts: asked again after a write's preview; they can only
	// raise the approval (the gateway keeps the stricter answer too)
	confirmed("a lock by the facts", facts("ha_HassTurnOn", haFacts([]any{"lock"}, nil)), approval.Human, "would operate a lock"),
	confirmed("an alarm panel by the facts", facts("ha_HassTurnOff", haFacts([]any{"alarm_control_panel", "light"}, nil)), approval.Human, "would operate a alarm_control_panel"),
	confirmed("a garage door by the facts", facts("ha_HassTurnOn", haFacts([]any{"cover"}, []any{"cover.garage"})), approval.Human, "cover.garage"),
	confirmed("a gate by the facts", facts("ha_HassSetPosition", haFacts([]any{"cover"}, []any{"cover.gate"})), approval.Human, "cover.gate"),
	confirmed("a camera by the facts", facts("ha_HassTurnOff", haFacts([]any{"camera"}, nil)), approval.Human, "would operate a camera"),
	confirmed("a siren by the facts", facts("ha_HassTurnOn", haFacts([]any{"siren"}, nil)), approval.Human, "would operate a siren"),
	confirmed("a water main by the facts", facts("ha_HassTurnOff", haFacts([]any{"valve"}, []any{"valve.water"})), approval.Human, "would operate a valve"),
	confirmed("a door cover by the facts", facts("ha_HassTurnOn", haFacts([]any{"cover"}, []any{"cover.door"})), approval.Human, "cover.door"),
	confirmed("a blind is no way in", facts("ha_HassSetPosition", haFacts([]any{"cover"}, []any{"cover.blind"})), approval.Model, "write needs confirmation"),
	confirmed("unresolved targets", facts("ha_HassTurnOn", map[string]any{"domains": []any{}, "unresolved": true}), approval.Human, "could not tell"),
	confirmed("facts required but missing", facts("ha_HassTurnOn", nil), approval.Human, "must report what it touches"),
	allowed("lights stay low risk", facts("ha_HassTurnOff", haFacts([]any{"light"}, nil)), "low-risk"),
	allowed("media players stay low risk", facts("ha_HassMediaPause", haFacts([]any{"media_player"}, []any{"media_player.tv"})), "low-risk"),
	confirmed("a switch is beyond low risk", facts("ha_HassTurnOn", haFacts([]any{"light", "switch"}, nil)), approval.Model, "write needs confirmation"),
	confirmed("a script is opaque", facts("ha_good_night", map[string]any{"kind": "script", "domains": []any{"light", "script"}, "opaque": true}), approval.Model, "write needs confirmation"),
	confirmed("harmless facts keep a person", facts("ha_HassUnlock", haFacts([]any{"light"}, nil)), approval.Human, `"ha_HassUnlock" needs human approval`),
	allowed("a service without a facts contract", with(write("demo_note_touch"), func(in *Input) { in.Service, in.Preview = "demo", &Preview{} }), "low-risk"),
	allowed("facts do not touch reads", with(read(), func(in *Input) { in.Preview = &Preview{Facts: haFacts([]any{"lock"}, nil)} }), "read allowed"),

	// restricted tools: camera pictures only for admins
	denied("a camera picture for users", with(read(), func(in *Input) { in.Service, in.Tool = "frigate", "frigate_get_latest_frame" }), `"frigate_get_latest_frame" shows personal data`),
	denied("a camera picture hidden from users", with(read(), func(in *Input) {
		in.Action, in.Service, in.Tool, in.Args = ActionList, "frigate", "frigate_get_event_snapshot", map[string]any{}
	}), `"frigate_get_event_snapshot" shows personal data`),
	allowed("a camera picture for admins", with(read(), role("admins", "", "frigate", "frigate_get_event_snapshot")), "read allowed"),
	denied("a camera picture for OpenWebUI role user", with(read(), role("admins", "user", "frigate", "frigate_get_latest_frame")), `end-user role "user" may not use it`),
	allowed("camera events stay open to users", with(read(), func(in *Input) { in.Service, in.Tool = "frigate", "frigate_list_events" }), "read allowed"),

	// precedence
	denied("deny beats human", with(write("ha_HassUnlock"), func(in *Input) {
		in.Client.Groups = []string{"readonly"}
		in.Annotations.Destructive = true
	}), "read-only"),
	denied("deny beats forced write", with(write("unraid_array_stop"), func(in *Input) {
		in.Service = "unraid"
		in.Ticket.Force = true
	}), "may not use service"),
	confirmed("human beats low-risk when forced", with(write("ha_HassLightSet"), func(in *Input) { in.Ticket.Force = true }), approval.Human, "forced"),
	confirmed("human beats low-risk when args force", with(write("ha_HassLightSet"), func(in *Input) { in.Args = map[string]any{"force": true} }), approval.Human, "forced"),
	confirmed("human beats low-risk when destructive", with(write("ha_HassTurnOff"), func(in *Input) { in.Annotations.Destructive = true }), approval.Human, "destructive"),
	confirmed("model confirm beats read allow", write("ha_scene_activate"), approval.Model, "write needs confirmation"),

	// end-user roles from OpenWebUI's verified token narrow the client's groups
	allowed("OpenWebUI admin on admin-only service", with(read(), role("admins", "admin", "unraid", "unraid_array_status")), "read allowed"),
	denied("OpenWebUI user on admin-only service", with(read(), role("admins", "user", "unraid", "unraid_array_status")), `end-user role "user" may not use service "unraid"`),
	allowed("OpenWebUI user on a user service", with(read(), role("admins", "user", "homeassistant", "ha_states_list")), "read allowed"),
	confirmed("OpenWebUI user writes as before", with(write("ha_climate_set_temperature"), role("admins", "user", "homeassistant", "ha_climate_set_temperature")), approval.Model, "write needs confirmation"),
	denied("OpenWebUI pending user gets nothing", with(read(), role("admins", "pending", "homeassistant", "ha_states_list")), `end-user role "pending" may not use service`),
	denied("unknown end-user role", with(read(), role("admins", "owner", "homeassistant", "ha_states_list")), `end-user role "owner" is not known`),
	denied("a role never widens the client's groups", with(read(), role("users", "admin", "unraid", "unraid_array_status")), `client "openwebui" may not use service "unraid"`),
}

// unraidWrite is a write of an Unraid tool with args by a client of group
// nas.
func unraidWrite(tool string, args map[string]any) Input {
	return with(write(tool), func(in *Input) {
		in.Service, in.Client.Groups, in.Args = "unraid", []string{"nas"}, args
	})
}

// role makes the call come from an end user with an OpenWebUI role through
// a client in group.
func role(group, userRole, service, tool string) func(*Input) {
	return func(in *Input) {
		in.Client.Groups = []string{group}
		in.UserRole, in.Service, in.Tool = userRole, service, tool
	}
}

func runTable(t *testing.T, e Engine) map[string]Decision {
	t.Helper()
	got := make(map[string]Decision, len(decisionTable))
	for _, tc := range decisionTable {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.Decide(t.Context(), tc.in)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if d.Decision != tc.decision || d.Approval != tc.approval || d.TTLSeconds != tc.ttl {
				t.Errorf("got %+v, want decision=%s approval=%s ttl=%d", d, tc.decision, tc.approval, tc.ttl)
			}
			if !strings.Contains(d.Reason, tc.reasonPart) {
				t.Errorf("reason %q does not mention %q", d.Reason, tc.reasonPart)
			}
			got[tc.name] = d
		})
	}
	return got
}

func TestEmbeddedDecisionTable(t *testing.T) {
	for name, fsys := range map[string]fs.FS{"embed": policies.FS, "dir": os.DirFS(policiesDir(t))} {
		t.Run(name, func(t *testing.T) {
			e, err := NewEmbedded(t.Context(), fsys)
			if err != nil {
				t.Fatalf("NewEmbedded: %v", err)
			}
			runTable(t, e)
		})
	}
}

// TestEnginesAgree runs the table through a real `opa run --server` on the
// repository's policies/ and through the embedded engine, and requires
// identical answers (reason included).
func TestEnginesAgree(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	remote := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second})
	embedded, err := NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatalf("NewEmbedded: %v", err)
	}

	var fromRemote, fromEmbedded map[string]Decision
	t.Run("remote", func(t *testing.T) { fromRemote = runTable(t, remote) })
	t.Run("embedded", func(t *testing.T) { fromEmbedded = runTable(t, embedded) })
	for _, tc := range decisionTable {
		r, okR := fromRemote[tc.name]
		e, okE := fromEmbedded[tc.name]
		if !okR || !okE || r != e {
			t.Errorf("%s: remote %+v (%v), embedded %+v (%v)", tc.name, r, okR, e, okE)
		}
	}
}
