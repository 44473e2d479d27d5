# toolgate authorization policy.
#
# The gateway asks data.toolgate.authz.decision about every tools/call
# (input.action "call") and about every tool it might show in tools/list
# (input.action "list"; a "deny" hides the tool). The answer always has the
# same shape:
#
#   {"decision": "allow"|"deny"|"confirm", "reason": "...", "reason_id": "...",
#    "approval": "model"|"human", "ttl_seconds": N}
#
# reason is for people and may be reworded; reason_id is stable, for
# grouping and for log shippers (the gateway puts it on the audit line and
# the operator console groups by it): read, low_risk_write,
# needs_confirmation, needs_person:<why> (destructive, force, tool, role,
# argument, unresolved, unknown_effect, no_facts, or the domain, device
# class or effect from the preview's facts, e.g. needs_person:lock), and
# for a deny unknown_action, unknown_service, unknown_tool,
# service_not_allowed, read_only_group, unknown_role,
# role_service_not_allowed, read_only_role, restricted_tool,
# restricted_tool_role, no_rule. When several rules of one outcome match,
# reason joins all their texts and reason_id is the first of their ids in
# sort order. Each rule that adds a text to deny_reasons or human_reasons
# has a twin under the same conditions that adds its id to deny_ids or
# human_ids (sets of strings, which partial evaluation folds; sets of
# objects it would not); test_reason_ids holds every pair together.
#
# approval and ttl_seconds only mean something for "confirm" (who must
# consent, and how long the preview ticket lives); other outcomes carry
# "model" and 0.
#
# Precedence when several rules match (first match wins):
#   1. deny          unknown action, service or tool; client groups may not use
#                    the service; a write by a member of a read-only group; an
#                    end-user role that is unknown, may not use the service, or
#                    is read-only and writes; a restricted tool (personal
#                    data) used by a client or role it is not granted to
#   2. confirm human destructive write, forced write, write to a tool listed
#                    for human approval (or with an argument value not listed
#                    as the model's), any write by a role marked for it, a
#                    write whose preview facts show a target that needs a
#                    person (a lock, say), targets it could not tell or an
#                    effect that needs a person (a container killed, a VM
#                    powered off hard)
#   3. confirm model any other write that is not low-risk
#   4. allow         a low-risk write, or a read
#
# Preview facts: after a write's preview the gateway asks again with
# input.preview = {"facts": {...} | null} (also on the confirm) and keeps
# the stricter of the two decisions, so the rules on facts below can only
# raise the approval a write needs. Their meaning per service lives in
# data/toolgate/preview_facts.json.
# Anything else is denied ("no policy rule matched").
#
# The outcomes are written as mutually exclusive rules (each one states that
# the earlier ones did not match) rather than an else chain with a default:
# OPA cannot partially evaluate ordered rules, and the gateway partially
# evaluates the decision with the arguments, ticket, user and time unknown
# to learn which decisions do not depend on them and may be remembered
# (services/gateway/policy). Keep it that way: an else chain or a default
# here is still correct, only slower.
#
# What may be done by whom lives in policies/data/toolgate/*.json, not here.
# OPA's loader puts a JSON file under the data path of its directory, so
# policies/data/toolgate/groups.json is read as data.data.toolgate.groups
# (by `opa test policies/`, `opa run --server policies/` and the gateway's
# embedded engine alike).
package toolgate.authz

import data.data.toolgate as cfg

decision := outcome("deny", concat("; ", deny_reasons), min(deny_ids), "model", 0) if {
	count(deny_reasons) > 0
}

decision := outcome("deny", "no policy rule matched", "no_rule", "model", 0) if {
	count(deny_reasons) == 0
	not permitted
}

decision := outcome("confirm", concat("; ", human_reasons), min(human_ids), "human", ticket_ttl) if {
	count(deny_reasons) == 0
	permitted
	count(human_reasons) > 0
}

