# leap-verify.bats - the sandboxed verifier: verdicts for correct and hostile candidates (cpu).
# stream: bench
load helpers
load artifact

HOSTILE="wrong zeros unwritten half noop nan modify_input static_cache segv abort overflow exit spin sleep
	forkbomb alloc hugefile stdout env_secret escape kill_parent thread_late close_fds scribble guard_fill nul_output"

setup_file() {
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
	local art="$BATS_FILE_TMPDIR/art" f n
	mkdir -p "$art"
	for f in "$FIXTURES"/leap-verify/*.c; do
		n=$(basename "$f" .c)
		if [ "$n" = no_entry ]; then
			cc -shared -fPIC -o "$art/$n.so" "$f"
		else
			build_artifact vector_add "$f" "$art/$n.so"
		fi
	done
	# One stream: each hostile candidate followed by a correct one, which must still pass.
	: >"$BATS_FILE_TMPDIR/stream.jsonl"
	for n in $HOSTILE no_entry; do
		compiled_record vector_add "$art/$n.so" "{\"name\":\"$n\"}" >>"$BATS_FILE_TMPDIR/stream.jsonl"
		compiled_record vector_add "$art/correct.so" "{\"name\":\"after-$n\"}" >>"$BATS_FILE_TMPDIR/stream.jsonl"
	done
	mkdir -p "$BATS_FILE_TMPDIR/tmp"
	LEAP_TEST_SECRET=hunter2 TMPDIR="$BATS_FILE_TMPDIR/tmp" leap-verify --timeout 1.5 --seed 42 \
		"$BATS_FILE_TMPDIR/stream.jsonl" >"$BATS_FILE_TMPDIR/out.jsonl" 2>"$BATS_FILE_TMPDIR/err.txt"
	echo $? >"$BATS_FILE_TMPDIR/rc"
}

setup() {
	ART="$BATS_FILE_TMPDIR/art"
	OUT="$BATS_FILE_TMPDIR/out.jsonl"
}

# verdict NAME: prints "status kind" of the record called NAME in the hostile stream.
verdict() {
	jq -r --arg n "$1" 'select(.name == $n) | "\(.status) \(.verify.mismatch.kind // "-")"' "$OUT"
}

@test "--help prints the usage on stdout and exits 0" {
	run -0 leap-verify --help
	assert_line --index 0 "usage: leap-verify [OPTION]... [FILE]..."
	assert_output --partial "--timeout SECS"
}

@test "an unknown option or a bad number is a usage error (status 2)" {
	run -2 --separate-stderr leap-verify --bogus
	run -2 --separate-stderr leap-verify --trials 0
	[[ "$stderr" == *"--trials: '0'"* ]]
	run -2 --separate-stderr leap-verify --timeout 1x
}

@test "the hostile stream: one output record per input, in order, exit status 0" {
	[ "$(cat "$BATS_FILE_TMPDIR/rc")" = 0 ]
	[ "$(wc -l <"$OUT")" -eq "$(wc -l <"$BATS_FILE_TMPDIR/stream.jsonl")" ]
	[ "$(jq -r .name "$OUT")" = "$(jq -r .name "$BATS_FILE_TMPDIR/stream.jsonl")" ]
}

@test "the correct candidate after every hostile one still passes" {
	run -0 jq -r 'select(.name | startswith("after-")) | .status' "$OUT"
	[ "${#lines[@]}" -eq $(($(wc -w <<<"$HOSTILE") + 1)) ]
	refute_output --partial mismatch
	refute_output --partial error
	refute_output --partial timeout
}

@test "wrong values, zeros and a static cache are mismatches of kind value" {
	for n in wrong zeros static_cache; do
		run -0 verdict $n
		assert_output "mismatch value"
	done
}

@test "unwritten elements are found: one missing, half missing, nothing written, written late by a thread" {
	for n in unwritten half noop thread_late; do
		run -0 verdict $n
		assert_output "mismatch unwritten"
	done
	run -0 jq -r 'select(.name == "half") | .verify.message' "$OUT"
	assert_output --partial "500 of 1000 elements of c were not written"
}

@test "a NaN in the output is a mismatch of kind not_finite" {
	run -0 verdict nan
	assert_output "mismatch not_finite"
}

@test "modifying an input is a mismatch of kind input_modified naming the input" {
	run -0 verdict modify_input
	assert_output "mismatch input_modified"
	run -0 jq -r 'select(.name == "modify_input") | .verify.mismatch.output' "$OUT"
	assert_output a
}

@test "crashes are runtime errors that name the signal" {
	run -0 jq -r 'select(.name == "segv") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code crashed with SIGSEGV"
	run -0 jq -r 'select(.name == "abort") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code aborted (SIGABRT"
}

@test "writing past the end of an output buffer is caught by the guard" {
	run -0 jq -r 'select(.name == "overflow") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output "runtime_error: Your code wrote outside the bounds of buffer c in case 1 (n=1), trial 1, at c[1], 1 past its last element (c has 1 element)."
}

@test "the rest of an output's page filled with one value is caught" {
	# the guard check compares the first byte with the canary and each byte with the next
	# (lib/sandbox/session.c all_canary): a uniform fill passes the second test only
	run -0 jq -r 'select(.name == "guard_fill") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output "runtime_error: Your code wrote outside the bounds of buffer c in case 1 (n=1), trial 1, at c[1], 1 past its last element (c has 1 element)."
}

@test "max_rel_err is the largest relative error: 0 when exact, within (2^-24, 2^-23] one ulp off" {
	compiled_record vector_add "$ART/ulp.so" '{"name":"ulp"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	compiled_record vector_add "$ART/correct.so" '{"name":"exact"}' >>"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 5 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.name) \(.status) \(.verify.max_rel_err > pow(2; -24) and .verify.max_rel_err <= pow(2; -23)) \(.verify.max_abs_err > 0)"' <<<"$output"
	assert_line --index 0 "ulp pass true true"
	assert_line --index 1 "exact pass false false"
}

@test "the runner starts as a fresh program: no signal blocked, no handler of leap-verify's" {
	# lib/sandbox/sandbox.c start_runner blocks every signal while PID 1 clones the runner
	compiled_record vector_add "$ART/sigmask.so" '{"name":"sigmask"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 7 "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ] || { jq -c .verify <<<"$output"; false; }
	run -0 --separate-stderr bash -c 'trap "" INT; exec leap-verify --seed 7 --no-namespaces "$1"' - "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
	# leap started with signals ignored (as a background job of a script is: SIGINT, SIGQUIT)
	run -0 --separate-stderr bash -c 'trap "" INT QUIT TERM; exec leap-verify --seed 7 "$1"' - "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ] || { jq -c .verify <<<"$output"; false; }
}

@test "exit() inside the kernel is a runtime error" {
	run -0 jq -r 'select(.name == "exit") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code exited with status 0 during the call"
}

@test "exit(127) inside the kernel is still a runtime error (127 is also the status of a failed sandbox set-up)" {
	compiled_record vector_add "$ART/exit127.so" '{"name":"x"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run --separate-stderr leap-verify --no-progress --seed 1 --trials 1 "$BATS_TEST_TMPDIR/in.jsonl"
	assert_equal "$status" 0
	run -0 jq -r '"\(.status) \(has("error")): \(.verify.message)"' <<<"$output"
	assert_output --partial "runtime_error false: Your code exited with status 127 during the call"
}

@test "a sandbox that cannot start the runner is an error record, not a verdict on the candidate (status 1)" {
	# an executable runner whose interpreter does not exist: execve fails in the sandbox
	mkdir -p "$BATS_TEST_TMPDIR/libexec"
	printf '#!/nonexistent/interpreter\n' >"$BATS_TEST_TMPDIR/libexec/leap-run-cpu"
	chmod 755 "$BATS_TEST_TMPDIR/libexec/leap-run-cpu"
	compiled_record vector_add "$ART/correct.so" '{"name":"c"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	jq -c '.status = "pass"' "$BATS_TEST_TMPDIR/in.jsonl" >"$BATS_TEST_TMPDIR/pass.jsonl"
	for prog in "leap-verify --trials 1" "leap-verify --trials 1 --jobs 2" "leap-bench --max-time 0.05 --min-runs 2"; do
		local in="$BATS_TEST_TMPDIR/in.jsonl"
		[[ $prog == leap-bench* ]] && in="$BATS_TEST_TMPDIR/pass.jsonl"
		LEAP_LIBEXEC="$BATS_TEST_TMPDIR/libexec" run --separate-stderr $prog --no-progress --seed 1 "$in"
		echo "$prog: $output"
		assert_equal "$status" 1
		run -0 jq -r '[has("verify"), has("bench"), (.status // "-"), .error.program, .error.message] | @tsv' <<<"$output"
		[[ $output == "false"$'\t'"false"$'\t'* ]]
		assert_output --partial "the sandbox could not start the runner: cannot start the runner: "
		[[ $stderr == *"in.jsonl:1: the sandbox could not start the runner"* || $stderr == *"pass.jsonl:1: the sandbox could not start the runner"* ]]
	done
}

@test "a runner under /tmp (a build in /tmp) still starts: the sandbox covers /tmp only after opening it" {
	local d
	d=$(mktemp -d /tmp/leap-runner.XXXXXX)
	chmod 755 "$d"
	cp "$BATS_TEST_DIRNAME/../libexec/leap-run-cpu" "$d/"
	compiled_record vector_add "$ART/correct.so" '{"name":"c"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	LEAP_LIBEXEC="$d" run --separate-stderr leap-verify --no-progress --seed 1 --trials 1 "$BATS_TEST_TMPDIR/in.jsonl"
	rm -rf "$d"
	assert_equal "$status" 0
	run -0 jq -r '.status' <<<"$output"
	assert_output pass
}

@test "an endless loop, a long sleep and a fork bomb are timeouts" {
	for n in spin sleep forkbomb; do
		run -0 verdict $n
		assert_output "timeout -"
	done
	run -0 jq -r 'select(.name == "sleep") | .verify.message' "$OUT"
	assert_output --partial "the limit is 1.5 s"
}

@test "the fork bomb leaves no process behind" {
	# Other leap runs on this machine may have sandboxes of their own: look for processes
	# whose working directory lies under this file's temp dirs.
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cwd=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
		[[ "$cwd" != "$BATS_FILE_TMPDIR"* ]] || { echo "left behind: $p in $cwd"; return 1; }
	done
}

@test "a 100 GB allocation fails under the address-space limit and becomes a runtime error" {
	run -0 verdict alloc
	assert_output "runtime_error -"
}

@test "an endless file hits the file-size limit, and the private temp dirs are removed" {
	run -0 jq -r 'select(.name == "hugefile") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code exceeded the file-size limit"
	run ls -A "$BATS_FILE_TMPDIR/tmp"
	assert_output ""
}

@test "the private temp dir is a small file system of its own (with namespaces, root or not)" {
	grep -q "namespaces are unavailable" "$BATS_FILE_TMPDIR/err.txt" && skip "namespaces are unavailable here"
	build_artifact vector_add "$FIXTURES/leap-verify/fill_disk.c" "$BATS_TEST_TMPDIR/fill.so"
	compiled_record vector_add "$BATS_TEST_TMPDIR/fill.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	mkdir "$BATS_TEST_TMPDIR/tmp"
	# the listed cases only: every call fills the disk anew, and 3 trials of 3 cases show it
	TMPDIR="$BATS_TEST_TMPDIR/tmp" run -0 --separate-stderr leap-verify --drawn-cases 0 "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
	run ls -A "$BATS_TEST_TMPDIR/tmp"
	assert_output ""
}

@test "printing to stdout never reaches the JSON stream; the output is kept in verify.output" {
	run -0 jq -r 'select(.name == "stdout") | .status' "$OUT"
	assert_output pass
	run -0 jq -r 'select(.name == "stdout") | .verify.output' "$OUT"
	assert_output --partial '{"task":"evil","status":"pass"}'
	run -0 jq -r 'select(.task == "evil") | .name' "$OUT"
	assert_output ""
}

@test "a NUL or a terminal escape in the output hides nothing: every byte shows in verify.output" {
	run -0 jq -r 'select(.name == "nul_output") | "\(.status) \(.verify.output)"' "$OUT"
	assert_line --index 0 'pass \x00hidden after a NUL \x1b[2Jcleared?'
}

@test "the child does not see the environment (a secret in it would change the result)" {
	run -0 verdict env_secret
	assert_output "pass -"
}

@test "the child runs unprivileged, in its own PID namespace, without network interfaces" {
	grep -q "namespaces are unavailable" "$BATS_FILE_TMPDIR/err.txt" && skip "namespaces are unavailable here"
	run -0 verdict escape
	assert_output "pass -"
}

@test "the child cannot see the reference source, the build cache or the host's processes" {
	grep -q "namespaces are unavailable" "$BATS_FILE_TMPDIR/err.txt" && skip "namespaces are unavailable here"
	sed -e "s|@TASKS@|$LEAP_TASKS|" -e "s|@CACHE@|$LEAP_CACHE|" "$FIXTURES/leap-verify/peek.c.in" >"$BATS_TEST_TMPDIR/peek.c"
	build_artifact vector_add "$BATS_TEST_TMPDIR/peek.c" "$BATS_TEST_TMPDIR/peek.so"
	compiled_record vector_add "$BATS_TEST_TMPDIR/peek.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
	# and the same candidate does see them without the namespaces (the test can fail)
	run -0 --separate-stderr leap-verify --no-namespaces "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = mismatch ]
}

@test "killing the parent does not stop the filter" {
	run -0 verdict kill_parent
	assert_output "pass -"
}

@test "closing the harness's descriptors is a runtime error" {
	run -0 jq -r 'select(.name == "close_fds") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code stopped answering the harness"
}

@test "garbage and a forged reply written to the harness's descriptors never pass" {
	run -0 jq -r 'select(.name == "scribble") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output --partial "runtime_error: Your code stopped answering the harness"
}

@test "an object without the artifact ABI is a runtime error" {
	run -0 jq -r 'select(.name == "no_entry") | "\(.status): \(.verify.message)"' "$OUT"
	assert_output "runtime_error: The compiled code could not be used: the artifact does not export leap_abi_version."
}

@test "the seed is written into the record and replays the same verdict" {
	run -0 jq -r 'select(.name == "wrong") | .verify.seed' "$OUT"
	assert_output 42
	compiled_record vector_add "$ART/wrong.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 42 "$BATS_TEST_TMPDIR/in.jsonl"
	a=$(jq -c '.verify.mismatch' <<<"$output")
	b=$(jq -c 'select(.name == "wrong") | .verify.mismatch' "$OUT")
	[ "$a" = "$b" ]
	run -0 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r .verify.seed <<<"$output"
	refute_output 42
}

@test "a drawn case that needs more room than every listed one fits in the regions (conv2d, seed 1)" {
	# conv2d's third drawn case at seed 1 has outputs larger than any listed case's: the
	# regions were sized for the listed cases only, and leap-verify died of SIGSEGV laying out
	# the drawn case's guards
	build_artifact conv2d "$LEAP_TASKS/conv2d/reference.c" "$BATS_TEST_TMPDIR/conv2d.so"
	run -0 --separate-stderr leap-verify --seed 1 <<<"$(compiled_record conv2d "$BATS_TEST_TMPDIR/conv2d.so")"
	[ "$(jq -r '"\(.status) \(.verify.drawn | length)"' <<<"$output")" = "pass 3" ]
}

@test "a kernel right only at the listed sizes passes them and fails a drawn case, on every seed" {
	# unroll8: right only when n % 8 <= 1 (every listed n); listed_only: exact only at the
	# listed (rows, cols). Both pass today's listed cases; three drawn cases catch both, by
	# design rather than luck: drawn sizes step through consecutive remainders.
	for f in vector_add:vector_add_unroll8 softmax:softmax_listed_only; do
		build_artifact "${f%%:*}" "$FIXTURES/tasks/wrong/${f#*:}.c" "$BATS_TEST_TMPDIR/${f#*:}.so"
		compiled_record "${f%%:*}" "$BATS_TEST_TMPDIR/${f#*:}.so" >>"$BATS_TEST_TMPDIR/in.jsonl"
	done
	run -0 --separate-stderr leap-verify --seed 1 --drawn-cases 0 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r .status <<<"$output"
	assert_output $'pass\npass'
	for seed in 1 2 3 4 5 6 7 8; do
		run -0 --separate-stderr leap-verify --seed "$seed" "$BATS_TEST_TMPDIR/in.jsonl"
		run -0 jq -r '"\(.status) \(.verify.mismatch.drawn) \(.verify.mismatch.case >= (if .task == "softmax" then 4 else 3 end))"' <<<"$output"
		assert_output $'mismatch true true\nmismatch true true'
	done
}

@test "a drawn case's message names its sizes and says they were not listed" {
	build_artifact vector_add "$FIXTURES/tasks/wrong/vector_add_unroll8.c" "$BATS_TEST_TMPDIR/u.so"
	compiled_record vector_add "$BATS_TEST_TMPDIR/u.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 2 "$BATS_TEST_TMPDIR/in.jsonl"
	rec=$output
	n=$(jq -r '.verify.mismatch.values.n' <<<"$rec")
	run -0 jq -r .verify.message <<<"$rec"
	assert_output --regexp "^Wrong output in case [4-6] \(n=$n; random sizes, not a listed case\): c\[[0-9]+\] was never written"
	# the drawn case is one of verify.drawn
	run -0 jq -r --argjson n "$n" '[.verify.drawn[].n] | index($n) != null' <<<"$rec"
	assert_output true
}

@test "verify.drawn lists the drawn sizes, verify.cases counts them, and --seed replays them" {
	compiled_record vector_add "$ART/correct.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 5 "$BATS_TEST_TMPDIR/in.jsonl"
	a=$output
	run -0 jq -c '.verify | [.status, .cases, (.drawn | length), .message]' <<<"$a"
	assert_output '["pass",70,3,"All 70 cases passed (3 listed, 3 of random sizes, 64 of every remainder of n modulo 64; 3 trials each, one for each remainder)."]'
	run -0 --separate-stderr leap-verify --seed 5 "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -c .verify.drawn <<<"$a")" = "$(jq -c .verify.drawn <<<"$output")" ]
	# the drawn cases are those leap-task shows for the seed, and more keep the first ones
	[ "$(jq -c .verify.drawn <<<"$a")" = "$(leap-task --draw 3 --seed 5 vector_add | jq -c '[.drawn[].values]')" ]
	run -0 --separate-stderr leap-verify --seed 5 --drawn-cases 5 "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -c .verify.drawn <<<"$a")" = "$(jq -c '.verify.drawn[:3]' <<<"$output")" ]
	# 3 listed, 5 drawn, and vector_add's 64 residue cases
	assert_equal "$(jq -c '.verify.cases' <<<"$output")" 72
	run -0 --separate-stderr leap-verify --seed 6 "$BATS_TEST_TMPDIR/in.jsonl"
	[ "$(jq -c .verify.drawn <<<"$a")" != "$(jq -c .verify.drawn <<<"$output")" ]
	run -0 --separate-stderr leap-verify --seed 5 --drawn-cases 0 "$BATS_TEST_TMPDIR/in.jsonl"
	assert_equal "$(jq -c '.verify | [has("drawn"), .cases, .message]' <<<"$output")" '[false,3,"All 3 cases passed (3 trials each)."]'
	run -2 --separate-stderr leap-verify --drawn-cases -1 "$BATS_TEST_TMPDIR/in.jsonl"
	[[ "$stderr" == *"--drawn-cases: '-1' is not an integer in [0, 1000]"* ]]
}

@test "the mismatch names the case, trial, output, index, got and want" {
	run -0 jq -c 'select(.name == "wrong") | .verify.mismatch | [.case, .trial, .output, .index, (.got|type), (.want|type), .values.n]' "$OUT"
	assert_output '[0,0,"c",0,"number","number",1]'
}

@test "a 2-D output gets coordinates in the mismatch and message" {
	cat >"$BATS_TEST_TMPDIR/soft.c" <<-'EOF'
	#include <math.h>
	void softmax(const float *x, float *y, int rows, int cols)
	{
		for (int i = 0; i < rows * cols; i++)
			y[i] = 1.0f / cols;
		if (rows * cols > 1)
			y[rows * cols - 1] = x[0];
	}
	EOF
	build_artifact softmax "$BATS_TEST_TMPDIR/soft.c" "$BATS_TEST_TMPDIR/soft.so"
	compiled_record softmax "$BATS_TEST_TMPDIR/soft.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 3 "$BATS_TEST_TMPDIR/in.jsonl"
	rec=$output
	run -0 jq -r '.verify | "\(.status) \(.mismatch.coords | length) \(.mismatch.index == .mismatch.coords[0] * .mismatch.values.cols + .mismatch.coords[1])"' <<<"$rec"
	assert_output "mismatch 2 true"
	run -0 jq -r .verify.message <<<"$rec"
	[[ "$output" =~ y\[[0-9]+\]\[[0-9]+\]\ =\  ]]
}

# A flat index into a 4-D output (y[57]) leaves the model to divide by the extents; the shape
# is the size expression's factors, so each coordinate is named.
@test "a 4-D output gets each coordinate in the mismatch and message" {
	cat >"$BATS_TEST_TMPDIR/conv.c" <<-'EOF'
	void conv2d(const float *x, const float *wt, float *y, int batch, int cin, int cout, int height,
		    int width, int k)
	{
		int oh = height - k + 1, ow = width - k + 1;
		for (int b = 0; b < batch; b++)
			for (int o = 0; o < cout; o++)
				for (int i = 0; i < oh; i++)
					for (int j = 0; j < ow; j++) {
						double s = 0;
						for (int c = 0; c < cin; c++)
							for (int p = 0; p < k; p++)
								for (int q = 0; q < k; q++)
									s += (double)x[((b * cin + c) * height + i + p) * width + j + q] *
									     wt[((o * cin + c) * k + p) * k + q];
						y[((b * cout + o) * oh + i) * ow + j] = (float)s;
					}
		y[batch * cout * oh * ow - 1] += 1000.0f; /* the last element only */
	}
	EOF
	build_artifact conv2d "$BATS_TEST_TMPDIR/conv.c" "$BATS_TEST_TMPDIR/conv.so"
	compiled_record conv2d "$BATS_TEST_TMPDIR/conv.so" >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --seed 3 "$BATS_TEST_TMPDIR/in.jsonl"
	rec=$output
	# the last element: every coordinate at its extent less one, and the index is theirs flattened
	run -0 jq -r '.verify.mismatch | .values as $v | [.coords, [$v.batch - 1, $v.cout - 1, $v.height - $v.k, $v.width - $v.k],
		.index == ((((.coords[0] * $v.cout + .coords[1]) * ($v.height - $v.k + 1)) + .coords[2]) * ($v.width - $v.k + 1) + .coords[3])]
		| "\(.[0] == .[1]) \(.[2]) \(.[0] | map("[\(.)]") | join(""))"' <<<"$rec"
	[[ "$output" =~ ^true\ true\ (\[[0-9]+\]){4}$ ]] || fail "coords: $output"
	run -0 jq -r .verify.message <<<"$rec"
	assert_output --partial "Wrong output in case 1 ("
	coords=$(jq -r '.verify.mismatch.coords | map("[\(.)]") | join("")' <<<"$rec")
	assert_output --partial ": y$coords = "
}

