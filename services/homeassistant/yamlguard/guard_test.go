package yamlguard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const haToken = "ha-long-lived-token-PLANTED-yaml-0123456789"

// secretValues must never appear in an answer: the demo's secrets.yaml
// value and inline credentials of the demo configuration.
var secretValues = []string{haToken, "demo-mqtt-password-not-for-real-use", "mqtt_password", "0123-demo-openweathermap-key", "hunter2pass", "notify_api_key", "evening_note"}

type harness struct {
	dir, backups string
	fake         *fakehass.Fake
	guard        *Guard
	svc          *toolkittest.Service
}

// newHarness seeds the demo configuration (plus scripts with credentials)
// into a directory, runs the fake HA over it and serves the YAML tools.
func newHarness(t *testing.T, prepare func(dir string)) *harness {
	t.Helper()
	h := &harness{dir: t.TempDir(), backups: filepath.Join(t.TempDir(), "backups")}
	if err := fakehass.SeedConfig(h.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "scripts.yaml"), []byte(scriptsYAML), 0o640); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(h.dir)
	}
	h.fake = fakehass.New(fakehass.DemoHome(fakehass.Options{Token: haToken, ConfigDir: h.dir}))
	srv := httptest.NewServer(h.fake.Handler())
	t.Cleanup(srv.Close)
	up, err := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: srv.URL, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer " + haToken}}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := OpenDir(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dir.Close() })
	h.guard = New(dir, hass.New(up), Backups{Dir: h.backups, Keep: 3}, true, nil)
	h.svc = toolkittest.Start(t, "homeassistant", h.guard.Tools())
	return h
}

func (h *harness) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func toJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The reads answer from the four files only, masked; nothing names a
// path, and whatever tries is refused before a file is opened.
func TestReadsAreMaskedAndConfined(t *testing.T) {
	h := newHarness(t, nil)
	h.svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "list automations", Tool: "ha_yaml_list", Args: map[string]any{"kind": "automation"},
			Has: []string{`"id":"1700000000001"`, `"alias":"Morning lights"`, `"lines":"2-15"`, `"total":2`, `"complete":true`}},
		{Name: "list scripts by text", Tool: "ha_yaml_list", Args: map[string]any{"kind": "script", "query": "EVEN"},
			Has: []string{`"id":"evening"`, `"total":1`}, HasNot: []string{"notify_door"}},
		{Name: "get a script: secret names and inline credentials masked", Tool: "ha_yaml_get", Args: map[string]any{"kind": "script", "id": "notify_door"},
			Has: []string{`"api_key":"[REDACTED]"`, `"url":"http://[REDACTED]@nas.lan/ping"`, `"fields":"!include script_fields.yaml"`, `"lines":"2-14"`}},
		{Name: "get an automation", Tool: "ha_yaml_get", Args: map[string]any{"kind": "automation", "id": "1700000000002"},
			Has: []string{`"alias":"Close garage at night"`, `"at":"23:00:00"`, `"entity_id":"cover.garage_door"`}},
		{Name: "get an unknown id", Tool: "ha_yaml_get", Args: map[string]any{"kind": "automation", "id": "nope"}, Code: toolerr.NotFound},
		{Name: "read configuration.yaml masked", Tool: "ha_yaml_read_source", Args: map[string]any{"file": "configuration"},
			Has: []string{`password: [REDACTED] ***\n`, `#     api_key: [REDACTED]\n`, "automation: !include automations.yaml", `"complete":true`}},
		{Name: "read scripts.yaml masked", Tool: "ha_yaml_read_source", Args: map[string]any{"file": "scripts"},
			Has: []string{`api_key: [REDACTED] ***\n`, "url: http://[REDACTED]@nas.lan/ping", `description: !secret ***\n`, "fields: !include script_fields.yaml"}},
		{Name: "read a window", Tool: "ha_yaml_read_source", Args: map[string]any{"file": "automations", "from_line": 2, "lines": 3},
			Has: []string{`"from_line":2`, `"to_line":4`, `"next_line":5`, `"complete":false`, "- id: '1700000000001'"}, HasNot: []string{"Managed by"}},
		{Name: "find a commented-out block", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "openweathermap", "context": 1},
			Has: []string{`"file":"configuration.yaml"`, `"line":20`, "19: # weather:", "21: #     api_key: [REDACTED]", `"total":1`}},
		{Name: "a search cannot confirm a masked value", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "hunter2"}, Has: []string{`"total":0`}},
		{Name: "a search cannot reach secrets.yaml", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "demo-mqtt"}, Has: []string{`"total":0`}},
	}, secretValues...)

	refused := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"secrets as a file", "ha_yaml_read_source", map[string]any{"file": "secrets"}},
		{"secrets.yaml as a file", "ha_yaml_read_source", map[string]any{"file": "secrets.yaml"}},
		{"traversal as a file", "ha_yaml_read_source", map[string]any{"file": "../secrets"}},
		{"absolute path as a file", "ha_yaml_find_source", map[string]any{"query": "mqtt", "file": "/config/secrets.yaml"}},
		{"a path argument", "ha_yaml_read_source", map[string]any{"file": "configuration", "path": "secrets.yaml"}},
		{"traversal as a kind", "ha_yaml_list", map[string]any{"kind": "../secrets"}},
		{"secrets.yaml as an id", "ha_yaml_get", map[string]any{"kind": "automation", "id": "secrets.yaml"}},
		{"traversal as an id", "ha_yaml_get", map[string]any{"kind": "script", "id": "../secrets"}},
		{"absolute path as an id", "ha_yaml_get", map[string]any{"kind": "scene", "id": "/config/secrets.yaml"}},
		{"secrets.yaml as a key to delete", "ha_yaml_delete", map[string]any{"kind": "script", "id": "secrets.yaml"}},
		{"traversal as a new id", "ha_yaml_create", map[string]any{"kind": "automation", "id": "../../etc/passwd", "config": map[string]any{"alias": "x"}}},
	}
	var cases []toolkittest.ReadCase
	for _, c := range refused {
		cases = append(cases, toolkittest.ReadCase{Name: c.name, Tool: c.tool, Args: c.args, Code: toolerr.InvalidArgument, HasNot: []string{"demo-mqtt"}})
	}
	before := h.fake.Requests()
	h.svc.RunReads(t, cases, secretValues...)
	if h.fake.Requests() != before {
		t.Error("a refused call reached Home Assistant")
	}
}

