package toolgate.authz_test

import data.toolgate.authz

# A read by an ordinary user; each test patches what it needs.
base := {
	"action": "call",
	"client": {"name": "openwebui", "groups": ["users"]},
	"user": "alice@example.org",
	"service": "homeassistant",
	"tool": "ha_states_list",
	"write": false,
	"annotations": {
		"readOnlyHint": true,
		"destructiveHint": false,
		"idempotentHint": true,
		"openWorldHint": false,
	},
	"args": {},
	"ticket": {"state": "none", "force": false},
	"time": "2026-12-02T15:00:00Z",
	"transport": "http",
}

write_annotations := {"annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true}}

# object.union merges nested objects, so a patch only names what changes.
with_patch(patch) := object.union(base, patch)

write_call(tool, patch) := object.union(object.union(base, write_annotations), object.union({"tool": tool, "write": true}, patch))

# no_id is a decision without its reason_id, which the tests of reasons
# leave to test_reason_ids.
no_id(d) := {"decision": d.decision, "reason": d.reason, "approval": d.approval, "ttl_seconds": d.ttl_seconds}

allow(reason) := {"decision": "allow", "reason": reason, "approval": "model", "ttl_seconds": 0}

deny(reason) := {"decision": "deny", "reason": reason, "approval": "model", "ttl_seconds": 0}

confirm(approval, reason) := {"decision": "confirm", "reason": reason, "approval": approval, "ttl_seconds": 600}

# --- reads --------------------------------------------------------------

test_read_allowed_for_user if {
	no_id(authz.decision) == allow("read allowed") with input as base
}

test_read_allowed_for_readonly_group if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["readonly"]}})
}

test_read_allowed_for_admin_on_admin_only_service if {
	inp := with_patch({"client": {"groups": ["admins"]}, "service": "unraid-ssh", "tool": "unraidssh_disk_usage"})
	no_id(authz.decision) == allow("read allowed") with input as inp
}

test_every_prefix_of_a_service_is_known if {
	every tool in ["sonarr_series_list", "radarr_movie_list", "prowlarr_indexer_list"] {
		no_id(authz.decision) == allow("read allowed") with input as with_patch({"service": "arr", "tool": tool})
	}
}

test_every_user_service_readable if {
	every service, tool in {
		"web": "web_search",
		"homeassistant": "ha_states_list",
		"arr": "sonarr_series_list",
		"frigate": "frigate_events_list",
		"ersatztv": "ersatztv_channels_list",
		"tuliprox": "tuliprox_status",
		"demo": "demo_echo",
	} {
		authz.decision.decision == "allow" with input as with_patch({"service": service, "tool": tool})
	}
}

# --- deny ---------------------------------------------------------------

test_unknown_service_denied if {
	no_id(authz.decision) == deny(`unknown service "toaster"`) with input as with_patch({"service": "toaster", "tool": "toaster_on"})
}

test_unknown_tool_denied if {
	no_id(authz.decision) == deny(`unknown tool "sonarr_series_list" for service "homeassistant"`) with input as with_patch({"tool": "sonarr_series_list"})
}

test_prefix_must_be_at_start if {
	authz.decision.decision == "deny" with input as with_patch({"tool": "x_ha_states_list"})
}

test_non_string_tool_denied if {
	authz.decision.decision == "deny" with input as with_patch({"tool": 42})
}

test_user_may_not_use_admin_service if {
	no_id(authz.decision) == deny(`client "openwebui" may not use service "unraid"`) with input as with_patch({"service": "unraid", "tool": "unraid_array_status"})
}

test_readonly_group_may_not_use_admin_service if {
	inp := with_patch({"client": {"groups": ["readonly"]}, "service": "unraid-ssh", "tool": "unraidssh_disk_usage"})
	authz.decision.decision == "deny" with input as inp
}

test_client_without_groups_denied if {
	authz.decision.decision == "deny" with input as with_patch({"client": {"groups": []}})
	authz.decision.decision == "deny" with input as object.remove(base, ["client"])
}

test_unknown_group_denied if {
	authz.decision.decision == "deny" with input as with_patch({"client": {"groups": ["guests"]}})
}

test_readonly_group_write_denied if {
	inp := object.union(write_call("ha_climate_set_temperature", {}), {"client": {"groups": ["readonly"]}})
	no_id(authz.decision) == deny(`group "readonly" is read-only: writes are denied`) with input as inp
}

test_readonly_group_low_risk_write_denied if {
	inp := object.union(write_call("ha_HassLightSet", {}), {"client": {"groups": ["readonly"]}})
	authz.decision.decision == "deny" with input as inp
}

test_readonly_membership_wins_over_other_groups if {
	inp := object.union(write_call("ha_climate_set_temperature", {}), {"client": {"groups": ["admins", "readonly"]}})
	authz.decision.decision == "deny" with input as inp
}

test_unknown_action_denied if {
	no_id(authz.decision) == deny("unknown action") with input as with_patch({"action": "delete"})
	authz.decision.decision == "deny" with input as object.remove(base, ["action"])
}

test_empty_input_denied if {
	authz.decision.decision == "deny" with input as {}
}

test_several_deny_reasons_joined if {
	inp := with_patch({"action": "execute", "service": "toaster"})
	no_id(authz.decision) == deny(`unknown action; unknown service "toaster"`) with input as inp
}

