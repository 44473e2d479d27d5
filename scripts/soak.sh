#!/usr/bin/env bash
# A bounded soak of the demo stack (not part of CI): brings up
# `./install.sh --demo` under its own compose project with the gateway
# published on loopback, runs N MCP clients (bench/soak) for M minutes —
# reads of every service and the demo's preview → confirm write — and reads
# every container's memory (docker stats) at the start, the middle and the
# end. It fails on any call error (a "busy" answer is retried, as it asks,
# and counted apart), on a container that restarted, and on a toolgate
# container whose memory grew by more than the threshold from the middle to
# the end (the first half is warm-up: pools, caches, sessions). The demo's
# fakes container, which stands in for the home-lab applications, is shown
# but not judged. The stack is removed afterwards.
#
#   scripts/soak.sh [--minutes 10] [--clients 16] [--max-growth-mib 8] [--max-growth-pct 20] [--no-build]
#
# Images are tagged ${TOOLGATE_TAG:-local}; run it alone on the Docker host.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10
clients=16
max_mib=8
max_pct=20
build=()
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=$2; shift ;;
	--clients) clients=$2; shift ;;
	--max-growth-mib) max_mib=$2; shift ;;
	--max-growth-pct) max_pct=$2; shift ;;
	--no-build) build=(--no-build) ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

project=tgsoak$$
work=$(mktemp -d)
compose=(docker compose --env-file "$work/env" --project-name "$project" --project-directory .)
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	"${compose[@]}" --profile '*' down --volumes --remove-orphans --timeout 5 >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

# A loopback port nobody listens on.
port=""
for p in $(shuf -i 20000-40000 -n 50); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		port=$p
		break
	fi
done
[ -n "$port" ] || { echo "soak.sh: no free loopback port" >&2; exit 1; }

echo "== starting the demo stack ($project, gateway on 127.0.0.1:$port)"
./install.sh --demo --project "$project" --secrets "$work/secrets" --env-file "$work/env" \
	--publish "127.0.0.1:$port" "${build[@]}" >"$work/install.log" 2>&1 || {
	cat "$work/install.log" >&2
	exit 1
}

# Its own client (groups users and nas: every demo service), read by the
# gateway at start.
out=$(compose/.build/bin/gateway token soak users,nas)
printf '%s\n' "$out" | sed -n 's/^token .*: //p' >"$work/token"
printf '%s\n' "$out" | grep '^sha256:' >>"$work/secrets/gateway/client_tokens"
docker restart "$project-gateway-1" >/dev/null
for _ in $(seq 60); do
	[ "$(docker inspect -f '{{.State.Health.Status}}' "$project-gateway-1")" = healthy ] && break
	sleep 1
done

mapfile -t containers < <(docker ps -q --filter "label=com.docker.compose.project=$project")
# memory NAME: one "name MiB" line per container, in $work/mem-NAME.
memory() {
	docker stats --no-stream --format '{{.Name}} {{.MemUsage}}' "${containers[@]}" |
		awk -v p="$project-" '{
			v = $2; u = v; gsub(/[0-9.]/, "", u); sub(/[A-Za-z]+$/, "", v)
			m = (u == "GiB") ? v * 1024 : (u == "KiB" || u == "kB") ? v / 1024 : (u == "B") ? v / 1048576 : v
			n = $1; sub(p, "", n); sub(/-1$/, "", n)
			printf "%s %.1f\n", n, m
		}' | sort >"$work/mem-$1"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

restarts_before=$(docker inspect -f '{{.Name}} {{.RestartCount}}' "${containers[@]}" | sort)
echo "== $clients clients for $minutes minutes (load at start: $(load))"
go build -o "$work/soak" ./bench/soak
"$work/soak" -url "http://127.0.0.1:$port/mcp" -token-file "$work/token" -clients "$clients" \
	-duration "${minutes}m" >"$work/client.log" 2>&1 &
client=$!
sleep 15
memory start
load_start=$(load)
sleep $((minutes * 30 - 15))
memory middle
load_middle=$(load)
status=0
wait "$client" || status=$?
memory end
load_end=$(load)

cat "$work/client.log"
echo "load average (1, 5, 15 min): start $load_start, middle $load_middle, end $load_end"
echo
printf '%-20s %10s %10s %10s\n' container "start MiB" "middle MiB" "end MiB"
join "$work/mem-start" "$work/mem-middle" | join - "$work/mem-end" >"$work/mem"
while read -r name s m e; do
	printf '%-20s %10s %10s %10s\n' "$name" "$s" "$m" "$e"
	if [ "$name" != fakes ] && awk -v m="$m" -v e="$e" -v mib="$max_mib" -v pct="$max_pct" 'BEGIN { exit !(e - m > mib && e > m * (1 + pct / 100)) }'; then
		echo "FAIL $name: memory grew from $m to $e MiB in the second half (more than $max_mib MiB and $max_pct %)"
		status=1
	fi
done <"$work/mem"
restarts_after=$(docker inspect -f '{{.Name}} {{.RestartCount}}' "${containers[@]}" | sort)
if [ "$restarts_before" != "$restarts_after" ]; then
	echo "FAIL a container restarted during the soak:"
	diff <(echo "$restarts_before") <(echo "$restarts_after") || true
	status=1
fi
[ "$status" -eq 0 ] && echo "PASS" || echo "FAIL"
exit "$status"
