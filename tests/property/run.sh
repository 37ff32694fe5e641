#!/usr/bin/env bash
# run.sh - runs the "no record lost" property: generates the input, pushes it through the whole
# cpu pipeline one stage at a time and checks every stage's output (tests/property.bats).
#
# usage: tests/property/run.sh DIR [N [SEED]]   (default 100000 lines, seed 1)
#
# DIR gets the input (in.jsonl, meta.jsonl), each stage's output and its stderr (*.err) and a
# fresh compile cache. Programs come from bin/ of this checkout. Each stage must exit 0 or 1 (1:
# some record carried an error, which the input makes sure of); check.py then checks the files.
# Exit status: 0 the property holds, 1 it does not or a stage failed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
d=$1
n=${2:-100000}
seed=${3:-1}
G=4
export PATH="$root/bin:$PATH" LEAP_TASKS="$root/tasks" LEAP_CACHE="$d/cache"
mkdir -p "$d"
rm -rf "$d/cache"

# stage NAME IN OUT COMMAND...: runs one stage, IN on stdin (or named by the command), OUT on
# stdout; fails unless it exits 0 or 1.
stage() {
	local name=$1 in=$2 out=$3
	shift 3
	local t0=$SECONDS rc
	if [ "$in" = - ]; then "$@" >"$out" 2>"$d/$name.err"; else "$@" <"$in" >"$out" 2>"$d/$name.err"; fi
	rc=$?
	echo "stage $name: exit $rc, $((SECONDS - t0)) s, $(wc -l <"$out") lines"
	if [ "$rc" -gt 1 ]; then
		echo "stage $name failed:" >&2
		tail -n 5 "$d/$name.err" >&2
		exit 1
	fi
}

python3 "$root/tests/property/gen.py" "$n" "$seed" "$d/in.jsonl" "$d/meta.jsonl" || exit 1
stage compile "$d/in.jsonl" "$d/c.jsonl" leap-compile --backend cpu --jobs 2 --no-progress
stage verify "$d/c.jsonl" "$d/v.jsonl" leap-verify --seed 7 --jobs 2 --timeout 2 --no-progress
stage bench "$d/v.jsonl" "$d/b.jsonl" leap-bench --seed 7 --max-time 0.01 --min-runs 1 --max-runs 2 \
	--target-ci 1 --no-progress
rm -f "$d/done.jsonl"
stage prune "$d/b.jsonl" "$d/next.jsonl" leap-prune --group-size $G --done "$d/done.jsonl" --no-progress
stage rank - "$d/r.jsonl" leap-rank --no-progress "$d/done.jsonl"
stage rank-pipe - "$d/rp.jsonl" bash -c 'cat "$1" | leap-rank --no-progress' rank "$d/done.jsonl"
stage advantage "$d/r.jsonl" "$d/a.jsonl" leap-advantage --no-progress
stage grpo - "$d/g.jsonl" leap-advantage --estimator grpo --reward kevin --no-progress "$d/r.jsonl"
stage report - "$d/report.json" leap-report -f json "$d/a.jsonl"
python3 "$root/tests/property/check.py" "$d" $G
