#!/usr/bin/env bash
# verify-overhead.sh - leap-verify's cost per candidate beyond the candidate's own run time,
# on the cpu backend with a trivial kernel (vector_add; goal of issue 9: <= 5 ms), against the
# KernelBench pattern: one Python process per candidate (bench/verify-peer.py) doing the same checks.
# usage: bench/verify-overhead.sh [RECORDS] [LEAP-VERIFY OPTION]...   (env PEER_RUNS, default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
shift || true
np=${PEER_RUNS:-20}
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
. bench/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
trivial_records "$work" "$n"
build_artifact vector_add tasks/vector_add/reference.c "$work/reference.so"
leap-verify --seed 1 "$@" <(head -1 "$work/in.jsonl") >/dev/null # builds and caches the reference

bench_header "leap-verify's overhead per candidate (cpu backend, vector_add)" \
	"bench/verify-overhead.sh $n $*   (PEER_RUNS=$np)"
printf '    %-52s %6s %9s %9s %10s %11s %9s %9s\n' harness runs "wall ms" "cpu ms" "run ms" "overhead ms" "ratio" "cpu ratio"
# row NAME RUNS WALL_S CPU_S RUN_MS_TOTAL: per-candidate figures; overhead = wall - the candidate's own run
lead=0 leadcpu=0
row() {
	local r
	r=$(awk -v runs="$2" -v w="$3" -v c="$4" -v rm="$5" 'BEGIN { printf "%.3f %.3f %.4f %.3f", w * 1000 / runs, c * 1000 / runs, rm / runs, w * 1000 / runs - rm / runs }')
	# shellcheck disable=SC2086 # three numbers, split on purpose
	set -- "$1" "$2" $r
	[ "$lead" = 0 ] && lead=$6 leadcpu=$4
	awk -v name="$1" -v runs="$2" -v w="$3" -v c="$4" -v rm="$5" -v o="$6" -v l="$lead" -v lc="$leadcpu" \
		'BEGIN { printf "    %-52s %6d %9.2f %9.2f %10.3f %11.2f %8.1fx %8.1fx\n", name, runs, w, c, rm, o, (l > 0 ? o / l : 0), (lc > 0 ? c / lc : 0) }'
}
# leap-verify: one process over all records (each candidate run in a sandboxed child)
timed "$work/out.jsonl" leap-verify --seed 1 "$@" "$work/in.jsonl"
if [ "$(jq -r .status "$work/out.jsonl" | sort -u)" != pass ]; then
	echo "verify-overhead: leap-verify failed a correct candidate:" >&2
	jq -c '[.status, .verify.message]' "$work/out.jsonl" | sort | uniq -c >&2
	exit 1
fi
cases=$(head -1 "$work/out.jsonl" | jq -r '.verify | "\(.cases - (.drawn | length)) + \(.drawn | length) drawn cases x \(.trials) trials"')
row "leap-verify ($cases, sandboxed)" "$n" "$T_EL" "$T_CPU" "$(jq -s 'map(.verify.run_ms) | add' "$work/out.jsonl")"
# the peer: one python3 process per candidate, full checks, then the floor (start, load, one call)
for mode in full floor; do
	extra=()
	[ $mode = floor ] && extra=(--floor)
	# shellcheck disable=SC2016 # expanded by the inner shell
	timed "$work/peer.$mode" bash -c 'for _ in $(seq "$1"); do python3 bench/verify-peer.py "$2" "$3" "${@:4}"; done' _ \
		"$np" "$work/correct.so" "$work/reference.so" "${extra[@]}"
	[ "$(jq -r .status "$work/peer.$mode" | sort -u)" = pass ] || { echo "verify-overhead: the Python peer failed" >&2; exit 1; }
	if [ $mode = full ]; then name="python3 per candidate (same checks, stdlib)"; else name="python3 per candidate, floor (start, load, 1 call)"; fi
	row "$name" "$np" "$T_EL" "$T_CPU" "$(jq -s 'map(.run_ms) | add' "$work/peer.$mode")"
done
echo
echo "run ms: the candidate's own calls; overhead = wall - run, per candidate; ratio: overhead against"
echo "leap-verify's; cpu ms: user + sys of the harness and its children, per candidate (steadier than"
echo "wall on a loaded machine), and cpu ratio the same against leap-verify's."
echo "The Python peer uses the standard library (numpy is not installed here): its input generation"
echo "and comparison are Python loops; the floor row is what any per-process harness pays before"
echo "checking anything (KernelBench's harness also imports PyTorch, not installed here, on top)."
