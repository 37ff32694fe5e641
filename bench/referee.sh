#!/usr/bin/env bash
# referee.sh - leap-bench's self-test, the cpu pipeline's timings and the cost per record
# (issues 14, 26, 28), part of `make bench` (bench-referee).
#
#   bench/referee.sh [selftest] [RUNS]   the task's reference timed against itself RUNS times
#                                        (default 40), and a candidate doing exactly 4x its work,
#                                        while LOAD runs beside them; prints the ok rates, how
#                                        often the speedup's interval covers the true ratio 1,
#                                        and fails when an `ok` verdict falls outside [0.9, 1.1]
#                                        (itself) or a ratio outside [3.2, 5] (4x the work)
#   bench/referee.sh pipeline            leap-compile | leap-verify | leap-bench on every task's
#                                        reference and on one honest OpenMP/SIMD kernel per task
#                                        family (bench/candidates/omp-*.c), then the OpenMP ones
#                                        timed alone: the ok rate in the pipeline, and how far
#                                        their speedups there are from alone
#   bench/referee.sh cost [REV]          wall time per record at --max-time 0.05 and 2, of this
#                                        build and (with REV, e.g. 50d1e5d) of that revision, built
#                                        in a scratch directory: over the stream (a fresh cache:
#                                        baselines built, pools made) and after each task's first
#   bench/referee.sh memo [RUNS]         a hostile gelu that finds a derived set's rotation against
#                                        sets it remembers and recomputes only the replaced
#                                        elements (tests/fixtures/leap-bench/memo_rotate.c: right
#                                        outputs, a speed no real input gives), RUNS times (default
#                                        10) beside gelu's reference: what leap-bench makes of it
#   bench/referee.sh bigset [RUNS]       the pick fixture (tests/fixtures/leap-bench/pick: 16 elements of
#                                        a 4 MiB input, a call of tens of microseconds) timed against
#                                        itself RUNS times (default 40) with --pool-memory 6M, so that
#                                        its set is larger than half of it: the ok rate, the ok
#                                        verdicts outside [0.9, 1.1], the calls per block
#   bench/referee.sh blockcost [BLOCKS]  what a block costs beyond its calls on cpu, its parts timed
#                                        apart (bench/blockcost.c: thaw and freeze, the go and its
#                                        reply, the table's walk per call), and the host's cost of
#                                        a set (made, compared), on TASK's reference (default
#                                        vector_add here), BLOCKS rounds (default 1000)
#
# Environment: LOAD (the command run beside the self-test; default "make -s check"; empty: none),
# TASK (softmax), MAX_TIME (2), TARGET_CI (leap-bench's default), RECORDS (cost: records per
# stream, default 16), BENCH_BIN (pipeline: a directory whose leap-bench to time with, e.g. an
# older build's bin; default this build's). Prints the date, the machine and the load with the
# results.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/bin:$PATH" LEAP_TASKS="$ROOT/tasks"
source tests/artifact.bash
work=$(mktemp -d "${TMPDIR:-/tmp}/leap-referee.XXXXXX")
trap 'stop_load; rm -rf "$work"' EXIT
export LEAP_CACHE="$work/cache"
TASK=${TASK:-softmax}
load_pid=

# The load beside the timings: its own process group, ended with it.
start_load() {
	[ -n "${LOAD-make -s check}" ] || return 0
	setsid bash -c "${LOAD-make -s check}" >"$work/load.log" 2>&1 &
	load_pid=$!
	sleep 5
}
stop_load() {
	[ -n "$load_pid" ] && kill -- -"$load_pid" 2>/dev/null
	load_pid=
}

