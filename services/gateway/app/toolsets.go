package app

import (
	"errors"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/services/gateway/catalog"
)

// DefaultToolsets split the services whose catalog is over the 12 KB an
// endpoint may cost a prompt: arr by application (/mcp/sonarr,
// /mcp/radarr, /mcp/prowlarr), ErsatzTV by what a tool works on
// (channels, playouts and schedules, collections, the library), Home
// Assistant into what its own MCP server offers (the relayed Assist tools,
// whose number and size depend on the home) and the service's own reads
// and YAML tools.
// services/catalogtest holds each to the budget and checks that together
// they offer every tool.
var DefaultToolsets = []catalog.Toolset{
	{Name: "sonarr", Service: "arr", Tools: []string{"sonarr_*"}},
	{Name: "radarr", Service: "arr", Tools: []string{"radarr_*"}},
	{Name: "prowlarr", Service: "arr", Tools: []string{"prowlarr_*"}},
	{Name: "ersatztv-channels", Service: "ersatztv", Tools: []string{
		"ersatztv_*channel*", "ersatztv_*ffmpeg*", "ersatztv_get_resolution_by_name", "ersatztv_list_sessions", "ersatztv_get_version",
	}},
	{Name: "ersatztv-playouts", Service: "ersatztv", Tools: []string{"ersatztv_*playout*", "ersatztv_*schedule*"}},
	{Name: "ersatztv-collections", Service: "ersatztv", Tools: []string{"ersatztv_*collection*"}},
	{Name: "ersatztv-library", Service: "ersatztv", Tools: []string{
		"ersatztv_*librar*", "ersatztv_list_media_sources", "ersatztv_search*", "ersatztv_get_version",
	}},
	{Name: "homeassistant-config", Service: "homeassistant", Tools: homeAssistantOwn},
	{Name: "homeassistant-assist", Service: "homeassistant", Tools: append([]string{"ha_*"}, except(homeAssistantOwn)...)},
}

// homeAssistantOwn are the homeassistant service's own tools (REST reads
// and the YAML guard); every other ha_ tool is relayed from Home
// Assistant's MCP server.
var homeAssistantOwn = []string{
	"ha_entity_*", "ha_logbook", "ha_automation_list", "ha_config_*", "ha_yaml_*",
}

func except(patterns []string) []string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = "!" + p
	}
	return out
}

// DefaultToolsetsOf returns the default toolsets of the given services.
func DefaultToolsetsOf(services []string) []catalog.Toolset {
	var out []catalog.Toolset
	for _, ts := range DefaultToolsets {
		if slices.Contains(services, ts.Service) && !slices.Contains(services, ts.Name) {
			out = append(out, ts)
		}
	}
	return out
}

// parseToolsets reads TOOLGATE_TOOLSETS,
//
//	name=service:tool,prefix_*,*pattern*;name=service:…
//
// and returns the default toolsets of the configured services with these
// added; one with a default's name replaces it.
func parseToolsets(setting string, services []string) ([]catalog.Toolset, error) {
	sets := DefaultToolsetsOf(services)
	defaults := len(sets)
	for _, item := range strings.Split(setting, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, rest, ok1 := strings.Cut(item, "=")
		service, tools, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, errors.New("must be name=service:tool,prefix_*;… (* stands for any characters)")
		}
		ts := catalog.Toolset{Name: strings.TrimSpace(name), Service: strings.TrimSpace(service)}
		for _, t := range strings.Split(tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				ts.Tools = append(ts.Tools, t)
			}
		}
		if i := slices.IndexFunc(sets, func(d catalog.Toolset) bool { return d.Name == ts.Name }); i >= 0 && i < defaults {
			sets[i] = ts // replaces a default
			continue
		}
		sets = append(sets, ts)
	}
	if err := catalog.CheckToolsets(sets, services); err != nil {
		return nil, err
	}
	return sets, nil
}
