#!/usr/bin/env bash
# nightly-eval.sh - cron batch evaluation over the suite: dated run directory, report, non-zero exit on a pass-rate drop.
#
# A run is first checked for itself (a rollout whose records are mostly errors, e.g. with the
# model server down, has failed: exit 2, never `latest`, never a baseline), then compared
# with the baseline only when both were made with the same settings (levels, group size,
# turns, backend, timing, tasks, leap version): a pass rate under other settings says nothing
# about the model, so the run says what differs instead.
#
# A crontab line (02:17 every night, a vLLM server already running):
#   17 2 * * * cd /srv/leap && SAMPLER="examples/sampler-openai -m qwen2.5-coder" examples/nightly-eval.sh -d /srv/evals >>/srv/evals/cron.log 2>&1
set -uo pipefail

prog=nightly-eval
usage="usage: nightly-eval.sh [OPTION]...

Evaluate a sampler (a model) on the task suite: one rollout (examples/rollout.mk) into a new
dated directory under BASEDIR, its report (report.txt, report.json, plots/), and a
comparison of the final pass rate with the baseline stored in BASEDIR/baseline.json. A run
in which more than --max-errors of the records carry an error (a sampler whose server is
down) has failed. The first run that did not fail stores the baseline with its settings
(levels, group size, turns, backend, timing, tasks, leap version); a run is compared only
with a baseline of the same settings, and otherwise says which differ. BASEDIR/latest
points at the newest run that did not fail. A lock on BASEDIR/.lock keeps two evaluations
from overlapping.

  -d, --dir BASEDIR       where runs and the baseline live (default out/nightly)
  -g, --group-size G      samples per task (default 4)
  -t, --turns N           turns per trajectory (default 1: pass@1)
  -b, --backend NAME      cpu or cuda (default: leap-prompt's choice, cuda where a CUDA
                          device is usable, else cpu)
  -l, --level N           only tasks of level N
  -j, --jobs N            parallel shards (default: the number of CPUs)
      --tolerance X       allowed drop of the pass rate below the baseline (default 0.02)
      --max-errors X      the largest share of records that may carry an error before the
                          run counts as failed (default 0.1)
      --update-baseline   store this run's pass rate and settings as the new baseline when
                          it holds, or when its settings differ from the baseline's
  -h, --help              show this help and exit

Environment: SAMPLER (the sampler command; default examples/sampler-replay), BENCH
(leap-bench, empty to skip timing), BENCH_FLAGS (extra leap-bench options), SEED (1).

Exit status: 0 the pass rate holds (or was stored as the baseline), 1 it dropped below the
baseline by more than the tolerance, 2 usage or a failed run (the rollout failed, or more
than --max-errors of its records carry an error), 3 not compared: the baseline was made with
other settings (the message says which), 75 another evaluation holds the lock."

die_usage() {
	printf '%s: %s\n' "$prog" "$1" >&2
	printf "Try 'nightly-eval.sh --help' for more information.\n" >&2
	exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=out/nightly group=4 turns=1 backend='' level='' tolerance=0.02 max_errors=0.1 update=false
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) printf '%s\n' "$usage"; exit 0 ;;
	--update-baseline) update=true; shift; continue ;;
	-d | --dir | -g | --group-size | -t | --turns | -b | --backend | -l | --level | -j | --jobs | --tolerance | --max-errors)
		[ $# -ge 2 ] || die_usage "option '$1' requires an argument" ;;
	*) die_usage "unknown option '$1'" ;;
	esac
	case $1 in
	-d | --dir) base=$2 ;;
	-g | --group-size) group=$2 ;;
	-t | --turns) turns=$2 ;;
	-b | --backend) backend=$2 ;;
	-l | --level) level=$2 ;;
	-j | --jobs) jobs=$2 ;;
	--tolerance) tolerance=$2 ;;
	--max-errors) max_errors=$2 ;;
	esac
	shift 2
