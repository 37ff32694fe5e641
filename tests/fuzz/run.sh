#!/usr/bin/env bash
# run.sh - runs libFuzzer targets on scratch copies of their seed corpora and ends with "fuzz: N passed, N failed".
#
# usage: tests/fuzz/run.sh SECONDS TARGET...     (TARGET: build/fuzz/fuzz_NAME, corpus tests/fuzz/corpus/NAME)
#
# Every target first replays each seed of its corpus (a seed that crashes fails the target:
# the corpus holds the regression inputs of earlier finds), then fuzzes for SECONDS. All
# targets run even when one fails; FUZZ_JOBS (default 1) of them at once. For each target, in
# the order given, one line says the outcome, e.g.
#   fuzz: diag ok: 412345 runs in 30 s, cov 730, ft 4061, corpus 734
#   fuzz: diag FAILED: deadly signal; input kept in build/fuzz/diag-crash-<sha1> (log: build/fuzz/diag.log)
# followed, on a failure, by the end of its log. New inputs stay under build/fuzz/ (the tree
# does not churn). Exit status: 0 all passed, 1 some target failed, 2 usage.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: tests/fuzz/run.sh SECONDS TARGET..." >&2; exit 2; }
secs=$1
shift
jobs=${FUZZ_JOBS:-1}

# one TARGET: fuzzes it and writes its report to build/fuzz/NAME.result; returns its status.
one() {
	local t=$1 name work log start rc took
	name=${t##*/fuzz_}
	work=build/fuzz/corpus-$name
	log=build/fuzz/$name.log
	rm -rf "$work"
	mkdir -p "$work"
	cp tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
	rm -f build/fuzz/"$name"-crash-* build/fuzz/"$name"-leak-* build/fuzz/"$name"-timeout-* build/fuzz/"$name"-oom-*
	start=$(date +%s)
	"$t" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix=build/fuzz/"$name"- -print_final_stats=1 "$work" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	if [ "$rc" -eq 0 ]; then
		local runs last cov ft corp
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		last=$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -n 1)
		cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
		ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
		corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
		echo "fuzz: $name ok: ${runs:-?} runs in $took s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}" >build/fuzz/"$name".result
	else
		local what input
		what=$(grep -m 1 -E '^SUMMARY:|ERROR: libFuzzer' "$log" || echo "exit status $rc")
		input=$(sed -n "s/.*Test unit written to \(.*\)/\1/p" "$log" | tail -n 1)
		{
			echo "fuzz: $name FAILED: $what; input kept in ${input:-?} (log: $log)"
			tail -n 60 "$log" | sed 's/^/    /'
		} >build/fuzz/"$name".result
	fi
	return "$rc"
}

mkdir -p build/fuzz
running=0
for t in "$@"; do
	rm -f build/fuzz/"${t##*/fuzz_}".result
	one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
passed=0
failed=0
for t in "$@"; do
	r=build/fuzz/${t##*/fuzz_}.result
	if [ -s "$r" ] && head -n 1 "$r" | grep -q ' ok: '; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		[ -s "$r" ] || echo "fuzz: ${t##*/fuzz_} FAILED: no report (the target did not run)" >"$r"
	fi
	cat "$r"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
