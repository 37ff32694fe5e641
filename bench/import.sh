#!/usr/bin/env bash
# bench/import.sh [SOURCE...] - times `leap-task --import` of module files (default: KernelBench's
# level 3, $KB_DIR/level3) and `leap-task --check` of what it made: what "a suite of module tasks
# lints" costs. Prints the date, the machine, the load average before and after, the command,
# the wall and CPU time, then one row per module, the slowest first: its result and where its
# time went (the progress line of runner/torchref.py's derive: cases = the module's sizes drawn
# and its fairness checks, inits = its parameters' initialisations, tolerance = float32 against
# float64 on leap's draws at every case). bench/import.md has the figures and what they mean.
# Needs $LEAP_TORCH_PYTHON; skips saying so without it or without the sources.
set -uo pipefail
cd "$(dirname "$0")/.."
KB_DIR=${KB_DIR:-../shared/kernelbench/KernelBench/KernelBench}
[ $# -gt 0 ] || set -- "$KB_DIR/level3"
if [ -z "${LEAP_TORCH_PYTHON:-}" ] || ! [ -e "$1" ]; then
	echo "bench-import: skipped: set LEAP_TORCH_PYTHON and KB_DIR (KernelBench's level folders), or name the sources"
	exit 0
fi
d=$(mktemp -d "${TMPDIR:-/tmp}/leap-import.XXXXXX")
trap 'rm -rf "$d"' EXIT
export LEAP_CACHE="$d/cache"

echo "## leap-task --import: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(free -g | awk '/^Mem:/ {print $2}') GiB"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: leap-task --import DIR $*"
TIMEFORMAT='%R %U %S'
{ time bin/leap-task --import "$d/s" "$@" >"$d/import.jsonl" 2>"$d/import.err"; } 2>"$d/time"
read -r wall user sys <"$d/time"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
{ time bin/leap-task --check "$d"/s/*/ >"$d/check.jsonl" 2>"$d/check.err"; } 2>"$d/ctime"
read -r cwall _ _ <"$d/ctime"
tasks=$(jq -s 'map(select(.dir)) | length' "$d/import.jsonl")
refused=$(jq -s 'map(select(.refused)) | length' "$d/import.jsonl")
checked=$(jq -s 'map(select(.id and (.error | not))) | length' "$d/check.jsonl")
echo "import: $tasks tasks, $refused refused, wall $wall s, cpu $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') s (user $user, sys $sys)"
echo "check: $checked of $tasks load, $cwall s"
echo
echo "| module | result | s | cases | inits | tolerance |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
sed -n 's/^leap-torchref: //p' "$d/import.err" | python3 -c '
import re, sys
rows = []
for line in sys.stdin:
    m = re.match(r"(\S+): (.*) \(([0-9.]+) s((?:, [a-z]+ [0-9.]+ s)*)\)$", line.rstrip("\n"))
    if not m:
        continue
    ph = dict(re.findall(r"([a-z]+) ([0-9.]+) s", m.group(4)))
    res = "task" if m.group(2) == "task" else m.group(2)[:60]
    rows.append((float(m.group(3)), m.group(1), res, ph))
for t, mid, res, ph in sorted(rows, reverse=True):
    print("| %s | %s | %.1f | %s | %s | %s |" % (mid, res, t, ph.get("cases", "-"), ph.get("inits", "-"),
                                                  ph.get("tolerance", "-")))
'
awk -v w="$wall" 'BEGIN { printf "\nwithin 10 minutes: %s\n", w <= 600 ? "yes" : "no" }'
[ "$checked" = "$tasks" ]
