package system.authz_test

import data.system.authz

# The gateway's token in these tests, and the runtime the sidecar would have
# (services/policy exports the token's SHA-256, never the token).
token := "policy-token-for-the-rego-tests-0123456789abcdef"

runtime := {"env": {"TOOLGATE_POLICY_TOKEN_SHA256": crypto.sha256(token)}}

decision := {
	"identity": token,
	"method": "POST",
	"path": ["v1", "data", "toolgate", "authz", "decision"],
	"params": {"strict-builtin-errors": ["true"]},
}

partial := {
	"identity": token,
	"method": "POST",
	"path": ["v1", "compile"],
	"params": {},
	"body": {
		"query": "toolgate_decision = data.toolgate.authz.decision",
		"input": {"action": "call", "service": "demo", "tool": "demo_echo"},
		"unknowns": ["input.user", "input.args", "input.ticket", "input.time", "input.preview"],
	},
}

health := {"identity": token, "method": "GET", "path": ["health"], "params": {}}

allowed(req) if authz.allow with input as req with opa.runtime as runtime

test_gateway_may_ask_for_a_decision if {
	allowed(decision)
	allowed(object.union(decision, {"params": {}}))
}

test_gateway_may_ask_for_the_partial_decision if {
	allowed(partial)
	allowed(object.union(partial, {"body": object.union(partial.body, {"unknowns": ["input.user", "input.time"]})}))
}

# Only the decision, only the varying fields unknown, nothing more.
test_partial_evaluation_of_anything_else_is_refused if {
	not allowed(object.remove(partial, ["identity"]))
	not allowed(object.union(partial, {"identity": "not-the-token"}))
	every body in [
		object.union(partial.body, {"query": "data"}),
		object.union(partial.body, {"query": "toolgate_decision = data.system.authz.allow"}),
		object.union(partial.body, {"query": "x = data.data.toolgate"}),
		object.union(partial.body, {"query": "toolgate_decision = data.toolgate.authz.decision; x = data"}),
		object.union(partial.body, {"unknowns": ["data"]}),
		object.union(partial.body, {"unknowns": ["input"]}),
		object.union(partial.body, {"unknowns": ["input.user", "data.data"]}),
		object.union(partial.body, {"unknowns": "input.user"}),
		object.union(partial.body, {"input": "x"}),
		object.union(partial.body, {"options": {"disableInlining": ["data"]}}),
		object.remove(partial.body, ["unknowns"]),
		object.remove(partial.body, ["query"]),
	] {
		# (object.union would merge the bodies.)
		not allowed(object.union(object.remove(partial, ["body"]), {"body": body}))
	}
	not allowed(object.remove(partial, ["body"]))
	not allowed(object.union(partial, {"params": {"explain": ["full"]}}))
	not allowed(object.union(partial, {"params": {"metrics": ["true"]}}))
	not allowed(object.union(partial, {"method": "GET"}))
	not allowed(object.union(partial, {"path": ["v1", "compile", "toolgate", "authz", "decision"]}))
}

test_gateway_may_check_health if {
	allowed(health)
}

test_no_token_is_refused if {
	not allowed(object.remove(decision, ["identity"]))
	not allowed(object.remove(health, ["identity"]))
}

test_wrong_token_is_refused if {
	not allowed(object.union(decision, {"identity": "not-the-token"}))
	not allowed(object.union(decision, {"identity": ""}))
	not allowed(object.union(decision, {"identity": crypto.sha256(token)}))
}

# Without the hash in its environment the sidecar serves nobody.
test_no_configured_token_refuses_everyone if {
	not authz.allow with input as decision with opa.runtime as {"env": {}}
	not authz.allow with input as decision with opa.runtime as {"env": {"TOOLGATE_POLICY_TOKEN_SHA256": ""}}
	not authz.allow with input as object.union(decision, {"identity": ""}) with opa.runtime as {"env": {"TOOLGATE_POLICY_TOKEN_SHA256": ""}}
}

# Everything but the three requests is refused, for the gateway's token too.
test_gateway_token_gets_nothing_else if {
	every req in [
		{"method": "PUT", "path": ["v1", "policies", "toolgate"], "params": {}},
		{"method": "DELETE", "path": ["v1", "policies", "toolgate"], "params": {}},
		{"method": "GET", "path": ["v1", "policies"], "params": {}},
		{"method": "GET", "path": ["v1", "data"], "params": {}},
		{"method": "GET", "path": ["v1", "data", "toolgate", "authz", "decision"], "params": {}},
		{"method": "POST", "path": ["v1", "data"], "params": {}},
		{"method": "PUT", "path": ["v1", "data", "data", "toolgate", "groups"], "params": {}},
		{"method": "PATCH", "path": ["v1", "data", "data", "toolgate", "groups"], "params": {}},
		{"method": "POST", "path": ["v1", "data", "system", "authz", "allow"], "params": {}},
		{"method": "POST", "path": ["v1", "data", "toolgate", "authz"], "params": {}},
		{"method": "POST", "path": ["v1", "data", "toolgate", "authz", "decision", "reason"], "params": {}},
		{"method": "POST", "path": ["v1", "query"], "params": {}},
		{"method": "POST", "path": ["v1", "compile"], "params": {}},
		{"method": "POST", "path": [], "params": {}},
		{"method": "GET", "path": ["v1", "config"], "params": {}},
		{"method": "GET", "path": ["v1", "status"], "params": {}},
		{"method": "GET", "path": ["metrics"], "params": {}},
		{"method": "POST", "path": ["health"], "params": {}},
		{"method": "GET", "path": ["health"], "params": {"bundles": [""]}},
		{"method": "POST", "path": ["v1", "data", "toolgate", "authz", "decision"], "params": {"explain": ["full"]}},
		{"method": "POST", "path": ["v1", "data", "toolgate", "authz", "decision"], "params": {"strict-builtin-errors": ["true"], "provenance": ["true"]}},
		{"method": "POST", "path": ["v1", "data", "toolgate", "authz", "decision"], "params": {"strict-builtin-errors": ["false"]}},
	] {
		not allowed(object.union(req, {"identity": token}))
	}
}
