#!/usr/bin/env bats
# first-hour.bats - a newcomer's path through README.md (issue 19): the rollout step as
# printed, the backend chosen when none is given, what a record that could not be verified
# tells the stages after it.
# stream: bench
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
	# a backend given is taken as it is, with no word on how it was chosen (where no CUDA
	# compiler is found, the one word is that the prompts cannot name it)
	run -0 --separate-stderr leap-prompt --backend cuda --device-info "$FIXTURES/leap-prompt/h200.json" vector_add
	assert_equal "$(jq -r .backend <<<"$output")" cuda
	if nvcc_found; then
		assert_equal "$stderr" ""
	else
		assert_equal "$stderr" "leap-prompt: the cuda compiler was not found: the prompts name no compiler or flags"
	fi
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

@test "no device: a cuda record leap-verify could not run carries an error, and leap-prune says so" {
	skip_unless_nvcc
	gpu_usable && skip "a GPU is present: cuda records are verified"
	[ -x "$ROOT/libexec/leap-run-cuda" ] || skip "the cuda runner is not built"
	leap-prompt --backend cuda -g 2 vector_add | "$ROOT/examples/sampler-replay" | leap-compile --no-progress >c.jsonl
	run -1 --separate-stderr leap-verify --no-progress c.jsonl
	printf '%s\n' "$output" >v.jsonl
	# the verdict is no_device, the record's status is left alone, and an error says why and
	# what to do: once on stderr with its place, and a count at the end
	run -0 jq -r '"\(.verify.status) \(.status // "none") \(.error.program)"' v.jsonl
	assert_output $'no_device none leap-verify\nno_device none leap-verify'
	jq -e -s 'all(.[]; .error.message | endswith("Run it where a CUDA device is usable, or prompt with --backend cpu."))' v.jsonl
	[[ "$stderr" == "leap-verify: c.jsonl:1: Not verified: "*"--backend cpu."$'\n'"leap-verify: 2 records not verified: no usable CUDA device" ]] ||
		fail "stderr: $stderr"
	# downstream: leap-bench passes them on, leap-prune does not advise running leap-verify
	# again: it names the error the record carries and keeps it
	run -1 --separate-stderr bash -c 'leap-bench --no-progress v.jsonl | leap-prune --group-size 2 --done done.jsonl --no-progress'
	refute [ -n "$(grep 'run leap-compile, leap-verify' <<<"$stderr")" ]
	[[ "$stderr" == *"leap-prune: <stdin>:1: not decided: the record carries an error (leap-verify: Not verified: "* ]] ||
		fail "stderr: $stderr"
	run -0 jq -r '.error.program' done.jsonl
	assert_output $'leap-verify\nleap-verify'
}

