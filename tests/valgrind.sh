#!/usr/bin/env bash
# valgrind.sh - valgrind memcheck over one full two-turn pipeline run on the cpu backend (slow; not part of make check).
#
# usage: tests/valgrind.sh [WORKDIR]      (default: a fresh temporary directory, kept on failure)
#
# Runs leap-prompt -> examples/sampler-replay -> leap-compile -> leap-verify -> leap-bench ->
# leap-prune (two turns), then leap-rank -> leap-advantage -> leap-report, each leap program
# under `valgrind --leak-check=full` in turn (stage by stage through files, so one stage's
# report is its own). The input mixes passing, mismatching and non-compiling candidates, a
# record without code and a malformed line, so error paths run too. leap-compile runs twice:
# once on an empty cache (the compiler runs) and once on the filled cache (hits).
# Sandboxed children (exec'd runners) are not traced; forked children are silent.
# Exit status: 0 no stage reported a memcheck error or leak, 1 some stage did (its log is
# printed), 2 the script could not run (valgrind missing, bin/ not built).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not found" >&2; exit 2; }
[ -x "$root/bin/leap-compile" ] || { echo "valgrind.sh: run make first" >&2; exit 2; }
work=${1:-$(mktemp -d /tmp/leap-valgrind.XXXXXX)}
mkdir -p "$work"
cd "$work" || exit 2
rm -rf cache logs ./*.jsonl plots
mkdir -p logs
export PATH=$root/bin:$PATH LEAP_TASKS=$root/tasks LEAP_CACHE=$work/cache LC_ALL=C.UTF-8

# Input comes through a pipe, as in a real pipeline: valgrind runs glibc's __libc_freeres in
# every forked child as it exits, and its stdio clean-up seeks a shared seekable stdin back,
# making the parent re-read input (a valgrind artifact, never seen natively; --run-libc-freeres=no
# avoids it but reports glibc's own thread and dlopen caches as possibly lost).
vg=(valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible
	--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99
	--trace-children=no --child-silent-after-fork=yes --num-callers=30)
failed=0

# stage NAME IN OUT [--same] [--side FILE] PROGRAM ARGS...: runs PROGRAM natively reading IN
# through a pipe,
# writing OUT and perhaps the side file FILE (both fresh; the pipeline goes on from the native
# run's), then again under valgrind. A memcheck error (exit 99), an exit status above 1 or a
# different exit status than natively marks the stage failed;
# with --same the output (and side file) under valgrind must also equal the native one byte for
# byte.
# Candidates never run under valgrind: it refuses setrlimit(RLIMIT_NOFILE) below its own
# hard limit, so the sandbox child fails to set up (exit 127) and leap-verify/leap-bench
# take their error path there; the native run feeds the next stage real verdicts.
stage() {
	local name=$1 in=$2 out=$3 same=0 side=/dev/null
	shift 3
	[ "$1" = --same ] && { same=1; shift; }
	[ "$1" = --side ] && { side=$2; shift 2; rm -f "$side"; }
	cat "$in" | "$@" >"$out" 2>"logs/$name.native.stderr"
	local nrc=${PIPESTATUS[1]}
	[ "$side" = /dev/null ] || { mv "$side" "logs/$name.side.native" 2>/dev/null || : >"logs/$name.side.native"; }
	cat "$in" | "${vg[@]}" --log-file="logs/$name.log" "$@" >"logs/$name.out" 2>"logs/$name.stderr"
	local rc=${PIPESTATUS[1]}
	local why=
	if [ "$side" != /dev/null ]; then
		[ -e "$side" ] || : >"$side"
		[ "$same" -eq 1 ] && ! cmp -s "$side" "logs/$name.side.native" && why="side file $side differs under valgrind"
		cp "logs/$name.side.native" "$side"
	fi
	[ -s "logs/$name.log" ] && why="memcheck report"
	[ "$rc" -eq 99 ] && why="memcheck errors"
	[ "$rc" -gt 1 ] && [ "$rc" -ne 99 ] && why="exit $rc"
	[ "$nrc" -gt 1 ] && why="native exit $nrc"
	[ "$same" -eq 1 ] && [ -z "$why" ] && ! cmp -s "$out" "logs/$name.out" && why="output differs under valgrind"
	[ "$same" -eq 1 ] && [ -z "$why" ] && [ "$rc" -ne "$nrc" ] && why="exit $rc under valgrind, $nrc natively"
	if [ -n "$why" ]; then
		echo "FAIL $name: $why"
		cat "logs/$name.log" "logs/$name.stderr"
		failed=1
	else
		printf 'ok   %-16s exit %d, %d records out, no memcheck errors or leaks\n' "$name" "$rc" "$(wc -l <"$out")"
	fi
}

tasks=(vector_add softmax histogram add_layernorm rmsnorm_linear)
: >empty
stage prompt empty turn1.jsonl --same leap-prompt --backend cpu --group-size 2 "${tasks[@]}"
for t in 1 2; do
	"$root/examples/sampler-replay" <"turn$t.jsonl" >"s$t.jsonl" || true
	if [ "$t" -eq 1 ]; then
		# error paths: a record without code and a malformed line
		printf '%s\n' '{"task":"vector_add","backend":"cpu","completion":"no code here"}' \
			'{"task": broken' >>s1.jsonl
	fi
	stage "compile$t" "s$t.jsonl" "c$t.jsonl" leap-compile --backend cpu --jobs 2 --no-progress
	[ "$t" -eq 1 ] && stage compile1-hits s1.jsonl c1-hits.jsonl leap-compile --backend cpu --jobs 2 --no-progress
	stage "verify$t" "c$t.jsonl" "v$t.jsonl" leap-verify --seed 1 --jobs 2 --trials 1 --no-progress
	stage "bench$t" "v$t.jsonl" "b$t.jsonl" leap-bench --seed 1 --max-time 0.05 --min-runs 3 \
		--max-runs 5 --no-progress
	stage "prune$t" "b$t.jsonl" "turn$((t + 1)).jsonl" --same --side "done$t.jsonl" leap-prune --group-size 2 --max-turns 2 \
		--done "done$t.jsonl" --no-progress
	cat "done$t.jsonl" >>done.jsonl
done
stage rank done.jsonl rank.jsonl --same leap-rank --no-progress
stage rank-file empty rank2.jsonl --same leap-rank --no-progress done.jsonl
stage advantage rank.jsonl train.jsonl --same leap-advantage --no-progress
stage report train.jsonl report.txt --same leap-report --max-turns 2 --plot plots
stage report-json train.jsonl report.json --same leap-report --max-turns 2 --format json
if [ "$failed" -ne 0 ]; then
	echo "valgrind.sh: memcheck found errors; logs in $work/logs" >&2
	exit 1
fi
echo "valgrind.sh: no memcheck errors or leaks in any stage ($work)"
[ $# -ge 1 ] || rm -rf "$work"