# permitted is the positive guard every allow and confirm needs; it must
# fail on its own wherever a deny reason exists.
test_permitted_guards_every_deny_case if {
	inputs := [
		with_patch({"action": "delete"}),
		with_patch({"service": "toaster"}),
		with_patch({"tool": "sonarr_series_list"}),
		with_patch({"client": {"groups": ["guests"]}}),
		object.union(write_call("ha_climate_set_temperature", {}), {"client": {"groups": ["readonly"]}}),
	]
	every inp in inputs {
		not authz.permitted with input as inp
	}
	authz.permitted with input as base
}

# --- confirm ------------------------------------------------------------

test_write_needs_model_confirm if {
	inp := write_call("ha_climate_set_temperature", {})
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as inp
}

test_missing_write_flag_counts_as_write if {
	inp := object.remove(base, ["write"])
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as inp
}

test_destructive_write_needs_human if {
	inp := write_call("ha_automation_delete", {"annotations": {"destructiveHint": true}})
	no_id(authz.decision) == confirm("human", "destructive write needs human approval") with input as inp
}

test_destructive_hint_makes_a_write if {
	inp := with_patch({"tool": "ha_automation_delete", "write": false, "annotations": {"destructiveHint": true}})
	no_id(authz.decision) == confirm("human", "destructive write needs human approval") with input as inp
}

test_ticket_force_needs_human if {
	inp := write_call("ha_climate_set_temperature", {"ticket": {"force": true}})
	no_id(authz.decision) == confirm("human", "forced write needs human approval") with input as inp
}

test_args_force_needs_human if {
	inp := write_call("ha_climate_set_temperature", {"args": {"force": true}})
	no_id(authz.decision) == confirm("human", "forced write needs human approval") with input as inp
}

test_force_on_a_read_changes_nothing if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"args": {"force": true}})
}

test_human_tool_by_name if {
	inp := write_call("demo_counter_reset", {"service": "demo"})
	no_id(authz.decision) == confirm("human", `tool "demo_counter_reset" needs human approval`) with input as inp
}

# ErsatzTV's deletes and playout reset need a person by name, even if a
# service forgot the destructive hint; its other writes need the model's
# confirmation only.
test_ersatztv_deletes_and_reset_need_human if {
	every tool in ["ersatztv_delete_channel", "ersatztv_delete_collection", "ersatztv_delete_playout", "ersatztv_delete_schedule", "ersatztv_delete_smart_collection", "ersatztv_remove_collection_item", "ersatztv_reset_channel_playout"] {
		no_id(authz.decision) == confirm("human", sprintf("tool %q needs human approval", [tool])) with input as write_call(tool, {"service": "ersatztv"})
	}
	every tool in ["ersatztv_update_channel", "ersatztv_add_collection_items", "ersatztv_create_playout", "ersatztv_scan_library"] {
		no_id(authz.decision) == confirm("model", "write needs confirmation") with input as write_call(tool, {"service": "ersatztv"})
	}
}

test_human_tool_by_prefix if {
	no_id(authz.decision) == confirm("human", `tool "ha_HassUnlock" needs human approval`) with input as write_call("ha_HassUnlock", {})
	inp := write_call("unraid_array_stop", {"service": "unraid", "client": {"groups": ["admins"]}})
	no_id(authz.decision) == confirm("human", `tool "unraid_array_stop" needs human approval`) with input as inp
}

test_human_list_applies_to_writes_only if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"tool": "ha_lock_status"})
	inp := with_patch({"client": {"groups": ["admins"]}, "service": "unraid", "tool": "unraid_array_status"})
	no_id(authz.decision) == allow("read allowed") with input as inp
}

test_human_reasons_joined if {
	inp := write_call("ha_HassUnlock", {"annotations": {"destructiveHint": true}, "ticket": {"force": true}})
	r := "destructive write needs human approval; forced write needs human approval; tool \"ha_HassUnlock\" needs human approval"
	no_id(authz.decision) == confirm("human", r) with input as inp
}

# --- low risk -----------------------------------------------------------

test_low_risk_write_allowed if {
	every tool in ["ha_HassTurnOn", "ha_HassLightSet"] {
		no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as write_call(tool, {})
	}
	inp := write_call("demo_note_touch", {"service": "demo"})
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as inp
}

# --- preview facts ------------------------------------------------------

# After a write's preview the gateway asks again with its facts.
facts_call(tool, facts) := object.union(write_call(tool, {}), {"preview": {"facts": facts}})

ha_facts(domains, classes) := {"kind": "intent", "domains": domains, "device_classes": classes, "unresolved": false, "opaque": false}

test_facts_lock_needs_a_person if {
	every tool in ["ha_HassTurnOn", "ha_HassTurnOff", "ha_HassSetPosition", "ha_good_night"] {
		no_id(authz.decision) == confirm("human", "the write would operate a lock, which needs a person's approval") with input as facts_call(tool, ha_facts(["lock"], []))
	}
	authz.decision.approval == "human" with input as facts_call("ha_HassTurnOn", ha_facts(["alarm_control_panel", "light"], []))
}

test_facts_garage_gate_and_door_covers_need_a_person if {
	every class in ["cover.garage", "cover.gate", "cover.door"] {
		r := sprintf("the write would operate a %s, which needs a person's approval", [class])
		no_id(authz.decision) == confirm("human", r) with input as facts_call("ha_HassTurnOn", ha_facts(["cover"], [class]))
	}

	# Blinds are covers too, but not a way into the house.
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_HassTurnOn", ha_facts(["cover"], ["cover.blind"]))
}

