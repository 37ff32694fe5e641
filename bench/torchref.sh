#!/usr/bin/env bash
# torchref.sh - a module task's torch reference per case against torch's own forward (issue 42),
# part of `make bench` (bench-torchref).
#
#   bench/torchref.sh [ROUNDS]   imports KernelBench's level-3 1_MLP and 9_ResNet18 (KB_DIR) as
#                                module tasks, then times build/bench/torchref on each: ROUNDS
#                                requests a case (default 10; 1_MLP 5 times as many), each request's
#                                whole leap_torchref_case against the forward torch timed in it
#
# Needs $LEAP_TORCH_PYTHON and KernelBench's files at KB_DIR (default
# ../shared/kernelbench/KernelBench/KernelBench); skips saying so without them. Prints the date,
# the machine and the load with the results; bench/torchref.md has what they were.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KB_DIR=${KB_DIR:-../shared/kernelbench/KernelBench/KernelBench}
if [ -z "${LEAP_TORCH_PYTHON:-}" ] || [ ! -d "$KB_DIR/level3" ]; then
	echo "bench-torchref: skipped: set LEAP_TORCH_PYTHON and KB_DIR (KernelBench's level folders)"
	exit 0
fi
make -s build/bench/torchref || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/leap-torchref.XXXXXX")
trap 'rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache" LEAP_LIBEXEC="$ROOT/libexec"
rounds=${1:-10}
bin/leap-task --import "$work/kb3" "$KB_DIR/level3/1_MLP.py" "$KB_DIR/level3/9_ResNet18.py" >/dev/null 2>"$work/import.err" ||
	{ cat "$work/import.err" >&2; exit 2; }
echo "== the torch reference per case: build/bench/torchref TASK ROUNDS (ms; added = whole - forward)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "-- 1_MLP, $((rounds * 5)) rounds"
build/bench/torchref "$work/kb3/1_MLP" $((rounds * 5)) || exit 1
echo "-- 9_ResNet18, $rounds rounds"
build/bench/torchref "$work/kb3/9_ResNet18" "$rounds" || exit 1
