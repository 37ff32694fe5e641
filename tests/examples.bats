# examples.bats - make demo, the Makefile experiment and the nightly evaluation run end to end with the replay sampler.
# stream: bench
load helpers

setup() {
	for p in leap-compile leap-verify leap-prune leap-rank leap-advantage leap-report; do
		command -v "$p" >/dev/null || skip "$p is not built in this checkout"
	done
	# leap-bench times candidates when it is there (with a short budget: these tests check the
	# plumbing, not the numbers); without it the examples run untimed.
	if command -v leap-bench >/dev/null; then export BENCH=leap-bench; else export BENCH=; fi
	export BENCH_FLAGS="--max-time 0.05 --min-runs 2 --max-runs 4 --target-ci 0.5"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	cd "$ROOT"
}

@test "examples: make demo runs a three-turn rollout over every task and prints the report" {
	# untimed: timing ~190 passing candidates takes minutes (the resume test below times some)
	run -0 env BENCH= DEMO_OUT="$BATS_TEST_TMPDIR/demo" make -s demo
	assert_output --partial "demo: backend cpu, $(ls tasks/*/task.json | wc -l) tasks, group size 8, up to 3 turns"
	assert_output --partial "demo: turn 3:"
	assert_output --partial "Pass rate by turn"
	assert_output --partial "DCP ledger"
	out="$BATS_TEST_TMPDIR/demo"
	# every trajectory (task x 8 samples) is in the training file, every record has an advantage
	run -0 jq -s '[.[] | "\(.task)/\(.sample)"] | unique | length' "$out/train.jsonl"
	[ "$output" -eq $((8 * $(ls tasks/*/task.json | wc -l))) ]
	run -0 jq -s '[.[] | select((.advantage | type) != "number")] | length' "$out/train.jsonl"
	assert_output 0
	# the replay data makes all outcomes and all DCP decisions happen
	run -0 jq -rs '[.[].status] | unique | join(" ")' "$out/train.jsonl"
	[ "$output" = "compile_error mismatch no_code pass" ] ||
		fail "statuses: $output; unexpected: $(jq -c 'select(.status == "runtime_error" or .status == "timeout")
			| {task, sample, turn, verify: .verify.message}' "$out/train.jsonl" | head -3)"
	run -0 jq -rs '[.[].prune.verdict // empty] | unique | join(" ")' "$out/train.jsonl"
	assert_output --partial easy
	assert_output --partial hopeless
	for chart in pass-by-turn speedup dcp advantage; do
		[ -s "$out/plots/$chart.svg" ] || fail "no $chart.svg"
	done
}

@test "examples: rollout.mk gives the same outcomes with one shard or three in parallel" {
	# untimed: measured speeds would break ties differently from run to run
	args=(-s -f examples/rollout.mk TASKS="softmax gelu attention vector_add" BENCH=)
	run -0 make "${args[@]}" -j3 OUT="$BATS_TEST_TMPDIR/r3" SHARDS=3
	assert_output --partial "Pass rate by turn"
	run -0 make "${args[@]}" OUT="$BATS_TEST_TMPDIR/r1" SHARDS=1
	for d in r1 r3; do
		jq -c '[.task, .sample, .turn, .status, .rank.score, .advantage]' "$BATS_TEST_TMPDIR/$d/train.jsonl" |
			sort >"$BATS_TEST_TMPDIR/$d.outcomes"
	done
	diff -u "$BATS_TEST_TMPDIR/r1.outcomes" "$BATS_TEST_TMPDIR/r3.outcomes" # not `run`: a failure shows the lines that differ
	[ "$(wc -l <"$BATS_TEST_TMPDIR/r1.outcomes")" -gt 32 ]
}

@test "examples: rollout.mk resumes: nothing to do when done, only the missing turn reruns" {
	args=(-f examples/rollout.mk TASKS="softmax vector_add" BENCH="$BENCH" BENCH_FLAGS="$BENCH_FLAGS" OUT="$BATS_TEST_TMPDIR/r")
	run -0 make -s "${args[@]}"
	run -0 make "${args[@]}"
	assert_output --partial "Nothing to be done"
	rm "$BATS_TEST_TMPDIR/r/turn2.done.jsonl" "$BATS_TEST_TMPDIR/r/t2/out.001.jsonl"
	run -0 make "${args[@]}"
	assert_output --partial "t2/in.001.jsonl"
	refute_output --partial "t2/in.000.jsonl"
	refute_output --partial "leap-prompt"
	assert_output --partial "leap-report"
	if [ -n "$BENCH" ]; then
		run -0 jq -s '[.[] | select(.status == "pass" and (.bench.status | IN("ok", "noisy") | not))] | length' "$BATS_TEST_TMPDIR/r/train.jsonl"
		assert_output 0
	fi
}

@test "examples: rollout.mk at -j4 with timing: one leap-bench per turn, no queue for the device lock" {
	[ -n "$BENCH" ] || skip "leap-bench is not built"
	run -0 --separate-stderr make -s -f examples/rollout.mk -j4 SHARDS=4 GROUP=4 TURNS=2 \
		TASKS="softmax vector_add gelu layernorm" BENCH_FLAGS="$BENCH_FLAGS" OUT="$BATS_TEST_TMPDIR/r"
	[ "$(grep -c 'waiting for the lock' <<<"$stderr")" -eq 0 ] || fail "$(grep 'waiting' <<<"$stderr" | head -3)"
	# every passing record was timed; on a loaded machine a timing may be noisy, never missing
	run -0 jq -s '[.[] | select(.status == "pass" and (.bench.status | IN("ok", "noisy") | not))] | length' "$BATS_TEST_TMPDIR/r/train.jsonl"
	assert_output 0
}

@test "examples: rollout.mk: the settings are in the dependency graph" {
	args=(-f examples/rollout.mk TASKS="softmax vector_add" BENCH= OUT="$BATS_TEST_TMPDIR/r")
	run -0 make -s "${args[@]}" GROUP=2 TURNS=2
	run -0 make "${args[@]}" GROUP=2 TURNS=2
	assert_output --partial "Nothing to be done"
	# another group size on the same OUT: from the prompts on, and the report is the new run's
	run -0 make "${args[@]}" GROUP=3 TURNS=2
	assert_output --partial "leap-prompt"
	assert_output --partial "6 trajectories, 2 tasks"
	# another turn budget
	run -0 make "${args[@]}" GROUP=3 TURNS=1
	assert_output --partial "leap-prompt"
	assert_output --partial "up to 1 turn"
	refute_output --partial "up to 1 turns"
	run -0 jq -s 'map(.turn) | max' "$BATS_TEST_TMPDIR/r/train.jsonl"
	assert_output 1
	# another number of shards: the same prompts, split again
	run -0 make "${args[@]}" GROUP=3 TURNS=1 SHARDS=3
	refute_output --partial "leap-prompt"
	assert_output --partial "t1/in.002.jsonl"
}

@test "examples: nightly-eval stores a baseline, holds it, fails on a drop and never overlaps" {
	export BENCH=
	base="$BATS_TEST_TMPDIR/nightly"
	run -0 examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	assert_output --partial "stored as the first baseline"
	[ -s "$base/latest/report.json" ]
	[ -s "$base/latest/train.jsonl" ]
	run -0 examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	assert_output --partial "holds"
	[ "$(ls -d "$base"/20*/ | wc -l)" -eq 2 ]
	jq '.pass_rate = 0.99 | .run = "a better day"' "$base/baseline.json" >"$base/b.tmp" && mv "$base/b.tmp" "$base/baseline.json"
	run -1 --separate-stderr examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	assert_equal "$stderr" "nightly-eval: pass rate dropped: $(jq -r .all.pass_at_turn[-1] "$base/latest/report.json") < baseline 0.99 - 0.02 (baseline run a better day)"
	# another evaluation holds the lock until told to let go (once it holds it: a loaded
	# machine may start it late)
	flock "$base/.lock" timeout 600 sh -c 'touch "$1.held"; while [ ! -e "$1.go" ]; do sleep 0.05; done' _ "$base/.lock" 3>&- &
	local holder=$! i
	for ((i = 0; i < 2400; i++)); do [ -e "$base/.lock.held" ] && break; sleep 0.05; done
	[ -e "$base/.lock.held" ]
	run -75 examples/nightly-eval.sh -d "$base"
	assert_output --partial "another evaluation holds"
	touch "$base/.lock.go"
	wait "$holder"
	run -2 examples/nightly-eval.sh -g zero
	run -2 examples/nightly-eval.sh --dir
}

@test "examples: nightly-eval: a run that is mostly errors has failed: exit 2, the count named, not latest" {
	export BENCH=
	base="$BATS_TEST_TMPDIR/nightly"
	# the model server is down: the sampler turns every record into an error record
	printf '#!/bin/sh\nexec jq -c %s\n' "'. + {error: {program: \"sampler-openai\", message: \"connection refused\"}}'" \
		>"$BATS_TEST_TMPDIR/down"
	chmod +x "$BATS_TEST_TMPDIR/down"
	run -2 --separate-stderr env SAMPLER="$BATS_TEST_TMPDIR/down" examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	n=$(($(leap-task --all --list | xargs leap-task | jq -s 'map(select(.level == 1)) | length') * 2))
	[[ "$(sed -n 1p <<<"$stderr")" == "nightly-eval: the run failed: $n of $n records carry an error (more than --max-errors 0.1); "*" is kept, latest and the baseline are unchanged" ]] ||
		fail "$stderr"
	assert_equal "$(sed -n 2p <<<"$stderr")" "nightly-eval:   $n records: sampler-openai: connection refused"
	[ ! -e "$base/latest" ] && [ ! -e "$base/baseline.json" ]
	# a good run after it becomes latest and the baseline; the broken one stays for a look
	run -0 examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	assert_output --partial "stored as the first baseline"
	[ "$(ls -d "$base"/20*/ | wc -l)" -eq 2 ]
	[ "$(readlink "$base/latest")" = "$(jq -r .run "$base/baseline.json")" ]
	# the next broken run leaves both alone
	run -2 --separate-stderr env SAMPLER="$BATS_TEST_TMPDIR/down" examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	[ "$(readlink "$base/latest")" = "$(jq -r .run "$base/baseline.json")" ]
}

@test "examples: nightly-eval compares a run only with a baseline of the same settings" {
	export BENCH=
	base="$BATS_TEST_TMPDIR/nightly"
	run -0 examples/nightly-eval.sh -d "$base" -g 2 -l 1 -j 2
	run -0 jq -c '.settings | [.level, .group_size, .turns, .backend, .timing, (.tasks | length), .leap_version]' "$base/baseline.json"
	assert_output "[\"1\",2,1,\"cpu\",false,$(leap-task --all --list | xargs leap-task | jq -s 'map(select(.level == 1)) | length'),\"$(leap-prompt --version | cut -d' ' -f3)\"]"
	# another group size: not compared (exit 3), saying what differs; the baseline stays
	cp "$base/baseline.json" "$BATS_TEST_TMPDIR/before.json"
	run -3 --separate-stderr examples/nightly-eval.sh -d "$base" -g 3 -l 1 -j 2
	[[ "$stderr" == *"not compared with the baseline (run "*"): the settings differ: group_size 2 -> 3;"* ]] || fail "$stderr"
	cmp "$base/baseline.json" "$BATS_TEST_TMPDIR/before.json"
	# other tasks and timing on: both named
	run -3 --separate-stderr env BENCH=leap-bench BENCH_FLAGS="--max-time 0.05 --min-runs 2 --max-runs 3" examples/nightly-eval.sh -d "$base" -g 2 -l 2 -j 2
	[[ "$stderr" == *"level 1 -> 2"*"timing false -> true"*"tasks: "*" added"*" removed"* ]] || fail "$stderr"
	# --update-baseline takes the new settings
	run -0 examples/nightly-eval.sh -d "$base" -g 3 -l 1 -j 2 --update-baseline
	assert_output --partial "stored as the baseline, replacing run"
	[ "$(jq .settings.group_size "$base/baseline.json")" = 3 ]
	run -0 examples/nightly-eval.sh -d "$base" -g 3 -l 1 -j 2
	assert_output --partial "holds"
	# a baseline from before settings were recorded
	jq 'del(.settings)' "$base/baseline.json" >"$base/b.tmp" && mv "$base/b.tmp" "$base/baseline.json"
	run -3 --separate-stderr examples/nightly-eval.sh -d "$base" -g 3 -l 1 -j 2
	[[ "$stderr" == *"the baseline records no settings"* ]] || fail "$stderr"
}

@test "examples: every \$ command of debug-one-kernel.md runs and shows the verdicts it describes" {
	sed -n 's/^    \$ //p' examples/debug-one-kernel.md >"$BATS_TEST_TMPDIR/walk.sh"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/walk.sh")" -ge 10 ]
	run bash "$BATS_TEST_TMPDIR/walk.sh"
	assert_output --partial "layernorm.c: layernorm (cpu): ok"
	assert_output --partial "layernorm_x.c: layernorm (cpu): compile error (wrong_signature)"
	assert_output --partial "layernorm.c: mismatch (task layernorm, cpu"
	assert_output --partial "Wrong output in case 1 (rows=1, cols=2, eps=1e-05)"
	assert_output --partial "layernorm_fixed.c: pass (task layernorm, cpu, seed 7"
	assert_output --partial "Your kernel computes wrong results."
}

@test "examples: sampler-openai feeds the pipeline from a chat server (the vllm.md flow against the fake server)" {
	command -v python3 >/dev/null || skip "python3 is needed for the fake server"
	cd "$BATS_TEST_TMPDIR"
	python3 "$FIXTURES/sampler-openai/fake_server.py" port requests.jsonl --fail 1 --answers "$FIXTURES/examples/answers.json" &
	pid=$!
	# it writes its port once it listens (a loaded machine may take a while to start python)
	for _ in $(seq 2400); do [ -s port ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
	[ -s port ] || fail "the fake server did not start"
	export LEAP_OPENAI_URL="http://127.0.0.1:$(cat port)/v1" LEAP_MODEL=fake LEAP_BACKOFF=0.05
	run bash -c 'leap-prompt --backend cpu --group-size 2 vector_add softmax | "$1/examples/sampler-openai" -j 4 |
		leap-compile --no-progress | leap-verify --seed 1 --no-progress > out.jsonl' _ "$ROOT"
	kill "$pid"
	run -0 jq -r '"\(.task) \(.sample) \(.status) \(.tokens)"' out.jsonl
	assert_line --index 0 --regexp '^vector_add 0 pass [0-9]+$'
	assert_line --index 1 --regexp '^vector_add 1 pass [0-9]+$'
	assert_line --index 2 --regexp '^softmax 0 no_code [0-9]+$'
	assert_line --index 3 --regexp '^softmax 1 no_code [0-9]+$'
	[ "$(wc -l <requests.jsonl)" -eq 5 ]
}
