#!/usr/bin/env bash
# Builds toolgate's container images with no registry: every binary is built
# by scripts/build.sh (static, CGO off, stripped; with the host's Go, else
# inside a Go container), then wrapped FROM scratch by compose/Dockerfile
# with CA certificates and a non-root user. The Dockerfile runs no command,
# so an image for another architecture needs no emulator.
#
#   scripts/images.sh            build every image, tagged toolgate/<name>:${TOOLGATE_TAG:-local}
#                                (install.sh sets TOOLGATE_TAG to its compose project, so two
#                                checkouts installed as two projects never share an image)
#   scripts/images.sh gateway    build only the named ones
#
# For the Docker engine's platform (`docker info`: linux/amd64, linux/arm64,
# linux/arm/v7); TOOLGATE_PLATFORM=linux/arm64 builds for another machine
# (then `docker save` them there: docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${TOOLGATE_TAG:-local}
# name=package; every image is one binary, named after its package.
declare -A pkgs=(
	[gateway]=./services/gateway
	[policy]=./services/policy
	[demo]=./services/demo
	[probe]=./compose/e2e/probe
)
for optional in web arr frigate ersatztv tuliprox homeassistant unraid unraid-ssh fakes; do
	[ -f "services/$optional/main.go" ] && pkgs[$optional]=./services/$optional
done

names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(printf '%s\n' "${!pkgs[@]}" | sort)
build=()
for name in "${names[@]}"; do
	pkg=${pkgs[$name]:-}
	[ -n "$pkg" ] || { echo "unknown image: $name (known: ${!pkgs[*]})" >&2; exit 2; }
	build+=("$pkg")
done

# The engine's platform, as image platforms are written (its kernel's
# machine name: x86_64, aarch64, armv7l).
engine=$(docker info --format '{{.OSType}}/{{.Architecture}}')
case $engine in
*/x86_64 | */amd64) engine=${engine%/*}/amd64 ;;
*/aarch64 | */arm64) engine=${engine%/*}/arm64 ;;
*/armv7*) engine=${engine%/*}/arm/v7 ;;
esac
platform=${TOOLGATE_PLATFORM:-$engine}
case $platform in
linux/amd64) export GOOS=linux GOARCH=amd64 ;;
linux/arm64 | linux/arm64/v8) export GOOS=linux GOARCH=arm64 platform=linux/arm64 ;;
linux/arm/v7) export GOOS=linux GOARCH=arm GOARM=7 ;;
*)
	from="the Docker engine's platform"
	[ -n "${TOOLGATE_PLATFORM:-}" ] && from=TOOLGATE_PLATFORM
	echo "images are built for linux/amd64, linux/arm64 or linux/arm/v7, not $platform ($from); set TOOLGATE_PLATFORM to one of them" >&2
	exit 2
	;;
esac

# compose/.build/bin/PLATFORM/ holds the binaries; image/ is the build
# context: the rootfs and, as app, the one binary of the image built.
ctx=compose/.build
plat=${platform//\//-}
bin=$ctx/bin/$plat
image=$ctx/image
mkdir -p "$bin" "$image/rootfs/etc/ssl/certs" "$image/rootfs/data"
# The user the containers run as; /data is where the gateway keeps pins.
printf 'root:x:0:0:root:/:/sbin/nologin\ntoolgate:x:65532:65532:toolgate:/:/sbin/nologin\n' >"$image/rootfs/etc/passwd"
printf 'root:x:0:\ntoolgate:x:65532:\n' >"$image/rootfs/etc/group"
ca=""
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
	[ -s "$f" ] && { ca=$f; break; }
done
if [ -n "$ca" ]; then
	cp "$ca" "$image/rootfs/etc/ssl/certs/ca-certificates.crt"
else
	echo "warning: no CA bundle found on this host; HTTPS upstreams need <SERVICE>_CA_FILE" >&2
	: >"$image/rootfs/etc/ssl/certs/ca-certificates.crt"
fi

echo "== go build for $platform: ${build[*]}"
scripts/build.sh "$bin/" "${build[@]}"
for name in "${names[@]}"; do
	echo "== $name: docker build toolgate/$name:$tag ($platform)"
	ln -f "$bin/$name" "$image/app" 2>/dev/null || cp "$bin/$name" "$image/app"
	DOCKER_BUILDKIT=0 docker build --quiet --platform "$platform" -f compose/Dockerfile -t "toolgate/$name:$tag" "$image" >/dev/null 2>"$ctx/build-$name.log" || {
		cat "$ctx/build-$name.log" >&2
		exit 1
	}
done
rm -f "$image/app"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep "^toolgate/[^:]*:$tag " | sort
if [ "$platform" != "$engine" ]; then
	echo "== built for $platform; this engine runs $engine: move them to a $platform host, e.g."
	echo "   docker save $(printf 'toolgate/%s:'"$tag"' ' "${names[@]}")| ssh HOST docker load"
fi
