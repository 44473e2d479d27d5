#!/usr/bin/env bash
# Builds toolgate's container images with no registry: every binary is built
# here by the local Go toolchain (scripts/build.sh: static, CGO off,
# stripped), then wrapped FROM scratch by compose/Dockerfile with CA
# certificates and a non-root user.
#
#   scripts/images.sh            build every image, tagged toolgate/<name>:${TOOLGATE_TAG:-local}
#                                (install.sh sets TOOLGATE_TAG to its compose project, so two
#                                checkouts installed as two projects never share an image)
#   scripts/images.sh gateway    build only the named ones
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${TOOLGATE_TAG:-local}
# name=package; every image is one binary.
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

ctx=compose/.build
mkdir -p "$ctx/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/data"
# The user the containers run as; /data is where the gateway keeps pins.
printf 'root:x:0:0:root:/:/sbin/nologin\ntoolgate:x:65532:65532:toolgate:/:/sbin/nologin\n' >"$ctx/rootfs/etc/passwd"
printf 'root:x:0:\ntoolgate:x:65532:\n' >"$ctx/rootfs/etc/group"
ca=""
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
	[ -s "$f" ] && { ca=$f; break; }
done
if [ -n "$ca" ]; then
	cp "$ca" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
else
	echo "warning: no CA bundle found on this host; HTTPS upstreams need <SERVICE>_CA_FILE" >&2
	: >"$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
fi

for name in "${names[@]}"; do
	pkg=${pkgs[$name]:-}
	[ -n "$pkg" ] || { echo "unknown image: $name (known: ${!pkgs[*]})" >&2; exit 2; }
	echo "== $name: go build $pkg"
	scripts/build.sh "$ctx/bin/$name" "$pkg"
	echo "== $name: docker build toolgate/$name:$tag"
	DOCKER_BUILDKIT=0 docker build --quiet --build-arg "BIN=$name" -f compose/Dockerfile -t "toolgate/$name:$tag" "$ctx" >/dev/null 2>"$ctx/build-$name.log" || {
		cat "$ctx/build-$name.log" >&2
		exit 1
	}
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep "^toolgate/[^:]*:$tag " | sort