# A camera (turned off, it records nothing), a siren, a valve (a water
# main) and a door cover need a person as a lock does, whichever write
# reaches them: the low-risk intents, a relayed service call, a script.
test_facts_cameras_sirens_valves_and_doors_need_a_person if {
	cases := [
		{"tool": "ha_HassTurnOff", "facts": ha_facts(["camera"], []), "reason": "the write would operate a camera, which needs a person's approval"},
		{"tool": "ha_HassTurnOn", "facts": ha_facts(["camera", "light"], []), "reason": "the write would operate a camera, which needs a person's approval"},
		{"tool": "ha_call_service", "facts": object.union(ha_facts(["camera"], []), {"kind": "service"}), "reason": "the write would operate a camera, which needs a person's approval"},
		{"tool": "ha_HassTurnOn", "facts": ha_facts(["siren"], []), "reason": "the write would operate a siren, which needs a person's approval"},
		{"tool": "ha_HassTurnOff", "facts": ha_facts(["valve"], ["valve.water"]), "reason": "the write would operate a valve, which needs a person's approval"},
		{"tool": "ha_HassSetPosition", "facts": ha_facts(["valve"], []), "reason": "the write would operate a valve, which needs a person's approval"},
		{"tool": "ha_HassTurnOn", "facts": ha_facts(["cover"], ["cover.door"]), "reason": "the write would operate a cover.door, which needs a person's approval"},
		{"tool": "ha_good_night", "facts": {"kind": "script", "domains": ["camera", "script"], "device_classes": [], "unresolved": false, "opaque": true}, "reason": "the write would operate a camera, which needs a person's approval"},
	]
	every c in cases {
		no_id(authz.decision) == confirm("human", c.reason) with input as facts_call(c.tool, c.facts)
	}

	# Several of them: one reason each.
	r := "the write would operate a camera, which needs a person's approval; the write would operate a cover.door, which needs a person's approval; the write would operate a siren, which needs a person's approval"
	no_id(authz.decision) == confirm("human", r) with input as facts_call("ha_HassTurnOff", ha_facts(["camera", "cover", "siren"], ["cover.door"]))

	# Other covers are not a way in.
	every class in ["cover.blind", "cover.window", "cover.shade"] {
		no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_HassTurnOn", ha_facts(["cover"], [class]))
	}
}

test_facts_unresolved_needs_a_person if {
	f := object.union(ha_facts([], []), {"unresolved": true})
	no_id(authz.decision) == confirm("human", "the preview could not tell everything the write would touch") with input as facts_call("ha_HassTurnOn", f)
}

# A tool the service does not know (Home Assistant: a tool its MCP server
# offers under a name toolgate does not know) needs a person until an
# operator lists it as reviewed; what its facts show still counts then.
test_facts_unknown_tool_needs_a_person_until_reviewed if {
	unknown := {"kind": "unknown", "domains": [], "device_classes": [], "unresolved": false, "opaque": true}
	no_id(authz.decision) == confirm("human", `the service does not know what "ha_evil__HassTurnOn" does`) with input as facts_call("ha_evil__HassTurnOn", unknown)

	# Listed in reviewed_tools: at least the user's confirmation.
	reviewed := {"toolgate": {"preview_facts": {"services": {"homeassistant": object.union(
		data.data.toolgate.preview_facts.services.homeassistant,
		{"reviewed_tools": ["ha_fancy__do_thing"]},
	)}}}}
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_fancy__do_thing", unknown)
		with data.data as object.union(data.data, reviewed)
	locked := object.union(unknown, {"domains": ["lock"]})
	authz.decision.approval == "human" with input as facts_call("ha_fancy__do_thing", locked)
		with data.data as object.union(data.data, reviewed)

	# Known kinds are unaffected.
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as facts_call("ha_HassTurnOn", ha_facts(["light"], []))
}

test_facts_required_but_missing_needs_a_person if {
	r := `a write of "homeassistant" must report what it touches and its preview did not`
	no_id(authz.decision) == confirm("human", r) with input as facts_call("ha_HassTurnOn", null)
	no_id(authz.decision) == confirm("human", r) with input as object.union(write_call("ha_HassTurnOn", {}), {"preview": {}})

	# Services without a facts contract are unaffected.
	inp := object.union(write_call("demo_note_touch", {"service": "demo"}), {"preview": {"facts": null}})
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as inp
}

test_facts_keep_lights_and_media_low_risk if {
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as facts_call("ha_HassTurnOff", ha_facts(["light"], []))
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as facts_call("ha_HassMediaPause", ha_facts(["media_player"], ["media_player.tv"]))

	# Before the preview a low-risk tool is low risk; the gateway never
	# applies on that answer alone.
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as write_call("ha_HassTurnOn", {})
}

test_facts_beyond_low_risk_need_confirmation if {
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_HassTurnOn", ha_facts(["light", "switch"], []))
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_HassTurnOn", object.union(ha_facts(["light"], []), {"opaque": true}))

	# Scripts are opaque: never without a ticket.
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as facts_call("ha_good_night", {"kind": "script", "domains": ["light", "script"], "device_classes": [], "unresolved": false, "opaque": true})
}

