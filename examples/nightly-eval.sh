#!/usr/bin/env bash
# nightly-eval.sh - cron batch evaluation over the suite: dated run directory, report, non-zero exit on a pass-rate drop.
#
# A crontab line (02:17 every night, a vLLM server already running):
#   17 2 * * * cd /srv/leap && SAMPLER="examples/sampler-openai -m qwen2.5-coder" examples/nightly-eval.sh -d /srv/evals >>/srv/evals/cron.log 2>&1
set -uo pipefail

prog=nightly-eval
usage="usage: nightly-eval.sh [OPTION]...

Evaluate a sampler (a model) on the task suite: one rollout (examples/rollout.mk) into a new
dated directory under BASEDIR, its report (report.txt, report.json, plots/), and a
comparison of the final pass rate with the baseline stored in BASEDIR/baseline.json. The
first run stores the baseline. BASEDIR/latest points at the newest run. A lock on
BASEDIR/.lock keeps two evaluations from overlapping.

  -d, --dir BASEDIR       where runs and the baseline live (default out/nightly)
  -g, --group-size G      samples per task (default 4)
  -t, --turns N           turns per trajectory (default 1: pass@1)
  -b, --backend NAME      cpu or cuda (default: cuda when nvidia-smi lists a GPU, else cpu)
  -l, --level N           only tasks of level N
  -j, --jobs N            parallel shards (default: the number of CPUs)
      --tolerance X       allowed drop of the pass rate below the baseline (default 0.02)
      --update-baseline   store this run's pass rate as the new baseline when it passes
  -h, --help              show this help and exit

Environment: SAMPLER (the sampler command; default examples/sampler-replay), BENCH
(leap-bench, empty to skip timing), BENCH_FLAGS (extra leap-bench options), SEED (1).

Exit status: 0 the pass rate holds, 1 it dropped below the baseline by more than the
tolerance, 2 usage or a failed run, 75 another evaluation holds the lock."

die_usage() {
	printf '%s: %s\n' "$prog" "$1" >&2
	printf "Try 'nightly-eval.sh --help' for more information.\n" >&2
	exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=out/nightly group=4 turns=1 backend='' level='' tolerance=0.02 update=false
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) printf '%s\n' "$usage"; exit 0 ;;
	--update-baseline) update=true; shift; continue ;;
	-d | --dir | -g | --group-size | -t | --turns | -b | --backend | -l | --level | -j | --jobs | --tolerance)
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
	esac
	shift 2
done
[[ $group =~ ^[1-9][0-9]*$ ]] || die_usage "group size must be a positive integer"
[[ $turns =~ ^[1-9][0-9]*$ ]] || die_usage "turns must be a positive integer"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die_usage "jobs must be a positive integer"
[[ $tolerance =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "tolerance must be a number >= 0"
[ -z "$level" ] || [[ $level =~ ^[1-9]$ ]] || die_usage "level must be 1 to 9"
if [ -z "$backend" ]; then
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then backend=cuda; else backend=cpu; fi
fi
[ "$backend" = cpu ] || [ "$backend" = cuda ] || die_usage "backend must be cpu or cuda"

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
echo "$prog: run $run (backend $backend, group $group, turns $turns)"

make -s -f "$root/examples/rollout.mk" -j "$jobs" OUT="$run" GROUP="$group" TURNS="$turns" \
	BACKEND="$backend" SHARDS="$jobs" LEVEL="$level" SAMPLER="${SAMPLER:-$root/examples/sampler-replay}" \
	BENCH="${BENCH-leap-bench}" BENCH_FLAGS="${BENCH_FLAGS:-}" SEED="${SEED:-1}" >"$run/rollout.log" 2>&1 || {
	echo "$prog: the rollout failed; see $run/rollout.log" >&2
	tail -n 20 "$run/rollout.log" >&2
	exit 2
}
PATH=$root/bin:$PATH leap-report --format json --max-turns "$turns" "$run/train.jsonl" >"$run/report.json" ||
	[ $? -eq 1 ] || { echo "$prog: leap-report failed" >&2; exit 2; }
ln -sfn "$(basename "$run")" "$base/latest"

rate=$(jq -r '.all.pass_at_turn[-1] // 0' "$run/report.json")
baseline=$base/baseline.json
if [ ! -s "$baseline" ]; then
	jq -n --argjson r "$rate" --arg run "$(basename "$run")" '{pass_rate: $r, run: $run}' >"$baseline"
	echo "$prog: pass rate $rate; stored as the first baseline"
	exit 0
fi
ref=$(jq -r '.pass_rate' "$baseline")
if awk -v r="$rate" -v b="$ref" -v t="$tolerance" 'BEGIN { exit !(r < b - t) }'; then
	echo "$prog: pass rate dropped: $rate < baseline $ref - $tolerance (baseline run $(jq -r .run "$baseline"))" >&2
	exit 1
fi
echo "$prog: pass rate $rate holds (baseline $ref)"
if $update; then
	jq -n --argjson r "$rate" --arg run "$(basename "$run")" '{pass_rate: $r, run: $run}' >"$baseline.tmp" &&
		mv "$baseline.tmp" "$baseline"
	echo "$prog: baseline updated"
fi
exit 0
