#!/usr/bin/env bash
# Builds commands of the module in the current directory the way their
# container images have them: static (CGO off), no build paths (-trimpath),
# no VCS stamp (-buildvcs=false: the same bytes whether or not .git and git
# are at hand), no symbol table or DWARF (-s -w; neither is mapped at run
# time, so they cost image size, not memory). scripts/images.sh builds every
# image's binaries with it, install.sh the gateway it runs on this host, and
# the bench (bench/stack.go) the gateway it measures, so all run the same
# binary; this is the one place those flags live.
#
#   scripts/build.sh OUT PKG       e.g. scripts/build.sh bin/gateway ./services/gateway
#   scripts/build.sh DIR/ PKG...   several, each as DIR/<last element of PKG>
#   scripts/build.sh --check       say which Go builds, fetching the Go image if needed
#
# For this host's platform unless GOOS, GOARCH (and GOARM) say another.
#
# Which Go: the host's when it is go.mod's version or newer (an older Go
# from 1.21 on switches to that version by itself unless GOTOOLCHAIN=local).
# Otherwise `go build` runs inside a Go container: TOOLGATE_GO_IMAGE, by
# default the official golang image of go.mod's version (Alpine: the
# smallest download; CGO is off, so its libc does not matter). The image
# needs `go` on its PATH and a writable /tmp, nothing else: no shell runs
# in it. The module directory is mounted read-only, the container has no
# capabilities (root in it cannot read files only their owner may, such as
# the secrets), and the binaries are copied out with `docker cp`, so they
# are yours. Modules and the build cache live in the named volumes
# toolgate-go-mod and toolgate-go-build, so a second build is quick;
# TOOLGATE_GOMODCACHE=DIR[:ro] and TOOLGATE_GOCACHE=DIR use host
# directories instead (":ro": read-only, for an offline build with
# GOPROXY=off). GOPROXY, GOSUMDB, GONOSUMDB, GOPRIVATE, GONOPROXY,
# GOINSECURE, GOFLAGS, GOAMD64, GOARM64 and GOEXPERIMENT are passed on;
# with GOPROXY=off the container gets no network.
set -euo pipefail

flags=(-trimpath -buildvcs=false '-ldflags=-s -w')
pass_env=(GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOINSECURE GOFLAGS GOAMD64 GOARM64 GOEXPERIMENT)

die() {
	printf 'scripts/build.sh: %s\n' "$*" >&2
	exit 1
}

[ -f go.mod ] || die "run it in the module's root directory (no go.mod in $(pwd))"
want=$(sed -n 's/^go[[:space:]]\{1,\}\([0-9][0-9.]*\).*/\1/p' go.mod | head -n 1)
[ -n "$want" ] || die "go.mod names no Go version"
image=${TOOLGATE_GO_IMAGE:-golang:$want-alpine}

# at_least HAVE WANT: whether version HAVE (1.26.8, 1.27rc1) is WANT or newer.
at_least() {
	local IFS=. i h w
	read -ra h <<<"${1%%[!0-9.]*}"
	read -ra w <<<"$2"
	for i in 0 1 2; do
		h[i]=${h[i]:-0} w[i]=${w[i]:-0}
		[ "${h[i]}" -gt "${w[i]}" ] && return 0
		[ "${h[i]}" -lt "${w[i]}" ] && return 1
	done
	return 0
}

# host_go: the host's Go version when it is go.mod's or newer. `go env` in
# the module switches toolchains as any go command here would.
host_go=""
if command -v go >/dev/null 2>&1; then
	host_go=$(go env GOVERSION 2>/dev/null) || host_go=""
	at_least "${host_go#go}" "$want" || host_go=""
fi

# have_image: the Go image is here, or is pulled now. The reason a pull
# failed is kept for the one line below.
pull_error=""
have_image() {
	docker image inspect "$image" >/dev/null 2>&1 && return 0
	echo "== pulling the Go image $image (once)"
	pull_error=$(docker pull --quiet "$image" 2>&1 >/dev/null) && return 0
	pull_error=$(printf '%s' "$pull_error" | tr '\n' ' ' | sed 's/[[:space:]]*$//')
	return 1
}

no_go() {
	local why="no Go $want or newer on this host"
	command -v go >/dev/null 2>&1 && why="the host's Go ($(go env GOVERSION 2>/dev/null || echo unusable)) is older than go.mod's $want"
	die "$why, and the Go image $image is neither loaded nor pullable (${pull_error:-docker pull failed}): install Go $want+ (https://go.dev/dl/), or set TOOLGATE_GO_IMAGE to a Go $want image you can pull or have loaded (docker load), or build the images elsewhere and run ./install.sh --no-build here (docs/install.md, \"Build on one machine, run on another\")"
}

