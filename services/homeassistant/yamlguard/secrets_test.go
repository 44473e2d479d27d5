package yamlguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/homeassistant/mask/masktest"
)

// queries are what a model would search for to confirm a credential it
// cannot see: the whole value and the value less its first or last
// character.
func queries(secret string) []string {
	q := []string{secret}
	if len(secret) > 4 {
		q = append(q, secret[1:], secret[:len(secret)-1])
	}
	return q
}

// No credential of a configuration.yaml written as Home Assistant's
// documentation shows it, or as an attacker would spell it (block
// scalars, values on the next line, curl -u, an alarm panel's code,
// !env_var defaults, flow style, anchors, comments, tabs, CRLF, custom
// headers …), is shown by ha_yaml_read_source, and ha_yaml_find_source
// cannot confirm one: not the whole value, not most of it.
func TestCredentialsCannotBeReadOrFound(t *testing.T) {
	for _, f := range masktest.Fragments {
		t.Run(f.Name, func(t *testing.T) {
			h := newHarness(t, func(dir string) {
				if err := os.WriteFile(filepath.Join(dir, "configuration.yaml"), []byte(f.YAML), 0o640); err != nil {
					t.Fatal(err)
				}
			})
			cases := []toolkittest.ReadCase{{Name: "read", Tool: "ha_yaml_read_source", Args: map[string]any{"file": "configuration"}, Has: []string{`"complete":true`}}}
			for _, sec := range f.Secrets {
				for _, q := range queries(sec) {
					cases = append(cases, toolkittest.ReadCase{Name: "find " + q, Tool: "ha_yaml_find_source",
						Args: map[string]any{"query": q, "file": "configuration"}, Has: []string{`"total":0`}})
				}
			}
			h.svc.RunReads(t, cases, append(f.Secrets, secretValues...)...)
		})
	}
}

// What the answers hide by internal/redact's rules (a Bearer token in
// free text, a JWT, a proxy's user:password@) cannot be found either:
// the search runs over the lines as they are shown.
func TestRedactedTextCannotBeFound(t *testing.T) {
	const conf = `
homeassistant:
  name: Home
sensor:
  - platform: template
    note: "{{ 'Bearer Zm9vYmFyYmF6cXV4LXBsYW50ZWQ' }}"
    other: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.cGxhbnRlZC1zaWduYXR1cmU
    via: ha:Proxy-Planted-9@proxy.lan:3128
`
	h := newHarness(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "configuration.yaml"), []byte(conf), 0o640); err != nil {
			t.Fatal(err)
		}
	})
	secrets := []string{"Zm9vYmFyYmF6cXV4LXBsYW50ZWQ", "eyJzdWIiOiJwbGFudGVkIn0", "cGxhbnRlZC1zaWduYXR1cmU", "Proxy-Planted-9"}
	var cases []toolkittest.ReadCase
	for _, sec := range secrets {
		cases = append(cases, toolkittest.ReadCase{Name: "find " + sec, Tool: "ha_yaml_find_source",
			Args: map[string]any{"query": sec}, Has: []string{`"total":0`}})
	}
	cases = append(cases, toolkittest.ReadCase{Name: "the lines are still found", Tool: "ha_yaml_find_source",
		Args: map[string]any{"query": "platform: template"}, Has: []string{`"total":1`}})
	h.svc.RunReads(t, cases, append(secrets, secretValues...)...)
}

// alarmAutomation disarms with a code given three ways (an alias of an
// anchored value, directly, an !env_var default) and calls a REST command
// with a credential header under a name of its own.
const alarmAutomation = `- id: '1700000000300'
  alias: Disarm on arrival
  variables:
    shown_elsewhere: &pin 4242-anchored
  actions:
    - action: alarm_control_panel.alarm_disarm
      data:
        code: *pin
    - action: alarm_control_panel.alarm_arm_home
      data:
        code: "5813-direct"
    - action: lock.unlock
      data:
        code: !env_var LOCK_CODE 9731-env-default
    - action: rest_command.notify
      data:
        headers: {X-Auth: hdr-secret-77, Accept: application/json}
`

