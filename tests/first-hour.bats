#!/usr/bin/env bats
# first-hour.bats - a newcomer's path through README.md (issue 19): the rollout step as
# printed, the backend chosen when none is given, what a record that could not be verified
# tells the stages after it.
load helpers

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	cd "$BATS_TEST_TMPDIR"
}

# gpu_usable: whether this machine has a GPU the CUDA driver can use.
gpu_usable() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU
}

@test "backend: without --backend leap-prompt picks cpu where no CUDA device is usable, and says so once" {
	run -0 --separate-stderr env CUDA_VISIBLE_DEVICES= leap-prompt -g 3 vector_add softmax
	assert_equal "$(jq -r .backend <<<"$output" | sort -u)" cpu
	assert_equal "$stderr" "leap-prompt: no --backend given: using cpu (no usable CUDA device: CUDA_VISIBLE_DEVICES='' hides every device)"
	if ! gpu_usable; then
		run -0 --separate-stderr leap-prompt vector_add
		assert_equal "$(jq -r .backend <<<"$output")" cpu
		[[ "$stderr" == "leap-prompt: no --backend given: using cpu (no usable CUDA device: "* ]] || fail "$stderr"
	fi
	# a backend given is taken as it is, silently
	run -0 --separate-stderr leap-prompt --backend cuda vector_add
	assert_equal "$(jq -r .backend <<<"$output")" cuda
	assert_equal "$stderr" ""
}

@test "backend: without --backend leap-prompt picks cuda where a GPU is usable" {
	skip_unless_gpu
	run -0 --separate-stderr leap-prompt vector_add
	assert_equal "$(jq -r .backend <<<"$output")" cuda
	assert_equal "$stderr" "leap-prompt: no --backend given: using cuda (a CUDA device is usable)"
}

@test "backend: leap-compile picks the backend of records that name none, and says so once" {
	printf '{"task":"vector_add","code":"void vector_add(void){}"}\n%.0s' 1 2 3 >in.jsonl
	run --separate-stderr env CUDA_VISIBLE_DEVICES= leap-compile --no-progress in.jsonl
	assert_equal "$(jq -r .backend <<<"$output" | sort -u)" cpu
	assert_equal "$(grep -c 'no --backend given: using cpu' <<<"$stderr")" 1
	# records that name their backend need no choice: nothing is said
	leap-prompt --backend cpu vector_add | "$ROOT/examples/sampler-replay" >named.jsonl
	run -0 --separate-stderr leap-compile --no-progress named.jsonl
	refute [ -n "$(grep 'no --backend' <<<"$stderr")" ]
}
