#!/usr/bin/env bats
# hand.bats - one build path: leap-compile --task, leap-verify --task and leap-bench --task
# build a file exactly as the pipeline does (guard, namespace, cache, diagnostics, backend).
# stream: bench
load helpers

setup_file() {
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
}

setup() {
	F="$FIXTURES/hand"
	T="$BATS_TEST_TMPDIR"
	sed "s|@SUITE@|$(cd "$LEAP_TASKS" && pwd)|" "$F/includes_reference.c.in" >"$T/incref.c"
}

# pipeline TASK FILE: the pipeline's record for FILE (leap-compile | leap-verify), as jq -c.
pipeline() {
	leap-prompt --backend cpu "$1" | jq -c --rawfile c "$2" '.completion = "```c\n\($c)```"' |
		leap-compile | leap-verify --seed 5
}

@test "a file that includes the task's reference.c is forbidden_include in every mode" {
	pipeline softmax "$T/incref.c" >"$T/rec"
	jq -e '.status == "compile_error" and .compile.reason == "forbidden_include"' "$T/rec"
	run -1 leap-compile --task softmax "$T/incref.c"
	jq -e '.compile.reason == "forbidden_include"' <<<"$output"
	run -1 leap-compile -H --task softmax "$T/incref.c"
	assert_line --index 0 --partial "incref.c: softmax (cpu): compile error (forbidden_include)"
	run -1 leap-verify --task softmax "$T/incref.c"
	assert_line --index 0 --partial "incref.c: softmax (cpu): compile error (forbidden_include)"
	run -1 leap-bench --task softmax "$T/incref.c"
	assert_line --index 0 --partial "incref.c: softmax (cpu): compile error (forbidden_include)"
	# the reference's text is never shown
	[[ "$output" != *"numerically stable"* ]]
}

@test "a compile failure prints leap-compile's diagnostics, not the raw log with temporary paths" {
	run -1 leap-compile -H --task softmax "$F/missing_include.c"
	want=$output
	for p in leap-verify leap-bench; do
		run -1 "$p" --task softmax "$F/missing_include.c"
		assert_equal "$output" "$want"
	done
	assert_line --index 1 "  $F/missing_include.c:3:2: error: unknown type name 'size_t'"
	assert_line --index 2 "      3 |         size_t n = (size_t)rows * cols;"
	assert_output --partial "did you forget to '#include <stddef.h>'?"
	# no temporary path: the fixtures' own path aside (a checkout may itself live under /tmp)
	local rest=${output//"$F"/}
	[[ "$rest" != *"$LEAP_CACHE"* && "$rest" != *"/tmp/"* && "$rest" != *"leap_prelude"* ]]
}

@test "the hand modes give the pipeline's verdict on the same files" {
	for f in "$LEAP_TASKS/vector_add/reference.c" "$FIXTURES/leap-verify/wrong.c" "$FIXTURES/leap-verify/segv.c"; do
		pipeline vector_add "$f" >"$T/rec"
		want=$(jq -r .status "$T/rec")
		run leap-verify --seed 5 --task vector_add "$f"
		assert_line --index 0 --partial ": $want (task vector_add, cpu, seed 5"
		# and the same message the model is given
		assert_line --index 1 "  $(jq -r .verify.message "$T/rec")"
	done
}

@test "a hand build is a cache hit for the pipeline, and back" {
	cp "$FIXTURES/leap-verify/correct.c" "$T/va.c"
	echo "/* $RANDOM$RANDOM */" >>"$T/va.c"
	run -0 leap-verify --task vector_add "$T/va.c"
	run -0 leap-compile -H --task vector_add "$T/va.c"
	assert_line --index 0 --partial ", cached"
	echo "/* $RANDOM$RANDOM */" >>"$T/va.c"
	run -0 leap-compile --task vector_add "$T/va.c"
	art=$(jq -r .compile.artifact <<<"$output")
	run -0 leap-compile -H --task vector_add "$T/va.c"
	assert_line --index 1 "  artifact: $art"
	assert_line --index 0 --partial ", cached"
}

@test "leap-compile --task picks the backend from the extension like leap-verify and leap-bench" {
	run -0 leap-compile --task vector_add "$FIXTURES/leap-verify/correct.c"
	jq -e '.backend == "cpu" and .compile.status == "ok"' <<<"$output"
	cp "$FIXTURES/leap-verify/correct.c" "$T/va.txt"
	run -1 --separate-stderr leap-compile --task vector_add "$T/va.txt"
	[[ "$stderr" == *"va.txt: cannot tell the backend from the name (.c: cpu, .cu: cuda); give --backend"* ]]
	run -0 leap-compile --backend cpu --task vector_add "$T/va.txt"
	jq -e '.backend == "cpu"' <<<"$output"
	run -2 --separate-stderr leap-verify --task vector_add "$T/va.txt"
	[[ "$stderr" == *"give --backend"* ]]
}

@test "cuda: a .cu file is built with nvcc by every hand mode" {
	skip_unless_nvcc
	run -0 leap-compile --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	jq -e '.backend == "cuda" and .compile.status == "ok"' <<<"$output"
	run leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line --index 0 --regexp ": (pass|no_device) \(task vector_add, cuda"
}

@test "'-' reads the source from standard input in every hand mode" {
	run -0 leap-compile --backend cpu --task vector_add - <"$FIXTURES/leap-verify/correct.c"
	jq -e '.compile.status == "ok"' <<<"$output"
	run -0 leap-verify --backend cpu --seed 3 --task vector_add - <"$FIXTURES/leap-verify/correct.c"
	assert_line --index 0 --partial "-: pass (task vector_add, cpu, seed 3"
	run -1 leap-verify --backend cpu --task vector_add - <"$FIXTURES/leap-verify/wrong.c"
	assert_line --index 0 --partial "-: mismatch"
	# timed: ok (exit 0), or noisy on a loaded machine (exit 1: not timed cleanly)
	run leap-bench --max-time 0.5 --backend cpu --task vector_add - <"$FIXTURES/leap-verify/correct.c"
	[ "$status" -le 1 ]
	assert_line --index 0 --regexp "^-: (ok|noisy) \(task vector_add, cpu on "
	# without --backend the name says nothing
	run -2 --separate-stderr leap-verify --task vector_add - <"$FIXTURES/leap-verify/correct.c"
	[[ "$stderr" == *"standard input: cannot tell the backend"* ]]
}
