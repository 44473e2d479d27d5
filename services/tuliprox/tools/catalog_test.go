package tools_test

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// seedTool is one row of the seed's tool catalog (§4, §4.1, §4.2): the
// arguments, which of them are required, and the enums it names.
type seedTool struct {
	args     []string
	required []string
	enums    map[string][]string
}

var seedCatalog = map[string]seedTool{
	tools.ToolStatus:       {},
	tools.ToolStreams:      {},
	tools.ToolConfig:       {},
	tools.ToolUpdateStatus: {},
	tools.ToolHistory: {args: []string{"from", "to", "page", "page_size", "search", "search_mode", "search_field"},
		enums: map[string][]string{"page_size": {"25", "50", "100", "200"}, "search_mode": {"text", "regex"}}},
	tools.ToolHistorySummary: {args: []string{"from", "to", "provider_name", "input_name", "api_username", "item_type", "event_type"}},
	tools.ToolQoSList:        {args: []string{"limit", "stream_identity_key", "input_name", "provider_name", "item_type", "target_name"}},
	tools.ToolQoS:            {args: []string{"stream_identity_key"}, required: []string{"stream_identity_key"}},
	tools.ToolEventStats:     {},
	tools.ToolIPInfo:         {},
	tools.ToolSources:        {},
	tools.ToolItems: {args: []string{"target", "input", "cluster", "offset", "limit", "search", "search_field", "group", "fields", "epg_status"},
		required: []string{"cluster"},
		enums: map[string][]string{
			"cluster":      {"live", "video", "series"},
			"search_field": {"name", "title", "group", "epg_channel_id", "provider_id", "input_name"},
			"fields": {"virtual_id", "provider_id", "name", "title", "group", "item_type", "cluster", "epg_channel_id", "category_id",
				"channel_no", "logo", "logo_small", "parent_code", "rec", "input_name", "input_stream_id", "source_ordinal",
				"additional_properties", "epg_status"},
			"epg_status": {"missing_id", "unmatched", "matched"},
		}},
	tools.ToolEPGChannels: {args: []string{"target", "output", "offset", "limit", "search", "issue"}, required: []string{"target"},
		enums: map[string][]string{"output": {"xtream", "m3u"}, "issue": {"no_programmes", "expired", "not_current", "no_title", "unreferenced"}}},
	tools.ToolEPGChannel: {args: []string{"target", "channel_id", "output", "from", "to", "limit"}, required: []string{"target", "channel_id"},
		enums: map[string][]string{"output": {"xtream", "m3u"}}},
	tools.ToolUpdatePlaylist: {args: []string{"targets"}},
	tools.ToolUpdateGeoIP:    {},
}

func listed(t *testing.T, e *env) []mcp.Tool {
	t.Helper()
	res, err := e.service(t).Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// enumOf reads a property's enum, or its items' enum for a list, as
// strings.
func enumOf(prop any) []string {
	p, _ := prop.(map[string]any)
	e, ok := p["enum"].([]any)
	if !ok {
		items, _ := p["items"].(map[string]any)
		e, _ = items["enum"].([]any)
	}
	var out []string
	for _, v := range e {
		b, _ := json.Marshal(v)
		out = append(out, strings.Trim(string(b), `"`))
	}
	return out
}

// The 16 tools take exactly the seed's arguments, require what it
// requires and offer exactly the enums it names (the gateway adds confirm
// and ticket to the writes itself).
func TestToolsTakeTheSeedsArgumentsAndEnums(t *testing.T) {
	got := listed(t, admin(t, faketuliprox.Options{}))
	if len(got) != len(seedCatalog) {
		t.Errorf("%d tools, want the seed's %d", len(got), len(seedCatalog))
	}
	for _, tool := range got {
		want, ok := seedCatalog[tool.Name]
		if !ok {
			t.Errorf("%s is not in the seed's catalog", tool.Name)
			continue
		}
		var args []string
		for k := range tool.InputSchema.Properties {
			args = append(args, k)
		}
		sort.Strings(args)
		wantArgs := slices.Sorted(slices.Values(want.args))
		if !slices.Equal(args, wantArgs) {
			t.Errorf("%s takes %v, the seed %v", tool.Name, args, wantArgs)
		}
		req := slices.Sorted(slices.Values(tool.InputSchema.Required))
		if !slices.Equal(req, slices.Sorted(slices.Values(want.required))) {
			t.Errorf("%s requires %v, the seed %v", tool.Name, req, want.required)
		}
		for arg, enum := range want.enums {
			if e := enumOf(tool.InputSchema.Properties[arg]); !slices.Equal(slices.Sorted(slices.Values(e)), slices.Sorted(slices.Values(enum))) {
				t.Errorf("%s.%s offers %v, the seed %v", tool.Name, arg, e, enum)
			}
		}
	}
}

// The tools that show Tuliprox user names (and client IPs) say so in
// their description, and exactly those are restricted in the policy data,
// so only the groups allowed to see personal data get them.
func TestPersonalDataToolsSaySoAndArePolicyRestricted(t *testing.T) {
	raw, err := os.ReadFile("../../../policies/data/toolgate/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Tools struct {
			Restricted map[string]any `json:"restricted"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	var restricted, personal []string
	for name := range data.Tools.Restricted {
		if strings.HasPrefix(name, "tuliprox_") {
			restricted = append(restricted, name)
		}
	}
	for _, tool := range listed(t, admin(t, faketuliprox.Options{})) {
		if strings.Contains(tool.Description, "Tuliprox user name") {
			personal = append(personal, tool.Name)
		}
		if tool.Name == tools.ToolStreams || tool.Name == tools.ToolHistory {
			if !strings.Contains(tool.Description, "user names and client IP addresses") {
				t.Errorf("%s does not say it shows user names and client IPs: %q", tool.Name, tool.Description)
			}
		}
	}
	sort.Strings(restricted)
	sort.Strings(personal)
	want := []string{tools.ToolHistorySummary, tools.ToolStreams, tools.ToolHistory}
	sort.Strings(want)
	if !slices.Equal(personal, want) || !slices.Equal(restricted, want) {
		t.Fatalf("descriptions name user names for %v, the policy restricts %v; want both %v", personal, restricted, want)
	}
}

// The EPG debugging flow of the seed's §4.2 is in the service page and in
// the instructions every client gets, in the seed's order.
func TestEPGDebuggingFlowIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/services/tuliprox.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Finding EPG problems")
	section, _, _ = strings.Cut(section, "\n## ")
	instructions := admin(t, faketuliprox.Options{}).svc.Instructions()
	steps := []string{tools.ToolSources, tools.ToolItems, "unmatched", tools.ToolEPGChannels, "expired", "unreferenced", tools.ToolEPGChannel}
	for name, text := range map[string]string{"docs/services/tuliprox.md": section, "instructions": instructions} {
		if !ok {
			t.Fatal("the service page has no EPG section")
		}
		at := 0
		for _, s := range steps {
			i := strings.Index(text[at:], s)
			if i < 0 {
				t.Errorf("%s: the flow lacks %s after position %d", name, s, at)
				break
			}
			at += i + len(s)
		}
	}
}
