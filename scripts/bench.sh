#!/usr/bin/env bash
# Measures what the gateway costs per tools/call with client, gateway and
# service as separate processes (bench/main.go says what runs). Arguments go
# to the bench, e.g. -quick for a smoke run. Not part of CI's timed checks;
# its smoke mode runs in `go test ./bench/`.
set -euo pipefail
cd "$(dirname "$0")/.."
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
export PATH="$gobin:$PATH"
exec go run ./bench "$@"
