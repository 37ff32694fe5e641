# sampler-replay.bats - the replay sampler example and the recorded completions shipped for the demo.
load helpers

SAMPLER="$ROOT/examples/sampler-replay"
REPLAY="$FIXTURES/sampler-replay/replay.jsonl"

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "sampler-replay: --help, --version and usage errors" {
	run -0 "$SAMPLER" --help
	assert_line --index 0 "usage: sampler-replay [OPTION]... [FILE]..."
	run -0 "$SAMPLER" --version
	assert_output "sampler-replay 0.1.0"
	run -2 "$SAMPLER" --bogus
	assert_output --partial "unknown option '--bogus'"
	run -2 "$SAMPLER" --replay
	assert_output --partial "requires an argument"
	run -2 "$SAMPLER" --replay does-not-exist.jsonl </dev/null
	assert_output --partial "does-not-exist.jsonl: cannot read"
}

@test "sampler-replay: a replay file with an unusable entry is a fatal error" {
	printf '{"task":"t","sample":0,"turn":1}\n' >bad.jsonl
	run -2 "$SAMPLER" --replay bad.jsonl </dev/null
	assert_output --partial "cannot load the replay files"
}

@test "sampler-replay: adds the recorded completion and tokens, keeps every other byte and the order" {
	printf '%s\n' '{"task":"t","sample":1,"turn":1,"backend":"cpu","x":2.50}' '{"task":"t","sample":0,"turn":1,"backend":"cpu"}' >in.jsonl
	run -0 "$SAMPLER" --replay "$REPLAY" in.jsonl
	assert_line --index 0 '{"task":"t","sample":1,"turn":1,"backend":"cpu","x":2.50,"completion":"cpu s1 t1","tokens":3}'
	assert_line --index 1 '{"task":"t","sample":0,"turn":1,"backend":"cpu","completion":"cpu s0 t1","tokens":3}'
}

@test "sampler-replay: backend-specific entries win, entries without backend serve every backend" {
	printf '%s\n' '{"task":"t","sample":0,"turn":1,"backend":"cuda"}' '{"task":"u","sample":0,"turn":1,"backend":"cpu"}' >in.jsonl
	run -0 "$SAMPLER" --replay "$REPLAY" in.jsonl
	assert_line --index 0 --partial '"completion":"any s0 t1"'
	assert_line --index 1 --partial '"completion":"u any"'
}

@test "sampler-replay: extra samples cycle and later turns repeat the last answer, unless --strict" {
	printf '%s\n' '{"task":"t","sample":5,"turn":1,"backend":"cpu"}' '{"task":"t","sample":0,"turn":3,"backend":"cpu"}' >in.jsonl
	run -0 "$SAMPLER" --replay "$REPLAY" in.jsonl
	assert_line --index 0 --partial '"completion":"cpu s1 t1"'
	assert_line --index 1 --partial '"completion":"cpu s0 t2"'
	run -1 --separate-stderr "$SAMPLER" --strict --replay "$REPLAY" in.jsonl
	assert_line --index 0 --partial '"message":"no recorded completion for task t sample 5 turn 1 backend cpu"'
	assert_equal "$stderr" "sampler-replay: 2 of 2 records carry an error"
}

@test "sampler-replay: a record with an old completion gets the new one" {
	printf '%s\n' '{"task":"t","sample":0,"turn":2,"backend":"cpu","completion":"old","tokens":9}' >in.jsonl
	run -0 "$SAMPLER" --replay "$REPLAY" in.jsonl
	run -0 jq -c '[.completion, .tokens]' <<<"$output"
	assert_output '["cpu s0 t2",3]'
}

@test "sampler-replay: malformed lines, unknown tasks and error records are never dropped" {
	{
		echo 'not json'
		echo ''
		echo '{"task":"nope","sample":0,"turn":1}'
		echo '{"sample":0}'
		echo '{"task":"t","sample":0,"error":{"program":"leap-compile","message":"x"}}'
		printf '{"task":"t","sample":0,"turn":1,"backend":"cpu"}\r\n'
	} >in.jsonl
	run -1 --separate-stderr "$SAMPLER" --replay "$REPLAY" in.jsonl
	[ "${#lines[@]}" -eq 5 ]
	assert_line --index 0 '{"error":{"program":"sampler-replay","file":"in.jsonl","line":1,"message":"invalid JSON: not one object"},"raw":"not json"}'
	assert_line --index 1 '{"task":"nope","sample":0,"turn":1,"error":{"program":"sampler-replay","file":"in.jsonl","line":3,"message":"no recorded completion for task nope sample 0 turn 1 backend cuda"}}'
	assert_line --index 2 --partial '"message":"no task or sample: nothing to look up"'
	assert_line --index 3 '{"task":"t","sample":0,"error":{"program":"leap-compile","message":"x"}}'
	assert_line --index 4 '{"task":"t","sample":0,"turn":1,"backend":"cpu","completion":"cpu s0 t1","tokens":3}'
	assert_equal "$stderr" "sampler-replay: 4 of 5 records carry an error"
}