// plantedHookID is the webhook id of an automation with a webhook trigger:
// whoever knows it triggers the automation (here: opens the garage).
const plantedHookID = "-Planted_garage-webhook-5e1d"

// webhookAutomations adds that automation and one that posts to it.
const webhookAutomations = `- id: '1700000000020'
  alias: Open garage from the phone
  triggers:
    - trigger: webhook
      webhook_id: ` + plantedHookID + `
      allowed_methods: [POST]
      local_only: true
  actions:
    - action: cover.open_cover
      target:
        entity_id: cover.garage_door
- id: '1700000000021'
  alias: Tell the garage
  triggers:
    - trigger: time
      at: '07:00:00'
  actions:
    - action: rest_command.call
      data:
        url: https://ha.lan:8123/api/webhook/` + plantedHookID + `
`

// No webhook id of the configuration leaves: not in an entry, not in the
// raw lines, not in a search's answer (a search for it finds nothing), not
// in an edit's diff; and an entry shown masked and sent back keeps its id.
func TestWebhookIDsNeverShow(t *testing.T) {
	h := newHarness(t, func(dir string) {
		f, err := os.OpenFile(filepath.Join(dir, "automations.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(webhookAutomations); err != nil {
			t.Fatal(err)
		}
	})
	secrets := append([]string{plantedHookID, "garage-webhook"}, secretValues...)
	var shown map[string]any
	h.svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "an entry's trigger", Tool: "ha_yaml_get", Args: map[string]any{"kind": "automation", "id": "1700000000020"},
			Has:   []string{`"webhook_id":"[REDACTED]"`, `"trigger":"webhook"`, `"local_only":true`},
			Check: func(t *testing.T, got map[string]any) { shown, _ = got["config"].(map[string]any) }},
		{Name: "an entry's webhook URL", Tool: "ha_yaml_get", Args: map[string]any{"kind": "automation", "id": "1700000000021"},
			Has: []string{`/api/webhook/[REDACTED]`}},
		{Name: "the raw lines", Tool: "ha_yaml_read_source", Args: map[string]any{"file": "automations"},
			Has: []string{"webhook_id: [REDACTED]", "url: https://ha.lan:8123/api/webhook/[REDACTED]"}},
		{Name: "a search for the id finds nothing", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "garage-webhook"}, Has: []string{`"total":0`}},
		{Name: "a search for webhooks shows them masked", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "webhook"}, Has: []string{`"total":3`}},
	}, secrets...)
	if shown == nil {
		t.Fatal("ha_yaml_get showed no config")
	}

	// The entry as shown, with a new alias: the id stays in the file.
	shown["alias"] = "Open the garage from the phone"
	args := map[string]any{"kind": "automation", "id": "1700000000020", "config": shown}
	prev, isErr := h.svc.Call(t, "ha_yaml_update", args, "")
	if isErr {
		t.Fatalf("preview: %v", prev)
	}
	diff := toJSONText(prev)
	if !strings.Contains(diff, "+  alias: Open the garage from the phone") || strings.Contains(diff, `\n-      webhook_id`) || strings.Contains(diff, `\n+      webhook_id`) {
		t.Errorf("the diff should change only the alias: %s", diff)
	}
	tok := h.svc.Approve(t, "homeassistant", "ha_yaml_update", args, "tkt-hook")
	if out, isErr := h.svc.Call(t, "ha_yaml_update", args, tok); isErr {
		t.Fatalf("confirm: %v", out)
	}
	if after := h.read(t, "automations.yaml"); !strings.Contains(after, "webhook_id: "+plantedHookID+"\n") || !strings.Contains(after, "alias: Open the garage from the phone") {
		t.Errorf("the webhook id was not kept:\n%s", after)
	}
	for _, leak := range secrets {
		if strings.Contains(diff, leak) {
			t.Errorf("the preview shows %q", leak)
		}
	}
}

