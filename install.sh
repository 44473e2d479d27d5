#!/usr/bin/env bash
# toolgate's one-command set-up. Safe to re-run: it never overwrites a
# secret, and starting an already running stack changes nothing.
#
#   ./install.sh                 set up and start (profiles from the secrets you filled in)
#   ./install.sh --demo          the demo: fake upstreams, no home-lab apps needed
#   ./install.sh --profile arr   add a profile by hand (repeatable; kept by
#                                re-runs); --no-profile arr forgets it again
#   ./install.sh --extended      also start the extended Unraid diagnosis over
#                                SSH (unraid-ssh, profile extended; needs
#                                secrets/unraid-ssh.env); --no-extended stops it
#   ./install.sh --down          stop the stack (secrets and volumes stay)
#   ./install.sh --dry-run       print what would be done, do nothing
#
# More options: --project NAME (default toolgate), --secrets DIR (default
# TOOLGATE_SECRETS_DIR, else ./secrets), --openwebui NAME (container to
# connect to the clients network; default: the first of open-webui,
# Open-WebUI, openwebui that exists),
# --publish ADDR (publish the gateway on the host, e.g. 127.0.0.1:8080, for
# the stdio bridge), --approvals ADDR (publish the approval page on the
# host, e.g. 127.0.0.1:8081), --no-build (use the images already built), --env-file
# FILE (where the derived compose settings go; default ./.env).
#
# A re-run keeps --project, --secrets, --publish, --approvals, --extended
# and every --profile from the .env the last run wrote; options given now
# win. --no-publish, --no-approvals, --no-extended and --no-profile NAME
# turn them off again. --profile takes only the profiles compose defines.
# With --approvals the approval page's URL is TOOLGATE_APPROVAL_URL from
# the environment (kept by re-runs until --no-approvals), else from
# secrets/gateway.env (a TLS proxy's address; read afresh on every run),
# else the earlier one from the environment, else http://ADDR.
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)

# Empty: not given now, so the last run's setting (.env) or the default.
project=""
secrets_dir=${TOOLGATE_SECRETS_DIR:-}
publish=${TOOLGATE_PUBLISH:-}
approvals=${TOOLGATE_APPROVALS:-}
approval_url=${TOOLGATE_APPROVAL_URL:-}
no_publish=false
no_approvals=false
extended=""       # true or false when given now
openwebui=""
demo=false
down=false
dry_run=false
build=true
profiles=()       # given now with --profile
no_profiles=()    # given now with --no-profile
env_file=$root/.env
# Services whose profile turns on when secrets/<name>.env exists. Not
# unraid-ssh: its profile, extended, starts only with --extended.
known_services=(arr frigate ersatztv tuliprox homeassistant unraid)
# Services with write tools: each gets its own approval key.
write_services=(arr ersatztv tuliprox homeassistant unraid demo)
compose_version=v2.40.3

# The comment at the top; $0 may be relative to where we were before the cd.
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$root/$(basename "$0")"; }
say() { printf '%s\n' "$*"; }
die() {
	printf 'install.sh: %s\n' "$*" >&2
	exit 1
}
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }
# profile_name NAME: dies unless NAME is a compose profile name (.env keeps them comma-separated).
profile_name() {
	case $1 in
	[a-zA-Z0-9]*) case $1 in *[!a-zA-Z0-9_.-]*) ;; *) return 0 ;; esac ;;
	esac
	die "not a profile name: $1"
}
# defined_profiles: every profile the compose files define (compose.yaml,
# the file it includes, the overlays), one a line. Read from the files, not
# from compose: before the first run writes .env, compose refuses to load
# the project (TOOLGATE_SECRETS_DIR is required). Only the flow form
# "profiles: [a, b]" is read; TestInstallProfileMustExist holds this to
# compose/toolgate.yaml.
defined_profiles() {
	sed -n 's/^[[:space:]]*profiles:[[:space:]]*\[\(.*\)\][[:space:]]*$/\1/p' "$root/compose.yaml" "$root"/compose/*.yaml |
		tr ',' '\n' | tr -d " \t\"'" | sed '/^$/d' | sort -u
}
# refuse_mixes: the demo runs on its own. Its services answer to the real
# ones' names (arr-demo as arr) against fake upstreams, so a real profile
# beside it, or profile demo beside real services, would mix fakes and real
# applications behind the same names. Refused before anything is written.
refuse_mixes() {
	local p
	if $demo; then
		for p in "${profiles[@]}"; do
			die "--demo runs on its own (its services answer to the real ones' names, against fake upstreams): it cannot run beside profile $p; run ./install.sh --demo alone, or ./install.sh --profile $p without --demo; nothing was changed"
		done
		if $extended_given && $extended; then
			die "--demo runs on its own and has no unraid-ssh: it cannot run with --extended; run ./install.sh --extended without --demo; nothing was changed"
		fi
	elif in_list demo "${asked_profiles[@]}"; then
		if in_list demo "${profiles[@]}"; then
			die "--profile demo starts the demo's fake upstreams under the real services' names, beside your real services: refused; for the demo run ./install.sh --demo (on its own, it stops the real services), for a real install leave --profile demo out; nothing was changed"
		fi
		die "profile demo, kept from the last run ($env_file), would start the demo's fakes beside your real services: refused; run ./install.sh --no-profile demo to forget it (or ./install.sh --demo for the demo alone); nothing was changed"
	fi
}
in_list() { # in_list WORD LIST...: whether WORD is one of LIST
	local w=$1 x
	shift
	for x in "$@"; do [ "$x" = "$w" ] && return 0; done
	return 1
}
env_setting() { # env_setting FILE NAME: the value of NAME= in secrets/FILE (the last one)
	# The demo is the demo: nothing of the real settings applies to it.
	$demo && return 0
	[ -f "$secrets_dir/$1" ] || return 0
	sed -n "s/^[[:space:]]*$2=[[:space:]]*//p" "$secrets_dir/$1" | tail -n 1 | sed 's/^["'\'']//; s/["'\'']$//'
}
run() {
	if $dry_run; then
		printf 'would run: %s\n' "$*"
	else
		"$@"
	fi
}

