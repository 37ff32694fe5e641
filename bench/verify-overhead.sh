#!/usr/bin/env bash
# verify-overhead.sh - leap-verify's cost per candidate beyond the candidate's own run time,
# on the cpu backend with a trivial kernel (vector_add; goal of issue 9: <= 5 ms).
# usage: bench/verify-overhead.sh [RECORDS] [LEAP-VERIFY OPTION]...
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
shift || true
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
source tests/artifact.bash
build_artifact vector_add tests/fixtures/leap-verify/correct.c "$work/correct.so"
for _ in $(seq "$n"); do compiled_record vector_add "$work/correct.so"; done >"$work/in.jsonl"
leap-verify --seed 1 "$@" <(head -1 "$work/in.jsonl") >/dev/null # builds and caches the reference
# wall clock, and CPU time of leap-verify and its children (less sensitive to other load)
/usr/bin/time -f '%e %U %S' -o "$work/time" leap-verify --seed 1 "$@" "$work/in.jsonl" >"$work/out.jsonl"
read -r wall user sys <"$work/time"
jq -s --arg wall "$wall" --arg cpu "$(echo "$user + $sys" | bc -l)" '
	(($wall | tonumber) * 1000 / length) as $per
	| (map(.verify.run_ms) | add / length) as $run
	| {records: length, wall_ms_per_record: $per, candidate_run_ms: $run, overhead_ms: ($per - $run),
	   cpu_ms_per_record: (($cpu | tonumber) * 1000 / length),
	   passed: (map(select(.status == "pass")) | length)}' "$work/out.jsonl"