done
[[ $group =~ ^[1-9][0-9]*$ ]] || die_usage "group size must be a positive integer"
[[ $turns =~ ^[1-9][0-9]*$ ]] || die_usage "turns must be a positive integer"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "jobs must be a positive integer"
[[ $tolerance =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "tolerance must be a number >= 0"
[[ $max_errors =~ ^(0(\.[0-9]+)?|1(\.0*)?)$ ]] || die_usage "--max-errors must be a share from 0 to 1"
[ -z "$level" ] || [[ $level =~ ^[1-9]$ ]] || die_usage "level must be 1 to 9"
[ -z "$backend" ] || [ "$backend" = cpu ] || [ "$backend" = cuda ] || die_usage "backend must be cpu or cuda"

mkdir -p "$base" || exit 2
exec 9>"$base/.lock"
if ! flock -n 9; then
	echo "$prog: another evaluation holds $base/.lock; not starting" >&2
	exit 75
fi

run=$base/$(date -u +%Y-%m-%dT%H%M%SZ)
n=1
while [ -e "$run" ]; do n=$((n + 1)); run=$base/$(date -u +%Y-%m-%dT%H%M%SZ)-$n; done
mkdir -p "$run" || exit 2
echo "$prog: run $run (backend ${backend:-as leap-prompt picks}, group $group, turns $turns)"

make -s -f "$root/examples/rollout.mk" -j "$jobs" OUT="$run" GROUP="$group" TURNS="$turns" \
	BACKEND="$backend" SHARDS="$jobs" LEVEL="$level" SAMPLER="${SAMPLER:-$root/examples/sampler-replay}" \
	BENCH="${BENCH-leap-bench}" BENCH_FLAGS="${BENCH_FLAGS:-}" SEED="${SEED:-1}" >"$run/rollout.log" 2>&1 || {
	echo "$prog: the rollout failed; see $run/rollout.log" >&2
	tail -n 20 "$run/rollout.log" >&2
	exit 2
}
PATH=$root/bin:$PATH leap-report --format json --max-turns "$turns" "$run/train.jsonl" >"$run/report.json" ||
	[ $? -eq 1 ] || { echo "$prog: leap-report failed" >&2; exit 2; }

# A run whose records are mostly errors measured nothing: it fails, and is neither `latest`
# nor a baseline.
read -r records errors < <(jq -r '"\(.records) \(.errors)"' "$run/report.json")
if [ "$records" -eq 0 ] || awk -v e="$errors" -v n="$records" -v m="$max_errors" 'BEGIN { exit !(e > m * n) }'; then
	echo "$prog: the run failed: $errors of $records records carry an error (more than --max-errors $max_errors); $run is kept, latest and the baseline are unchanged" >&2
	jq -r 'select(.error) | "\(.error.program // "?"): \(.error.message // "?")"' "$run/train.jsonl" |
		sort | uniq -c | sort -rn | head -n 3 |
		awk -v p="$prog" '{ n = $1; sub(/^ *[0-9]+ /, ""); printf "%s:   %d record%s: %s\n", p, n, n == 1 ? "" : "s", $0 }' >&2
	exit 2
fi
ln -sfn "$(basename "$run")" "$base/latest"

# The settings a pass rate depends on, taken from what the run did (the backend leap-prompt
# chose, the tasks it prompted).
timing=false
[ -n "${BENCH-leap-bench}" ] && timing=true
settings=$(jq -cn --arg level "${level:-all}" --argjson group "$group" --argjson turns "$turns" \
	--arg backend "$(jq -r .backend "$run/turn1.in.jsonl" | sort -u | paste -sd+)" --argjson timing "$timing" \
	--argjson tasks "$(jq -r .task "$run/turn1.in.jsonl" | LC_ALL=C sort -u | jq -R . | jq -sc .)" \
	--arg version "$(PATH=$root/bin:$PATH leap-prompt --version | awk '{ print $NF }')" \
	'{level: $level, group_size: $group, turns: $turns, backend: $backend, timing: $timing, tasks: $tasks,
	  leap_version: $version}')
rate=$(jq -r '.all.pass_at_turn[-1] // 0' "$run/report.json")
baseline=$base/baseline.json
store_baseline() {
	jq -n --argjson r "$rate" --arg run "$(basename "$run")" --argjson s "$settings" \
		'{pass_rate: $r, run: $run, settings: $s}' >"$baseline.tmp" && mv "$baseline.tmp" "$baseline"
}
if [ ! -s "$baseline" ]; then
	store_baseline
	echo "$prog: pass rate $rate; stored as the first baseline"
	exit 0
fi
ref=$(jq -r '.pass_rate' "$baseline")
# what differs between the baseline's settings and this run's, in words
differs=$(jq -rn --argjson now "$settings" --argjson base "$(jq -c '.settings // null' "$baseline")" '
	if $base == null then "the baseline records no settings (an older nightly-eval wrote it)"
	else [$now | keys_unsorted[] as $k | select($now[$k] != $base[$k]) |
		if $k == "tasks" then
			"tasks: \(($now.tasks - $base.tasks) | length) added \(($now.tasks - $base.tasks) | .[:3])," +
			" \(($base.tasks - $now.tasks) | length) removed \(($base.tasks - $now.tasks) | .[:3])"
		else "\($k) \($base[$k]) -> \($now[$k])" end] | join(", ")
	end')
if [ -n "$differs" ]; then
	if $update; then
		old=$(jq -r .run "$baseline")
		store_baseline
		echo "$prog: pass rate $rate; stored as the baseline, replacing run $old made with other settings ($differs)"
		exit 0
	fi
	echo "$prog: pass rate $rate not compared with the baseline (run $(jq -r .run "$baseline")): the settings differ: $differs; --update-baseline makes this run the baseline" >&2
	exit 3
fi
if awk -v r="$rate" -v b="$ref" -v t="$tolerance" 'BEGIN { exit !(r < b - t) }'; then
	echo "$prog: pass rate dropped: $rate < baseline $ref - $tolerance (baseline run $(jq -r .run "$baseline"))" >&2
	exit 1
fi
echo "$prog: pass rate $rate holds (baseline $ref)"
if $update; then
	store_baseline
	echo "$prog: baseline updated"
fi
exit 0