machine() {
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

selftest() {
	local runs=${1:-40} i
	build_artifact "$TASK" "tasks/$TASK/reference.c" "$work/self.so" || exit 2
	build_artifact "$TASK" tests/fixtures/leap-bench/slow4x.c "$work/x4.so" || exit 2
	{
		compiled_record "$TASK" "$work/self.so" '{"name":"self","status":"pass"}'
		compiled_record "$TASK" "$work/x4.so" '{"name":"x4","status":"pass"}'
	} >"$work/in.jsonl"
	local opts=(--max-time "${MAX_TIME:-2}")
	[ -n "${TARGET_CI:-}" ] && opts+=(--target-ci "$TARGET_CI")
	echo "== self-test: $TASK's reference against itself and a kernel doing 4x its work, $runs runs, leap-bench ${opts[*]}"
	echo "   beside: ${LOAD-make -s check}"
	machine
	start_load
	for i in $(seq "$runs"); do
		leap-bench --no-progress "${opts[@]}" "$work/in.jsonl" >>"$work/out.jsonl" || exit 2
	done
	echo "   at the end: $(machine)"
	stop_load
	jq -rs '
	  def coverage:
	    [.[] | select(.name == "self") | .bench | select(.speedup_ci) | .speedup_ci[0] <= 1 and 1 <= .speedup_ci[1]]
	    | "self: the speedup'"'"'s 95% interval covers 1 in \(map(select(.)) | length) of \(length) records with an interval"
	      + (if length > 0 then " (\((map(select(.)) | length) * 1000 / length | round / 10)%)" else "" end);
	  def summary(name; lo; hi; ratio):
	    [.[] | select(.name == name) | .bench] as $b
	    | ($b | map(select(.status == "ok") | if ratio then 1 / .speedup else .speedup end)) as $ok
	    | ($b | map(.measured_speedup // .speedup | if ratio then 1 / . else . end)) as $all
	    | "\(name): \($b | length) records: \($b | map(select(.status == "ok")) | length) ok, \($b | map(select(.status == "noisy")) | length) noisy, \($b | map(select(.status != "ok" and .status != "noisy")) | length) other; "
	      + (if ratio then "time ratio" else "speedup" end)
	      + " of the ok ones: " + (if ($ok | length) > 0 then "\($ok | min | . * 1000 | round / 1000) to \($ok | max | . * 1000 | round / 1000)" else "-" end)
	      + " (all measured: \($all | min | . * 1000 | round / 1000) to \($all | max | . * 1000 | round / 1000)); ok outside [\(lo), \(hi)]: \($ok | map(select(. < lo or . > hi)) | length)";
	  summary("self"; 0.9; 1.1; false), summary("x4"; 3.2; 5; true), coverage' "$work/out.jsonl"
	local bad
	bad=$(jq -s '[.[] | select(.bench.status == "ok") | select((.name == "self" and (.bench.speedup < 0.9 or .bench.speedup > 1.1))
		or (.name == "x4" and ((1 / .bench.speedup) < 3.2 or (1 / .bench.speedup) > 5)))] | length' "$work/out.jsonl")
	[ "$bad" = 0 ] && echo "self-test: every ok verdict within its bounds" || {
		echo "self-test: $bad ok verdicts OUT OF BOUNDS:"
		jq -c 'select(.bench.status == "ok") | select((.name == "self" and (.bench.speedup < 0.9 or .bench.speedup > 1.1))
			or (.name == "x4" and ((1 / .bench.speedup) < 3.2 or (1 / .bench.speedup) > 5)))
			| {name, bench: (.bench | {speedup, speedup_ci, n, calls, median_ms, baseline_ms, cpu_ms, ms})}' "$work/out.jsonl"
		return 1
	}
}

# wall NAME BIN MAX_TIME: wall and CPU seconds per record of BIN/leap-bench over the cost stream.
wall() {
	local name=$1 bin=$2 mt=$3 t0 t1 cache="$work/cache-$1-$3"
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$work/time" env LEAP_CACHE="$cache" "$bin/leap-bench" --no-progress --seed 1 --max-time "$mt" \
		"$work/cost.jsonl" >"$work/cost-$name-$mt.jsonl" || echo "   ($name exited $?)"
	t1=$(date +%s.%N)
	awk -v n="$(wc -l <"$work/cost.jsonl")" -v a="$t0" -v b="$t1" -v name="$name" -v mt="$mt" -v cpu="$(cat "$work/time")" \
		'BEGIN { split(cpu, c, " "); printf "   %-8s --max-time %-5s %7.3f s wall, %6.3f s CPU (user+sys) per record\n", name, mt, (b - a) / n, (c[1] + c[2]) / n }'
	jq -r '.bench.status' "$work/cost-$name-$mt.jsonl" | sort | uniq -c | tr '\n' ' ' | sed 's/^/             verdicts: /; s/$/\n/'
	# issue 28's measure: a record after its task's first (which makes the pool), by its own bench.ms
	jq -rs '[group_by(.task)[] | .[1:][] | .bench.ms] | "             after a task'"'"'s first record: \(add / length / 1000 | . * 1000 | round / 1000) s per record (bench.ms, \(length) records)"' \
		"$work/cost-$name-$mt.jsonl"
	# what the timed calls themselves took (both blocks of a pair make the same calls), and the
	# rest: the part --max-time does not buy (sets made and checked, runners, regions)
	jq -rs '[group_by(.task)[] | .[1:][] | .bench | select(.calls) | {ms, timed: (.calls * (.median_ms + .baseline_ms)), n}]
	  | select(length > 0)
	  | "             of which timed calls \(map(.timed) | add / length | round) ms over \(map(.n) | add / length | . * 10 | round / 10) pairs, the rest \(map(.ms - .timed) | add / length | round) ms"' \
		"$work/cost-$name-$mt.jsonl"
}

cost() {
	local rev=${1:-} n=${RECORDS:-16} i
	build_artifact vector_add tests/fixtures/leap-verify/correct.c "$work/va.so" || exit 2
	build_artifact "$TASK" "tasks/$TASK/reference.c" "$work/self.so" || exit 2
	for i in $(seq $((n / 2))); do
		compiled_record vector_add "$work/va.so" '{"status":"pass"}'
		compiled_record "$TASK" "$work/self.so" '{"status":"pass"}'
	done >"$work/cost.jsonl"
	if [ -n "$rev" ]; then
		mkdir -p "$work/old"
		git archive "$rev" | tar -x -C "$work/old" && make -s -C "$work/old" -j2 >/dev/null 2>&1 ||
			{ echo "cannot build $rev" >&2; exit 2; }
	fi
	echo "== cost per record: $n records (vector_add and $TASK, alternating), one leap-bench process each"
	machine
	for mt in 0.05 2; do
		wall this "$ROOT/bin" "$mt"
		[ -n "$rev" ] && wall "$rev" "$work/old/bin" "$mt"
	done
}

# pipeline: every task's reference and the OpenMP kernels through the cpu pipeline, then the
# OpenMP kernels' compiled records timed alone by the same leap-bench.
pipeline() {
	local bin=${BENCH_BIN:-$ROOT/bin} f t
	{
		leap-prompt --backend cpu --all | jq -c --arg d "$ROOT/tasks" '. + {name: "reference"}' |
			while read -r rec; do
				t=$(jq -r .task <<<"$rec")
				jq -c --rawfile c "tasks/$t/reference.c" '.completion = "```c\n\($c)```"' <<<"$rec"
			done
		for f in bench/candidates/omp-*.c; do
			t=$(basename "$f" .c)
			t=${t#omp-}
			leap-prompt --backend cpu "$t" | jq -c --rawfile c "$f" '. + {name: "omp", sample: 1, completion: "```c\n\($c)```"}'
		done
	} >"$work/pipe-in.jsonl"
	echo "== the cpu pipeline: leap-compile | leap-verify | leap-bench on $(grep -c reference "$work/pipe-in.jsonl") task references and $(grep -c '"omp"' "$work/pipe-in.jsonl") OpenMP kernels"
	echo "   leap-bench: $bin/leap-bench --max-time ${MAX_TIME:-2}${TARGET_CI:+ --target-ci $TARGET_CI}"
	machine
	local opts=(--no-progress --max-time "${MAX_TIME:-2}")
	[ -n "${TARGET_CI:-}" ] && opts+=(--target-ci "$TARGET_CI")
	local t0 t1
	t0=$(date +%s.%N)
	leap-compile --no-progress <"$work/pipe-in.jsonl" | leap-verify --no-progress --seed 1 |
		"$bin/leap-bench" "${opts[@]}" --seed 1 >"$work/pipe-out.jsonl"
	t1=$(date +%s.%N)
	echo "   at the end: $(machine); $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f s", b - a }') in all"
	jq -c 'select(.name == "omp")' "$work/pipe-out.jsonl" | jq -c 'del(.bench) | .status = "pass"' >"$work/omp.jsonl"
	for _ in 1 2 3; do "$bin/leap-bench" "${opts[@]}" --seed 1 "$work/omp.jsonl"; done >"$work/omp-alone.jsonl"
	jq -rs '
	  def pct(a; b): if b > 0 then "\(a * 1000 / b | round / 10)%" else "-" end;
	  [.[] | select(.bench.status != null and .bench.status != "skipped")] as $t
	  | ($t | map(select(.bench.status == "ok")) | length) as $ok
	  | "pipeline: \($t | length) timed records: \($ok) ok (\(pct($ok; $t | length))), "
	    + "\($t | map(select(.bench.status == "noisy")) | length) noisy, "
	    + "\($t | map(select(.bench.status != "ok" and .bench.status != "noisy")) | length) other "
	    + "(\($t | map(select(.bench.status != "ok" and .bench.status != "noisy")) | map("\(.task) \(.bench.status)") | join(", ")))",
	    "  noisy intervals: \($t | map(select(.bench.status == "noisy") | .bench.speedup_rel_ci // "too few pairs") | map(if type == "number" then (. * 1000 | round / 10 | tostring) + "%" else . end) | join(" "))"' \
		"$work/pipe-out.jsonl"
	jq -rs --slurpfile alone "$work/omp-alone.jsonl" '
	  def sp: .bench | (.measured_speedup // .speedup);
	  .[] | select(.name == "omp") | . as $p
	  | [$alone[] | select(.task == $p.task) | sp] as $a
	  | ($a | sort | .[length / 2 | floor]) as $m
	  | "  omp \(.task): pipeline \(.bench.status) \(sp * 1000 | round / 1000)x \(.bench.speedup_ci // [] | map(. * 1000 | round / 1000))"
	    + ", alone \($a | map(. * 1000 | round / 1000)) (median \($m * 1000 | round / 1000)): "
	    + "\(if $m > 0 then ((sp / $m - 1) * 1000 | round / 10 | tostring) + "%" else "-" end) from alone"' \
		"$work/pipe-out.jsonl"
}

# memo: the rotation-aware memo against gelu's reference, one leap-bench per run (issue 28's
# "found and not done": a derived set is its base set rotated, 15 elements in 16 kept).
memo() {
	local runs=${1:-10} i
	build_artifact gelu tests/fixtures/leap-bench/memo_rotate.c "$work/memo.so" || exit 2
	build_artifact gelu tasks/gelu/reference.c "$work/ref.so" || exit 2
	{
		compiled_record gelu "$work/memo.so" '{"name":"memo","status":"pass"}'
		compiled_record gelu "$work/ref.so" '{"name":"reference","status":"pass"}'
	} >"$work/in.jsonl"
	echo "== memo: a rotation-aware memo of gelu and gelu's reference, $runs runs, leap-bench --max-time ${MAX_TIME:-2}"
	machine
	for i in $(seq "$runs"); do
		leap-bench --no-progress --max-time "${MAX_TIME:-2}" "$work/in.jsonl" >>"$work/out.jsonl" || exit 2
	done
	jq -rs 'group_by(.name)[] | "\(.[0].name): \(length) records: \(map(.bench.status) | group_by(.) | map("\(length) \(.[0])") | join(", ")); speedups \(map(.bench.speedup // .bench.measured_speedup // 0 | . * 100 | round / 100) | sort | join(" "))"' "$work/out.jsonl"
}

# bigset: a short call on a set larger than half of --pool-memory, timed against itself
# (bench/blocks.md).
bigset() {
	local runs=${1:-40} i suite="$work/suite"
	mkdir -p "$suite" && cp -r tests/fixtures/leap-bench/pick "$suite/" || exit 2
	LEAP_TASKS=$suite build_artifact pick tests/fixtures/leap-bench/pick/reference.c "$work/pick.so" || exit 2
	LEAP_TASKS=$suite compiled_record pick "$work/pick.so" '{"name":"self","status":"pass"}' >"$work/pick.jsonl"
	echo "== bigset: pick (16 elements of a 4 MiB input) against itself, $runs runs, leap-bench --pool-memory 6M --max-time ${MAX_TIME:-2}"
	machine
	for i in $(seq "$runs"); do
		LEAP_TASKS=$suite leap-bench --no-progress --pool-memory 6M --max-time "${MAX_TIME:-2}" "$work/pick.jsonl" >>"$work/big.jsonl" || exit 2
	done
	echo "   at the end: $(machine)"
	jq -rs 'map(.bench) as $b | ($b | map(select(.status == "ok"))) as $ok
	  | "pick: \($b | length) records: \($ok | length) ok, \($b | map(select(.status == "noisy")) | length) noisy, \($b | map(select(.status != "ok" and .status != "noisy")) | length) other; ok outside [0.9, 1.1]: \($ok | map(select(.speedup < 0.9 or .speedup > 1.1)) | length); speedups of the ok ones \(if ($ok | length) > 0 then "\($ok | map(.speedup) | min | . * 1000 | round / 1000) to \($ok | map(.speedup) | max | . * 1000 | round / 1000)" else "-" end)",
	    "  per call: median \($b | map(.median_ms * 1000) | sort | .[length / 2 | floor] | round) us; calls per block \($b | map(.calls / (.n + 1)) | max | . * 10 | round / 10) at most; pairs \($b | map(.n) | min) to \($b | map(.n) | max); intervals of the noisy ones: \($b | map(select(.status == "noisy") | .speedup_rel_ci // "too few pairs") | map(if type == "number" then (. * 1000 | round / 10 | tostring) + "%" else . end) | join(" "))"' "$work/big.jsonl"
}

# blockcost: a block's own cost and a set's host cost (bench/README.md section 10).
blockcost() {
	make -s build/bench/blockcost || exit 2
	echo "== a block's own cost on cpu: build/bench/blockcost ${TASK_BC:-vector_add} ${1:-1000} 4096"
	machine
	LEAP_LIBEXEC="$ROOT/libexec" build/bench/blockcost "${TASK_BC:-vector_add}" "${1:-1000}" 4096
	echo "   at the end: $(machine)"
}

case "${1:-selftest}" in
selftest) shift $(($# > 0)); selftest "$@" ;;
cost) shift; cost "$@" ;;
pipeline) pipeline ;;
memo) shift; memo "$@" ;;
blockcost) shift; blockcost "$@" ;;
bigset) shift; bigset "$@" ;;
[0-9]*) selftest "$1" ;;
*) sed -n '2,39p' "$0"; exit 2 ;;
esac