@test "README: the rollout step runs as printed, leap-prune given the group size of the prompts" {
	# the snippet as README.md prints it
	sed -n '/^## One rollout step/,/^## /p' "$ROOT/README.md" | sed -n 's/^    //p' >step.sh
	grep -q '^leap-prompt --group-size 16 --all' step.sh || fail "README snippet: $(cat step.sh)"
	grep -q 'leap-prune --group-size 16 ' step.sh || fail "leap-prune has no --group-size in README: $(cat step.sh)"
	# what a fresh checkout needs first: the programs on PATH and a sampler named (issue 25)
	grep -qxF 'export PATH="$PWD/bin:$PATH"' step.sh || fail "README snippet puts no bin/ on PATH: $(cat step.sh)"
	grep -q '^sampler() { examples/sampler-replay ' step.sh || fail "README snippet names no sampler: $(cat step.sh)"
	# leap.7 prints the same rollout, from leap-prompt on
	diff <(sed -n '/^\.SH A ROLLOUT/,/^\.SH /p' "$ROOT/man/leap.7" | sed -n '/^\.EX/,/^\.EE/p' | sed '1d;$d' |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g') <(sed -n '/^leap-prompt /,$p' step.sh)
	# run it without a GPU and without naming a backend, as printed, in the top directory of a
	# checkout after make demo: its programs, runners and examples, a small suite
	gpu_usable && skip "a GPU is present: the rollout would run on cuda"
	mkdir -p co/tasks && cp -R "$ROOT/bin" "$ROOT/libexec" "$ROOT/examples" co/
	cp -R "$ROOT/tasks/vector_add" "$ROOT/tasks/softmax" co/tasks/
	sed -i -e 's/--group-size 16/--group-size 4/g' -e 's/leap-bench/leap-bench --max-time 0.05 --min-runs 2 --max-runs 3 --target-ci 0.5/' step.sh
	cd co
	run --separate-stderr env -u LEAP_TASKS bash -e ../step.sh
	[ "$status" -le 1 ] || fail "exit $status: $stderr"
	# every sample of every task ended in done.jsonl with a decision, none carries an error
	run -0 jq -s '[.[] | select(.prune.decision == "final")] | length' done.jsonl
	assert_output 8
	run -0 jq -s '[.[] | select(.error)] | length' done.jsonl
	assert_output 0
	jq -e -s 'all(.[]; .backend == "cpu" and (.prune.complete // true))' done.jsonl
	[ -s train.jsonl ]
}

@test "a task suite that is not there is named, not the task: --tasks and LEAP_TASKS" {
	for p in leap-prompt leap-task; do
		run -2 --separate-stderr "$p" --tasks "$BATS_TEST_TMPDIR/nope" softmax
		assert_equal "$stderr" "$p: --tasks $BATS_TEST_TMPDIR/nope: No such file or directory (the task suite)"
		assert_equal "$output" ""
		run -2 --separate-stderr env LEAP_TASKS="$ROOT/README.md" "$p" softmax
		assert_equal "$stderr" "$p: LEAP_TASKS=$ROOT/README.md: not a directory (the task suite)"
	done
	run -2 --separate-stderr leap-compile --tasks "$BATS_TEST_TMPDIR/nope" </dev/null
	[[ "$stderr" == *"--tasks $BATS_TEST_TMPDIR/nope: No such file or directory (the task suite)"* ]]
}

@test "small ones: leap-prompt --level with no task of that level says so (exit 2), naming the levels there are" {
	run -2 --separate-stderr leap-prompt --backend cpu --level 9 --all
	assert_equal "$output" ""
	assert_equal "$stderr" "leap-prompt: --level 9: no task of that level in $ROOT/tasks (its levels: 1, 2, 3)"
	run -0 leap-prompt --backend cpu --level 3 --all
	[ -n "$output" ]
}

@test "small ones: leap-task --list alone lists the suite; a folder is a task, as README says" {
	run -0 leap-task --list
	assert_output "$(leap-task --all --list)"
	[ "${#lines[@]}" -eq "$(ls "$ROOT"/tasks/*/task.json | wc -l)" ]
	# folders: relative with a '/', '.', absolute, outside the suite
	mkdir mine && cp -R "$ROOT/tasks/softmax" mine/
	run -0 leap-task mine/softmax "$ROOT/tasks/gelu"
	assert_equal "$(jq -r '"\(.id) \(.dir)"' <<<"$output")" $'softmax mine/softmax\ngelu '"$ROOT/tasks/gelu"
	run -0 bash -c 'cd mine/softmax && leap-task . | jq -r .id'
	assert_output softmax
	run -0 leap-task --shim cpu ./mine/softmax
	assert_line --index 0 "/* ---- prelude ---- */"
	# a bare id is still an id of the suite, and a folder that is not there is a missing input
	run -0 leap-task softmax
	assert_equal "$(jq -r .dir <<<"$output")" "$ROOT/tasks/softmax"
	run -2 --separate-stderr leap-task ./nope
	assert_equal "$stderr" "leap-task: ./nope: No such file or directory"
}

@test "small ones: one turn is 'up to 1 turn'; the demo leaves no empty turn file after the last" {
	leap-prompt --backend cpu -g 2 vector_add | "$ROOT/examples/sampler-replay" | leap-compile --no-progress |
		leap-verify --no-progress --seed 1 | leap-prune --group-size 2 --max-turns 1 --done done.jsonl --no-progress >/dev/null
	run -0 leap-report done.jsonl
	assert_line --index 0 "2 records (0 errors, 0 without task/sample/turn), 2 trajectories, 1 task, up to 1 turn"
	run -0 env BENCH= GROUP=2 TURNS=1 "$ROOT/examples/demo.sh" "$BATS_TEST_TMPDIR/demo"
	assert_output --partial "group size 2, up to 1 turn -> "
	assert_output --partial "demo: turn 1: $((2 * $(ls "$ROOT"/tasks/*/task.json | wc -l))) records in, the last turn: every trajectory ends"
	refute_output --partial "turns ->"
	run -0 ls "$BATS_TEST_TMPDIR/demo"
	refute_output --partial "turn2.jsonl"
	for f in "$BATS_TEST_TMPDIR"/demo/turn*.jsonl; do [ -s "$f" ] || fail "$f is empty"; done
}
