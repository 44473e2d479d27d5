# Who may use the OPA sidecar's REST API.
#
# The sidecar runs with --authentication=token --authorization=basic, so OPA
# asks data.system.authz.allow about every HTTP request before serving it.
# Only the gateway may ask anything, and only three things: the decision it
# needs for every tool call, the partial evaluation of that same decision
# with the fields that vary between calls unknown (whether a decision can
# be remembered), and the health check. Everything else (writing or
# reading policies and data, ad-hoc queries, config, status) is refused with
# HTTP 401, for the gateway too, so a stolen or misused connection cannot turn
# "deny" into "allow".
#
# The gateway is recognised by its bearer token. The sidecar never holds the
# token in its environment: services/policy reads TOOLGATE_POLICY_TOKEN_FILE
# at start and exports only its SHA-256 as TOOLGATE_POLICY_TOKEN_SHA256. No
# hash (a sidecar started without the token file) means nobody is allowed.
package system.authz

default allow := false

allow if {
	gateway
	decision_query
}

allow if {
	gateway
	decision_partial
}

allow if {
	gateway
	health_check
}

# The gateway's only query; it adds strict-builtin-errors=true and nothing
# else (explain, metrics, provenance would only widen what is served).
decision_query if {
	input.method == "POST"
	input.path == ["v1", "data", "toolgate", "authz", "decision"]
	every name, values in input.params {
		name == "strict-builtin-errors"
		values == ["true"]
	}
}

# The gateway's partial evaluation of the decision (services/gateway/policy,
# Remote): exactly its query, an input object, and no unknowns but the
# fields that vary between calls. It answers what the decision query would
# answer for the known part (the residual on the unknowns), never another
# document; the query, no option and no parameter can widen it.
decision_partial if {
	input.method == "POST"
	input.path == ["v1", "compile"]
	count(input.params) == 0
	object.keys(input.body) == {"query", "input", "unknowns"}
	input.body.query == "toolgate_decision = data.toolgate.authz.decision"
	is_object(input.body.input)
	is_array(input.body.unknowns)
	every u in input.body.unknowns {
		u in {"input.user", "input.args", "input.ticket", "input.time", "input.preview"}
	}
}

# services/policy healthcheck: plain GET /health.
health_check if {
	input.method == "GET"
	input.path == ["health"]
	count(input.params) == 0
}

gateway if {
	want := opa.runtime().env.TOOLGATE_POLICY_TOKEN_SHA256
	count(want) == 64
	crypto.sha256(input.identity) == lower(want)
}
