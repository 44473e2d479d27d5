#!/usr/bin/env bash
# Prints, as one line, how to get Docker Compose v2 (`docker compose`) on
# this host: install.sh says it when Compose is missing and there is no Go
# to build it with. By host kind, as each ships it:
#   a Compose v2 already here as docker-compose (Synology's Container
#       Manager has one): link it as Docker's CLI plugin;
#   Unraid: the Docker Compose Manager plugin (installs the plugin into
#       /usr/local/lib/docker/cli-plugins);
#   TrueNAS SCALE: 24.10 or newer, whose apps run on Docker with Compose;
#   Debian, Raspberry Pi OS, Ubuntu: Docker's package docker-compose-plugin
#       (Debian 12's own docker-compose is v1 and will not do);
#   anything else: Compose's release binary as a CLI plugin.
set -euo pipefail

machine=$(uname -m)
case $machine in armv7*) machine=armv7 ;; esac
release="mkdir -p ~/.docker/cli-plugins && curl -fsSLo ~/.docker/cli-plugins/docker-compose https://github.com/docker/compose/releases/latest/download/docker-compose-linux-$machine && chmod +x ~/.docker/cli-plugins/docker-compose"
os_id=""
if [ -r /etc/os-release ]; then
	# shellcheck source=/dev/null
	os_id=$(. /etc/os-release && echo "${ID:-} ${ID_LIKE:-}")
fi

standalone=$(command -v docker-compose 2>/dev/null || true)
if [ -n "$standalone" ] && "$standalone" version --short 2>/dev/null | grep -q '^v\{0,1\}2\.'; then
	how="Compose v2 is here as $standalone but not as Docker's plugin: mkdir -p ~/.docker/cli-plugins && ln -s $standalone ~/.docker/cli-plugins/docker-compose"
elif [ -f /etc/unraid-version ]; then
	how="on Unraid install the Docker Compose Manager plugin (Apps tab, search \"Compose Manager\"), which adds docker compose"
elif [ -f /etc.defaults/synoinfo.conf ] || [ -f /etc/synoinfo.conf ]; then
	how="on Synology install Container Manager (DSM 7.2 or newer) from the Package Center, or: $release"
elif grep -qsi truenas /etc/version /etc/os-release 2>/dev/null; then
	how="on TrueNAS SCALE use 24.10 (Electric Eel) or newer, which runs apps on Docker with Compose, or: $release"
else
	case " $os_id " in
	*" debian "* | *" raspbian "* | *" ubuntu "*) how="install Docker's package: sudo apt-get install docker-compose-plugin (from Docker's apt repository, which get.docker.com sets up), or: $release" ;;
	*) how="install Docker's compose plugin (https://docs.docker.com/compose/install/), or: $release" ;;
	esac
fi
echo "docker compose v2 is missing and there is no Go to build it: $how; or install Go so install.sh builds it. Then re-run ./install.sh"