// A symlink in place of a file the tools use, wherever it points, a hard
// link to secrets.yaml and anything that is not a regular file are
// refused by every tool that would open it; nothing of the target shows.
func TestLinksAndOddFilesAreRefused(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(outside, []byte("- id: outside-secret-content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		file    string
	}{
		{"symlink to secrets.yaml", func(t *testing.T, dir string) {
			relink(t, dir, "automations.yaml", func(p string) error { return os.Symlink("secrets.yaml", p) })
		}, "automations"},
		{"symlink out of the directory", func(t *testing.T, dir string) {
			relink(t, dir, "automations.yaml", func(p string) error { return os.Symlink(outside, p) })
		}, "automations"},
		{"symlink to a file that is fine", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "scenes.yaml"), filepath.Join(dir, "real-scenes.yaml")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real-scenes.yaml", filepath.Join(dir, "scenes.yaml")); err != nil {
				t.Fatal(err)
			}
		}, "scenes"},
		{"hard link to secrets.yaml", func(t *testing.T, dir string) {
			relink(t, dir, "automations.yaml", func(p string) error { return os.Link(filepath.Join(dir, "secrets.yaml"), p) })
		}, "automations"},
		{"a directory", func(t *testing.T, dir string) {
			relink(t, dir, "automations.yaml", func(p string) error { return os.Mkdir(p, 0o700) })
		}, "automations"},
		{"a FIFO", func(t *testing.T, dir string) {
			relink(t, dir, "automations.yaml", func(p string) error { return syscall.Mkfifo(p, 0o600) })
		}, "automations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(dir string) { c.prepare(t, dir) })
			kind := strings.TrimSuffix(c.file, "s")
			hasNot := []string{"outside-secret-content", "demo-mqtt"}
			h.svc.RunReads(t, []toolkittest.ReadCase{
				{Name: "read_source", Tool: "ha_yaml_read_source", Args: map[string]any{"file": c.file}, Code: toolerr.Forbidden, HasNot: hasNot},
				{Name: "find_source", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "id", "file": c.file}, Code: toolerr.Forbidden, HasNot: hasNot},
				{Name: "list", Tool: "ha_yaml_list", Args: map[string]any{"kind": kind}, Code: toolerr.Forbidden, HasNot: hasNot},
				{Name: "create", Tool: "ha_yaml_create", Args: map[string]any{"kind": kind, "id": "x1", "config": map[string]any{"name": "x"}}, Code: toolerr.Forbidden, HasNot: hasNot},
				{Name: "search of every file skips it", Tool: "ha_yaml_find_source", Args: map[string]any{"query": "outside-secret"},
					Has: []string{`"total":0`, `"skipped"`}, HasNot: hasNot},
			}, secretValues...)
		})
	}
}

func relink(t *testing.T, dir, name string, make func(string) error) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

var updateArgs = map[string]any{"kind": "automation", "id": "1700000000002", "config": map[string]any{
	"alias":   "Close the garage at night",
	"trigger": []any{map[string]any{"platform": "time", "at": "23:30:00"}},
	"action":  []any{map[string]any{"service": "cover.close_cover", "target": map[string]any{"entity_id": "cover.garage_door"}}},
	"mode":    "single",
}}