test_facts_never_lower_the_approval if {
	# Harmless facts leave a person's approval where another rule asks for it.
	light := ha_facts(["light"], [])
	authz.decision.approval == "human" with input as facts_call("ha_HassUnlock", light)
	inp := object.union(facts_call("ha_HassTurnOn", light), {"annotations": {"destructiveHint": true}})
	authz.decision.approval == "human" with input as inp
	inp2 := object.union(facts_call("ha_HassTurnOn", light), {"ticket": {"force": true}})
	authz.decision.approval == "human" with input as inp2
	inp3 := object.union(facts_call("ha_HassTurnOn", light), {"client": {"groups": ["readonly"]}})
	authz.decision.decision == "deny" with input as inp3
}

test_facts_do_not_touch_reads if {
	inp := object.union(base, {"preview": {"facts": ha_facts(["lock"], ["cover.garage"])}})
	no_id(authz.decision) == allow("read allowed") with input as inp
}

test_facts_shape_is_not_trusted if {
	# Odd shapes (a service bug) never allow more.
	authz.decision.approval == "human" with input as facts_call("ha_HassTurnOn", {"domains": "lock", "unresolved": true})
	authz.decision.decision == "confirm" with input as facts_call("ha_HassTurnOn", {"domains": [3], "opaque": false})
}

# --- precedence ---------------------------------------------------------

test_deny_beats_human if {
	inp := object.union(write_call("ha_HassUnlock", {"annotations": {"destructiveHint": true}}), {"client": {"groups": ["readonly"]}})
	authz.decision.decision == "deny" with input as inp
	inp2 := write_call("unraid_array_stop", {"service": "unraid", "ticket": {"force": true}})
	no_id(authz.decision) == deny(`client "openwebui" may not use service "unraid"`) with input as inp2
}

test_human_beats_low_risk_when_forced if {
	inp := write_call("ha_HassLightSet", {"ticket": {"force": true}})
	no_id(authz.decision) == confirm("human", "forced write needs human approval") with input as inp
	inp2 := write_call("ha_HassLightSet", {"args": {"force": true}})
	authz.decision.approval == "human" with input as inp2
}

test_human_beats_low_risk_when_destructive if {
	inp := write_call("ha_HassTurnOff", {"annotations": {"destructiveHint": true}})
	no_id(authz.decision) == confirm("human", "destructive write needs human approval") with input as inp
}

test_human_list_beats_low_risk_list if {
	authz.decision.approval == "human" with input as write_call("ha_HassUnlock", {})
		with data.data.toolgate.tools.low_risk as ["ha_HassUnlock"]
}

test_model_confirm_beats_read_allow if {
	authz.decision.decision == "confirm" with input as write_call("ha_scene_activate", {})
	authz.decision.decision == "allow" with input as with_patch({"tool": "ha_scene_activate"})
}

# --- tools/list ---------------------------------------------------------

test_list_action if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"action": "list"})
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as write_call("ha_climate_set_temperature", {"action": "list"})
	authz.decision.decision == "deny" with input as with_patch({"action": "list", "service": "unraid", "tool": "unraid_array_status"})
	inp := object.union(write_call("ha_climate_set_temperature", {"action": "list"}), {"client": {"groups": ["readonly"]}})
	authz.decision.decision == "deny" with input as inp
}

# --- ticket state and stable shape --------------------------------------

# Tickets are checked by the gateway; the policy's answer must not change
# between the preview call and the confirming call.
test_ticket_state_does_not_change_decision if {
	every tool in ["ha_climate_set_temperature", "ha_HassUnlock", "ha_HassLightSet", "ha_states_list"] {
		d1 := authz.decision with input as write_call(tool, {"ticket": {"state": "none"}})
		d2 := authz.decision with input as write_call(tool, {"ticket": {"state": "valid"}})
		d1 == d2
	}
}

test_every_outcome_has_stable_shape_and_reason if {
	inputs := [
		base,
		{},
		with_patch({"service": "toaster"}),
		write_call("ha_climate_set_temperature", {}),
		write_call("ha_HassUnlock", {}),
		write_call("ha_HassLightSet", {}),
	]
	every inp in inputs {
		d := authz.decision with input as inp
		object.keys(d) == {"decision", "reason", "reason_id", "approval", "ttl_seconds"}
		d.decision in {"allow", "deny", "confirm"}
		d.approval in {"model", "human"}
		d.reason != ""
		regex.match(`^[a-z][a-z0-9_]*(:[a-z0-9_.-]+)?$`, d.reason_id)
	}
}

# --- reason ids -----------------------------------------------------------

