#!/bin/sh
# toolgate-diag: the forced command of toolgate's unraid-ssh service.
#
# Install on the Unraid server (docs/services/unraid.md, "Extended
# diagnosis"), e.g. as /boot/config/toolgate/toolgate-diag.sh, and bind the
# service's key to it in root's authorized_keys:
#
#   command="/bin/sh /boot/config/toolgate/toolgate-diag.sh",restrict ssh-ed25519 AAAA… toolgate
#
# sshd then runs this script for every connection with that key, whatever
# the client asked for; the request arrives in SSH_ORIGINAL_COMMAND. Exactly
# these diagnostics are allowed, each with validated arguments:
#
#   version                  print the protocol line only
#   dmesg [LINES]            the kernel log's last LINES lines (1-2000, default 200)
#   smartctl DISK            smartctl -a for /dev/DISK (sdX or nvmeNnM); a disk in
#                            standby is not woken
#   sensors                  lm-sensors readings
#   df                       file system usage
#   free                     memory usage
#   ip                       ip -br addr
#   docker-stats             docker stats --no-stream
#   syslog [LINES [START]]   LINES lines of the syslog (1-2000, default 200): the last
#                            ones, or from line START (1-based)
#
# Numbers are decimal digits only; leading zeros are ignored (010 is ten).
# Anything else is refused with exit status 126 and nothing runs: other
# commands, extra or malformed arguments, and any character outside
# letters, digits, space and '-' (so no ; | & $ ( ) ` quotes or newlines
# ever reach a shell). Output is cut at TOOLGATE_DIAG_MAX_BYTES (default
# 262144) bytes; every answer starts with the line "toolgate-diag 1".
#
# Server-side settings (sshd_config SetEnv, never from the client):
# TOOLGATE_DIAG_PATH replaces the search PATH, TOOLGATE_DIAG_SYSLOG the
# syslog's path (default /var/log/syslog).
set -u

PATH=${TOOLGATE_DIAG_PATH:-/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin}
export PATH
LC_ALL=C
export LC_ALL
max_bytes=${TOOLGATE_DIAG_MAX_BYTES:-262144}
syslog=${TOOLGATE_DIAG_SYSLOG:-/var/log/syslog}
request=${SSH_ORIGINAL_COMMAND:-}

refuse() {
	printf 'toolgate-diag: refused: %s\n' "$1" >&2
	exit 126
}

# number NAME VALUE MIN MAX: VALUE is a decimal integer in [MIN, MAX];
# its value is left in $num without leading zeros, because $(( )) reads
# 010 as octal and fails on 08.
number() {
	case $2 in
	'' | *[!0-9]*) refuse "$1 must be a number" ;;
	esac
	num=${2#"${2%%[!0]*}"}
	num=${num:-0}
	[ ${#num} -le 9 ] || refuse "$1 is out of range"
	if [ "$num" -lt "$3" ] || [ "$num" -gt "$4" ]; then
		refuse "$1 must be between $3 and $4"
	fi
}

# bounded CMD ARGS...: runs the diagnostic (with a time limit where the
# system has timeout(1)) and cuts its output at max_bytes.
bounded() {
	if command -v timeout >/dev/null 2>&1; then
		set -- timeout 60 "$@"
	fi
	"$@" 2>&1 | head -c "$max_bytes"
}

# The protocol line comes first, so the service knows it talks to this
# script, also when the request is refused.
printf 'toolgate-diag 1\n'

newline='
'
case $request in
*"$newline"*) refuse "more than one line" ;;
*[!A-Za-z0-9\ -]*) refuse "characters other than letters, digits, space and -" ;;
esac
case $max_bytes in
'' | *[!0-9]*) max_bytes=262144 ;;
esac

# Word-split the checked request; no globbing even though no glob
# characters can remain.
set -f
# shellcheck disable=SC2086
set -- $request
[ $# -ge 1 ] || refuse "no command (this key runs only the toolgate diagnostics)"
command=$1
shift

case $command in
version)
	[ $# -eq 0 ] || refuse "version takes no arguments"
	;;
dmesg)
	[ $# -le 1 ] || refuse "dmesg takes at most one argument"
	number lines "${1:-200}" 1 2000
	bounded dmesg | tail -n "$num"
	;;
smartctl)
	[ $# -eq 1 ] || refuse "smartctl takes exactly one disk"
	if ! printf '%s\n' "$1" | grep -Eq '^(sd[a-z]+|nvme[0-9]+n[0-9]+)$'; then
		refuse "a disk is sdX or nvmeNnM"
	fi
	bounded smartctl -n standby -a "/dev/$1"
	;;
sensors)
	[ $# -eq 0 ] || refuse "sensors takes no arguments"
	bounded sensors
	;;
df)
	[ $# -eq 0 ] || refuse "df takes no arguments"
	bounded df -h
	;;
free)
	[ $# -eq 0 ] || refuse "free takes no arguments"
	bounded free -h
	;;
ip)
	[ $# -eq 0 ] || refuse "ip takes no arguments"
	bounded ip -br addr
	;;
docker-stats)
	[ $# -eq 0 ] || refuse "docker-stats takes no arguments"
	bounded docker stats --no-stream
	;;
syslog)
	[ $# -le 2 ] || refuse "syslog takes at most two arguments"
	number lines "${1:-200}" 1 2000
	lines=$num
	if [ $# -eq 2 ]; then
		number start "$2" 1 100000000
		bounded sed -n "$num,$((num + lines - 1))p" "$syslog"
	else
		bounded tail -n "$lines" "$syslog"
	fi
	;;
*)
	refuse "unknown command (allowed: version dmesg smartctl sensors df free ip docker-stats syslog)"
	;;
esac
