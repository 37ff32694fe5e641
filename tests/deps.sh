#!/bin/sh
# deps.sh - install what building and testing leap needs, only what is missing (Debian/Ubuntu).
#
# usage: sh tests/deps.sh [demo|check|fresh-root]   install the missing packages of the set (as
#                                                  root; otherwise name them and exit 2)
#        sh tests/deps.sh --list [SET]             print the packages of the set, one a line
#
# `make demo` runs the demo set: what building leap and running examples/demo.sh need (a C
# compiler, make, jansson, libcrypto, libdw (elfutils: lib/sandbox/crash.c maps a crash to the
# candidate's source line through the artifact's DWARF line table), libseccomp (the runner's
# system-call filter), libwebsockets (leap-serve's HTTP and WebSocket) with pkg-config, jq for the replay
# sampler). `make check` runs the check set (the default): the demo set and what the tests
# need, including python3-venv, -setuptools and -wheel (tests/python.bats pip-installs
# python/ offline) and clang and libclang-rt-dev (its libFuzzer and sanitizer runtimes, only
# "recommended" by clang on Debian) for the fuzz targets of `make fuzz`. Commands the tests call
# are named by their packages even where another package pulls them in today: curl (the OpenAI
# sampler, examples/sampler-openai), procps (pgrep and ps: tests/faults.bats finds the processes
# a run leaves behind), binutils (readelf, nm), util-linux (setpriv, unshare, flock, mount),
# libpython3-dev for its shared libpython (the torch-eager baseline of module tasks embeds the
# Python torch is installed for: runner/torchbase.c; a fresh Debian has the interpreter alone);
# Debian's minbase has util-linux, and not procps or curl. `fresh-root` is what
# tests/fresh-root.sh needs to build a Debian root (debootstrap).
set -eu
demo="gcc libc6-dev make libjansson-dev libssl-dev libdw-dev libseccomp-dev libwebsockets-dev pkg-config jq"
check="$demo python3 libpython3-dev python3-venv python3-setuptools python3-wheel man-db groff-base bats bats-assert bats-support parallel clang libclang-rt-dev curl procps binutils util-linux"
fresh_root="debootstrap"

list=false
if [ "${1:-}" = --list ]; then
	list=true
	shift
fi
case ${1:-check} in
demo) pkgs=$demo ;;
check) pkgs=$check ;;
fresh-root) pkgs=$fresh_root ;;
*)
	echo "usage: sh tests/deps.sh [--list] [demo|check|fresh-root]" >&2
	exit 2
	;;
esac
if $list; then
	for p in $pkgs; do echo "$p"; done
	exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "leap: not a Debian/Ubuntu system: make sure these are installed: $pkgs" >&2
	exit 0
fi
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