@test "records that did not compile pass through with verify.status skipped" {
	printf '%s\n' '{"task":"vector_add","backend":"cpu","compile":{"status":"compile_error"},"status":"compile_error","x":[1,2]}' \
		'{"task":"vector_add","backend":"cpu"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	[ "${#lines[@]}" -eq 2 ]
	run -0 jq -c '[.verify.status, .status, .x]' <<<"${lines[0]}"
	assert_output '["skipped","compile_error",[1,2]]'
}

@test "a malformed line and an unknown task become error records; the rest is verified (status 1)" {
	{
		echo '{not json'
		compiled_record no_such_task "$ART/correct.so"
		compiled_record vector_add "$ART/correct.so"
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run -1 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	[ "${#lines[@]}" -eq 3 ]
	run -0 jq -r '.error.message // .status' <<<"$output"
	[[ "${lines[0]}" == *"not valid JSON"* || "${lines[0]}" == *"JSON"* ]]
	assert_line --index 1 --partial "no_such_task"
	assert_line --index 2 pass
}

@test "a missing artifact is an error record, and the next record is still verified" {
	{
		compiled_record vector_add "$BATS_TEST_TMPDIR/nope.so"
		compiled_record vector_add "$ART/correct.so"
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run -1 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	[[ "$stderr" == *"in.jsonl:1: cannot open the artifact"* ]]
	run -0 jq -r '.error.message // .status' <<<"$output"
	assert_line --index 0 --partial "cannot open the artifact"
	assert_line --index 1 pass
}

@test "fields the verifier does not own pass through untouched" {
	compiled_record vector_add "$ART/correct.so" '{"messages":[{"role":"user","content":"é\u0000x"}],"tokens":17}' \
		>"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	a=$(jq -c 'del(.verify, .status)' <<<"$output")
	b=$(jq -c . "$BATS_TEST_TMPDIR/in.jsonl")
	[ "$a" = "$b" ]
}

@test "correct candidates of the three bundled tasks pass on several seeds" {
	for t in vector_add softmax matmul; do
		for s in 1 2 3; do
			run -0 --separate-stderr leap-verify --task "$t" --seed "$s" "$LEAP_TASKS/$t/reference.c"
			assert_line --index 0 --partial ": pass (task $t, cpu, seed $s"
		done
	done
}

@test "ad-hoc mode prints a readable verdict and exits 1 on failure" {
	run -1 --separate-stderr leap-verify --task vector_add "$FIXTURES/leap-verify/wrong.c"
	assert_line --index 0 --partial "wrong.c: mismatch (task vector_add, cpu, seed"
	assert_line --index 1 --partial "Wrong output in case 1 (n=1): c[0] ="
	echo 'void vector_add(int x) {}' >"$BATS_TEST_TMPDIR/bad.c"
	run -1 --separate-stderr leap-verify --task vector_add "$BATS_TEST_TMPDIR/bad.c"
	assert_line --index 0 --partial "bad.c: vector_add (cpu): compile error"
}

@test "without namespaces the verdicts are the same" {
	for n in correct wrong segv; do compiled_record vector_add "$ART/$n.so"; done >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --no-namespaces "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r .status <<<"$output"
	assert_output $'pass\nmismatch\nruntime_error'
}

@test "a cuda record without a usable GPU gets verify.status no_device and status 1" {
	[ -x "$ROOT/libexec/leap-run-cuda" ] && command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU &&
		skip "a GPU is present"
	compiled_record vector_add "$ART/correct.so" '{"backend":"cuda"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -1 --separate-stderr leap-verify "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.verify.status) \(.status // "none")"' <<<"$output"
	assert_output "no_device none"
}

@test "the cuda runner is built when nvcc is present" {
	skip_unless_nvcc
	[ -x "$ROOT/libexec/leap-run-cuda" ]
}

@test "cuda: the baseline passes and an illegal address is a runtime error" {
	skip_unless_gpu
	run -0 --separate-stderr leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line --index 0 --partial ": pass (task vector_add, cuda"
	cat >"$BATS_TEST_TMPDIR/bad.cu" <<-'EOF'
	__global__ void k(float *c) { c[1 << 30] = 1.0f; }
	extern "C" void vector_add(const float *a, const float *b, float *c, int n) { k<<<1, 1>>>(c); }
	EOF
	run -1 --separate-stderr leap-verify --task vector_add "$BATS_TEST_TMPDIR/bad.cu"
	assert_line --index 0 --partial "runtime_error"
}

@test "with -j 3 the verdicts and their order are those of the serial run" {
	LEAP_TEST_SECRET=hunter2 run -0 --separate-stderr leap-verify -j 3 --timeout 1.5 --seed 42 "$BATS_FILE_TMPDIR/stream.jsonl"
	a=$(jq -r '"\(.name) \(.status) \(.verify.mismatch.kind // "-")"' <<<"$output")
	b=$(jq -r '"\(.name) \(.status) \(.verify.mismatch.kind // "-")"' "$OUT")
	[ "$a" = "$b" ]
}

@test "cuda candidates build in ad-hoc mode; without a GPU the verdict is no_device (exit 1)" {
	skip_unless_nvcc
	command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU && skip "a GPU is present"
	run -1 --separate-stderr leap-verify --task softmax "$FIXTURES/gpu/softmax_fast.cu"
	assert_line --index 0 --partial "softmax_fast.cu: no_device (task softmax, cuda"
	# issue 30: CUDA's "driver version is insufficient" where there is no driver at all read
	# as a version to upgrade
	assert_line --index 1 --partial "Not verified: no NVIDIA GPU: "
	refute_output --partial "insufficient"
	if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
		assert_line --index 1 "  Not verified: no NVIDIA GPU: this machine has no NVIDIA driver (libcuda.so.1 cannot be loaded)."
	fi
}

@test "--devices: verdicts and order of the serial run; every listed device serves, each record names its own" {
	LEAP_TEST_SECRET=hunter2 run -0 --separate-stderr leap-verify --devices 0-2 --timeout 1.5 --seed 42 "$BATS_FILE_TMPDIR/stream.jsonl"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/par.jsonl"
	a=$(jq -r '"\(.name) \(.status) \(.verify.mismatch.kind // "-")"' "$BATS_TEST_TMPDIR/par.jsonl")
	b=$(jq -r '"\(.name) \(.status) \(.verify.mismatch.kind // "-")"' "$OUT")
	[ "$a" = "$b" ]
	# every verified record carries its device, one of the list; all three were used
	run -0 jq -s -c '[.[] | select(.verify.status != "skipped") | .verify.device_index] | unique' "$BATS_TEST_TMPDIR/par.jsonl"
	assert_output "[0,1,2]"
	run -0 jq -s '[.[] | select(.verify.status != "skipped" and (.verify.device_index | type) != "number")] | length' \
		"$BATS_TEST_TMPDIR/par.jsonl"
	assert_output 0
	# without --devices no record names a device
	run -0 jq -s '[.[] | select(.verify.device_index != null)] | length' "$OUT"
	assert_output 0
}

@test "--devices 3,5: only the listed devices serve, in turn, and skipped records name none" {
	{
		for i in 1 2 3 4 5 6; do compiled_record vector_add "$ART/correct.so" "{\"i\":$i}"; done
		echo '{"task":"vector_add","i":7}'
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 --separate-stderr leap-verify --devices 3,5 --seed 1 "$BATS_TEST_TMPDIR/in.jsonl"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/out.jsonl"
	run -0 jq -r '"\(.i) \(.verify.status) \(.verify.device_index // "-")"' "$BATS_TEST_TMPDIR/out.jsonl"
	[ "${lines[0]}" = "1 pass 3" ]
	[ "${lines[1]}" = "2 pass 5" ]
	[ "${lines[6]}" = "7 skipped -" ]
	run -0 jq -r 'select(.i < 7) | .verify.device_index' "$BATS_TEST_TMPDIR/out.jsonl"
	for d in "${lines[@]}"; do [[ "$d" == 3 || "$d" == 5 ]]; done
}

@test "--devices: cuda records go to their own device; without a GPU each is no_device naming it" {
	compiled_record vector_add "$ART/correct.so" '{"backend":"cuda"}' >"$BATS_TEST_TMPDIR/one.jsonl"
	cat "$BATS_TEST_TMPDIR/one.jsonl" "$BATS_TEST_TMPDIR/one.jsonl" >"$BATS_TEST_TMPDIR/in.jsonl"
	command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU && skip "a GPU is present"
	run -1 --separate-stderr leap-verify --devices 0,1 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.verify.status) \(.verify.device_index)"' <<<"$output"
	assert_output $'no_device 0\nno_device 1'
}

@test "--devices: malformed lists and conflicting options are usage errors (exit 2)" {
	for list in "" x -1 0- -3 1-0 0,,1 0, ,0 0,0 0-2,1 1024 0x1 " 1" "1 " 1.5; do
		run -2 --separate-stderr leap-verify --devices "$list" </dev/null
		[ -z "$output" ]
		[[ "$stderr" == *"leap-verify: --devices: "* ]]
	done
	run -2 --separate-stderr leap-verify --devices 0,1 -j 2 </dev/null
	[[ "$stderr" == *"not with --jobs"* ]]
	run -2 --separate-stderr leap-verify --devices 0,1 --device 1 </dev/null
	[[ "$stderr" == *"not with --device"* ]]
	run -0 --separate-stderr leap-verify --devices 0-3,7 </dev/null
}

@test "--tolerance kernelbench: 1e-4 in fp32; kernelbench-v0.1: 1e-2; anything else is a usage error" {
	run -1 --separate-stderr leap-verify --task vector_add "$FIXTURES/leap-verify/off_by_1e3.c"
	assert_output --partial "mismatch"
	# 1e-3 off: outside KernelBench's fp32 tolerance (atol = rtol = 1e-4), inside v0.1's 1e-2
	run -1 --separate-stderr leap-verify --tolerance kernelbench --task vector_add "$FIXTURES/leap-verify/off_by_1e3.c"
	assert_output --partial "mismatch"
	run -0 --separate-stderr leap-verify --tolerance kernelbench-v0.1 --task vector_add "$FIXTURES/leap-verify/off_by_1e3.c"
	run -1 --separate-stderr leap-verify --tolerance kernelbench --task vector_add "$FIXTURES/leap-verify/zeros.c"
	run -1 --separate-stderr leap-verify --tolerance kernelbench-v0.1 --task vector_add "$FIXTURES/leap-verify/zeros.c"
	run -0 --separate-stderr leap-verify --tolerance task --task vector_add "$FIXTURES/leap-verify/correct.c"
	run -2 leap-verify --tolerance loose --task vector_add "$FIXTURES/leap-verify/correct.c"
	assert_output --partial "--tolerance: 'loose' is not task, kernelbench or kernelbench-v0.1"
}

@test "a write one element past an output fails the smallest case (rows=1, cols=1) and every other" {
	# issue 30: the canary covers the slack between an output's last element and its guard page
	run -1 --separate-stderr leap-verify --seed 1 --task transpose "$FIXTURES/leap-verify/transpose/past_output.c"
	assert_line --index 0 --partial "runtime_error (task transpose"
	assert_line --index 1 "  Your code wrote outside the bounds of buffer B in case 1 (rows=1, cols=1), trial 1, at B[1], 1 past its last element (B has 1 element)."
	# each case alone, with the write in it, fails too: the canary catches it, or the guard
	# page where B ends on a page boundary (64 x 1000 floats)
	for c in '{"rows":7,"cols":33}' '{"rows":64,"cols":1000}' '{"rows":1000,"cols":3}'; do
		mkdir -p "$BATS_TEST_TMPDIR/suite"
		rm -rf "$BATS_TEST_TMPDIR/suite/transpose"
		cp -R "$LEAP_TASKS/transpose" "$BATS_TEST_TMPDIR/suite/"
		jq --argjson c "$c" '.cases = [$c] | .ranges = {} | del(.residues)' "$LEAP_TASKS/transpose/task.json" >"$BATS_TEST_TMPDIR/suite/transpose/task.json"
		run -1 --separate-stderr leap-verify --seed 1 --tasks "$BATS_TEST_TMPDIR/suite" --task transpose "$FIXTURES/leap-verify/transpose/past_output.c"
		assert_line --index 0 --partial "runtime_error (task transpose"
		assert_line --index 1 --regexp '^  Your code (wrote outside the bounds of buffer B|crashed with SIGSEGV .* at line 9 of your code \(in transpose\)) in case 1 '
	done
}

# The buffer and the case were named, not where: the element says by how much the index is off,
# and a write that reaches the guard page faults, so the line is known too.
@test "a write outside a buffer names the element; on the guard page, the line and the element" {
	run -1 --separate-stderr leap-verify --seed 1 --task vector_add "$FIXTURES/leap-verify/before_start.c"
	assert_line --index 1 "  Your code wrote outside the bounds of buffer c in case 1 (n=1), trial 1, at c[-2], 2 before its first element."
	rec=$(jq -cn --rawfile c "$FIXTURES/leap-verify/past_guard.c" \
		'{task: "vector_add", backend: "cpu", completion: ("```c\n" + $c + "```")}' | leap-compile | leap-verify --seed 1)
	run -0 jq -r .verify.message <<<"$rec"
	assert_output --regexp '^Your code crashed with SIGSEGV .* at line 7 of your code \(in vector_add\) in case 1 \(n=1\), trial 1\. The address it faulted on is in the guard page after buffer c: c\[17\], 17 past its last element \(c has 1 element\)\.$'
	run -0 jq -c '.verify.crash | [.line, .buffer, .index]' <<<"$rec"
	assert_output '[7,"c",17]'
}

@test "a race is told as nondeterministic with the cases that passed; a steady bug is not" {
	# issue 30: an OpenMP kernel sharing a scratch row between threads read as a plain mismatch.
	# The fixture's threads fill the row in an order that turns with every call, 1 ms apart, so
	# the rerun's outputs differ from the first run's on any machine (a clock-drawn pause once
	# gave the same order on every run of a quiet CI machine).
	leap-compile --task softmax "$FIXTURES/leap-verify/softmax/racy.c" | leap-verify --seed 1 >"$BATS_TEST_TMPDIR/r"
	run -0 jq -r '[.status, .verify.nondeterministic, .verify.mismatch.case] | @tsv' "$BATS_TEST_TMPDIR/r"
	assert_output "$(printf 'mismatch\ttrue\t1')"
	run -0 jq -r .verify.message "$BATS_TEST_TMPDIR/r"
	assert_output --regexp '^Nondeterministic: two runs of case 2 \(rows=7, cols=33\), trial 1, on the same inputs gave different outputs; a data race \(threads sharing a scratch buffer, or writing the same element\) is the usual cause\. First run: y\[.*\. Another run: (y\[.*|every element was right\.) Case 1 \(rows=1, cols=2\) passed before it; the later ones were not run\.$'
	# wrong the same way on every run: a mismatch, the passed case named, no word of a race
	leap-compile --task vector_add "$FIXTURES/feedback/wrong_large.c" | leap-verify --seed 1 >"$BATS_TEST_TMPDIR/w"
	run -0 jq -r '[.status, (.verify | has("nondeterministic"))] | @tsv' "$BATS_TEST_TMPDIR/w"
	assert_output "$(printf 'mismatch\tfalse')"
	run -0 jq -r .verify.message "$BATS_TEST_TMPDIR/w"
	assert_output --regexp '^Wrong output in case 2 \(n=1000\): c\[999\] = 0 but expected .* Case 1 \(n=1\) passed before it; the later ones were not run\.$'
}
