#!/usr/bin/env bats
# leap-prompt.bats - turn-1 records: shape, groups, prototypes per backend, task sources, errors.
load helpers

@test "G=4 over three tasks gives 12 well-formed records in order" {
	run -0 leap-prompt --backend cuda --group-size 4 vector_add softmax matmul
	assert_equal "$(wc -l <<<"$output")" 12
	assert_equal "$(jq -c '[.task, .group, .sample, .turn, .backend]' <<<"$output" | head -n 5 | tr '\n' ' ')" \
		'["vector_add","vector_add",0,1,"cuda"] ["vector_add","vector_add",1,1,"cuda"] ["vector_add","vector_add",2,1,"cuda"] ["vector_add","vector_add",3,1,"cuda"] ["softmax","softmax",0,1,"cuda"] '
	assert_equal "$(jq -r '.messages | map(.role) | join(",")' <<<"$output" | sort -u)" "system,user"
	# every record passes the record check
	run -0 leap-record --require task,group,sample,turn,backend,messages <<<"$output"
}

@test "the user message states the exact prototype, the memory model and the answer format" {
	run -0 leap-prompt --backend cuda softmax
	user="$(jq -r '.messages[1].content' <<<"$output")"
	[[ "$user" == *'extern "C" void softmax(const float *x, float *y, int rows, int cols);'* ]]
	[[ "$user" == *"**device** memory"* ]]
	[[ "$user" == *'One fenced ```cuda block'* ]]
	[[ "$user" == *"rows=7, cols=33"* ]]
	[[ "$user" == *"rows=8192, cols=4096"* ]]
}

@test "the cpu backend: C prototype, host memory, c fence, cpu benchmark case" {
	run -0 leap-prompt --backend cpu matmul
	assert_equal "$(jq -r .backend <<<"$output")" cpu
	user="$(jq -r '.messages[1].content' <<<"$output")"
	[[ "$user" == *$'```c\nvoid matmul(const float *A, const float *B, float *C, int n);\n```'* ]]
	[[ "$user" == *"host memory"* ]]
	[[ "$user" == *"measured on n=256"* ]]
	[[ "$user" != *"device"* ]]
}

@test "--group-prefix namespaces the group key, not the task" {
	run -0 --separate-stderr leap-prompt -g 2 --group-prefix step7/ vector_add
	assert_equal "$(jq -c '[.task, .group]' <<<"$output" | sort -u)" '["vector_add","step7/vector_add"]'
}

@test "--all takes the whole suite sorted; --level filters it" {
	run -0 --separate-stderr leap-prompt --all
	assert_equal "$(jq -r .task <<<"$output")" "$(leap-task --list --all)"
	run -0 --separate-stderr leap-prompt --all --level 3
	assert_equal "$(jq -r .task <<<"$output")" "$(leap-task --all | jq -r 'select(.level == 3) | .id')"
	run -2 --separate-stderr leap-prompt --all --level 9
	assert_output ""
}

@test "--file reads ids, skipping blanks and comments; unknown ids become error records" {
	printf '# tasks for today\nsoftmax\r\n\n  matmul  \nnope\n' >"$BATS_TEST_TMPDIR/ids"
	run --separate-stderr -1 leap-prompt --backend cpu -g 2 --file "$BATS_TEST_TMPDIR/ids"
	assert_equal "$(jq -r '.task' <<<"$output" | tr '\n' ' ')" "softmax softmax matmul matmul nope "
	assert_equal "$(jq -r 'select(.error) | "\(.error.line) \(.error.message)"' <<<"$output")" \
		"5 task 'nope' not found in $LEAP_TASKS"
	[[ "$stderr" == "leap-prompt: $BATS_TEST_TMPDIR/ids:5: task 'nope' not found in"* ]]
}

@test "--file - reads ids from stdin" {
	run -0 --separate-stderr leap-prompt --file - <<<"vector_add"
	assert_equal "$(jq -r .task <<<"$output")" vector_add
}

@test "--system replaces the system message" {
	printf 'Be brief.\n' >"$BATS_TEST_TMPDIR/sys"
	run -0 --separate-stderr leap-prompt --system "$BATS_TEST_TMPDIR/sys" vector_add
	assert_equal "$(jq -r '.messages[0].content' <<<"$output")" "Be brief."
}

@test "--tasks and LEAP_TASKS choose the suite" {
	mkdir -p "$BATS_TEST_TMPDIR/suite"
	cp -R "$LEAP_TASKS/vector_add" "$BATS_TEST_TMPDIR/suite/"
	run -0 --separate-stderr leap-prompt --tasks "$BATS_TEST_TMPDIR/suite" --all
	assert_equal "$(jq -r .task <<<"$output")" vector_add
	LEAP_TASKS="$BATS_TEST_TMPDIR/suite" run -0 --separate-stderr leap-prompt --all
	assert_equal "$(jq -r .task <<<"$output")" vector_add
}

@test "usage errors exit 2 with the synopsis on stderr" {
	run --separate-stderr -2 leap-prompt
	[[ "$stderr" == *"no tasks given"* && "$stderr" == *"usage: leap-prompt"* ]]
	run --separate-stderr -2 leap-prompt --group-size 0 softmax
	[[ "$stderr" == *"--group-size: '0' is not an integer"* ]]
	run --separate-stderr -2 leap-prompt --group-size 4x softmax
	run --separate-stderr -2 leap-prompt --backend rocm softmax
	run --separate-stderr -2 leap-prompt --all softmax
	run --separate-stderr -2 leap-prompt --bogus softmax
	[[ "$stderr" == *"unrecognized option '--bogus'"* ]]
	assert_output ""
}