// The happy path: the preview shows the diff and changes nothing; the
// confirm backs up, writes, checks, reloads; everything outside the entry
// is byte for byte what it was, comments and tags included.
func TestChangeIsCheckedAndReloaded(t *testing.T) {
	h := newHarness(t, nil)
	before := h.read(t, "automations.yaml")
	prev, isErr := h.svc.Call(t, "ha_yaml_update", updateArgs, "")
	if isErr {
		t.Fatalf("preview: %v", prev)
	}
	p, _ := prev["preview"].(map[string]any)
	diff, _ := p["diff"].(string)
	for _, want := range []string{"--- a/automations.yaml", "+++ b/automations.yaml", "-  alias: Close garage at night", "+  alias: Close the garage at night", "-      at: '23:00:00'", "+      at: '23:30:00'"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if h.read(t, "automations.yaml") != before || len(h.fake.Calls()) != 0 {
		t.Fatal("the preview changed something")
	}
	tok := h.svc.Approve(t, "homeassistant", "ha_yaml_update", updateArgs, "tkt-1")
	out, isErr := h.svc.Call(t, "ha_yaml_update", updateArgs, tok)
	res, _ := out["result"].(map[string]any)
	if isErr || res["status"] != "applied" || res["reloaded"] != "automation.reload" || res["restart_required"] != false {
		t.Fatalf("confirm: %v", out)
	}
	after := h.read(t, "automations.yaml")
	head := before[:strings.Index(before, "- id: '1700000000002'")]
	if !strings.HasPrefix(after, head) {
		t.Errorf("the first automation or the head comment changed:\n%s", after)
	}
	for _, want := range []string{"    # Garage door: never leave it open overnight.\n", "alias: Close the garage at night\n", "at: '23:30:00'\n"} {
		if !strings.Contains(after, want) {
			t.Errorf("the file lacks %q:\n%s", want, after)
		}
	}
	if calls := h.fake.Calls(); len(calls) != 1 || calls[0].Domain != "automation" || calls[0].Service != "reload" {
		t.Errorf("service calls %v", calls)
	}
	backup, err := os.ReadFile(filepath.Join(h.backups, res["backup"].(string)))
	if err != nil || string(backup) != before {
		t.Errorf("backup %v: %q", err, backup)
	}
	if fi, _ := os.Stat(filepath.Join(h.dir, "automations.yaml")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if res, isErr := h.svc.Call(t, "ha_yaml_update", updateArgs, tok); !isErr {
		t.Errorf("replay: %v", res)
	}
	// The same configuration again changes nothing and gets no ticket.
	if res, isErr := h.svc.Call(t, "ha_yaml_update", updateArgs, ""); !isErr || !strings.Contains(toJSONText(res), "nothing to change") {
		t.Errorf("no-op update: %v", res)
	}
}

// A failed configuration check, a check that cannot run and a failed
// reload each put the file back byte for byte, and the answer says what
// failed. A configuration that is invalid before the change writes nothing.
func TestFailuresRestoreTheFile(t *testing.T) {
	del := map[string]any{"kind": "script", "id": "evening"}
	cases := []struct {
		name     string
		tool     string
		args     map[string]any
		file     string
		break_   func(h *harness)
		code     toolerr.Code
		has      []string
		reloads  int
		backedUp bool
	}{
		{"check fails", "ha_yaml_update", updateArgs, "automations.yaml", func(h *harness) {
			h.fake.FailCheckIfContains("23:30:00", "Invalid config for 'automation': bad trigger")
		},
			toolerr.InvalidArgument, []string{"configuration check failed: Invalid config for 'automation': bad trigger", "restored byte-identically"}, 0, true},
		{"reload fails", "ha_yaml_delete", del, "scripts.yaml", func(h *harness) { h.fake.FailReload("script", true) },
			toolerr.UpstreamUnavailable, []string{"script.reload failed", "restored byte-identically", "reloading the restored file failed as well"}, 2, true},
		{"invalid before the change", "ha_yaml_delete", del, "scripts.yaml", nil,
			toolerr.InvalidArgument, []string{"invalid before this change", "nothing was written"}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			path := filepath.Join(h.dir, c.file)
			if err := os.Chmod(path, 0o604); err != nil {
				t.Fatal(err)
			}
			before := h.read(t, c.file)
			tok := h.svc.Approve(t, "homeassistant", c.tool, c.args, "tkt-"+c.name)
			if c.break_ != nil {
				c.break_(h)
			} else {
				h.fake.FailCheck("Integration error: broken before")
			}
			res, isErr := h.svc.Call(t, c.tool, c.args, tok)
			text := toJSONText(res)
			if !isErr || !strings.Contains(text, `"code":"`+string(c.code)+`"`) {
				t.Fatalf("confirm: %s", text)
			}
			for _, w := range c.has {
				if !strings.Contains(text, w) {
					t.Errorf("answer lacks %q: %s", w, text)
				}
			}
			if got := h.read(t, c.file); got != before {
				t.Errorf("the file was not restored byte for byte:\n%s", got)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o604 {
				t.Errorf("mode %v after restore", fi.Mode().Perm())
			}
			if n := len(h.fake.Calls()); n != c.reloads {
				t.Errorf("%d reloads, want %d", n, c.reloads)
			}
			entries, _ := os.ReadDir(h.backups)
			if (len(entries) > 0) != c.backedUp {
				t.Errorf("%d backups", len(entries))
			}
			left, _ := filepath.Glob(filepath.Join(h.dir, ".*.tmp"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			toolkittest.NoLeaks(t, secretValues, map[string]string{"answer": text})
		})
	}
}

// A file that changes between preview and confirm is not written: the
// recomputed preview differs from the approved one, and apply itself
// re-checks the file it is about to replace.
func TestStaleFileWritesNothing(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.svc.Approve(t, "homeassistant", "ha_yaml_update", updateArgs, "tkt-stale")
	changed := h.read(t, "automations.yaml") + "# edited in the UI meanwhile\n"
	if err := os.WriteFile(filepath.Join(h.dir, "automations.yaml"), []byte(changed), 0o640); err != nil {
		t.Fatal(err)
	}
	res, isErr := h.svc.Call(t, "ha_yaml_update", updateArgs, tok)
	if !isErr || h.read(t, "automations.yaml") != changed || len(h.fake.Calls()) != 0 {
		t.Fatalf("confirm after a change: %v", res)
	}

	// Between the toolkit's recomputed preview and the write.
	var in editArgs
	raw, _ := json.Marshal(updateArgs)
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	p, err := h.guard.previewUpdate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	changed += "# and again\n"
	if err := os.WriteFile(filepath.Join(h.dir, "automations.yaml"), []byte(changed), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := h.guard.apply(t.Context(), p); toolerr.CodeOf(err) != toolerr.Forbidden || !strings.Contains(err.Error(), "changed since the preview") {
		t.Fatalf("apply of a stale preview: %v", err)
	}
	if h.read(t, "automations.yaml") != changed {
		t.Fatal("a stale preview was written")
	}
	if entries, _ := os.ReadDir(h.backups); len(entries) != 0 {
		t.Errorf("backups of a refused change: %d", len(entries))
	}
}

// Backups beyond Keep are pruned, oldest first.
func TestBackupsArePruned(t *testing.T) {
	h := newHarness(t, nil)
	for i, alias := range []string{"a", "b", "c", "d", "e"} {
		args := map[string]any{"kind": "scene", "id": "1700000000010", "config": map[string]any{"name": alias, "entities": map[string]any{"light.living_room_lamp": map[string]any{"state": "on"}}}}
		tok := h.svc.Approve(t, "homeassistant", "ha_yaml_update", args, "tkt-"+alias)
		if res, isErr := h.svc.Call(t, "ha_yaml_update", args, tok); isErr {
			t.Fatalf("change %d: %v", i, res)
		}
	}
	entries, _ := os.ReadDir(h.backups)
	if len(entries) != 3 {
		t.Fatalf("%d backups, want 3", len(entries))
	}
	b, _ := os.ReadFile(filepath.Join(h.backups, entries[2].Name()))
	if !strings.Contains(string(b), "name: d") {
		t.Errorf("newest backup holds %s", b)
	}
}

// Writes exist only with HA_YAML_WRITE.
func TestWritesNeedTheirSwitch(t *testing.T) {
	dir, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	var names []string
	for _, tl := range New(dir, nil, Backups{}, false, nil).Tools() {
		names = append(names, tl.Name)
		if tl.IsWrite() {
			t.Errorf("write tool %s without HA_YAML_WRITE", tl.Name)
		}
	}
	if len(names) != 4 {
		t.Errorf("tools %v", names)
	}
}