# Every rule's stable id, one case each; the words of reason may change,
# these may not (the audit trail and the operator console group by them).
test_reason_ids if {
	cases := [
		{"id": "read", "in": base},
		{"id": "low_risk_write", "in": write_call("ha_HassTurnOn", {})},
		{"id": "needs_confirmation", "in": write_call("ha_climate_set_temperature", {})},
		{"id": "needs_person:destructive", "in": write_call("ha_climate_set_temperature", {"annotations": {"destructiveHint": true}})},
		{"id": "needs_person:force", "in": write_call("ha_climate_set_temperature", {"args": {"force": true}})},
		{"id": "needs_person:tool", "in": write_call("ha_HassUnlock", {})},
		{"id": "needs_person:tool", "in": write_call("ha_yaml_update", {})},
		{"id": "needs_person:role", "in": object.union(write_call("ha_climate_set_temperature", {}), {"client": {"groups": ["admins"]}, "user_role": "approval_needed"})},
		{"id": "needs_person:argument", "in": unraid_write("unraid_container_control", {"action": "stop"})},
		{"id": "needs_person:lock", "in": facts_call("ha_HassTurnOn", ha_facts(["lock", "light"], []))},
		{"id": "needs_person:cover.garage", "in": facts_call("ha_HassTurnOn", ha_facts(["cover"], ["cover.garage"]))},
		{"id": "needs_person:container_kill", "in": unraid_previewed("unraid_container_control", {"action": "start"}, {"effects": ["container_kill"]})},
		{"id": "needs_person:unresolved", "in": facts_call("ha_HassTurnOn", {"domains": [], "unresolved": true})},
		{"id": "needs_person:unknown_effect", "in": facts_call("ha_fancy__do_thing", {"kind": "unknown", "domains": []})},
		{"id": "needs_person:no_facts", "in": object.union(write_call("ha_climate_set_temperature", {}), {"preview": {"facts": null}})},
		{"id": "unknown_action", "in": with_patch({"action": "delete"})},
		{"id": "unknown_service", "in": with_patch({"service": "toaster"})},
		{"id": "unknown_tool", "in": with_patch({"tool": "sonarr_series_list"})},
		{"id": "service_not_allowed", "in": with_patch({"client": {"groups": ["nas"]}})},
		{"id": "read_only_group", "in": write_call("ha_HassTurnOn", {"client": {"groups": ["readonly"]}})},
		{"id": "unknown_role", "in": as_role("janitor", {})},
		{"id": "role_service_not_allowed", "in": as_role("user", unraid_read)},
		{"id": "read_only_role", "in": object.union(write_call("ha_HassTurnOn", {}), {"client": {"groups": ["admins"]}, "user_role": "pending"})},
		{"id": "restricted_tool", "in": tuliprox_read("tuliprox_list_active_streams", {})},
		{"id": "restricted_tool_role", "in": tuliprox_read("tuliprox_list_active_streams", {"client": {"groups": ["admins"]}, "user_role": "user"})},
	]
	every c in cases {
		d := authz.decision with input as c["in"]
			with data.data.toolgate.user_roles.approval_needed as {"services": ["*"], "read_only": false, "human_approval": true}
		d.reason_id == c.id
	}
}

# Several rules of one outcome: reason names them all, reason_id the
# first id in sort order, whatever order the rules matched in.
test_reason_id_of_several_rules if {
	d := authz.decision with input as facts_call("ha_HassUnlock", ha_facts(["lock"], []))
	d.reason_id == "needs_person:lock"
	contains(d.reason, "lock")
	contains(d.reason, `tool "ha_HassUnlock" needs human approval`)

	e := authz.decision with input as write_call("ha_HassTurnOn", {"client": {"groups": ["readonly"]}, "user_role": "pending"})
	e.reason_id == "read_only_group"
	contains(e.reason, "read-only")
}

# --- data-driven rules --------------------------------------------------

test_ttl_from_data if {
	d := authz.decision with input as write_call("ha_climate_set_temperature", {})
		with data.data.toolgate.tickets.ttl_seconds as 120
	d.ttl_seconds == 120
}

test_invalid_ttl_falls_back_to_default if {
	d := authz.decision with input as write_call("ha_climate_set_temperature", {})
		with data.data.toolgate.tickets.ttl_seconds as -5
	d.ttl_seconds == 600
}

test_low_risk_list_from_data if {
	authz.decision.decision == "confirm" with input as write_call("ha_HassLightSet", {})
		with data.data.toolgate.tools.low_risk as []
	authz.decision.decision == "allow" with input as write_call("ha_climate_set_temperature", {})
		with data.data.toolgate.tools.low_risk as ["ha_climate_set_temperature"]
}

test_human_lists_from_data if {
	authz.decision.approval == "model" with input as write_call("ha_HassUnlock", {})
		with data.data.toolgate.tools.human_approval as []
	authz.decision.approval == "model" with input as write_call("unraid_array_stop", {"service": "unraid", "client": {"groups": ["admins"]}})
		with data.data.toolgate.tools.human_approval_prefixes as []
	authz.decision.approval == "human" with input as facts_call("ha_HassTurnOn", ha_facts(["switch"], []))
		with data.data.toolgate.preview_facts.services.homeassistant.human_domains as ["switch"]
	authz.decision.approval == "human" with input as write_call("ha_climate_set_temperature", {})
		with data.data.toolgate.tools.human_approval as ["ha_climate_set_temperature"]
}

test_group_services_from_data if {
	authz.decision.decision == "deny" with input as base
		with data.data.toolgate.groups.users.services as ["web"]
	authz.decision.decision == "allow" with input as with_patch({"service": "unraid", "tool": "unraid_array_status"})
		with data.data.toolgate.groups.users.services as ["unraid"]
}

test_read_only_flag_from_data if {
	authz.decision.decision == "deny" with input as write_call("ha_climate_set_temperature", {})
		with data.data.toolgate.groups.users.read_only as true
}

test_new_service_from_data if {
	inp := with_patch({"client": {"groups": ["admins"]}, "service": "printer", "tool": "printer_status"})
	authz.decision.decision == "deny" with input as inp
	authz.decision.decision == "allow" with input as inp
		with data.data.toolgate.services.printer as {"prefixes": ["printer_"]}
}

# The shipped data: the services and groups documented in policies/README.md.
test_shipped_data if {
	object.keys(data.data.toolgate.services) == {
		"web", "homeassistant", "arr", "unraid", "unraid-ssh",
		"frigate", "ersatztv", "tuliprox", "demo",
	}
	data.data.toolgate.groups.admins.services == ["*"]
	data.data.toolgate.groups.readonly.read_only == true
	data.data.toolgate.tickets.ttl_seconds == 600
}

