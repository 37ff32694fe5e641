#!/usr/bin/env bats
# stall.bats - no record holds the pipeline (issue 43, class 3): leap-compile and leap-verify
# hold the timing lock shared while leap-bench waits for it exclusively, and output keeps the
# input's order, so one record that holds its compiler or its calls for long holds every timing
# and every record behind it. Here: a verify call is bounded by a multiple of the reference's
# time on the same case; leap-verify holds the lock for one call at a time, never a record;
# leap-compile gives the lock up when a compile runs past --lock-hold, and bounds a compile's
# CPU time over all its processes. Small bounds through options keep every test to seconds.

load helpers
load artifact

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	T=$BATS_TEST_TMPDIR
}

# now: seconds since the epoch, with fractions
now() { date +%s.%N; }

# bench_wait LOCKS HOLD: takes the timing lock as leap-bench does (the gate, then the jobs lock
# exclusively, under the cache's locks/ directory LOCKS), holds it HOLD seconds and prints how
# long it waited for it.
bench_wait() {
	local t0 t1
	t0=$(now)
	flock -x "$1/cpu-gate.lock" flock -x "$1/cpu-jobs.lock" sleep "$2"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" -v h="$2" 'BEGIN { printf "%.2f\n", b - a - h }'
}

@test "verify: a call past --slow times the reference's time plus --slow-floor is a timeout that says the bound" {
	build_artifact vector_add "$FIXTURES/stall/slow_call.c" "$T/slow.so" -DSTALL_MS=1500
	compiled_record vector_add "$T/slow.so" >"$T/in.jsonl"
	local t0
	t0=$(now)
	run -0 --separate-stderr leap-verify --timeout 60 --slow-floor 0.3 --trials 1 --drawn-cases 0 "$T/in.jsonl"
	jq -r '.status, .verify.message' <<<"$output"
	[ "$(jq -r .status <<<"$output")" = timeout ]
	jq -r .verify.message <<<"$output" | grep -E "took longer than 0\.3[0-9]* s in case 1 \(n=1\), trial 1: the bound on one call is 100 times the reference's time on the same case \([0-9.e-]+ ms\) plus 0\.3 s"
	# it ended at the bound, not at --timeout
	awk -v a="$t0" -v b="$(now)" 'BEGIN { exit !(b - a < 30) }'
}

@test "verify: a load (constructors) past --slow-floor is a timeout that says the bound" {
	build_artifact vector_add "$FIXTURES/stall/slow_load.c" "$T/slow.so" -DSTALL_MS=1500
	compiled_record vector_add "$T/slow.so" >"$T/in.jsonl"
	run -0 --separate-stderr leap-verify --timeout 60 --slow-floor 0.3 --trials 1 --drawn-cases 0 "$T/in.jsonl"
	jq -r '.status, .verify.message' <<<"$output"
	[ "$(jq -r .status <<<"$output")" = timeout ]
	jq -r .verify.message <<<"$output" | grep -F "took longer than 0.3 s to load (its constructors and static initializers run then)"
	# a load within the bound passes
	build_artifact vector_add "$FIXTURES/stall/slow_load.c" "$T/quick.so" -DSTALL_MS=100
	compiled_record vector_add "$T/quick.so" >"$T/in.jsonl"
	run -0 --separate-stderr leap-verify --trials 1 --drawn-cases 0 "$T/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
}

@test "verify: honest calls pass under the default bound, and --slow 0 leaves only --timeout" {
	build_artifact vector_add "$FIXTURES/stall/slow_call.c" "$T/slow.so" -DSTALL_MS=300
	compiled_record vector_add "$T/slow.so" >"$T/in.jsonl"
	run -0 --separate-stderr leap-verify --trials 1 --drawn-cases 0 "$T/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
	run -0 --separate-stderr leap-verify --slow 0 --slow-floor 0.1 --trials 1 --drawn-cases 0 "$T/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
	run -2 --separate-stderr leap-verify --slow -1 "$T/in.jsonl"
	[[ "$stderr" == *"--slow: '-1' is not a number"* ]]
}