decision := outcome("confirm", "write needs confirmation", "needs_confirmation", "model", ticket_ttl) if {
	count(deny_reasons) == 0
	permitted
	count(human_reasons) == 0
	is_write
	not low_risk
}

decision := outcome("allow", "low-risk write allowed without a ticket", "low_risk_write", "model", 0) if {
	count(deny_reasons) == 0
	permitted
	count(human_reasons) == 0
	is_write
	low_risk
}

decision := outcome("allow", "read allowed", "read", "model", 0) if {
	count(deny_reasons) == 0
	permitted
	count(human_reasons) == 0
	not is_write
}

outcome(kind, reason, reason_id, approval, ttl) := {
	"decision": kind,
	"reason": reason,
	"reason_id": reason_id,
	"approval": approval,
	"ttl_seconds": ttl,
}

# Names used in reasons; "" when the gateway did not send them. (Refs to
# single fields rather than object.get(input, …): a function of the whole
# input would make every decision depend on the arguments.)
default service := ""

service := input.service

default tool := ""

tool := input.tool

default client_name := ""

client_name := input.client.name

# The end user's role, set by the gateway only from a verified user token
# (OpenWebUI: admin, user, pending). A role can only narrow what the
# client's groups allow, never widen it.
default user_role := ""

user_role := input.user_role

# --- deny ---------------------------------------------------------------

# Negations below name a helper rule rather than an expression on input:
# OPA hoists input refs out of "not expr", so "not input.x == y" is undefined
# (not true) when input.x is missing (open-policy-agent/opa#1877).
deny_reasons contains "unknown action" if {
	not action_known
}

deny_ids contains "unknown_action" if {
	not action_known
}

deny_reasons contains sprintf("unknown service %q", [service]) if {
	not service_known
}

deny_ids contains "unknown_service" if {
	not service_known
}

deny_reasons contains sprintf("unknown tool %q for service %q", [tool, service]) if {
	service_known
	not tool_known
}

deny_ids contains "unknown_tool" if {
	service_known
	not tool_known
}

deny_reasons contains sprintf("client %q may not use service %q", [client_name, service]) if {
	service_known
	not may_use_service
}

deny_ids contains "service_not_allowed" if {
	service_known
	not may_use_service
}

deny_reasons contains sprintf("group %q is read-only: writes are denied", [group]) if {
	is_write
	some group in read_only_groups
}

deny_ids contains "read_only_group" if {
	is_write
	some group in read_only_groups
}

deny_reasons contains sprintf("end-user role %q is not known", [user_role]) if {
	has_role
	not role_known
}

deny_ids contains "unknown_role" if {
	has_role
	not role_known
}

deny_reasons contains sprintf("end-user role %q may not use service %q", [user_role, service]) if {
	has_role
	role_known
	service_known
	not role_may_use_service
}

deny_ids contains "role_service_not_allowed" if {
	has_role
	role_known
	service_known
	not role_may_use_service
}

deny_reasons contains sprintf("end-user role %q is read-only: writes are denied", [user_role]) if {
	is_write
	role_read_only
}

deny_ids contains "read_only_role" if {
	is_write
	role_read_only
}

deny_reasons contains sprintf("tool %q shows personal data and is restricted to groups %s", [tool, concat(", ", restricted_groups)]) if {
	restricted
	not restricted_group_member
}

deny_ids contains "restricted_tool" if {
	restricted
	not restricted_group_member
}

deny_reasons contains sprintf("tool %q shows personal data: end-user role %q may not use it", [tool, user_role]) if {
	restricted
	has_role
	not restricted_role_allowed
}

deny_ids contains "restricted_tool_role" if {
	restricted
	has_role
	not restricted_role_allowed
}

# The positive form of "no deny reason": every later outcome requires it, so
# a rule that fails to produce a deny reason can never turn into an allow.
permitted if {
	action_known
	tool_known
	may_use_service
	role_permits
	restriction_permits
	count(read_only_groups) == 0
}

permitted if {
	action_known
	tool_known
	may_use_service
	role_permits
	restriction_permits
	not is_write
}