# --- end-user roles (from OpenWebUI's verified user token) ----------------

# An OpenWebUI client in the admins group, used by people with different
# OpenWebUI roles.
as_role(role, patch) := object.union(with_patch({"client": {"groups": ["admins"]}, "user_role": role}), patch)

unraid_read := {"service": "unraid", "tool": "unraid_array_status"}

test_role_admin_uses_admin_service if {
	no_id(authz.decision) == allow("read allowed") with input as as_role("admin", unraid_read)
}

test_role_user_may_not_use_admin_service if {
	no_id(authz.decision) == deny(`end-user role "user" may not use service "unraid"`) with input as as_role("user", unraid_read)
}

test_role_user_reads_user_service if {
	no_id(authz.decision) == allow("read allowed") with input as as_role("user", {})
}

test_role_user_writes_like_before if {
	inp := object.union(write_call("ha_climate_set_temperature", {}), {"client": {"groups": ["admins"]}, "user_role": "user"})
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as inp
}

test_role_pending_gets_nothing if {
	no_id(authz.decision) == deny(`end-user role "pending" may not use service "homeassistant"`) with input as as_role("pending", {})
	authz.decision.decision == "deny" with input as as_role("pending", {"action": "list"})
}

test_role_unknown_denied if {
	no_id(authz.decision) == deny(`end-user role "owner" is not known`) with input as as_role("owner", {})
}

test_role_cannot_widen_client_groups if {
	inp := with_patch({"user_role": "admin", "service": "unraid", "tool": "unraid_array_status"})
	no_id(authz.decision) == deny(`client "openwebui" may not use service "unraid"`) with input as inp
}

test_role_read_only_from_data if {
	inp := object.union(write_call("ha_HassLightSet", {}), {"user_role": "user"})
	no_id(authz.decision) == deny(`end-user role "user" is read-only: writes are denied`) with input as inp
		with data.data.toolgate.user_roles.user.read_only as true
	no_id(authz.decision) == allow("read allowed") with input as object.union(base, {"user_role": "user"})
		with data.data.toolgate.user_roles.user.read_only as true
}

test_role_human_approval_from_data if {
	# Even a low-risk write then needs a person.
	inp := object.union(write_call("ha_HassLightSet", {}), {"user_role": "user"})
	no_id(authz.decision) == confirm("human", `writes by end-user role "user" need human approval`) with input as inp
		with data.data.toolgate.user_roles.user.human_approval as true
	no_id(authz.decision) == allow("low-risk write allowed without a ticket") with input as inp
}

test_no_role_means_groups_only if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["admins"]}, "user_role": ""})
	no_id(authz.decision) == allow("read allowed") with input as object.union(with_patch({"client": {"groups": ["admins"]}}), unraid_read)
}

test_shipped_roles if {
	object.keys(data.data.toolgate.user_roles) == {"admin", "user", "pending"}
	data.data.toolgate.user_roles.admin.services == ["*"]
	data.data.toolgate.user_roles.pending.services == []
}

# The outcomes are exclusive rules, not an else chain (see authz.rego): the
# last one catches what no other rule matched.
test_unmatched_input_is_denied if {
	no_id(authz.decision) == deny("no policy rule matched") with input as base
		with authz.permitted as false
}

# --- unraid (issue 13) --------------------------------------------------------

# The nas group reads Unraid and the SSH diagnostics, and nothing else.
test_nas_group_reads_unraid_only if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["nas"]}, "service": "unraid", "tool": "unraid_array_status"})
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["nas"]}, "service": "unraid-ssh", "tool": "unraidssh_df"})
	authz.decision.decision == "deny" with input as with_patch({"client": {"groups": ["nas"]}, "service": "arr", "tool": "sonarr_series_list"})
}

# A parity check (start, pause, resume, cancel) always needs a person.
test_unraid_parity_check_needs_a_person if {
	inp := write_call("unraid_parity_check", {"service": "unraid", "client": {"groups": ["nas"]}})
	no_id(authz.decision) == confirm("human", `tool "unraid_parity_check" needs human approval`) with input as inp
}

unraid_write(tool, args) := write_call(tool, {"service": "unraid", "client": {"groups": ["nas"]}, "args": args})

# Starting a container or a VM, and archiving notifications, are confirmed
# by the user's own consent. Stopping or restarting a container (the NVR,
# Home Assistant) or stopping a VM needs a person, and so does any action
# the policy does not know as harmless: a missing one, an odd one, one a
# later version of the tool might add.
test_unraid_container_and_vm_actions if {
	container := `tool "unraid_container_control" needs human approval for any action but start`
	vm := `tool "unraid_vm_control" needs human approval for any action but start`
	cases := [
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "start"}, "want": confirm("model", "write needs confirmation")},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "stop"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "restart"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "pause"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "kill"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": "START"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate", "action": ["start"]}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {"container": "frigate"}, "want": confirm("human", container)},
		{"tool": "unraid_container_control", "args": {}, "want": confirm("human", container)},
		{"tool": "unraid_vm_control", "args": {"vm": "Home Assistant", "action": "start"}, "want": confirm("model", "write needs confirmation")},
		{"tool": "unraid_vm_control", "args": {"vm": "Home Assistant", "action": "stop"}, "want": confirm("human", vm)},
		{"tool": "unraid_notification_archive", "args": {"ids": ["a"]}, "want": confirm("model", "write needs confirmation")},
	]
	every c in cases {
		no_id(authz.decision) == c.want with input as unraid_write(c.tool, c.args)
	}

	# Without arguments (tools/list asks so) the tools stay listed.
	authz.decision.decision == "confirm" with input as object.union(unraid_write("unraid_container_control", {}), {"action": "list"})

	# A forced start needs a person too; one reason each.
	r := `forced write needs human approval; tool "unraid_container_control" needs human approval for any action but start`
	no_id(authz.decision) == confirm("human", r) with input as unraid_write("unraid_container_control", {"container": "frigate", "action": "stop", "force": true})

	# Reads are not touched.
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["nas"]}, "service": "unraid", "tool": "unraid_container_list", "args": {"action": "stop"}})
}