@test "verify: leap-bench waits for one call, not for the record, and the wait is not the candidate's time" {
	# 15 calls of 0.25 s: 3.75 s of the candidate's time within --timeout 5, while leap-bench
	# (here flock, as leap-bench takes the lock) waits for the lock and then holds it 2 s
	build_artifact vector_add "$FIXTURES/stall/slow_call.c" "$T/slow.so" -DSTALL_MS=250
	compiled_record vector_add "$T/slow.so" >"$T/in.jsonl"
	mkdir -p "$LEAP_CACHE/locks"
	leap-verify --timeout 5 --trials 5 --drawn-cases 0 "$T/in.jsonl" >"$T/out.jsonl" 2>"$T/err" &
	local pid=$!
	sleep 1
	local waited
	waited=$(bench_wait "$LEAP_CACHE/locks" 2)
	wait "$pid"
	echo "leap-bench waited $waited s; $(jq -c '{status, ms: .verify.ms, m: .verify.message}' "$T/out.jsonl")"
	awk -v w="$waited" 'BEGIN { exit !(w < 1.5) }'
	[ "$(jq -r .status "$T/out.jsonl")" = pass ]
	# it waited for leap-bench in between its calls
	jq -e '.verify.ms > 5000' "$T/out.jsonl"
}

VA_OK='void vector_add(const float *a, const float *b, float *c, int n) { for (int i = 0; i < n; i++) c[i] = a[i] + b[i]; }'

# wrap_cc ACT: writes $T/cc, a C compiler that first runs the shell code ACT when it compiles
# a candidate (kernel.c), then is cc.
wrap_cc() {
	{
		echo '#!/bin/sh'
		echo 'case " $* " in *kernel.c*)'
		echo "$1"
		echo ';; esac'
		echo 'exec cc "$@"'
	} >"$T/cc"
	chmod +x "$T/cc"
}

@test "compile: a compile that runs past --lock-hold gives the timing lock up, and leap-bench waits no longer" {
	wrap_cc 'sleep 4'
	jq -nc --arg c "$VA_OK" '{task: "vector_add", backend: "cpu", code: $c}' >"$T/in.jsonl"
	mkdir -p "$LEAP_CACHE/locks"
	leap-compile --cc "$T/cc" --lock-hold 0.5 "$T/in.jsonl" >"$T/out.jsonl" 2>"$T/err" &
	local pid=$!
	sleep 1.5
	local waited
	waited=$(bench_wait "$LEAP_CACHE/locks" 0)
	wait "$pid"
	echo "leap-bench waited $waited s; $(jq -c .compile.status "$T/out.jsonl")"
	awk -v w="$waited" 'BEGIN { exit !(w < 1.5) }'
	[ "$(jq -r .compile.status "$T/out.jsonl")" = ok ]
}

@test "compile: a compile's processes together are bounded in CPU time (--cpu-time)" {
	# two processes of up to 1 s of CPU each: each within the per-process limit, not together
	wrap_cc '[ ! -e "'"$T"'/busy" ] || { for i in 1 2; do sh -c "ulimit -t 1; while :; do :; done" & done; wait; }'
	touch "$T/busy"
	jq -nc --arg c "$VA_OK" '{task: "vector_add", backend: "cpu", code: $c}' >"$T/in.jsonl"
	run -0 --separate-stderr leap-compile --cc "$T/cc" --timeout 60 --cpu-time 1 "$T/in.jsonl"
	echo "$output"
	[ "$(jq -r .compile.reason <<<"$output")" = cpu_limit ]
	jq -r .compile.message <<<"$output" | grep -F "more than 1 s of CPU time (its processes together)"
	# the verdict is cached under this bound only: under a larger one the compiler runs again
	rm "$T/busy"
	run -0 --separate-stderr leap-compile --cc "$T/cc" --timeout 60 --cpu-time 10 "$T/in.jsonl"
	[ "$(jq -r .compile.status <<<"$output")" = ok ]
}