action_known if input.action in {"call", "list"}

service_known if cfg.services[input.service]

# Every tool name starts with one of its service's prefixes.
tool_known if {
	is_string(input.tool)
	some prefix in cfg.services[input.service].prefixes
	startswith(input.tool, prefix)
}

client_groups contains group if {
	some group in input.client.groups
	is_string(group)
}

# "*" in a group's service list means every service.
may_use_service if {
	some group in client_groups
	some allowed in cfg.groups[group].services
	allowed in {"*", input.service}
}

# --- end-user roles -----------------------------------------------------

has_role if user_role != ""

role_known if cfg.user_roles[user_role]

role_may_use_service if {
	some allowed in cfg.user_roles[user_role].services
	allowed in {"*", input.service}
}

role_read_only if {
	has_role
	cfg.user_roles[user_role].read_only == true
}

# Without a role (a client whose end user is unverified) only the client's
# groups count.
role_permits if not has_role

role_permits if {
	role_may_use_service
	not role_read_only_write
}

role_read_only_write if {
	is_write
	role_read_only
}

read_only_groups contains group if {
	some group in client_groups
	cfg.groups[group].read_only == true
}

# --- restricted tools ---------------------------------------------------

# Some tools show personal data (who watched what, from which address:
# Tuliprox's active streams and stream history; pictures of the house and
# the people in it: Frigate's latest frame and event snapshots, where the
# events' metadata stays open). tools.restricted lists
# them with the groups, and the end-user roles, granted them; anyone else
# is denied, reads included, and does not see them in tools/list.
restricted if cfg.tools.restricted[input.tool]

restricted_groups := [g | some g in cfg.tools.restricted[input.tool].groups]

restricted_group_member if {
	some group in client_groups
	group in cfg.tools.restricted[input.tool].groups
}

restricted_role_allowed if user_role in cfg.tools.restricted[input.tool].user_roles

restriction_permits if not restricted

restriction_permits if {
	restricted
	restricted_group_member
	restricted_role_permits
}

# Without a role only the client's groups count, as for services.
restricted_role_permits if not has_role

restricted_role_permits if restricted_role_allowed

# --- write classification -----------------------------------------------

# A call is a write unless the gateway explicitly says it is not; a
# destructive hint always makes it one. Missing data fails towards "write".
is_write if not declared_read

declared_read if input.write == false

is_write if input.annotations.destructiveHint == true

forced if input.ticket.force == true

forced if input.args.force == true

# --- human approval -----------------------------------------------------

human_reasons contains "destructive write needs human approval" if {
	input.annotations.destructiveHint == true
}

human_ids contains "needs_person:destructive" if {
	input.annotations.destructiveHint == true
}

human_reasons contains "forced write needs human approval" if {
	is_write
	forced
}

human_ids contains "needs_person:force" if {
	is_write
	forced
}

# Only writes: a prefix such as "unraid_array_" must not put reads like
# unraid_array_status behind a person.
human_reasons contains sprintf("tool %q needs human approval", [tool]) if {
	is_write
	human_tool
}

human_ids contains "needs_person:tool" if {
	is_write
	human_tool
}

human_reasons contains sprintf("writes by end-user role %q need human approval", [user_role]) if {
	is_write
	has_role
	cfg.user_roles[user_role].human_approval == true
}

human_ids contains "needs_person:role" if {
	is_write
	has_role
	cfg.user_roles[user_role].human_approval == true
}

# A tool whose arguments say how much it does: its writes need a person
# unless each argument listed in tools.human_approval_unless has one of the
# values listed there (unraid_container_control: only "start" is left to
# the model; a stop, a restart or any action added later waits for a
# person). A missing or odd argument needs a person. The reason names the
# argument and the data's values, never the call's own value: arguments
# stay out of reasons, and so out of the audit.
human_reasons contains sprintf("tool %q needs human approval for any %s but %s", [tool, arg, concat(", ", allowed)]) if {
	is_write
	some arg, allowed in cfg.tools.human_approval_unless[input.tool]
	not arg_value_allowed(arg, allowed)
}