while [ $# -gt 0 ]; do
	case $1 in
	--demo) demo=true ;;
	--down) down=true ;;
	--dry-run) dry_run=true ;;
	--no-build) build=false ;;
	--profile)
		[ $# -ge 2 ] || die "--profile needs a name"
		profile_name "$2"
		if [ "$2" = extended ]; then extended=true; else profiles+=("$2"); fi
		shift
		;;
	--no-profile)
		[ $# -ge 2 ] || die "--no-profile needs a name"
		profile_name "$2"
		if [ "$2" = extended ]; then extended=false; else no_profiles+=("$2"); fi
		shift
		;;
	--extended) extended=true ;;
	--no-extended) extended=false ;;
	--project)
		[ $# -ge 2 ] || die "--project needs a name"
		project=$2
		shift
		;;
	--secrets)
		[ $# -ge 2 ] || die "--secrets needs a directory"
		secrets_dir=$2
		shift
		;;
	--openwebui)
		[ $# -ge 2 ] || die "--openwebui needs a container name"
		openwebui=$2
		shift
		;;
	--env-file)
		[ $# -ge 2 ] || die "--env-file needs a file"
		env_file=$2
		shift
		;;
	--publish)
		[ $# -ge 2 ] || die "--publish needs an address such as 127.0.0.1:8080"
		publish=$2
		no_publish=false
		shift
		;;
	--no-publish)
		publish=""
		no_publish=true
		;;
	--approvals)
		[ $# -ge 2 ] || die "--approvals needs an address such as 127.0.0.1:8081"
		approvals=$2
		no_approvals=false
		shift
		;;
	--no-approvals)
		approvals=""
		no_approvals=true
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
# --demo --profile demo is the demo: nothing to remember for later runs.
if $demo && [ ${#profiles[@]} -gt 0 ]; then
	mapfile -t profiles < <(printf '%s\n' "${profiles[@]}" | grep -vxF demo || true)
fi
# Absolute, from --secrets or TOOLGATE_SECRETS_DIR: .env names it for compose.
if [ -n "$secrets_dir" ]; then
	secrets_dir=$(cd "$(dirname "$secrets_dir")" && pwd)/$(basename "$secrets_dir")
fi

# --- settings kept from the last run ---------------------------------------------
# Only a .env this script wrote is read back, and only these settings: the
# rest of it is derived again below.
env_marker="# written by install.sh; re-run it instead of editing"
previous() { # previous NAME: NAME's value in the .env the last run wrote, or nothing
	if [ -f "$env_file" ] && [ "$(head -n 1 "$env_file")" = "$env_marker" ]; then
		sed -n "s/^$1=//p" "$env_file" | tail -n 1
	fi
}
has_previous() { # has_previous NAME: whether that .env sets NAME, maybe to nothing (older ones lack some)
	[ -f "$env_file" ] && [ "$(head -n 1 "$env_file")" = "$env_marker" ] && grep -q "^$1=" "$env_file"
}
kept=()
if [ -z "$project" ]; then
	project=$(previous COMPOSE_PROJECT_NAME)
	if [ -n "$project" ] && [ "$project" != toolgate ]; then kept+=("--project $project"); fi
	project=${project:-toolgate}
fi
if [ -z "$secrets_dir" ]; then
	secrets_dir=$(previous TOOLGATE_SECRETS_DIR)
	if [ -n "$secrets_dir" ] && [ "$secrets_dir" != "$root/secrets" ]; then kept+=("--secrets $secrets_dir"); fi
	secrets_dir=${secrets_dir:-$root/secrets}
fi
if [ -z "$publish" ] && ! $no_publish; then
	publish=$(previous TOOLGATE_PUBLISH)
	if [ -n "$publish" ]; then kept+=("--publish $publish"); fi
fi
# The approval page's URL: TOOLGATE_APPROVAL_URL given now, else the one
# in secrets/gateway.env (approvals.yaml's environment: would otherwise
# hide it), else one given in the environment on an earlier run (a TLS
# proxy's), else the published address. Only a URL given in the
# environment is remembered (TOOLGATE_APPROVAL_URL_GIVEN): gateway.env's
# is read afresh, so deleting it there takes effect on the next run.
approval_url_given=$approval_url
if $no_approvals; then
	approval_url="" approval_url_given=""
elif [ -z "$approvals" ]; then
	approvals=$(previous TOOLGATE_APPROVALS)
	if [ -n "$approvals" ]; then kept+=("--approvals $approvals"); fi
fi
extended_given=false
if [ -n "$extended" ]; then
	extended_given=true
else
	extended=false
	if [ "$(previous TOOLGATE_EXTENDED)" = true ]; then
		extended=true
		kept+=(--extended)
	fi
fi
if [ -z "$approval_url_given" ] && ! $no_approvals; then
	if has_previous TOOLGATE_APPROVAL_URL_GIVEN; then
		approval_url_given=$(previous TOOLGATE_APPROVAL_URL_GIVEN)
	else
		# A .env of an older install.sh holds only the URL in use: given by
		# hand unless it is the published address or gateway.env's.
		approval_url_given=$(previous TOOLGATE_APPROVAL_URL)
		case $approval_url_given in
		"http://$(previous TOOLGATE_APPROVALS)" | "$(env_setting gateway.env TOOLGATE_APPROVAL_URL)") approval_url_given="" ;;
		esac
	fi
fi
if [ -z "$approval_url" ] && [ -n "$approvals" ]; then
	approval_url=$(env_setting gateway.env TOOLGATE_APPROVAL_URL)
	if [ -z "$approval_url" ] && [ -n "$approval_url_given" ]; then
		approval_url=$approval_url_given
		kept+=("TOOLGATE_APPROVAL_URL=$approval_url")
	fi
	approval_url=${approval_url:-http://$approvals}
fi
# Only profiles compose defines: a typo would start nothing, and be kept.
mapfile -t valid_profiles < <(defined_profiles)
[ ${#valid_profiles[@]} -gt 0 ] || die "found no profiles in $root/compose.yaml or $root/compose/*.yaml"
valid_list=$(printf '%s\n' "${valid_profiles[@]}" | paste -sd, - | sed 's/,/, /g')
IFS=, read -ra remembered_profiles <<<"$(previous TOOLGATE_PROFILES)"
unknown=()
for p in "${profiles[@]}" "${no_profiles[@]}"; do
	# --no-profile may name a remembered profile that no longer exists.
	if in_list "$p" "${valid_profiles[@]}" "${unknown[@]}"; then continue; fi
	if in_list "$p" "${no_profiles[@]}" && in_list "$p" "${remembered_profiles[@]}"; then continue; fi
	unknown+=("$p")
done
if [ ${#unknown[@]} -gt 0 ]; then
	bad="profile ${unknown[0]}"
	[ ${#unknown[@]} -eq 1 ] || bad="profiles $(printf '%s\n' "${unknown[@]}" | paste -sd, - | sed 's/,/, /g')"
	die "unknown $bad (valid profiles: $valid_list); nothing was changed"
fi
# Profiles turned on with --profile stay on until --no-profile NAME. One
# that compose no longer defines (renamed since) is dropped, and said so.
previous_profiles=()
for p in "${remembered_profiles[@]}"; do
	if [ -z "$p" ] || in_list "$p" "${valid_profiles[@]}"; then
		previous_profiles+=("$p")
	elif ! in_list "$p" "${no_profiles[@]}" && ! $down; then
		warn "profile $p, kept from the last run ($env_file), is no longer defined by compose (renamed or removed): dropped; valid profiles: $valid_list"
	fi
done
asked_profiles=()
for p in "${previous_profiles[@]}" "${profiles[@]}"; do
	if [ -n "$p" ] && ! in_list "$p" "${no_profiles[@]}" "${asked_profiles[@]}"; then asked_profiles+=("$p"); fi
done
for p in "${previous_profiles[@]}"; do
	if [ -n "$p" ] && ! in_list "$p" "${no_profiles[@]}" "${profiles[@]}"; then kept+=("--profile $p"); fi
done
refuse_mixes
# Settings install.sh derives for compose: one left in the environment
# would win over .env in every compose call (the demo's web with a real
# web.env, say), so they come from .env alone.
for v in COMPOSE_PROFILES COMPOSE_FILE; do
	if [ -n "${!v:-}" ]; then say "note: $v in the environment is ignored: install.sh chooses it (.env)"; fi
done
unset COMPOSE_PROFILES COMPOSE_FILE TOOLGATE_WEB_SETTINGS TOOLGATE_GATEWAY_SETTINGS TOOLGATE_WEB_DEMO_ENV \
	TOOLGATE_HA_CONFIG_DIR TOOLGATE_HA_CONFIG_MODE TOOLGATE_GID TOOLGATE_SEARXNG_DNS_1 TOOLGATE_SEARXNG_DNS_2 TOOLGATE_SEARXNG_DNS_3
# Images are tagged per compose project (toolgate/<name>:<project>), so a
# second checkout installed under another --project never overwrites this
# one's images; TOOLGATE_TAG in the environment chooses another tag.
# Exported: scripts/images.sh builds with it, and --no-build takes the
# gateway binary from the image of that tag.
image_tag=${TOOLGATE_TAG:-$project}
export TOOLGATE_TAG=$image_tag

if [ ${#kept[@]} -gt 0 ]; then
	say "== kept from the last run ($env_file): ${kept[*]}"
	say "   (options given now win; --no-publish, --no-approvals, --no-extended and --no-profile NAME turn them off)"
fi

compose() {
	if [ -f "$env_file" ]; then
		docker compose --env-file "$env_file" --project-name "$project" --project-directory "$root" "$@"
	else
		docker compose --project-name "$project" --project-directory "$root" "$@"
	fi
}

# --- prerequisites -----------------------------------------------------------
docker info >/dev/null 2>&1 || die "cannot reach a Docker engine: is Docker installed and running, and may this user use it (docker group or root)?"
if ! docker compose version >/dev/null 2>&1; then
	if command -v go >/dev/null 2>&1; then
		say "== docker compose v2 is missing: building $compose_version from the Go module proxy (a few minutes, once)"
		if ! $dry_run; then
			dir=$(go mod download -json "github.com/docker/compose/v2@$compose_version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
			[ -n "$dir" ] || die "could not download docker compose $compose_version"
			mkdir -p "$HOME/.docker/cli-plugins"
			(cd "$dir" && CGO_ENABLED=0 go build -trimpath -o "$HOME/.docker/cli-plugins/docker-compose" ./cmd)
			docker compose version >/dev/null 2>&1 || die "built docker compose but 'docker compose' still fails"
		fi
	else
		die "$(scripts/compose-hint.sh)"
	fi
fi

if $down; then
	say "== stopping project $project (secrets in $secrets_dir and the volumes — pins, tickets, YAML backups — stay)"
	# Containers of others (OpenWebUI) would keep the clients network alive.
	for c in $(docker network inspect -f '{{range .Containers}}{{.Name}} {{end}}' "${project}_clients" 2>/dev/null); do
		if [ "$(docker container inspect -f '{{index .Config.Labels "com.docker.compose.project"}}' "$c" 2>/dev/null)" != "$project" ]; then
			run docker network disconnect "${project}_clients" "$c"
		fi
	done
	run compose --profile '*' down --remove-orphans
	exit 0
fi

# The host's Go builds the binaries, else a Go container: settled (and
# its image pulled) before anything is written; else one line what to do.
if $build; then
	run scripts/build.sh --check || exit 1
fi

# --- secrets -----------------------------------------------------------------
# Files from secrets.example/ are copied once and never overwritten; the
# gateway's own keys are generated if absent.
random_secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

new_file() { # new_file PATH: creates an empty mode-600 file unless it exists
	if $dry_run; then
		say "would create $1"
		return
	fi
	(umask 077 && : >"$1")
}

say "== secrets in $secrets_dir"
run mkdir -p "$secrets_dir/gateway"
run chmod 700 "$secrets_dir" "$secrets_dir/gateway"
while IFS= read -r -d '' src; do
	rel=${src#secrets.example/}
	dst=$secrets_dir/$rel
	if [ ! -e "$dst" ]; then
		run mkdir -p "$(dirname "$dst")"
		if ! $dry_run; then (umask 077 && cp "$src" "$dst"); else say "would copy $src to $dst"; fi
	fi
done < <(find secrets.example -type f -print0)

run mkdir -p "$secrets_dir/demo"
for name in gateway/admin_token gateway/approval_key gateway/user_jwt_secret gateway/policy_token gateway/service_token_web gateway/service_token_arr \
	gateway/service_token_frigate gateway/service_token_ersatztv gateway/service_token_tuliprox gateway/service_token_homeassistant gateway/service_token_unraid gateway/service_token_unraid-ssh gateway/service_token_demo \
	demo/api_key demo/frigate_password demo/ha_token demo/unraid_api_key demo/tuliprox_username demo/tuliprox_password; do
	f=$secrets_dir/$name
	if [ ! -s "$f" ]; then
		new_file "$f"
		$dry_run || random_secret >"$f"
		say "generated $name"
	fi
done

# searxng_settings KEY: the bundled SearXNG's settings.yml. SearXNG's own
# defaults plus what toolgate's web service needs: the JSON format (off by
# default), no limiter (it would answer the one internal client 429) and a
# secret key of its own (SearXNG refuses to start with the default one).
searxng_settings() {
	cat <<EOF
# Written by install.sh for the stack's SearXNG (docs/services/web.md); it
# never overwrites this file. Everything not set here is SearXNG's default.
use_default_settings: true
general:
  instance_name: toolgate
server:
  secret_key: "$1"
  limiter: false
  public_instance: false
  image_proxy: false
search:
  formats: [html, json]
EOF
}

# SearXNG for web_search: the stack's own (profile searxng) unless
# secrets/web.env names another one. The demo has its fake (searxng-demo)
# and never pulls an image.
searxng=false
if ! $demo; then
	case $(env_setting web.env WEB_SEARXNG_URL) in
	"" | http://searxng:8080 | http://searxng:8080/) searxng=true ;;
	esac
fi
if $searxng && [ ! -s "$secrets_dir/searxng/settings.yml" ]; then
	# Never overwritten, like every secret: edit it to change engines.
	run mkdir -p "$secrets_dir/searxng"
	new_file "$secrets_dir/searxng/settings.yml"
	$dry_run || searxng_settings "$(random_secret)" >"$secrets_dir/searxng/settings.yml"
	say "generated searxng/settings.yml"
fi

# The gateway binary of this tree, for the subcommands below; built once,
# and only when one of them has work to do.
gateway_bin=$root/compose/.build/bin/gateway
gateway_built=false
build_gateway() {
	$gateway_built && return
	mkdir -p "$(dirname "$gateway_bin")"
	# With --no-build, the gateway of the image the stack runs when it runs
	# on this host (images built elsewhere and docker load-ed: no Go needed).
	if ! $build && gateway_from_image; then
		gateway_built=true
		return
	fi
	scripts/build.sh "$gateway_bin" ./services/gateway >/dev/null || die "could not build the gateway for this host"
	gateway_built=true
}
gateway_from_image() {
	local cid image="toolgate/gateway:${TOOLGATE_TAG:-local}"
	docker image inspect "$image" >/dev/null 2>&1 || return 1
	cid=$(docker create "$image") || return 1
	docker cp "$cid:/app" "$gateway_bin.new" >/dev/null 2>&1
	docker rm "$cid" >/dev/null 2>&1 || true
	# An image for another architecture does not run here (exit 126).
	if [ -x "$gateway_bin.new" ] && "$gateway_bin.new" help >/dev/null 2>&1; then
		mv "$gateway_bin.new" "$gateway_bin"
		return 0
	fi
	rm -f "$gateway_bin.new"
	return 1
}

# Each service with write tools verifies approvals with its own key, derived
# from gateway/approval_key (the gateway signs with it); services without
# write tools get none. Derived state: written when missing or older than
# gateway/approval_key (deleting that file and re-running rotates them all).
master=$secrets_dir/gateway/approval_key
for s in "${write_services[@]}"; do
	f=$secrets_dir/gateway/approval_key_$s
	if [ -s "$f" ] && ! [ "$master" -nt "$f" ]; then
		continue
	fi
	if $dry_run; then
		say "would derive gateway/approval_key_$s from gateway/approval_key"
		continue
	fi
	build_gateway
	key=$(TOOLGATE_APPROVAL_KEY_FILE=$master "$gateway_bin" approval-key "$s")
	[ -f "$f" ] || new_file "$f"
	printf '%s\n' "$key" >"$f"
	say "derived gateway/approval_key_$s"
done

# Client tokens are stored as hashes only: a new one is printed once, at
# the end, and nowhere else.
tokens=$secrets_dir/gateway/client_tokens
# What the tokens file held before this run: a run that stops before its
# switch, or whose switch is undone, puts it back (restore_tokens), so the
# stack that runs keeps exactly its own tokens (the demo its demo-admin).
tokens_before=""
[ -f "$tokens" ] && tokens_before=$(cat "$tokens")
minted=""
mint_token() { # mint_token NAME GROUP [user=jwt]: a new client token in $minted, its hash line in the tokens file
	build_gateway
	local out
	out=$("$gateway_bin" token "$@")
	minted=$(printf '%s\n' "$out" | sed -n 's/^token .*: //p')
	[ -n "$minted" ] || die "gateway token $1 printed no token"
	[ -f "$tokens" ] || new_file "$tokens"
	printf '%s\n' "$out" | grep '^sha256:' >>"$tokens"
}
has_token() { [ -f "$tokens" ] && grep -q "^sha256:[^ ]* $1 " "$tokens"; }

# A real install keeps no demo credential: the demo's admin token (every
# service, no end user, printed on a screen) goes. The gateway follows the
# tokens file while it runs (within a second; docs/services/gateway.md), so
# nothing is restarted for it, and nothing depends on this run finishing.
if ! $demo && has_token demo-admin; then
	if $dry_run; then
		say "would remove the demo's admin token (demo-admin) from $tokens"
	else
		remaining_tokens=$(grep -v "^sha256:[^ ]* demo-admin " "$tokens" || true)
		# Written in place: the file keeps its owner and mode.
		if [ -n "$remaining_tokens" ]; then printf '%s\n' "$remaining_tokens" >"$tokens"; else : >"$tokens"; fi
		say "removed the demo's admin token (demo-admin) from $tokens: the gateway refuses it from now on"
	fi
fi
first_token=""
if ! { [ -f "$tokens" ] && grep -q '^sha256:' "$tokens"; }; then
	if $dry_run; then
		say "would create a first client token (openwebui, group users, user=jwt) in $tokens"
	else
		# OpenWebUI's end users come from its signed user token (docs/clients.md).
		mint_token openwebui users user=jwt
		first_token=$minted
	fi
fi
# The demo's token for every other client (curl, MCP Inspector, Hermes,
# Claude Desktop): the openwebui token needs OpenWebUI's signed user token
# on every call. Group admins and no end user, so it may use every service.
demo_token=""
if $demo && ! has_token demo-admin; then
	if $dry_run; then
		say "would create a client token for the demo (demo-admin, group admins) in $tokens"
	else
		mint_token demo-admin admins
		demo_token=$minted
	fi
fi

# Containers run as uid 65532 and must read the secrets. As root: hand the
# secrets to 65532 (mode 600). Otherwise: keep them yours, readable by your
# group (640), and give the containers that group as a supplementary one.
if [ "$(id -u)" -eq 0 ]; then
	gid=65532
	run chown -R "65532:$gid" "$secrets_dir"
	file_mode=600 dir_mode=700
else
	gid=$(id -g)
	file_mode=640 dir_mode=750
fi
if ! $dry_run; then
	find "$secrets_dir" -type f -exec chmod "$file_mode" {} +
	find "$secrets_dir" -type d -exec chmod "$dir_mode" {} +
fi

# --- profiles ----------------------------------------------------------------
ssh_env=$secrets_dir/unraid-ssh.env
if $demo; then
	# The demo's services answer to the same names as the real ones; a mix
	# was refused above (refuse_mixes).
	profiles=(demo)
else
	profiles=("${asked_profiles[@]}")
	for s in "${known_services[@]}"; do
		[ -f "$secrets_dir/$s.env" ] || continue
		profiles+=("$s")
	done
	$searxng && profiles+=(searxng)
	# The extended Unraid diagnosis (SSH into the server) is never part of
	# the default start: only when asked for, and then kept.
	if $extended && [ -f "$ssh_env" ]; then
		profiles+=(extended)
	elif $extended && $extended_given; then
		die "--extended starts unraid-ssh, which needs $ssh_env (docs/services/unraid.md, \"Extended diagnosis\")"
	elif $extended; then
		say "note: unraid-ssh stays off: $ssh_env is gone (--no-extended forgets it)"
	elif [ -f "$ssh_env" ]; then
		say "note: $ssh_env exists, but the extended Unraid diagnosis starts only with ./install.sh --extended"
	fi
	for p in "${no_profiles[@]}"; do
		if in_list "$p" "${profiles[@]}"; then
			say "note: profile $p stays on: a file in $secrets_dir turns it on (docs/install.md, \"Profiles\")"
		fi
	done
fi
profile_list=$(printf '%s\n' "${profiles[@]}" | sort -u | paste -sd, -)
say "== profiles: web (always)${profile_list:+, $profile_list}"

# Home Assistant's configuration directory on this host (for the YAML
# tools) and whether it is mounted writable: HA_CONFIG_HOST_DIR and
# HA_YAML_WRITE in secrets/homeassistant.env.
ha_config_dir=$(env_setting homeassistant.env HA_CONFIG_HOST_DIR)
ha_config_mode=ro
[ "$(env_setting homeassistant.env HA_YAML_WRITE)" = "true" ] && ha_config_mode=rw
if [ -n "$ha_config_dir" ] && [ ! -d "$ha_config_dir" ]; then
	die "HA_CONFIG_HOST_DIR in $secrets_dir/homeassistant.env is not a directory"
fi
if [ -n "$ha_config_dir" ] && [ -z "$(env_setting homeassistant.env HA_CONFIG_DIR)" ]; then
	say "note: HA_CONFIG_HOST_DIR is set but HA_CONFIG_DIR is not: the YAML tools stay off (set HA_CONFIG_DIR=/config)"
fi

# The bundled SearXNG asks its engines through the resolver the web
# service takes (WEB_DNS, else AI_DNS, in secrets/web.env): with a broken
# default resolver every engine would fail while the tools look fine.
# Docker's dns setting takes IP addresses on port 53, three at most (as
# resolv.conf does); compose/searxng-dns.yaml sets them.
searxng_dns=()
if $searxng; then
	dns_var=WEB_DNS dns_value=$(env_setting web.env WEB_DNS)
	if [ -z "$dns_value" ]; then dns_var=AI_DNS dns_value=$(env_setting web.env AI_DNS); fi
	IFS=, read -ra dns_list <<<"$dns_value"
	for server in "${dns_list[@]}"; do
		server=${server//[[:space:]]/}
		port=53
		case $server in
		"") continue ;;
		\[*\]:*) port=${server##*]:} server=${server%]:*} server=${server#[} ;;
		\[*\]) server=${server#[} server=${server%]} ;;
		*:*:*) ;; # a bare IPv6 address
		*:*) port=${server##*:} server=${server%:*} ;;
		esac
		case $server in
		*[!0-9a-fA-F.:]* | "") die "$dns_var in $secrets_dir/web.env: $server is not an IP address; the bundled SearXNG needs the DNS servers as addresses; nothing was changed" ;;
		esac
		if [ "$port" != 53 ]; then
			die "$dns_var in $secrets_dir/web.env names a DNS server on port $port: the bundled SearXNG can use DNS servers on port 53 only (Docker's dns setting has no port); use port 53, or set WEB_SEARXNG_URL to a SearXNG you run; nothing was changed"
		fi
		searxng_dns+=("$server")
	done
	if [ ${#searxng_dns[@]} -gt 3 ]; then
		say "note: $dns_var names ${#searxng_dns[@]} DNS servers; the bundled SearXNG uses the first three (resolv.conf takes no more)"
		searxng_dns=("${searxng_dns[@]:0:3}")
	fi
fi

# .env is rewritten on every run: compose reads it, so a plain `docker
# compose up` later uses the same settings, and the next run reads back the
# settings it keeps (above). Each service's settings file is named here:
# the demo's services get the demo's and none of secrets/ (a saved web.env
# would point the demo's web at a real SearXNG).
compose_files=compose.yaml
[ -n "$publish" ] && compose_files=$compose_files:compose/publish.yaml
[ -n "$approvals" ] && compose_files=$compose_files:compose/approvals.yaml
[ ${#searxng_dns[@]} -gt 0 ] && compose_files=$compose_files:compose/searxng-dns.yaml
if $demo; then
	web_settings=compose/env/web.demo.env gateway_settings=compose/env/none.env
else
	web_settings=$secrets_dir/web.env gateway_settings=$secrets_dir/gateway.env
fi
env_content="$env_marker
COMPOSE_PROJECT_NAME=$project
COMPOSE_PROFILES=$profile_list
COMPOSE_FILE=$compose_files
TOOLGATE_TAG=$image_tag
TOOLGATE_SECRETS_DIR=$secrets_dir
TOOLGATE_GID=$gid
TOOLGATE_PUBLISH=$publish
TOOLGATE_APPROVALS=$approvals
TOOLGATE_APPROVAL_URL=$approval_url
TOOLGATE_APPROVAL_URL_GIVEN=$approval_url_given
TOOLGATE_EXTENDED=$extended
TOOLGATE_PROFILES=$(printf '%s\n' "${asked_profiles[@]}" | paste -sd, -)
TOOLGATE_HA_CONFIG_DIR=$ha_config_dir
TOOLGATE_HA_CONFIG_MODE=$ha_config_mode
TOOLGATE_WEB_SETTINGS=$web_settings
TOOLGATE_GATEWAY_SETTINGS=$gateway_settings
TOOLGATE_SEARXNG_DNS_1=${searxng_dns[0]:-}
TOOLGATE_SEARXNG_DNS_2=${searxng_dns[1]:-}
TOOLGATE_SEARXNG_DNS_3=${searxng_dns[2]:-}"

# --- prepare, then switch --------------------------------------------------------
# Nothing of the running stack changes until the new one has all it needs:
# its compose configuration validates with the new .env, its images are
# built and the one pulled image (SearXNG) is here. Only then is .env
# replaced and the stack switched. A switch that fails anyway puts the
# previous stack back, with its .env and its tokens. Each failure says
# what failed and what to do.
next_env=$env_file.next
prev_env=""
if [ -f "$env_file" ] && [ "$(head -n 1 "$env_file")" = "$env_marker" ]; then prev_env=$(cat "$env_file"); fi

# restore_tokens: the tokens file as it was before this run (written in
# place, so the file keeps its owner and mode); the gateway follows it.
restore_tokens() {
	[ -f "$tokens" ] || return 0
	[ "$(cat "$tokens")" = "$tokens_before" ] && return 0
	if [ -n "$tokens_before" ]; then printf '%s\n' "$tokens_before" >"$tokens"; else : >"$tokens"; fi
	say "the tokens file is as it was before this run ($tokens)"
}
# not_switched MESSAGE: a failure before the switch; nothing of the stack
# was touched.
not_switched() {
	rm -f "$next_env"
	restore_tokens
	die "$1; the running stack, .env and the tokens were left as they were"
}
# searxng_hint: what to do when the bundled SearXNG cannot be had.
searxng_hint() {
	printf '%s' "SearXNG is the search engine behind web_search, and the one image Docker pulls: pull it where a registry is reachable and bring it here (docker save searxng/searxng:latest, then docker load on this host), or set WEB_SEARXNG_URL in $secrets_dir/web.env to a SearXNG you run (install.sh then pulls nothing; docs/services/web.md, \"Setting up SearXNG\"). Without any SearXNG set WEB_SEARXNG_URL to the one you will run later: web_fetch works, web_search answers that SearXNG is unreachable"
}
compose_next() { docker compose --env-file "$next_env" --project-name "$project" --project-directory "$root" "$@"; }

prepare_stack() {
	local out img missing=()
	if $dry_run; then
		printf 'would write %s:\n%s\n' "$env_file" "$env_content"
		$build && run scripts/images.sh
		say "would check the compose configuration and that every image is here (pulling SearXNG's if missing)"
		return 0
	fi
	printf '%s\n' "$env_content" >"$next_env"
	if ! out=$(compose_next config --quiet 2>&1); then
		not_switched "the compose configuration of profiles ${profile_list:-(none)} does not validate: $(printf '%s\n' "$out" | tail -n 3 | paste -sd ' ' -)"
	fi
	if $build; then
		say "== building images (no registry: scripts/images.sh), tagged $image_tag"
		scripts/images.sh || not_switched "building the images failed (above)"
	fi
	for img in $(compose_next config --images 2>/dev/null | sort -u); do
		docker image inspect "$img" >/dev/null 2>&1 || missing+=("$img")
	done
	for img in "${missing[@]}"; do
		case $img in
		toolgate/*) not_switched "image $img is missing: run ./install.sh without --no-build (scripts/images.sh builds it)" ;;
		esac
		say "== pulling $img (not here yet)"
		if ! out=$(docker pull "$img" 2>&1); then
			printf '%s\n' "$out" >&2
			case $img in
			*searxng*) not_switched "Docker could not pull $img: $(printf '%s\n' "$out" | tail -n 1). $(searxng_hint)" ;;
			*) not_switched "Docker could not pull $img: $(printf '%s\n' "$out" | tail -n 1)" ;;
			esac
		fi
	done
	mv "$next_env" "$env_file"
}

# switch_stack: exact profile switches, then the start. The containers of
# services whose profile is off now (the demo after a real install, arr
# once secrets/arr.env is gone) are stopped and removed before the start,
# so two containers never answer to one name (arr-demo and arr both as
# arr). Only this project's service containers are looked at; one-off
# `compose run` containers are left alone.
switch_stack() {
	local active svc stale=()
	if $dry_run; then
		say "would remove the containers of services outside profiles ${profile_list:-(none)}"
	else
		active=$(compose config --services)
		for svc in $(docker ps -a --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.oneoff=False" \
			--format '{{.Label "com.docker.compose.service"}}' | sort -u); do
			printf '%s\n' "$active" | grep -qxF "$svc" || stale+=("$svc")
		done
		if [ ${#stale[@]} -gt 0 ]; then
			say "== removing containers of services no longer active: ${stale[*]}"
			compose --profile '*' rm --stop --force "${stale[@]}" || return 1
		fi
	fi
	say "== starting; waiting until every container is healthy"
	run compose up -d --wait --wait-timeout 180
}

# switch_failed: say which containers did not come up and how to look, put
# the previous stack back when one ran (same project, .env of install.sh),
# and stop.
switch_failed() {
	local bad
	bad=$(compose ps -a --format '{{.Service}}: {{.Status}}' 2>/dev/null | grep -v '(healthy)' | sed 's/^/  /' || true)
	printf 'install.sh: the switch to profiles %s failed: compose could not start every container (its error is above).\n' "web${profile_list:+,$profile_list}" >&2
	[ -z "$bad" ] || printf 'Not healthy:\n%s\n' "$bad" >&2
	printf 'Look at why with: docker compose --project-name %s logs SERVICE (docs/troubleshooting.md).\n' "$project" >&2
	case $bad in *searxng*) printf '%s.\n' "$(searxng_hint)" >&2 ;; esac
	if ! $was_running || [ -z "$prev_env" ] || [ "$(printf '%s\n' "$prev_env" | sed -n 's/^COMPOSE_PROJECT_NAME=//p')" != "$project" ]; then
		restore_tokens
		die "no earlier stack of project $project to go back to: fix the cause and run ./install.sh again (./install.sh --down stops what started)"
	fi
	if [ "$prev_env" = "$env_content" ]; then
		# The same settings as before: nothing to go back to but this.
		restore_tokens
		die "the settings are those of the last run, so there is no other stack to go back to: fix the cause and run ./install.sh again"
	fi
	say "== putting the previous stack back"
	printf '%s\n' "$prev_env" >"$env_file"
	restore_tokens
	profile_list=$(printf '%s\n' "$prev_env" | sed -n 's/^COMPOSE_PROFILES=//p')
	if switch_stack; then
		die "the previous stack (profiles web${profile_list:+,$profile_list}) runs again, with its .env and tokens; fix the cause and run ./install.sh again"
	fi
	die "the previous stack (profiles web${profile_list:+,$profile_list}) did not start either: see docker compose --project-name $project ps, fix the cause and run ./install.sh again"
}

was_running=false
if ! $dry_run && [ -n "$(docker ps -q --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.oneoff=False")" ]; then
	was_running=true
fi
prepare_stack
switch_stack || switch_failed

# --- readiness -----------------------------------------------------------------
# Healthy means the process serves; ready means its upstream answers and
# accepts the credentials. Each tool service says which (its /readyz, read
# by `/app readycheck` inside the container), naming the setting to fix. An
# application that is merely down does not fail the install.
not_ready=0
if ! $dry_run; then
	say "== readiness"
	for svc in $(compose ps --services --status running | sort); do
		case $svc in
		gateway | policy | fakes | searxng) continue ;; # no upstream of their own (web reports SearXNG)
		esac
		if msg=$(compose exec -T "$svc" /app readycheck 2>&1); then
			say "  $svc: OK"
		else
			say "  $svc: ${msg:-not ready}"
			not_ready=$((not_ready + 1))
		fi
	done
fi

# --- OpenWebUI -----------------------------------------------------------------
network=${project}_clients
candidates=(open-webui Open-WebUI openwebui)
[ -n "$openwebui" ] && candidates=("$openwebui")
for c in "${candidates[@]}"; do
	if docker container inspect "$c" >/dev/null 2>&1; then
		if docker container inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$c" | tr ' ' '\n' | grep -qx "$network"; then
			say "== $c is already on $network"
		else
			run docker network connect "$network" "$c"
			say "== connected $c to $network"
		fi
		break
	fi
done

# --- how to connect ------------------------------------------------------------
# The services running, and the endpoints (/mcp/<name>) each is offered as:
# arr, ersatztv and homeassistant as the gateway's default toolsets
# (services/gateway/app/toolsets.go), since every endpoint a client adds
# puts its tool schemas into every prompt.
services=(web)
for p in "${profiles[@]}"; do
	case $p in
	demo) services+=(arr frigate ersatztv tuliprox homeassistant unraid demo) ;;
	extended) services+=(unraid-ssh) ;;
	searxng) ;; # behind web_search, no endpoint of its own
	*) services+=("$p") ;;
	esac
done
mapfile -t services < <(printf '%s\n' "${services[@]}" | sort -u)
endpoints_of() { # endpoints_of SERVICE...: their endpoint names
	local s
	for s in "$@"; do
		case $s in
		arr) echo sonarr radarr prowlarr ;;
		ersatztv) echo ersatztv-channels ersatztv-playouts ersatztv-collections ersatztv-library ;;
		homeassistant) echo homeassistant-assist homeassistant-config ;;
		*) echo "$s" ;;
		esac
	done
}
# may_use GROUP: the running services GROUP may use, as the policy's data
# says (policies/data/toolgate/groups.json, "*" for every one); anything
# else would list no tools for it.
may_use() {
	local allowed s
	allowed=" $(tr -d ' \t\r\n' <policies/data/toolgate/groups.json |
		sed -n "s/.*\"$1\":{[^}]*\"services\":\[\([^]]*\)\].*/\1/p" | tr -d '"' | tr ',' ' ') "
	for s in "${services[@]}"; do
		case $allowed in *" * "* | *" $s "*) echo "$s" ;; esac
	done
}
# Which endpoints show each client token tools, asked of the running
# gateway after the switch (`gateway endpoints list --refresh`: it reads
# every service's tools again first, then lists per client what its own
# tools/list shows): an endpoint whose service has nothing configured
# behind it (/mcp/radarr with only Sonarr set) is not printed. Lines of
# CLIENT GROUPS ENDPOINT TOOLS in $listed; when the gateway cannot be
# asked, $listed_ok stays false and the endpoints the policy's groups allow
# are printed instead, said so.
listed="" listed_ok=false
ask_endpoints() {
	local out="" _
	$dry_run && return 0
	for _ in 1 2 3 4 5; do
		if out=$(compose exec -T gateway /app endpoints list --refresh 2>&1); then
			listed=$(printf '%s\n' "$out" | awk 'NR > 1 && NF == 4')
			listed_ok=true
			return 0
		fi
		# Only a gateway not listening yet is worth waiting for.
		case $out in *"cannot reach the admin API"*) sleep 2 ;; *) break ;; esac
	done
	say "note: could not ask the gateway which endpoints have tools ($(printf '%s\n' "$out" | tail -n 1)); listing the endpoints of the services each group may use instead"
}
client_endpoints() { # client_endpoints NAME: the endpoints that show client NAME tools
	printf '%s\n' "$listed" | awk -v c="$1" '$1 == c && $4 > 0 { print $3 }'
}
listed_clients() { # listed_clients: every client the gateway listed, with its groups
	printf '%s\n' "$listed" | awk 'NF == 4 && !seen[$1]++ { print $1, $2 }'
}
# print_token NAME GROUP TOKEN LINE...: a new token (this is the one place
# it is shown), what it is for, and the endpoints that show it tools.
print_token() {
	local name=$1 group=$2 token=$3 line e allowed denied all
	shift 3
	say ""
	say "Client token $name, group $group (shown once; it is stored only as a hash):"
	say "  $token"
	for line in "$@"; do say "  $line"; done
	if $listed_ok; then
		mapfile -t allowed < <(client_endpoints "$name")
		mapfile -t all < <(printf '%s\n' "$listed" | awk 'NF == 4 && $4 > 0 { print $3 }' | sort -u)
		say "  Its MCP URLs (the endpoints with tools for it; /mcp/discover finds them on demand):"
	else
		# shellcheck disable=SC2046 # one service name a word
		mapfile -t allowed < <(endpoints_of $(may_use "$group") | tr ' ' '\n')
		mapfile -t all < <(endpoints_of "${services[@]}" | tr ' ' '\n')
		say "  Its MCP URLs (the services group $group may use; /mcp/discover finds their tools on demand):"
	fi
	for e in "${allowed[@]}" discover; do [ -n "$e" ] && say "    http://gateway:8080/mcp/$e"; done
	denied=()
	for e in "${all[@]}"; do
		[ -n "$e" ] || continue
		printf '%s\n' "${allowed[@]}" | grep -qxF "$e" || denied+=("$e")
	done
	if [ ${#denied[@]} -gt 0 ]; then
		say "  Not for this token (they would list no tools): $(printf '/mcp/%s ' "${denied[@]}")"
	fi
}

ask_endpoints
say ""
if [ "$not_ready" -gt 0 ]; then
	say "toolgate is up, but $not_ready service(s) are not ready (see readiness above): fix the setting each names"
	say "in $secrets_dir/<service>.env and re-run ./install.sh."
else
	say "toolgate is up."
fi
say "MCP URLs (Streamable HTTP) are reachable from containers on the $network network."
[ -n "$publish" ] && say "On this host the same paths are under http://$publish/mcp/…"
[ -n "$approvals" ] && say "Console: http://$approvals/ (activity, what waits for you, services, why a decision; docs/console.md)"
[ -n "$approvals" ] && say "Approval page: http://$approvals/approvals/ (sign in with $secrets_dir/gateway/admin_token)"
if [ -z "$first_token$demo_token" ] && $listed_ok; then
	say "The endpoints with tools for each client token ($tokens), as http://gateway:8080/mcp/<name>:"
	while read -r c g; do
		list=$(client_endpoints "$c" | paste -sd ' ' -)
		say "  $c (groups $g): ${list:-none (its groups allow none of the running services)}"
	done < <(listed_clients)
	say "  every service, found on demand: http://gateway:8080/mcp/discover"
elif [ -z "$first_token$demo_token" ]; then
	for e in $(endpoints_of "${services[@]}"); do say "  one service:   http://gateway:8080/mcp/$e"; done
	say "  every service, found on demand: http://gateway:8080/mcp/discover"
	say "A client sees only what its token's groups may use (policies/data/toolgate/groups.json)."
fi
if [ -n "$first_token" ]; then
	other="any other client (curl, MCP Inspector, Hermes, Claude Desktop) gets \"missing end-user token\" with it"
	if $demo; then other="$other: use the demo-admin token below"; else other="$other: give each its own token (docs/clients.md)"; fi
	print_token openwebui users "$first_token" \
		"For OpenWebUI: every call must carry OpenWebUI's signed user token (set-up below);" "$other."
fi
if [ -n "$demo_token" ]; then
	print_token demo-admin admins "$demo_token" \
		"For curl, MCP Inspector, Hermes, Claude Desktop (docs/clients.md): no end user, no signed user token." \
		"It is valid while the demo runs; a real install (./install.sh without --demo) removes it."
	addr=${publish:-127.0.0.1:8080}
	say ""
	if [ -n "$publish" ]; then
		say "Try it on this host:"
	else
		say "Try it on this host once the gateway is published there (./install.sh --demo --publish $addr):"
	fi
	say "  read -rs TOOLGATE_TOKEN    # paste the demo-admin token, then Enter"
	say "  curl -s http://$addr/mcp/demo -H \"Authorization: Bearer \$TOOLGATE_TOKEN\" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: demo_echo' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"demo_echo\",\"arguments\":{\"text\":\"hello\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}'"
fi
say ""
say "OpenWebUI: Admin Settings → External Tools → add a server of type \"MCP (Streamable HTTP)\","
if [ -n "$first_token" ]; then
	say "URL http://gateway:8080/mcp/<name>, authentication Bearer with the openwebui token above."
else
	say "URL http://gateway:8080/mcp/<name>, authentication Bearer with a client token: the one the first run of"
	say "install.sh printed, or a new one (docs/install.md, gateway/client_tokens)."
fi
say "So the gateway knows who is asking, set in OpenWebUI's environment (the openwebui token needs it):"
say "  ENABLE_FORWARD_USER_INFO_HEADERS=true"
say "  FORWARD_USER_INFO_HEADER_JWT_SECRET=<the content of $secrets_dir/gateway/user_jwt_secret>"
say "More: docs/clients.md. Stop with ./install.sh --down."
