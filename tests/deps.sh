#!/bin/sh
# deps.sh - install what building and testing leap needs, only what is missing (Debian/Ubuntu).
set -eu
# python3-venv, python3-setuptools and python3-wheel let tests/python.bats pip-install python/
# offline. clang and libclang-rt-dev (its libFuzzer and sanitizer runtimes, only "recommended" by
# clang on Debian) build the fuzz targets of `make fuzz`. libdw-dev (elfutils) maps a crash to
# the candidate's source line through the artifact's DWARF line table (lib/crash.c).
pkgs="gcc make libjansson-dev libssl-dev libdw-dev jq python3 python3-venv python3-setuptools python3-wheel man-db groff-base bats bats-assert bats-support parallel
	clang libclang-rt-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "leap: missing packages:$missing" >&2
	echo "leap: install them as root: apt-get install -y$missing" >&2
	exit 2
fi
echo "leap: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq $missing >&2