human_ids contains "needs_person:argument" if {
	is_write
	some arg, allowed in cfg.tools.human_approval_unless[input.tool]
	not arg_value_allowed(arg, allowed)
}

arg_value_allowed(arg, allowed) if input.args[arg] in allowed

human_tool if input.tool in cfg.tools.human_approval

human_tool if {
	is_string(input.tool)
	some prefix in cfg.tools.human_approval_prefixes
	startswith(input.tool, prefix)
}

# --- preview facts ------------------------------------------------------

# The preview has run (input.preview is set), with or without facts.
preview_stage if is_object(input.preview)

has_facts if is_object(input.preview.facts)

facts_config := cfg.preview_facts.services[input.service]

human_reasons contains sprintf("the write would operate a %s, which needs a person's approval", [d]) if {
	is_write
	some d in input.preview.facts.domains
	d in facts_config.human_domains
}

human_ids contains concat(":", ["needs_person", d]) if {
	is_write
	some d in input.preview.facts.domains
	d in facts_config.human_domains
}

human_reasons contains sprintf("the write would operate a %s, which needs a person's approval", [c]) if {
	is_write
	some c in input.preview.facts.device_classes
	c in facts_config.human_device_classes
}

human_ids contains concat(":", ["needs_person", c]) if {
	is_write
	some c in input.preview.facts.device_classes
	c in facts_config.human_device_classes
}

# An effect the preview says the write can have (fact "effects": the
# unraid service reports container_kill for a container stop or restart,
# vm_power_off for a VM stop), described in the service's facts data.
human_reasons contains sprintf("the write can %s, which needs a person's approval", [what]) if {
	is_write
	some e in input.preview.facts.effects
	what := facts_config.human_effects[e]
}

human_ids contains concat(":", ["needs_person", e]) if {
	is_write
	some e in input.preview.facts.effects
	facts_config.human_effects[e]
}

human_reasons contains "the preview could not tell everything the write would touch" if {
	is_write
	input.preview.facts.unresolved == true
}

human_ids contains "needs_person:unresolved" if {
	is_write
	input.preview.facts.unresolved == true
}

# A tool the service cannot tell the effect of (Home Assistant: a tool its
# MCP server offers that toolgate does not know, kind "unknown") needs a
# person until an operator, having looked at it, lists it in the
# service's reviewed_tools; facts about what it would touch (a lock)
# still count then.
human_reasons contains sprintf("the service does not know what %q does", [tool]) if {
	is_write
	input.preview.facts.kind in facts_config.human_kinds
	not reviewed_tool
}

human_ids contains "needs_person:unknown_effect" if {
	is_write
	input.preview.facts.kind in facts_config.human_kinds
	not reviewed_tool
}

reviewed_tool if input.tool in facts_config.reviewed_tools

human_reasons contains sprintf("a write of %q must report what it touches and its preview did not", [service]) if {
	is_write
	preview_stage
	facts_config.required == true
	not has_facts
}

human_ids contains "needs_person:no_facts" if {
	is_write
	preview_stage
	facts_config.required == true
	not has_facts
}

# --- low risk -----------------------------------------------------------

# A listed tool is low risk unless its preview's facts show more than its
# service's low-risk domains, an effect that cannot be seen (a script) or
# targets that could not be told.
low_risk if {
	input.tool in cfg.tools.low_risk
	not beyond_low_risk
}

beyond_low_risk if {
	some d in input.preview.facts.domains
	not low_risk_domain(d)
}

beyond_low_risk if input.preview.facts.opaque == true

beyond_low_risk if input.preview.facts.unresolved == true

low_risk_domain(d) if d in facts_config.low_risk_domains

# --- tickets ------------------------------------------------------------

default ticket_ttl := 600

ticket_ttl := cfg.tickets.ttl_seconds if {
	is_number(cfg.tickets.ttl_seconds)
	cfg.tickets.ttl_seconds > 0
}