# Leaving restarts to the model is one data change.
test_unraid_model_actions_from_data if {
	inp := unraid_write("unraid_container_control", {"container": "plex", "action": "restart"})
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as inp
		with data.data.toolgate.tools.human_approval_unless.unraid_container_control.action as ["start", "restart"]
	r := `tool "unraid_container_control" needs human approval for any action but start, restart`
	no_id(authz.decision) == confirm("human", r) with input as unraid_write("unraid_container_control", {"container": "plex", "action": "stop"})
		with data.data.toolgate.tools.human_approval_unless.unraid_container_control.action as ["start", "restart"]

	# Without the entry every action is the model's to confirm.
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as unraid_write("unraid_container_control", {"container": "plex", "action": "stop"})
		with data.data.toolgate.tools.human_approval_unless as {}
}

# issue 24: a container stop or restart ends in a kill when the container
# ignores its stop signal for 10 seconds, a VM stop in a hard power-off
# when the guest has not shut down within about 10 seconds. The preview
# says so (fact "effects"), and that needs a person even where the data
# leaves the action itself to the model; an unraid write whose preview
# reports no facts needs a person too.
unraid_previewed(tool, args, facts) := object.union(unraid_write(tool, args), {"preview": {"facts": facts}})

test_unraid_hard_stop_needs_a_person if {
	kill := "the write can kill a container that has not stopped 10 seconds after its stop signal, which needs a person's approval"
	power := "the write can power a VM off hard when its guest has not shut down within about 10 seconds, which needs a person's approval"
	restart := {"container": "frigate", "action": "restart"}

	# With the shipped data the action's own rule and the fact both speak.
	r := concat("; ", [kill, `tool "unraid_container_control" needs human approval for any action but start`])
	no_id(authz.decision) == confirm("human", r) with input as unraid_previewed("unraid_container_control", restart, {"effects": ["container_kill"]})

	# Data that leaves restarts to the model lowers nothing once the preview spoke.
	no_id(authz.decision) == confirm("human", kill) with input as unraid_previewed("unraid_container_control", restart, {"effects": ["container_kill"]})
		with data.data.toolgate.tools.human_approval_unless as {}
	no_id(authz.decision) == confirm("human", power) with input as unraid_previewed("unraid_vm_control", {"vm": "Home Assistant", "action": "stop"}, {"effects": ["vm_power_off"]})
		with data.data.toolgate.tools.human_approval_unless as {}

	# A start has no such effect; an effect the data does not know is no reason.
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as unraid_previewed("unraid_vm_control", {"vm": "Home Assistant", "action": "start"}, {"effects": []})
	no_id(authz.decision) == confirm("model", "write needs confirmation") with input as unraid_previewed("unraid_notification_archive", {"ids": ["a"]}, {"effects": ["something_else"]})

	# No facts from an unraid preview: a person.
	no_id(authz.decision) == confirm("human", `a write of "unraid" must report what it touches and its preview did not`) with input as object.union(unraid_write("unraid_notification_archive", {"ids": ["a"]}), {"preview": {"facts": null}})
}

# Reading parity history is not behind a person.
test_unraid_parity_history_is_a_read if {
	no_id(authz.decision) == allow("read allowed") with input as with_patch({"client": {"groups": ["nas"]}, "service": "unraid", "tool": "unraid_parity_history"})
}

# --- restricted tools (personal data) -----------------------------------

tuliprox_read(tool, patch) := object.union(with_patch({"service": "tuliprox", "tool": tool}), patch)

test_restricted_tool_denied_to_users if {
	every tool in ["tuliprox_list_active_streams", "tuliprox_query_stream_history", "tuliprox_get_stream_history_summary"] {
		no_id(authz.decision) == deny(sprintf("tool %q shows personal data and is restricted to groups admins", [tool])) with input as tuliprox_read(tool, {})
	}
}

test_restricted_tool_hidden_from_users_in_tools_list if {
	authz.decision.decision == "deny" with input as tuliprox_read("tuliprox_list_active_streams", {"action": "list"})
}

test_restricted_tool_denied_to_readonly_group if {
	authz.decision.decision == "deny" with input as tuliprox_read("tuliprox_query_stream_history", {"client": {"groups": ["readonly"]}})
}

test_restricted_tool_allowed_for_admins if {
	no_id(authz.decision) == allow("read allowed") with input as tuliprox_read("tuliprox_list_active_streams", {"client": {"groups": ["admins"]}})
	no_id(authz.decision) == allow("read allowed") with input as tuliprox_read("tuliprox_list_active_streams", {"client": {"groups": ["users", "admins"]}})
}

