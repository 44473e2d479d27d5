#!/usr/bin/env bash
# Builds one command of the repository in the current directory the way its
# container image has it: static (CGO off), no build paths (-trimpath), no
# symbol table or DWARF (-s -w; neither is mapped at run time, so they cost
# image size, not memory). scripts/images.sh builds every image's binary
# with it and the bench (bench/stack.go) builds the gateway it measures with
# it, so both run the same binary; this is the one place those flags live.
#
#   scripts/build.sh OUT PKG     e.g. scripts/build.sh bin/gateway ./services/gateway
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/build.sh OUT PKG" >&2; exit 2; }
CGO_ENABLED=0 exec go build -trimpath -ldflags='-s -w' -o "$1" "$2"
