#!/usr/bin/env bash
# The project's one test command (CI runs exactly this): formatting, vet,
# staticcheck, the Rego checks and tests, every Go test with the race
# detector, and a short run of every fuzz target. It installs what it needs
# once: opa and staticcheck from the Go module proxy, shellcheck and searx
# with apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
export PATH="$gobin:$PATH"

OPA_VERSION=1.22.3
if ! opa version 2>/dev/null | grep -qx "Version: $OPA_VERSION"; then
	echo "== installing opa $OPA_VERSION (Go module proxy; takes a few minutes once)"
	CGO_ENABLED=0 go install -ldflags="-s -w" "github.com/open-policy-agent/opa@v$OPA_VERSION"
fi

# staticcheck 2026.2.2 (module v0.8.2) is a release that knows Go 1.26.
STATICCHECK_VERSION=0.8.2
if ! staticcheck -version 2>/dev/null | grep -qF "($STATICCHECK_VERSION)"; then
	echo "== installing staticcheck v$STATICCHECK_VERSION (Go module proxy)"
	go install "honnef.co/go/tools/cmd/staticcheck@v$STATICCHECK_VERSION"
fi

echo "== gofmt"
unformatted=$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	printf 'gofmt would change:\n%s\n' "$unformatted"
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
staticcheck ./...
staticcheck -tags e2e ./compose/e2e/

# Debian packages the checks use: shellcheck, and searx (a real metasearch
# engine the web service's SearXNG client is tested against, on loopback).
missing=()
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v searx-run >/dev/null 2>&1 || missing+=(searx)
# openssh-server: the unraid-ssh tests run a real sshd with the shipped
# forced-command script (deploy/unraid/toolgate-diag.sh).
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "== installing ${missing[*]} (apt-get)"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1 || true
fi
# Installed means the searx tests must run, not skip.
if command -v searx-run >/dev/null 2>&1; then
	export TOOLGATE_REQUIRE_SEARX=1
else
	echo "searx could not be installed; the web service's tests against it will be skipped"
fi

if [ -x /usr/sbin/sshd ]; then
	export TOOLGATE_REQUIRE_SSHD=1
else
	echo "openssh-server could not be installed; the unraid-ssh tests against sshd will be skipped"
fi

echo "== shellcheck"
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck install.sh scripts/*.sh .ci/run deploy/unraid/*.sh
else
	echo "shellcheck not installed; skipped"
fi

# The approval page's browser test drives Debian's chromium headless
# (services/gateway/app, chromedp); CI fails that test without it.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "== installing chromium (approval page browser test)"
	(apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || true
fi

echo "== opa fmt, opa check, opa test"
opa fmt --list --fail policies/
opa check --strict policies/
opa test policies/

echo "== go test -race"
# deploy/kubernetes runs kustomize and the Kubernetes API types in one
# goroutine: the race detector finds nothing there but costs a race build of
# ~175 packages (about 90 s of CPU) and a 10x slower run, so it runs plain,
# reusing what go vet compiled.
mapfile -t race_pkgs < <(go list ./... | grep -v '/deploy/kubernetes$')
go test -race -count=1 "${race_pkgs[@]}"
go test -count=1 ./deploy/kubernetes/

echo "== fuzz (${FUZZTIME:=10s} each)"
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
	pkg=$(dirname "$file")
	sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file" | while read -r target; do
		echo "-- $pkg $target"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg" >/tmp/toolgate-fuzz.log 2>&1 || {
			cat /tmp/toolgate-fuzz.log
			exit 1
		}
	done
done
# The whole stack as containers: ./install.sh --demo, a real MCP client on
# the clients network, isolation, read-only roots, doctor (compose/e2e).
if docker info >/dev/null 2>&1; then
	echo "== end to end: the demo stack in Docker"
	go vet -tags e2e ./compose/e2e/
	log=$(mktemp)
	# Four minutes on a quiet machine, but image builds and a slow start on a
	# loaded one can pass go test's default 10 minutes; each step has its own
	# deadline, so a hang still fails with a named step.
	if ! go test -tags e2e -count=1 -timeout 30m -v ./compose/e2e/ >"$log" 2>&1; then
		cat "$log"
		exit 1
	fi
	grep -E '^\s*--- |^ok' "$log"
else
	echo "== end to end skipped: no Docker engine"
fi
echo "== all checks passed"
