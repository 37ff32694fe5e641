# leap-bench.bats - timing statistics, the stopping rule, honest speedups, caught cheats, locks (cpu).
load helpers
load artifact

setup_file() {
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
	local art="$BATS_FILE_TMPDIR/art"
	mkdir -p "$art"
	build_artifact vector_add "$FIXTURES/leap-verify/correct.c" "$art/correct.so"
	for n in timing_wrong memo crash_large; do
		build_artifact vector_add "$FIXTURES/leap-bench/$n.c" "$art/$n.so"
	done
	build_artifact softmax "$FIXTURES/leap-bench/slow2x.c" "$art/slow2x.so"
}

setup() {
	ART="$BATS_FILE_TMPDIR/art"
}

# passed NAME...: records of the named artifacts as leap-verify leaves them (status pass).
passed() {
	local n
	for n in "$@"; do compiled_record vector_add "$ART/$n.so" "{\"name\":\"$n\",\"status\":\"pass\"}"; done
}

@test "--help prints the usage; bad numbers are usage errors" {
	run -0 leap-bench --help
	assert_line --index 0 "usage: leap-bench [OPTION]... [FILE]..."
	run -2 --separate-stderr leap-bench --target-ci 0
	run -2 --separate-stderr leap-bench --min-runs 20 --max-runs 10
}

@test "--stats: median, mean, min and the order-statistic CI of known samples" {
	run -0 leap-bench --stats <<<"$(seq 11 -1 1)"
	run -0 jq -c '[.n, .median_ms, .min_ms, .mean_ms, .ci_lo, .ci_hi, (.rel_ci * 1000 | round)]' <<<"$output"
	# n = 11: ranks floor(5.5 - 3.25) = 2 and ceil(5.5 + 3.25) = 9; (9 - 2) / 2 / 6 = 0.583
	assert_output '[11,6,1,6,2,9,583]'
	run -0 leap-bench --stats <<<"1 2 3 4"
	run -0 jq -c '[.n, .median_ms, .rel_ci, .stop]' <<<"$output"
	assert_output '[4,2.5,-1,false]'
}

@test "--stats: the stopping rule needs --min-runs samples and a narrow enough interval" {
	run -0 leap-bench --stats --min-runs 10 <<<"$(yes 1.0 | head -100)"
	[ "$(jq .stop <<<"$output")" = true ]
	run -0 leap-bench --stats --min-runs 200 <<<"$(yes 1.0 | head -100)"
	[ "$(jq .stop <<<"$output")" = false ]
	# 1..100: the interval [41, 61] around 50.5 is +-19.8%: too wide for 1%, fine for 25%
	run -0 leap-bench --stats --target-ci 0.01 <<<"$(seq 100)"
	[ "$(jq .stop <<<"$output")" = false ]
	run -0 leap-bench --stats --target-ci 0.25 <<<"$(seq 100)"
	[ "$(jq .stop <<<"$output")" = true ]
}

@test "records that did not pass are not timed and pass through" {
	printf '%s\n' '{"task":"vector_add","backend":"cpu","status":"mismatch","x":1}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -c '[.bench.status, .status, .x]' <<<"$output"
	assert_output '["skipped","mismatch",1]'
}

@test "a correct candidate is timed: ok, with statistics, baseline, speedup and roofline" {
	passed correct >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 2 --seed 5 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench | [.status, (.n >= 10), (.median_ms > 0), (.baseline_ms > 0), (.speedup > 0),
		(.roofline > 0), .seed, .case.n] | @tsv' <<<"$output"
	assert_output $'ok\ttrue\ttrue\ttrue\ttrue\ttrue\t5\t4194304'
}

@test "a candidate twice as slow as the baseline gets a speedup near 0.5, within its measured spread" {
	compiled_record softmax "$ART/slow2x.so" '{"status":"pass"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --no-baseline-cache --max-time 6 --target-ci 0.02 "$BATS_TEST_TMPDIR/in.jsonl"
	# The ratio of two medians is off by at most the sum of their relative CI half-widths (95%
	# each); allow three times that, plus 5% for the second pass finding its data in cache.
	run -0 jq -r '.bench | ((.speedup - 0.5 | fabs) <= 0.5 * (3 * (.rel_ci + .baseline_rel_ci) + 0.05))
		as $ok | "\($ok) \(.speedup)"' <<<"$output"
	assert_output --partial "true "
}

@test "a kernel that is wrong only on the (larger) timing inputs is suspicious and gets no speedup" {
	passed timing_wrong >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 2 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench | "\(.status) \(.speedup) \(.message)"' <<<"$output"
	assert_output --partial "suspicious 0 Wrong output on the timing inputs (benchmark case n=4194304)"
}

@test "a kernel that skips repeated calls is caught by the poison before every timed call" {
	passed memo >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 2 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench | "\(.status) \(.message)"' <<<"$output"
	assert_output --partial "suspicious Wrong output on the timing inputs"
	assert_output --partial "was never written"
}

@test "a crash while being timed is a runtime_error, and the next record is still timed" {
	passed crash_large correct >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 1 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench | "\(.status): \(.message)"' <<<"$output"
	assert_line --index 0 --partial "runtime_error: Your code crashed with SIGSEGV"
	assert_line --index 1 --partial "ok: Median"
}

@test "the baseline is timed once per task and device, then reused" {
	passed correct correct >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 1 --baseline-tolerance 100 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench.baseline_cached' <<<"$output"
	assert_output $'false\ntrue'
	ls "$BATS_TEST_TMPDIR/cache/baselines/"*.json
}

