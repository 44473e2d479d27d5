package relay

import (
	"regexp"
	"slices"
	"strings"
)

// Home Assistant names its LLM tools in two ways. Up to 2026.8 a tool is
// called by its bare name (HassTurnOn, GetLiveContext, todo_get_items, a
// script's object id). From 2026.9 every tool carries the domain of the
// integration that offers it, joined by "__" (intent__HassTurnOn,
// light__HassLightSet, homeassistant__GetLiveContext, llm__GetDateTime,
// todo__get_items, script__good_night): homeassistant/components/llm/
// __init__.py reports unprefixed tools, and each integration's llm.py
// names its own. A merged LLM API prepends the slug of each API's name
// once more (helpers/llm.py NamespacedTool: assist__intent__HassTurnOn).
//
// The relay classifies a tool by its base name, and only when the
// namespace in front of it is the core integration that offers that base
// (or none, or the Assist API's slug): a custom integration's
// evil__HassTurnOn is not Home Assistant's HassTurnOn and stays unknown.

// Kind is what a relayed tool is known to be.
type Kind int

// Kinds of tools.
const (
	// Unknown: nothing here says what the tool does; a write that needs a
	// person unless a policy rule says otherwise.
	Unknown Kind = iota
	// Read: known to change nothing.
	Read
	// Intent: an Assist intent whose targets are matched the way
	// async_match_targets matches them.
	Intent
)

// known is a tool the relay understands: its base name, the integrations
// that offer it from 2026.9 on, and the name it had before (the relay
// offers every known tool under that name, whatever HA calls it now, so
// clients, policies and HA_MCP_TOOLS keep working across the rename).
type known struct {
	kind    Kind
	owners  []string
	legacy  string
	prefixd string // base name after the owner, when it differs from legacy
}

// assistSlug is the Assist API's namespace in a merged API (slugify of
// its name "Assist").
const assistSlug = "assist"

// knownTools are the tools of Home Assistant's Assist API, by legacy name.
// Owners follow each integration's llm.py (2026.9); where the source read
// here does not show the owner (the intents 2026.9 added), every core
// integration that could offer it is accepted: a wrong guess only makes
// the tool unknown, which needs a person.
var knownTools = func() map[string]known {
	m := map[string]known{}
	add := func(kind Kind, owners []string, names ...string) {
		for _, n := range names {
			m[n] = known{kind: kind, owners: owners, legacy: n, prefixd: n}
		}
	}
	intentOwner := []string{"intent"}
	add(Read, []string{"homeassistant"}, "GetLiveContext")
	add(Read, []string{"llm"}, "GetDateTime")
	add(Read, []string{"homeassistant", "llm", "intent"}, "GetCurrentLocation")
	add(Read, []string{"intent"}, "HassGetState", "HassGetCurrentDate", "HassGetCurrentTime", "HassTimerStatus")
	add(Read, []string{"weather"}, "HassGetWeather")
	add(Read, []string{"climate"}, "HassGetTemperature", "HassClimateGetTemperature")
	m["calendar_get_events"] = known{kind: Read, owners: []string{"calendar"}, legacy: "calendar_get_events", prefixd: "get_events"}
	m["todo_get_items"] = known{kind: Read, owners: []string{"todo"}, legacy: "todo_get_items", prefixd: "get_items"}

	add(Intent, intentOwner, "HassTurnOn", "HassTurnOff", "HassToggle", "HassSetPosition", "HassStopMoving",
		"HassNevermind", "HassRespond", "HassCancelAllTimers", "HassStartTimer", "HassCancelTimer",
		"HassIncreaseTimer", "HassDecreaseTimer", "HassPauseTimer", "HassUnpauseTimer")
	add(Intent, []string{"light"}, "HassLightSet")
	add(Intent, []string{"climate"}, "HassClimateSetTemperature", "HassClimateSetMode")
	add(Intent, []string{"media_player"}, "HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPrevious",
		"HassSetVolume", "HassSetVolumeRelative", "HassMediaPlayerMute", "HassMediaPlayerUnmute", "HassMediaSearchAndPlay")
	add(Intent, []string{"fan"}, "HassFanSetSpeed")
	add(Intent, []string{"humidifier"}, "HassHumidifierSetpoint", "HassHumidifierMode")
	add(Intent, []string{"vacuum"}, "HassVacuumStart", "HassVacuumReturnToBase")
	add(Intent, []string{"lawn_mower"}, "HassLawnMowerStartMowing", "HassLawnMowerDock")
	add(Intent, []string{"todo"}, "HassListAddItem", "HassListCompleteItem")
	add(Intent, []string{"shopping_list", "todo"}, "HassShoppingListAddItem")
	add(Intent, []string{"assist_satellite"}, "HassBroadcast")
	add(Intent, []string{"cover"}, "HassOpenCover", "HassCloseCover")
	add(Intent, []string{"intent", "lock"}, "HassLock", "HassUnlock")
	add(Intent, []string{"intent", "cover", "valve"}, "HassOpen", "HassClose")
	add(Intent, []string{"intent", "button", "input_button"}, "HassPress")
	return m
}()