@test "sampler-replay: reads stdin and several files, LEAP_REPLAY names the replay file" {
	echo '{"task":"t","sample":0,"turn":1,"backend":"cpu"}' >a.jsonl
	echo '{"task":"t","sample":1,"turn":1,"backend":"cpu"}' >b.jsonl
	LEAP_REPLAY=$REPLAY run -0 "$SAMPLER" a.jsonl b.jsonl
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 1 --partial '"completion":"cpu s1 t1"'
	run -0 bash -c 'LEAP_REPLAY="$1" "$2" < a.jsonl' _ "$REPLAY" "$SAMPLER"
	assert_output --partial '"completion":"cpu s0 t1"'
}

@test "sampler-replay: the bundled replay answers 8 samples of turn 1 for every task on both backends" {
	cd "$ROOT"
	for b in cpu cuda; do
		run -0 bash -c 'leap-prompt --backend "$2" --group-size 8 --all | examples/sampler-replay --strict > "$1/turn1.jsonl"' _ "$BATS_TEST_TMPDIR" "$b"
		run -0 jq -s 'length' "$BATS_TEST_TMPDIR/turn1.jsonl"
		[ "$output" -eq $((8 * $(ls tasks/*/task.json | wc -l))) ]
		run -0 jq -s '[.[] | select(.completion | type != "string")] | length' "$BATS_TEST_TMPDIR/turn1.jsonl"
		assert_output 0
	done
}

@test "sampler-replay: the bundled replay mixes passes, mismatches, compile errors and answers without code over three turns" {
	cd "$ROOT"
	run -0 jq -rs 'group_by(.expect) | map("\(.[0].expect) \(length)") | join(" ")' examples/replay/cpu.jsonl
	assert_output --regexp '^compile_error [0-9]+ mismatch [0-9]+ no_code [0-9]+ pass [0-9]+$'
	run -0 jq -s '[.[].turn] | max' examples/replay/cpu.jsonl
	assert_output 3
}

@test "sampler-replay: the bundled replay files are what examples/replay/generate.py writes" {
	command -v python3 >/dev/null || skip "python3 not found"
	cd "$ROOT"
	run -0 bash -c 'python3 examples/replay/generate.py cpu | cmp - examples/replay/cpu.jsonl'
	run -0 bash -c 'python3 examples/replay/generate.py cuda | cmp - examples/replay/cuda.jsonl'
}

@test "sampler-replay: every recorded cpu completion does what its label says (pass, mismatch, compile_error, no_code)" {
	cd "$ROOT"
	run -0 "$FIXTURES/sampler-replay/check-labels.sh" examples/replay/cpu.jsonl "$BATS_TEST_TMPDIR/labels"
	assert_output --regexp '^[0-9]+ distinct completions checked$'
}

@test "sampler-replay: every recorded cuda completion compiles or fails to compile as its label says" {
	skip_unless_nvcc
	[ "${LEAP_TEST_SLOW:-}" = 1 ] || skip "about 3 minutes of nvcc: run with LEAP_TEST_SLOW=1"
	cd "$ROOT"
	run -0 "$FIXTURES/sampler-replay/check-labels.sh" --cuda examples/replay/cuda.jsonl "$BATS_TEST_TMPDIR/labels"
	assert_output --regexp '^[0-9]+ distinct completions checked$'
}

@test "sampler-replay: recorded cuda completions do on the GPU what their labels say" {
	skip_unless_gpu
	command -v leap-verify >/dev/null || skip "leap-verify is not built in this checkout"
	cd "$ROOT"
	run -0 "$FIXTURES/sampler-replay/check-labels.sh" --cuda-run examples/replay/cuda.jsonl "$BATS_TEST_TMPDIR/labels"
	assert_output --regexp '^[0-9]+ distinct completions run; [0-9]+ of [0-9]+ races showed wrong results$'
}
