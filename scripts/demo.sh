#!/usr/bin/env bash
# Runs the gateway and the demo tool service on this machine, without Docker
# and without any home-lab application, so you can point an MCP client at
# toolgate and try reads, previews, tickets and approvals.
#
#   scripts/demo.sh            # state (keys, tokens) in a fresh temp dir
#   TOOLGATE_DEMO_DIR=~/.toolgate-demo scripts/demo.sh   # keep state
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${TOOLGATE_DEMO_DIR:-$(mktemp -d -t toolgate-demo.XXXXXX)}
port=${TOOLGATE_DEMO_PORT:-8080}
mkdir -p "$dir/bin" "$dir/secrets"
umask 077

secret() { # secret FILE: create a random secret once, never overwrite
	[ -s "$1" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1"
}
secret "$dir/secrets/service_token_demo"
secret "$dir/secrets/approval_key"
secret "$dir/secrets/admin_token"

echo "building gateway and demo service…" >&2
go build -o "$dir/bin/" ./services/gateway ./services/demo

# The demo verifies approvals with its own key, derived from the gateway's.
TOOLGATE_APPROVAL_KEY_FILE="$dir/secrets/approval_key" "$dir/bin/gateway" approval-key demo >"$dir/secrets/approval_key_demo"

if [ ! -s "$dir/secrets/client_tokens" ]; then
	out=$("$dir/bin/gateway" token demo-user users)
	printf '%s\n' "$out" | sed -n 's/^token .*: //p' >"$dir/secrets/demo_client_token"
	printf '%s\n' "$out" | grep '^sha256:' >"$dir/secrets/client_tokens"
fi

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT INT TERM

TOOLGATE_LISTEN=127.0.0.1:8000 \
	TOOLGATE_SERVICE_TOKEN_FILE="$dir/secrets/service_token_demo" \
	TOOLGATE_APPROVAL_KEY_FILE="$dir/secrets/approval_key_demo" \
	DEMO_ALLOW_WRITES=true \
	"$dir/bin/demo" 2>>"$dir/demo.log" &
pids+=($!)

TOOLGATE_LISTEN="127.0.0.1:$port" \
	TOOLGATE_ADMIN_LISTEN=127.0.0.1:8081 \
	TOOLGATE_CLIENT_TOKENS_FILE="$dir/secrets/client_tokens" \
	TOOLGATE_ADMIN_TOKEN_FILE="$dir/secrets/admin_token" \
	TOOLGATE_APPROVAL_KEY_FILE="$dir/secrets/approval_key" \
	TOOLGATE_SERVICES=demo=http://127.0.0.1:8000/mcp \
	TOOLGATE_SERVICE_TOKEN_DEMO_FILE="$dir/secrets/service_token_demo" \
	TOOLGATE_PINS_FILE="$dir/pins.json" \
	"$dir/bin/gateway" >>"$dir/audit.jsonl" 2>>"$dir/gateway.log" &
pids+=($!)

for _ in $(seq 50); do
	TOOLGATE_LISTEN="127.0.0.1:$port" "$dir/bin/gateway" healthcheck 2>/dev/null && break
	sleep 0.2
done

cat <<INFO
toolgate demo is running (Ctrl-C stops it).
  MCP endpoint (all services): http://127.0.0.1:$port/mcp
  MCP endpoint (demo only):    http://127.0.0.1:$port/mcp/demo
  client token:                $(cat "$dir/secrets/demo_client_token")
  approve a ticket:            TOOLGATE_ADMIN_TOKEN_FILE=$dir/secrets/admin_token $dir/bin/gateway approvals list
  audit log / logs:            $dir/audit.jsonl, $dir/gateway.log, $dir/demo.log
INFO
wait