// ha_yaml_get shows an entry with every credential masked, however it is
// given, and the entry sent back as shown (with a new alias) keeps every
// credential in the file as it was: anchors, tags and all.
func TestEntriesShowNoCredentialAndKeepThemOnUpdate(t *testing.T) {
	h := newHarness(t, func(dir string) {
		f, err := os.OpenFile(filepath.Join(dir, "automations.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(alarmAutomation); err != nil {
			t.Fatal(err)
		}
	})
	secrets := append([]string{"4242-anchored", "5813-direct", "9731-env-default", "hdr-secret-77"}, secretValues...)
	var shown map[string]any
	h.svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "get", Tool: "ha_yaml_get", Args: map[string]any{"kind": "automation", "id": "1700000000300"},
			Has:   []string{`"!env_var LOCK_CODE ***"`, `"Accept":"application/json"`, `"alias":"Disarm on arrival"`},
			Check: func(t *testing.T, got map[string]any) { shown, _ = got["config"].(map[string]any) }},
		{Name: "list by a credential finds nothing", Tool: "ha_yaml_list", Args: map[string]any{"kind": "automation", "query": "4242"}, Has: []string{`"total":0`}},
	}, secrets...)
	if shown == nil {
		t.Fatal("ha_yaml_get showed no config")
	}
	before := h.read(t, "automations.yaml")
	shown["alias"] = "Disarm when we arrive"
	args := map[string]any{"kind": "automation", "id": "1700000000300", "config": shown}
	prev, isErr := h.svc.Call(t, "ha_yaml_update", args, "")
	if isErr {
		t.Fatalf("preview: %v", prev)
	}
	toolkittest.NoLeaks(t, secrets, map[string]string{"preview": toJSONText(prev)})
	tok := h.svc.Approve(t, "homeassistant", "ha_yaml_update", args, "tkt-alarm")
	if out, isErr := h.svc.Call(t, "ha_yaml_update", args, tok); isErr {
		t.Fatalf("confirm: %v", out)
	}
	want := strings.Replace(before, "alias: Disarm on arrival", "alias: Disarm when we arrive", 1)
	if after := h.read(t, "automations.yaml"); after != want {
		t.Errorf("the update changed more than the alias:\n%s", difflines(want, after))
	}
}

// difflines names the first line where want and got differ.
func difflines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %q\n got %q", i+1, a, b)
		}
	}
	return ""
}

// A preview's diff masks each side as a whole file yet still shows that a
// credential changed; without credentials it is the usual unified diff.
func TestDiffMasksWholeFilesAndShowsChangedCredentials(t *testing.T) {
	before := "a:\n  base: &pw Old-Pw-1\n  x: 1\n  y: 2\n  z: 3\n  w: 4\n  password: *pw\n  token: Old-Tok-2\n"
	after := "a:\n  base: &pw Old-Pw-1\n  x: 1\n  y: 2\n  z: 3\n  w: 5\n  password: *pw\n  token: New-Tok-3\n"
	diff := maskedDiff(Scripts, before, after)
	for _, leak := range []string{"Old-Pw-1", "Old-Tok-2", "New-Tok-3"} {
		if strings.Contains(diff, leak) {
			t.Errorf("the diff shows %s:\n%s", leak, diff)
		}
	}
	if !strings.Contains(diff, "-  token: ***\n+  token: ***\n") || !strings.Contains(diff, "-  w: 4\n+  w: 5\n") {
		t.Errorf("the diff hides the changes:\n%s", diff)
	}
	plainA, plainB := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\n", "a: 1\nb: 2\nc: 3\nd: 40\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10"
	want, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(plainA), B: difflib.SplitLines(plainB),
		FromFile: "a/scripts.yaml", ToFile: "b/scripts.yaml", Context: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := maskedDiff(Scripts, plainA, plainB); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
