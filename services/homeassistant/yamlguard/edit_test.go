package yamlguard

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
)

// scriptsYAML has what edits must keep: comments at every level, blank
// lines, !secret and !include tags, an anchor, a quoted 'on'.
const scriptsYAML = `# Scripts, partly written by hand.
notify_door:
  alias: Notify door
  # Who gets it: the phones.
  sequence:
    - service: notify.mobile_app_phone
      data:
        message: Door open   # short
        api_key: !secret notify_api_key
    - service: rest_command.ping
      data:
        url: http://admin:hunter2pass@nas.lan/ping
  fields: !include script_fields.yaml
  mode: single

# The evening block.
evening:
  alias: Evening
  sequence:
    - service: light.turn_on
      target:
        entity_id: light.living_room_lamp
      data:
        state: 'on'
  mode: restart
  description: !secret evening_note
# End of scripts.
`

// edit applies one change to raw and returns the new file.
type edit struct {
	name   string
	kind   Kind
	raw    string
	id     string
	op     string // create, update, delete
	config string
	// keep are texts the new file must still hold; gone those it must not;
	// once those it must hold exactly once.
	keep, gone, once []string
	// entry is the entry's expected decoded value after the change.
	entry map[string]any
}

func TestEditsTouchOnlyTheirEntry(t *testing.T) {
	automations := fakehass.DemoConfig["automations.yaml"]
	scenes := fakehass.DemoConfig["scenes.yaml"]
	cases := []edit{
		{
			name: "update an automation's alias keeps its inner comment and quoting", kind: Automation, raw: automations, id: "1700000000002", op: "update",
			config: `{"alias":"Close the garage at night","trigger":[{"platform":"time","at":"23:00:00"}],"action":[{"service":"cover.close_cover","target":{"entity_id":"cover.garage_door"}}],"mode":"single","id":"1700000000002"}`,
			keep:   []string{"    # Garage door: never leave it open overnight.\n", "- id: '1700000000002'\n  alias: Close the garage at night\n", "      at: '23:00:00'\n"},
			gone:   []string{"alias: Close garage at night"},
			entry:  map[string]any{"alias": "Close the garage at night", "mode": "single"},
		},
		{
			name: "create an automation appends it with a quoted id and times", kind: Automation, raw: automations, id: "1700000000003", op: "create",
			config: `{"alias":"Lamp at dusk","trigger":[{"platform":"sun","event":"sunset","offset":"-00:30:00"}],"action":[{"service":"light.turn_on","target":{"entity_id":"light.living_room_lamp"},"data":{"brightness":"60"}}],"mode":"single"}`,
			keep:   []string{"- id: '1700000000003'\n  alias: Lamp at dusk\n", "offset: '-00:30:00'", "brightness: '60'"},
			entry:  map[string]any{"id": "1700000000003", "alias": "Lamp at dusk"},
		},
		{
			name: "delete the first automation keeps the file's head comment", kind: Automation, raw: automations, id: "1700000000001", op: "delete",
			keep: []string{"# Managed by the UI and by toolgate's YAML tools.\n- id: '1700000000002'\n"},
			gone: []string{"Morning lights"},
		},
		{
			name: "delete the only scene leaves an empty list", kind: Scene, raw: scenes, id: "1700000000010", op: "delete",
			keep: []string{"[]\n"}, gone: []string{"Movie time"},
		},
		{
			name: "create a scene in an empty list", kind: Scene, raw: "[]\n", id: "evening", op: "create",
			config: `{"name":"Evening","entities":{"light.living_room_lamp":{"state":"on","brightness":80}}}`,
			keep:   []string{"- id: evening\n  name: Evening\n", "state: 'on'\n"}, gone: []string{"[]"},
			entry: map[string]any{"name": "Evening"},
		},
		{
			name: "update a script keeps !secret, !include, comments of what it keeps", kind: Script, raw: scriptsYAML, id: "notify_door", op: "update",
			config: `{"alias":"Notify: door open","sequence":[{"service":"notify.mobile_app_phone","data":{"message":"Door open","api_key":"!secret ***"}},{"service":"rest_command.ping","data":{"url":"http://admin:***@nas.lan/ping"}}],"fields":"!include script_fields.yaml","mode":"single"}`,
			keep: []string{"  alias: 'Notify: door open'\n", "  # Who gets it: the phones.\n", "api_key: !secret notify_api_key\n", "message: Door open # short\n",
				"fields: !include script_fields.yaml\n", "url: http://admin:hunter2pass@nas.lan/ping\n", "\n# The evening block.\nevening:\n"},
			entry: map[string]any{"alias": "Notify: door open", "mode": "single"},
		},
		{
			name: "update a script's new key goes last; removed keys go", kind: Script, raw: scriptsYAML, id: "evening", op: "update",
			config: `{"icon":"mdi:weather-night","alias":"Evening","sequence":[{"service":"light.turn_on","target":{"entity_id":"light.living_room_lamp"},"data":{"state":"on"}}]}`,
			keep:   []string{"evening:\n  alias: Evening\n", "        state: 'on'\n  icon: mdi:weather-night\n# End of scripts.\n"},
			gone:   []string{"mode: restart", "evening_note"},
			entry:  map[string]any{"icon": "mdi:weather-night"},
		},
		{
			name: "create a script appends after the last entry, before the closing comment", kind: Script, raw: scriptsYAML, id: "morning", op: "create",
			config: `{"alias":"Morning","sequence":[{"delay":{"seconds":5}}]}`,
			keep:   []string{"  description: !secret evening_note\nmorning:\n  alias: Morning\n", "# End of scripts.\n"},
			entry:  map[string]any{"alias": "Morning"},
		},
		{
			name: "a commented-out action at column 0 inside an entry stays inside it", kind: Automation, id: "a", op: "update",
			raw:    "- id: a\n  alias: A\n  action:\n# - service: light.turn_off\n    - service: light.turn_on\n  mode: single\n  # trailing note\n# Group B\n- id: b\n  alias: B\n",
			config: `{"alias":"A2","action":[{"service":"light.turn_on"}],"mode":"single"}`,
			keep:   []string{"- id: a\n  alias: A2\n", "# - service: light.turn_off\n", "  mode: single\n  # trailing note\n# Group B\n- id: b\n  alias: B\n"},
			once:   []string{"# trailing note", "# Group B", "# - service: light.turn_off"},
			entry:  map[string]any{"alias": "A2"},
		},
		{
			name: "delete a script keeps the comment above the next", kind: Script, raw: scriptsYAML, id: "notify_door", op: "delete",
			keep: []string{"# Scripts, partly written by hand.\n\n# The evening block.\nevening:\n"}, gone: []string{"notify_api_key", "hunter2pass"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse(c.kind, []byte(c.raw))
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			var e Entry
			switch c.op {
			case "create":
				n, err := entryNode(c.kind, c.id, []byte(c.config))
				if err != nil {
					t.Fatal(err)
				}
				got, err = d.Append(c.id, n)
				if err != nil {
					t.Fatal(err)
				}
			case "update", "delete":
				if e, err = d.Find(c.id); err != nil {
					t.Fatal(err)
				}
				if c.op == "delete" {
					got = d.Delete(e)
					break
				}
				n, err := entryNode(c.kind, c.id, []byte(c.config))
				if err != nil {
					t.Fatal(err)
				}
				m, err := Merge(e.Node, n)
				if err != nil {
					t.Fatal(err)
				}
				if got, err = d.Replace(e, m); err != nil {
					t.Fatal(err)
				}
			}
			text := string(got)
			// Byte level: everything before and after the entry's own
			// lines is the file as it was.
			if c.op != "create" && !(c.op == "delete" && len(d.Entries) == 1) {
				head, tail := strings.Join(d.lines[:e.start], ""), strings.Join(d.lines[e.end:], "")
				if !strings.HasPrefix(text, head) || !strings.HasSuffix(text, strings.TrimPrefix(tail, "\n")) {
					t.Errorf("bytes outside the entry changed:\n%s", text)
				}
			}
			if c.op == "create" && len(d.Entries) > 0 {
				last := d.Entries[len(d.Entries)-1]
				if !strings.HasPrefix(text, strings.Join(d.lines[:last.end], "")) {
					t.Errorf("bytes before the new entry changed:\n%s", text)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(text, k) {
					t.Errorf("the new file lacks %q:\n%s", k, text)
				}
			}
			for _, o := range c.once {
				if n := strings.Count(text, o); n != 1 {
					t.Errorf("the new file has %q %d times:\n%s", o, n, text)
				}
			}
			for _, g := range c.gone {
				if strings.Contains(text, g) {
					t.Errorf("the new file still has %q:\n%s", g, text)
				}
			}
			nd, err := Parse(c.kind, got)
			if err != nil {
				t.Fatalf("the new file does not parse: %v\n%s", err, text)
			}
			if len(nd.Entries) != len(d.Entries)+map[string]int{"create": 1, "update": 0, "delete": -1}[c.op] {
				t.Errorf("%d entries, had %d", len(nd.Entries), len(d.Entries))
			}
			if c.entry == nil {
				return
			}
			ne, err := nd.Find(c.id)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := ne.Node.Decode(&v); err != nil {
				t.Fatal(err)
			}
			for k, want := range c.entry {
				if v[k] != want {
					t.Errorf("%s = %v, want %v", k, v[k], want)
				}
			}
		})
	}
}

// Values the model was shown masked come back masked: the entry keeps
// what it had. A mask where there is nothing to keep is refused.
func TestMasksKeepTheCurrentValue(t *testing.T) {
	d, err := Parse(Script, []byte(scriptsYAML))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := d.Find("notify_door")
	shown, _ := json.Marshal(ToJSON(e.Node))
	for _, leak := range []string{"notify_api_key", "hunter2pass"} {
		if strings.Contains(string(shown), leak) {
			t.Errorf("ToJSON shows %s: %s", leak, shown)
		}
	}
	// What get showed, sent back as it is, changes nothing.
	n, err := entryNode(Script, "notify_door", shown)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(e.Node, n)
	if err != nil || !same(m, e.Node) {
		t.Fatalf("the shown config sent back: %v", err)
	}
	for _, bad := range []string{`{"alias":"x","password":"***"}`, `{"alias":"x","token":"!secret ***"}`, `{"alias":"x","k":"[REDACTED]"}`} {
		n, err := entryNode(Script, "new", []byte(bad))
		if err == nil {
			_, err = Merge(nil, n)
		}
		if err == nil {
			t.Errorf("%s accepted in a new entry", bad)
		}
	}
}

// Files the tools cannot edit safely are refused with a reason.
func TestUnusualFilesAreRefused(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		raw  string
		want string
	}{
		{Automation, "key: value\n", "not a list"},
		{Script, "- a\n", "not a mapping"},
		{Automation, "[{id: a}]\n", "flow style"},
		{Automation, "- id: a\n---\n- id: b\n", "more than one"},
		{Automation, "- id: a\n  x: [\n", "not valid YAML"},
	} {
		if _, err := Parse(c.kind, []byte(c.raw)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.raw, err, c.want)
		}
	}
	// Empty files of every kind are fine.
	for _, raw := range []string{"", "# nothing yet\n", "[]\n", "{}\n"} {
		for _, k := range []Kind{Automation, Script, Scene} {
			if raw == "[]\n" && k == Script || raw == "{}\n" && k != Script {
				continue
			}
			if _, err := Parse(k, []byte(raw)); err != nil {
				t.Errorf("%s %q: %v", k, raw, err)
			}
		}
	}
}

// Strings HA's YAML 1.1 loader would read as something else are quoted.
func TestAmbiguousStringsAreQuoted(t *testing.T) {
	for s, want := range map[string]bool{"on": true, "Off": true, "yes": true, "06:30:00": true, "1_000": true, "2024-01-01": true,
		"1700000000001": true, "": true, "null": true, "light.kitchen": false, "Morning lights": false, "mdi:sun": false} {
		if ambiguous(s) != want {
			t.Errorf("ambiguous(%q) = %v", s, !want)
		}
	}
	n, err := FromJSON([]byte(`{"a":"on","b":"!secret x","c":"two\nlines\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.Marshal(n)
	if string(out) != "a: 'on'\nb: !secret x\nc: |\n    two\n    lines\n" {
		t.Errorf("got %q", out)
	}
}
