#!/usr/bin/env bash
# demo.sh - a complete multi-turn LEAP rollout over the bundled suite with recorded completions (`make demo`).
#
# usage: examples/demo.sh [OUTDIR]          (default out/demo; run from anywhere)
#
# Prompts every task with a GRPO group of $GROUP samples, then for up to $TURNS turns:
# sampler -> leap-compile -> leap-verify -> leap-bench -> leap-prune (DCP), then leap-rank,
# leap-advantage and leap-report (text summary and SVG charts in OUTDIR/plots).
#
# Environment: GROUP (default 8), TURNS (3), BACKEND (default: leap-prompt's choice, cuda where
# a CUDA device is usable, else cpu), SAMPLER (default: examples/sampler-replay, the recorded
# completions), SEED (inputs of leap-verify and leap-bench, default 1), JOBS (parallel compile/verify jobs, default: the
# number of CPUs), BENCH (the timing stage, default leap-bench; empty: no timing), BENCH_FLAGS
# (leap-bench's timing budget; the default favours a short demo: "--max-time 0.2 --min-runs 6
# --max-runs 40", six pairs being the fewest that give the speedup an interval).
# The programs are taken from bin/ of this checkout when built, else from PATH.
# Exit status: 0 the rollout ran and the report was written, 1 a stage failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-out/demo}
[ -d "$root/bin" ] && PATH=$root/bin:$PATH
export LEAP_TASKS=${LEAP_TASKS:-$root/tasks}
group=${GROUP:-8}
turns=${TURNS:-3}
seed=${SEED:-1}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# SAMPLER is a command line: split it into words (a sampler with options).
read -r -a sampler <<<"${SAMPLER:-$root/examples/sampler-replay}"

for p in leap-prompt leap-compile leap-verify leap-prune leap-rank leap-advantage leap-report; do
	command -v "$p" >/dev/null || { echo "demo: $p not found (run make first)" >&2; exit 1; }
done
read -r -a bench_flags <<<"${BENCH_FLAGS---max-time 0.2 --min-runs 6 --max-runs 40}"
bench=("${BENCH-leap-bench}" --seed "$seed" --no-progress "${bench_flags[@]}")
if [ -z "${BENCH-leap-bench}" ]; then
	echo "demo: BENCH is empty: the rollout runs without timing (no speedups)" >&2
	bench=(cat)
elif ! command -v "${bench[0]}" >/dev/null; then
	echo "demo: ${bench[0]} not found: the rollout runs without timing (no speedups)" >&2
	bench=(cat)
fi

rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
leap-prompt ${BACKEND:+--backend "$BACKEND"} --group-size "$group" --all >"$out/turn1.jsonl"
BACKEND=$(head -n 1 "$out/turn1.jsonl" | jq -r .backend)
echo "demo: backend $BACKEND, $(leap-task --list --all | wc -l) tasks, group size $group, up to $turns turn$([ "$turns" -eq 1 ] || echo s) -> $out"
t=1
while [ "$t" -le "$turns" ] && [ -s "$out/turn$t.jsonl" ]; do
	# Every stage keeps going on bad records (exit 1 = some record carries an error); only a
	# fatal error (2) or a crash stops the demo.
	set +e
	"${sampler[@]}" <"$out/turn$t.jsonl" |
		leap-compile --jobs "$jobs" --no-progress |
		leap-verify --seed "$seed" --jobs "$jobs" --no-progress |
		"${bench[@]}" |
		leap-prune --group-size "$group" --max-turns "$turns" --done "$out/done.jsonl" --no-progress \
			>"$out/turn$((t + 1)).jsonl"
	codes=("${PIPESTATUS[@]}")
	set -e
	for c in "${codes[@]}"; do
		[ "$c" -le 1 ] || { echo "demo: turn $t: a stage failed (exit statuses ${codes[*]})" >&2; exit 1; }
	done
	if [ "$t" -lt "$turns" ]; then
		echo "demo: turn $t: $(wc -l <"$out/turn$t.jsonl") records in, $(wc -l <"$out/turn$((t + 1)).jsonl") go on to turn $((t + 1))"
	else
		echo "demo: turn $t: $(wc -l <"$out/turn$t.jsonl") records in, the last turn: every trajectory ends"
	fi
	t=$((t + 1))
done
# the turn after the last one (or after every group ended) has no records: no file for it
[ -s "$out/turn$t.jsonl" ] || rm -f "$out/turn$t.jsonl"
set +e
leap-rank --no-progress <"$out/done.jsonl" | leap-advantage --no-progress >"$out/train.jsonl"
codes=("${PIPESTATUS[@]}")
set -e
for c in "${codes[@]}"; do
	[ "$c" -le 1 ] || { echo "demo: ranking failed (exit statuses ${codes[*]})" >&2; exit 1; }
done
leap-report --max-turns "$turns" --plot "$out/plots" "$out/train.jsonl" >"$out/report.txt" || [ $? -eq 1 ]
cat "$out/report.txt"
echo
echo "demo: done in $(($(date +%s) - start)) s; records in $out/train.jsonl, charts in $out/plots/*.svg"
