package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/unraid/apischema"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// Every read against the demo Unraid playing each API release it knows,
// with bad arguments refused before any request, and no key in any answer.
// An older release's read still answers and names what that release lacks
// with the release that brought it (null in the answer, never a made-up
// false or zero); a read that cannot do without a field says which.
func TestReads(t *testing.T) {
	for _, release := range apischema.Releases {
		t.Run(release, func(t *testing.T) {
			h := newHarness(t, viewerKey, fakeunraid.Options{Release: release}, 0)
			svc := toolkittest.Start(t, "unraid", h.svc.Tools())
			svc.RunReads(t, readCases(h, release), viewerKey, adminKey)
		})
	}
}

func readCases(h *harness, release string) []toolkittest.ReadCase {
	calls := func() int { return len(h.fake.Calls()) }
	var before int
	mark := func() { before = calls() }
	none := func(t *testing.T, _ map[string]any) {
		if calls() != before {
			t.Errorf("a refused call reached Unraid (%d requests)", calls()-before)
		}
	}
	// has picks what an answer shows on this release: a field Unraid
	// brought in since, or what the answer says without it.
	has := func(since string, with, without []string) []string {
		if unraidapi.Older(release, since) {
			return without
		}
		return with
	}
	lacking := func(since string, fields ...string) []string {
		out := []string{`"needs_api":"` + since + `"`, "api_lacks_note"}
		for _, f := range fields {
			out = append(out, `"field":"`+f+`"`)
		}
		return out
	}
	current := func(since string) []string {
		if unraidapi.Older(release, since) {
			return nil
		}
		return []string{"api_lacks"}
	}
	cases := []toolkittest.ReadCase{
		{Tool: "unraid_system_overview", Has: []string{`"hostname":"tower"`, `"unraid":"7.2.0"`, `"api":"` + release + `"`, `"cpu_load_percent":7.4`, `"total":"32.0 GiB"`, `"state":"STARTED"`, `"uptime":"6d 3h 0m"`, `"warning":1`, `"status":"COMPLETED"`},
			HasNot: []string{"api_lacks"}},
		{Tool: "unraid_array_status", Has: append([]string{`"name":"disk2"`, `"errors":3`, `"temperature_c":47`, `"fs_used_percent"`, `"size":"7.3 TiB"`, `"status":"COMPLETED"`, `"duration":"17h 0m 30s"`},
			has("4.21.0", []string{`"spinning":true`, `"spinning":false`}, append(lacking("4.21.0", "array.parities.isSpinning", "array.disks.isSpinning", "array.caches.isSpinning"), `"spinning":null`))...),
			HasNot: current("4.21.0")},
		{Name: "spun-down disk has no temperature", Tool: "unraid_disk_list", Has: append([]string{`"smart_status":"OK"`, `"device":"/dev/sde"`, `"temperature_c":null`, `"size":"3.6 TiB"`},
			has("4.21.0", []string{`"spinning":false`}, append(lacking("4.21.0", "disks.isSpinning"), `"spinning":null`))...), HasNot: current("4.21.0")},
		{Tool: "unraid_container_list", Args: map[string]any{"state": "EXITED"}, Has: []string{`"name":"nextcloud"`, `"total":1`}, HasNot: []string{`"plex"`}},
		{Name: "container page", Tool: "unraid_container_list", Args: map[string]any{"limit": 2}, Has: []string{`"returned":2`, `"next_offset":2`, `"complete":false`, `"name":"homeassistant"`}},
		{Name: "update available", Tool: "unraid_container_list", Args: map[string]any{"name": "PLEX"},
			Has: append([]string{`"32400:32400/tcp"`}, has("4.21.0", []string{`"update_available":true`}, append(lacking("4.21.0", "docker.containers.isUpdateAvailable"), `"update_available":null`))...)},
		{Name: "logs of an unknown container", Tool: "unraid_container_logs", Args: map[string]any{"container": "nosuch"}, Code: toolerr.NotFound, Has: []string{"unraid_container_list"}},
		{Name: "logs: shell text refused by schema", Tool: "unraid_container_logs", Args: map[string]any{"container": "plex; rm -rf /"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Tool: "unraid_vm_list", Has: []string{`"name":"Windows 11"`, `"state":"SHUTOFF"`}},
		{Tool: "unraid_share_list", Has: []string{`"name":"media"`, `"used":"9.7 TiB"`, `"used_kb":10443004400`}},
		{Tool: "unraid_notification_list", Args: map[string]any{"limit": 2}, Has: []string{`"returned":2`, `"next_offset":2`, `"importance":"INFO"`, "Update available"}},
		{Name: "alerts only", Tool: "unraid_notification_list", Args: map[string]any{"importance": "ALERT"}, Has: []string{"read errors", `"complete":true`}, HasNot: []string{"Update available"}},
		{Tool: "unraid_parity_history", Has: []string{`"status":"CANCELLED"`, `"speed_mb_s":"130.6"`, `"total":3`}},
		{Tool: "unraid_log_files", Has: []string{`"name":"syslog"`, `"readable":true`, `"name":"wtmp"`, `"readable":false`}},
		{Name: "syslog tail", Tool: "unraid_log_read", Args: map[string]any{"file": "syslog", "lines": 5}, Has: []string{"READ FPDMA QUEUED", `"lines_returned":5`, `"total_lines":301`, `"start_line":297`}},
		{Name: "syslog window", Tool: "unraid_log_read", Args: map[string]any{"file": "syslog", "lines": 2, "start_line": 10}, Has: []string{`"start_line":10`, `"next_start_line":12`, "time=61239s"}},
		{Name: "a path is refused", Tool: "unraid_log_read", Args: map[string]any{"file": "../../boot/config/ident.cfg"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Name: "a file off the list is refused", Tool: "unraid_log_read", Args: map[string]any{"file": "wtmp"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Tool: "unraid_ups_status", Has: append([]string{`"battery_percent":100`, `"runtime":"42m 0s"`},
			has("4.30.0", []string{`"power_w":97.2`, `"nominal_w":540`}, append(lacking("4.30.0", "upsDevices.power.nominalPower", "upsDevices.power.currentPower"), `"power_w":null`))...),
			HasNot: current("4.30.0")},
	}
	logs := []toolkittest.ReadCase{
		{Name: "logs by name", Tool: "unraid_container_logs", Args: map[string]any{"container": "nextcloud", "lines": 3}, Has: []string{"Allowed memory size", `"returned":3`}},
		{Name: "logs by prefixed id", Tool: "unraid_container_logs", Args: map[string]any{"container": fakeunraid.DemoServerID + ":2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b", "lines": 1}, Has: []string{`"container":"sonarr"`}},
	}
	if unraidapi.Older(release, "4.30.0") {
		logs = []toolkittest.ReadCase{{Name: "logs need API 4.30.0", Tool: "unraid_container_logs", Args: map[string]any{"container": "nextcloud"},
			Code: toolerr.UpstreamUnavailable, Has: []string{"docker.logs", "API 4.30.0"}}}
	}
	network := toolkittest.ReadCase{Tool: "unraid_network", Has: []string{`"name":"br0"`, `"192.168.1.10/255.255.255.0"`, `"rx_dropped":12`, `"state":"up"`}, HasNot: []string{"api_lacks"}}
	switch {
	case unraidapi.Older(release, "4.30.0"):
		network = toolkittest.ReadCase{Name: "network needs API 4.30.0", Tool: "unraid_network", Code: toolerr.UpstreamUnavailable,
			Has: []string{"info.networkInterfaces (API 4.30.0)", "metrics.network (API 4.35.0)"}}
	case unraidapi.Older(release, "4.35.0"):
		network = toolkittest.ReadCase{Name: "network without traffic and link state", Tool: "unraid_network",
			Has: append(lacking("4.35.0", "metrics.network", "info.networkInterfaces.operstate", "info.networkInterfaces.ipv4Addresses"),
				`"name":"br0"`, `"gateway":"192.168.1.1"`, `"state":null`, `"traffic":null`, `"ipv4":null`)}
	}
	return append(append(cases, logs...), network)
}

// Unraid's refusals become clear, stable errors: a wrong key, an Unraid
// too old for a field, the throttle. No upstream text beyond a field name.
func TestUpstreamRefusalsAreExplained(t *testing.T) {
	cases := []struct {
		name  string
		key   string
		opts  fakeunraid.Options
		first int // requests before the one that fails
		code  toolerr.Code
		has   string
	}{
		{"wrong key", "not-the-key", fakeunraid.Options{}, 0, toolerr.AuthFailed, "UNRAID_API_KEY_FILE"},
		{"too old for every field", viewerKey, fakeunraid.Options{Release: "4.20.4"}, 0, toolerr.UpstreamUnavailable, "lacks everything Network reads"},
		{"throttled by Unraid", viewerKey, fakeunraid.Options{Throttle: 1}, 1, toolerr.Busy, "about 100 per 10 seconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.key, c.opts, 0)
			for range c.first {
				if _, err := h.svc.network(t.Context(), toolkit.NoArgs{}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := h.svc.network(t.Context(), toolkit.NoArgs{})
			if toolerr.CodeOf(err) != c.code || !strings.Contains(toolerr.MessageOf(err), c.has) {
				t.Fatalf("got %v, want %s containing %q", err, c.code, c.has)
			}
			if strings.Contains(err.Error(), "User not found") || strings.Contains(err.Error(), "ThrottlerException") {
				t.Errorf("upstream text passed on: %v", err)
			}
		})
	}
}

// The client-side limit keeps a burst of calls under Unraid's throttle:
// calls beyond the budget answer busy at once instead of queueing, and
// Unraid never sees more than the budget.
func TestThrottleAnswersBusyInsteadOfQueueing(t *testing.T) {
	h := newHarness(t, viewerKey, fakeunraid.Options{}, 10)
	// No waiting at all: anything beyond the burst is busy.
	h.svc.api = unraidapi.New(h.hc, unraidapi.NewLimiter(10, 0, nil, nil), nil)
	busy := 0
	for range 30 {
		_, err := h.svc.vms(t.Context(), pageArgs{})
		switch {
		case err == nil:
		case toolerr.CodeOf(err) == toolerr.Busy:
			busy++
		default:
			t.Fatal(err)
		}
	}
	sent := len(h.fake.Calls())
	if sent != 2 || busy != 28 {
		t.Fatalf("sent %d, busy %d; want the burst of 2 (10 per 10 s / 5) sent and 28 busy", sent, busy)
	}
}

// tools/list of the service with writes on stays under the 12 KB budget
// of an endpoint, and the docs' tool table matches it.
func TestCatalogFitsTheBudgetAndTheDocs(t *testing.T) {
	h := newHarness(t, viewerKey, fakeunraid.Options{}, 0)
	svc := toolkittest.Start(t, "unraid", h.svc.Tools())
	res, err := svc.Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Tools)
	if len(raw) > 12<<10 {
		t.Errorf("tools/list is %d bytes, over 12 KiB", len(raw))
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if !strings.HasPrefix(tool.Name, "unraid_") {
			t.Errorf("%s lacks the unraid_ prefix", tool.Name)
		}
	}
	if !slices.Contains(names, "unraid_system_overview") {
		t.Fatalf("tools: %v", names)
	}
	t.Logf("tools/list: %d tools, %d bytes", len(names), len(raw))
	svc.CheckDocTable(t, "../../../docs/services/unraid.md")
}

// Unraid pages the notification files first and filters the page by
// importance after (loadNotificationsFromPaths), so a short page of
// alerts is no end: pages of one importance say complete only at the end
// of all files, and walking next_offset finds the alert exactly once.
func TestNotificationsOfAnImportancePageLikeUnraid(t *testing.T) {
	h := newHarness(t, viewerKey, fakeunraid.Options{}, 0)
	svc := toolkittest.Start(t, "unraid", h.svc.Tools())
	seen := 0
	for offset := 0; ; {
		if offset > 10 {
			t.Fatal("paging does not end")
		}
		got, isErr := svc.Call(t, "unraid_notification_list", map[string]any{"importance": "ALERT", "limit": 1, "offset": offset}, "")
		if isErr {
			t.Fatalf("offset %d: %v", offset, got)
		}
		seen += strings.Count(jsonOf(got), "read errors")
		if got["complete"] == true {
			break
		}
		next, ok := got["next_offset"].(float64)
		if !ok || int(next) != offset+1 {
			t.Fatalf("page at %d: %v", offset, got)
		}
		offset = int(next)
	}
	if seen != 1 {
		t.Fatalf("the alert was seen %d times", seen)
	}
}