@test "a cached baseline the machine no longer agrees with is timed again" {
	passed correct >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --max-time 1 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl"
	f=$(ls "$BATS_TEST_TMPDIR/cache/baselines/"*.json)
	jq -c '.median_ms = 1000 | .rel_ci = 0.001' "$f" >"$f.new" && mv "$f.new" "$f"
	run -0 leap-bench --max-time 1 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.bench.baseline_cached) \(.bench.baseline_ms < 1000)"' <<<"$output"
	assert_output "false true"
	[ "$(jq '.median_ms < 1000' "$f")" = true ]
}

@test "two leap-bench processes never time on the same device at once" {
	mkdir -p "$BATS_TEST_TMPDIR/cache/locks"
	passed correct >"$BATS_TEST_TMPDIR/in.jsonl"
	flock "$BATS_TEST_TMPDIR/cache/locks/cpu.lock" sleep 3 &
	sleep 0.5
	start=$(date +%s.%N)
	run -0 --separate-stderr leap-bench --max-time 0.5 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl"
	end=$(date +%s.%N)
	wait
	[[ "$stderr" == *"waiting for the lock on device cpu"* ]]
	awk -v s="$start" -v e="$end" 'BEGIN { exit !(e - s >= 2.3) }'
	[ "$(jq -r .bench.status <<<"$output")" = ok ]
}

@test "an unknown task is an error record and exit status 1" {
	compiled_record no_such "$ART/correct.so" '{"status":"pass"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -1 --separate-stderr leap-bench "$BATS_TEST_TMPDIR/in.jsonl"
	assert_output --partial "no_such"
	[ "$(jq -r '.error.program' <<<"$output")" = leap-bench ]
}

@test "ad-hoc mode prints a table, and refuses to time what does not pass" {
	run -0 leap-bench --max-time 1 --task vector_add "$FIXTURES/leap-verify/correct.c"
	assert_line --index 0 --partial "correct.c: ok (task vector_add, cpu on "
	assert_output --partial "speedup"
	run -1 leap-bench --task vector_add "$FIXTURES/leap-verify/wrong.c"
	assert_line --index 0 --partial "wrong.c: mismatch, not timed"
}

@test "cuda: the baseline is timed on the GPU" {
	skip_unless_gpu
	run -0 leap-bench --max-time 5 --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line --index 0 --partial ": ok (task vector_add, cuda on "
}

@test "--devices: output in input order, every listed device times, each timed record names its device" {
	{
		passed correct crash_large correct correct
		compiled_record vector_add "$ART/correct.so" '{"name":"failed","status":"mismatch"}'
		compiled_record no_such "$ART/correct.so" '{"name":"unknown","status":"pass"}'
		passed correct
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run -1 --separate-stderr leap-bench --devices 1,3 --max-time 0.3 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.name) \(.bench.status // "error") \(.bench.device_index // "-")"' <<<"$output"
	# cpu records: one timing at a time, so the slots take turns
	assert_output $'correct ok 1\ncrash_large runtime_error 3\ncorrect ok 1\ncorrect ok 3\nfailed skipped -\nunknown error -\ncorrect ok 1'
	# the workers of one process never wait for each other on the cpu lock
	[[ "$stderr" != *"waiting for the lock"* ]]
}

@test "--devices: cpu timings still wait for another process holding the cpu lock" {
	mkdir -p "$BATS_TEST_TMPDIR/cache/locks"
	passed correct >"$BATS_TEST_TMPDIR/in.jsonl"
	flock "$BATS_TEST_TMPDIR/cache/locks/cpu.lock" sleep 2 &
	sleep 0.5
	run -0 --separate-stderr leap-bench --devices 0,1 --max-time 0.3 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl"
	wait
	[[ "$stderr" == *"waiting for the lock on device cpu"* ]]
	[ "$(jq -r '"\(.bench.status) \(.bench.device_index)"' <<<"$output")" = "ok 0" ]
}

@test "--devices: malformed lists and conflicting options are usage errors (exit 2)" {
	for list in "" x -1 0- 1-0 0,,1 0, 0,0 1024 0x1 " 1"; do
		run -2 --separate-stderr leap-bench --devices "$list" </dev/null
		[ -z "$output" ]
		[[ "$stderr" == *"leap-bench: --devices: "* ]]
	done
	run -2 --separate-stderr leap-bench --devices 0,1 --device 1 </dev/null
	[[ "$stderr" == *"not with --device"* ]]
	run -2 --separate-stderr leap-bench --devices 0,1 --stats </dev/null
	run -0 leap-bench --devices 0-7 </dev/null
}

@test "two processes timing on one device: each says once that it waits for the lock, not per record" {
	passed correct correct correct correct correct >"$BATS_TEST_TMPDIR/in.jsonl"
	for p in a b; do
		leap-bench --max-time 0.2 --min-runs 3 --cache "$BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR/in.jsonl" \
			>"$BATS_TEST_TMPDIR/$p.out" 2>"$BATS_TEST_TMPDIR/$p.err" &
	done
	wait
	for p in a b; do
		[ "$(jq -r .bench.status "$BATS_TEST_TMPDIR/$p.out" | sort -u)" = ok ]
		n=$(grep -c 'waiting for the lock' "$BATS_TEST_TMPDIR/$p.err" || true)
		[ "$n" -le 1 ] || fail "process $p said $n times that it waits: $(cat "$BATS_TEST_TMPDIR/$p.err")"
	done
	# they did take turns: at least one of them waited
	cat "$BATS_TEST_TMPDIR/a.err" "$BATS_TEST_TMPDIR/b.err" | grep -q 'waiting for the lock on device cpu'
}