test_restricted_tool_needs_the_role_too if {
	inp := tuliprox_read("tuliprox_list_active_streams", {"client": {"groups": ["admins"]}, "user_role": "user"})
	no_id(authz.decision) == deny(`tool "tuliprox_list_active_streams" shows personal data: end-user role "user" may not use it`) with input as inp
	no_id(authz.decision) == allow("read allowed") with input as object.union(inp, {"user_role": "admin"})
}

test_unrestricted_tools_of_the_service_stay_open if {
	every tool in ["tuliprox_get_status", "tuliprox_query_playlist_items", "tuliprox_list_qos_snapshots"] {
		no_id(authz.decision) == allow("read allowed") with input as tuliprox_read(tool, {})
	}
}

test_tuliprox_writes_need_confirmation if {
	every tool in ["tuliprox_update_playlists", "tuliprox_update_geoip"] {
		no_id(authz.decision) == confirm("model", "write needs confirmation") with input as object.union(write_call(tool, {}), {"service": "tuliprox"})
	}
}

# --- camera pictures (Frigate) -----------------------------------------

frigate_pictures := ["frigate_get_latest_frame", "frigate_get_event_snapshot"]

frigate_read(tool, patch) := object.union(with_patch({"service": "frigate", "tool": tool}), patch)

# Pictures of the house are for the admins group, and for a verified end
# user only with the admin role; everyone else is denied and does not see
# them listed. Reads of events and cameras stay open to users.
test_camera_pictures_only_for_admins if {
	cases := [
		{"patch": {}, "decision": "deny"},
		{"patch": {"action": "list"}, "decision": "deny"},
		{"patch": {"client": {"groups": ["readonly"]}}, "decision": "deny"},
		{"patch": {"client": {"groups": ["admins"]}, "user_role": "user"}, "decision": "deny"},
		{"patch": {"client": {"groups": ["admins"]}}, "decision": "allow"},
		{"patch": {"client": {"groups": ["users", "admins"]}}, "decision": "allow"},
		{"patch": {"client": {"groups": ["admins"]}, "user_role": "admin"}, "decision": "allow"},
		{"patch": {"client": {"groups": ["admins"]}, "action": "list"}, "decision": "allow"},
	]
	every tool in frigate_pictures {
		every c in cases {
			authz.decision.decision == c.decision with input as frigate_read(tool, c.patch)
		}
		no_id(authz.decision) == deny(sprintf("tool %q shows personal data and is restricted to groups admins", [tool])) with input as frigate_read(tool, {})
	}
	every tool in ["frigate_list_events", "frigate_get_event", "frigate_search_events", "frigate_list_cameras", "frigate_get_system_status", "frigate_get_capabilities"] {
		no_id(authz.decision) == allow("read allowed") with input as frigate_read(tool, {})
		no_id(authz.decision) == allow("read allowed") with input as frigate_read(tool, {"client": {"groups": ["admins"]}, "user_role": "user"})
	}
}

# The documented way to let users see pictures: one line per tool in
# tools.json granting group users and role user too.
test_camera_pictures_opened_to_users_by_data if {
	opened := {"groups": ["admins", "users"], "user_roles": ["admin", "user"]}
	no_id(authz.decision) == allow("read allowed") with input as frigate_read("frigate_get_latest_frame", {})
		with data.data.toolgate.tools.restricted.frigate_get_latest_frame as opened
	no_id(authz.decision) == allow("read allowed") with input as frigate_read("frigate_get_latest_frame", {"client": {"groups": ["admins"]}, "user_role": "user"})
		with data.data.toolgate.tools.restricted.frigate_get_latest_frame as opened

	# The other picture tool keeps its own line.
	authz.decision.decision == "deny" with input as frigate_read("frigate_get_event_snapshot", {})
		with data.data.toolgate.tools.restricted.frigate_get_latest_frame as opened
}

# --- Home Assistant's YAML ----------------------------------------------

# Every change of automations, scripts or scenes needs a person: an
# automation can unlock a door at any time later, which no preview fact
# of the moment can rule out. The reads stay plain reads.
test_ha_yaml_writes_need_a_person if {
	every tool in ["ha_yaml_create", "ha_yaml_update"] {
		no_id(authz.decision) == confirm("human", sprintf("tool %q needs human approval", [tool])) with input as write_call(tool, {})
	}
	r := `destructive write needs human approval; tool "ha_yaml_delete" needs human approval`
	no_id(authz.decision) == confirm("human", r) with input as write_call("ha_yaml_delete", {"annotations": {"destructiveHint": true}})

	# Facts that would ask for no person do not lower it.
	f := {"kind": "yaml", "domains": ["light"], "device_classes": [], "unresolved": false, "opaque": false}
	no_id(authz.decision) == confirm("human", `tool "ha_yaml_update" needs human approval`) with input as facts_call("ha_yaml_update", f)

	# Facts that name a lock add their reason.
	lock := object.union(f, {"domains": ["lock"]})
	authz.decision.reason == `the write would operate a lock, which needs a person's approval; tool "ha_yaml_update" needs human approval` with input as facts_call("ha_yaml_update", lock)
}

test_ha_yaml_reads_are_reads if {
	every tool in ["ha_yaml_list", "ha_yaml_get", "ha_yaml_read_source", "ha_yaml_find_source"] {
		no_id(authz.decision) == allow("read allowed") with input as with_patch({"tool": tool})
	}
}