// byPrefixed finds a known tool by its base name after the owner.
var byPrefixed = func() map[string]known {
	m := map[string]known{}
	for _, k := range knownTools {
		m[k.prefixd] = k
	}
	return m
}()

// scriptKey is a script's object id as a tool name (HA puts "_" in front
// of one that starts with a digit).
var scriptKey = regexp.MustCompile(`^[a-z0-9_]{1,60}$`)

// Name is an upstream tool name taken apart.
type Name struct {
	// Upstream is the name Home Assistant lists and is called with.
	Upstream string
	// Kind is what the tool is known to be.
	Kind Kind
	// Base is the known tool's legacy name (HassTurnOn, GetLiveContext,
	// todo_get_items); "" when unknown.
	Base string
	// Scripts are the object ids of the scripts this tool may run, if it is
	// a script's tool (to be confirmed against HA's states): a name such as
	// script__x is x's tool from 2026.9, or the tool of a script whose
	// object id is script__x before, so both count.
	Scripts []string
}

// ParseName classifies an upstream tool name.
func ParseName(upstream string) Name {
	n := Name{Upstream: upstream}
	segs := strings.Split(upstream, "__")
	// A merged API's Assist slug comes first.
	rest := segs
	if len(rest) > 1 && rest[0] == assistSlug {
		rest = rest[1:]
	}
	switch len(rest) {
	case 1:
		if k, ok := knownTools[rest[0]]; ok {
			n.Kind, n.Base = k.kind, k.legacy
			return n
		}
	case 2:
		if k, ok := byPrefixed[rest[1]]; ok && slices.Contains(k.owners, rest[0]) {
			n.Kind, n.Base = k.kind, k.legacy
			return n
		}
	}
	n.Scripts = scriptsOf(segs)
	return n
}

// scriptsOf are the script keys a tool name may stand for, most specific
// first: the name without an Assist slug and a script__ namespace, then
// with them kept (a script's object id may itself contain "__").
func scriptsOf(segs []string) []string {
	var out []string
	add := func(parts []string) {
		key := strings.Join(parts, "__")
		if len(parts) > 0 && scriptKey.MatchString(key) && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	rest := segs
	if len(rest) > 1 && rest[0] == assistSlug {
		if len(rest) > 2 && rest[1] == "script" {
			add(rest[2:])
		}
		add(rest[1:])
	}
	if len(rest) > 1 && rest[0] == "script" {
		add(rest[1:])
	}
	add(rest)
	return out
}

// ScriptEntity is the entity id of the script a script tool runs: HA puts
// "_" in front of an object id that starts with a digit.
func ScriptEntity(key string) []string {
	out := []string{"script." + key}
	if len(key) > 1 && key[0] == '_' && key[1] >= '0' && key[1] <= '9' {
		out = append(out, "script."+key[1:])
	}
	return out
}

// Offered is the name the relay offers a tool under: ha_ and its legacy
// name for a known tool or a script, so a Home Assistant upgrade renames
// nothing here; ha_ and the upstream name otherwise (a HACS tool already
// starting with ha_ keeps its name).
func (n Name) Offered() string {
	switch {
	case n.Base != "":
		return "ha_" + n.Base
	case strings.HasPrefix(n.Upstream, "ha_"):
		return n.Upstream
	case len(n.Scripts) > 0:
		return "ha_" + n.Scripts[0]
	}
	return "ha_" + n.Upstream
}