if [ "${1:-}" = --check ]; then
	if [ -n "$host_go" ]; then
		echo "== Go: the host's $host_go"
	elif have_image; then
		echo "== Go: no Go $want on this host; building inside $image"
	else
		no_go
	fi
	exit 0
fi
[ $# -ge 2 ] || {
	echo "usage: scripts/build.sh OUT PKG | DIR/ PKG... | --check" >&2
	exit 2
}
out=$1
shift
[ $# -eq 1 ] || [ "${out%/}/" = "$out" ] || die "building several packages needs a directory ending in / as OUT, not $out"

if [ -n "$host_go" ]; then
	CGO_ENABLED=0 exec go build "${flags[@]}" -o "$out" "$@"
fi

# --- inside a Go container ---------------------------------------------------------
have_image || no_go
# This host's platform, as Go names it, unless GOOS/GOARCH are given.
case $(uname -s) in
Linux) host_os=linux ;;
Darwin) host_os=darwin ;;
*) host_os=$(uname -s | tr '[:upper:]' '[:lower:]') ;;
esac
case $(uname -m) in
x86_64 | amd64) host_arch=amd64 ;;
aarch64 | arm64) host_arch=arm64 ;;
armv7*) host_arch=arm host_arm=7 ;;
armv6*) host_arch=arm host_arm=6 ;;
*) host_arch=$(uname -m) ;;
esac
goos=${GOOS:-$host_os} goarch=${GOARCH:-$host_arch}
goarm=${GOARM:-}
[ -z "${GOARCH:-}" ] && goarm=${goarm:-${host_arm:-}}

env_args=(-e CGO_ENABLED=0 -e "GOOS=$goos" -e "GOARCH=$goarch" -e GOMODCACHE=/toolgate/mod -e GOCACHE=/toolgate/build)
[ -n "$goarm" ] && env_args+=(-e "GOARM=$goarm")
for v in "${pass_env[@]}"; do
	[ -n "${!v:-}" ] && env_args+=(-e "$v=${!v}")
done
[ "${GOPROXY:-}" = off ] && env_args+=(--network none)

# cache_mount SPEC VOLUME DEST: a named volume, or the host directory SPEC (":ro" read-only).
cache_mount() {
	local spec=$1 dir mode=""
	if [ -z "$spec" ]; then
		printf 'type=volume,src=%s,dst=%s\n' "$2" "$3"
		return
	fi
	dir=${spec%:ro}
	[ "$dir" = "$spec" ] || mode=,readonly
	[ -d "$dir" ] || die "not a directory: $dir (TOOLGATE_GOMODCACHE / TOOLGATE_GOCACHE)"
	dir=$(cd "$dir" && pwd)
	no_comma "$dir"
	printf 'type=bind,src=%s,dst=%s%s\n' "$dir" "$3" "$mode"
}
# no_comma DIR: docker's --mount splits its value at commas.
no_comma() {
	case $1 in *,*) die "a directory with a comma in its name cannot be mounted into the Go container: $1" ;; esac
}
no_comma "$(pwd)"
mod_mount=$(cache_mount "${TOOLGATE_GOMODCACHE:-}" toolgate-go-mod /toolgate/mod)
build_mount=$(cache_mount "${TOOLGATE_GOCACHE:-}" toolgate-go-build /toolgate/build)
# Root in the container owns new named volumes; with both caches on host
# directories the build runs as you, so they stay yours.
user=0:0
if [ -n "${TOOLGATE_GOMODCACHE:-}" ] && [ -n "${TOOLGATE_GOCACHE:-}" ]; then
	user="$(id -u):$(id -g)"
fi

# Go writes into the container's /tmp; docker cp brings the result out.
cout=/tmp/toolgate-out/bin
[ $# -eq 1 ] || cout=/tmp/toolgate-out/
cid=$(docker create --user "$user" --cap-drop ALL --security-opt no-new-privileges \
	--mount "type=bind,src=$(pwd),dst=/src,readonly" --mount "$mod_mount" --mount "$build_mount" \
	--workdir /src "${env_args[@]}" "$image" go build "${flags[@]}" -o "$cout" "$@")
trap 'docker rm -f "$cid" >/dev/null 2>&1 || true' EXIT
echo "== go build in $image ($goos/$goarch${goarm:+ v$goarm}): $*"
docker start --attach "$cid" || die "go build in $image failed"
if [ $# -eq 1 ]; then
	mkdir -p "$(dirname "$out")"
	docker cp "$cid:$cout" "$out"
else
	mkdir -p "$out"
	docker cp "$cid:$cout." "$out"
fi
