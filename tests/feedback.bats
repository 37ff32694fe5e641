#!/usr/bin/env bats
# feedback.bats - what the model reads after a turn: real compiler output, crashes, mismatches
# and slow passes turned into feedback it can act on (leap-compile | leap-verify | leap-prune).
# stream: bench
load helpers

setup_file() {
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
}

setup() {
	F="$FIXTURES/feedback"
	T="$BATS_TEST_TMPDIR"
}

# turn TASK BACKEND FILE [leap-verify options...]: one turn of a one-sample group answering
# with FILE, through the real pipeline; prints the next turn's record.
turn() {
	local task=$1 backend=$2 file=$3
	shift 3
	leap-prompt --backend "$backend" "$task" |
		jq -c --rawfile c "$file" --arg l "$([ "$backend" = cpu ] && echo c || echo cuda)" \
			'.completion = "```\($l)\n\($c)```"' |
		leap-compile | leap-verify --seed 1 "$@" |
		leap-prune --preset debug-all --done "$T/done.jsonl"
}

@test "gcc: a missing include keeps the compiler's hint and quotes the line with its caret" {
	turn softmax cpu "$F/missing_include.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your code does not compile."
	assert_line --index 1 "line 3:2: error: unknown type name 'size_t'"
	assert_line --index 2 "    3 |         size_t n = (size_t)rows * cols;"
	assert_line --index 3 "      |         ^~~~~~"
	# the note with its fix-it, right under the error it explains
	assert_line --index 4 "line 1:1: note: 'size_t' is defined in header '<stddef.h>'; did you forget to '#include <stddef.h>'?"
	assert_line --index 5 "  +++ |+#include <stddef.h>"
	[ "$(jq -r '.feedback | utf8bytelength' "$T/next")" -le 1024 ]
	# the same note is not repeated for the next error
	[ "$(grep -c "did you forget" <<<"$output")" -eq 1 ]
	# the excerpt is in the record too
	run -0 jq -r '.compile.diagnostics[0].excerpt' "$T/done.jsonl"
	assert_output "$(printf '    3 |         size_t n = (size_t)rows * cols;\n      |         ^~~~~~')"
}

@test "gcc: with a small --feedback-bytes whole errors are kept and the rest counted" {
	leap-prompt --backend cpu softmax |
		jq -c --rawfile c "$F/missing_include.c" '.completion = "```c\n\($c)```"' |
		leap-compile | leap-prune --preset debug-all --feedback-bytes 200 --done "$T/done.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	[ "$(jq -r '.feedback | utf8bytelength' "$T/next")" -le 200 ]
	assert_line --index 1 "line 3:2: error: unknown type name 'size_t'"
	assert_line --regexp '^\([0-9]+ more errors not shown\)$'
}

# gcc repeats an intrinsic's "inlining failed" in its header once per call when the `target`
# attribute is missing; only the note under each (the candidate's line) differs.
@test "gcc: an error repeated word for word is shown once, with the candidate's line of each repeat" {
	[ "$(uname -m)" = x86_64 ] || skip "AVX intrinsics are x86's"
	turn vector_add cpu "$F/no_target.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your code does not compile."
	[ "$(grep -c "error: inlining failed in call to 'always_inline' '_mm256_loadu_ps'" <<<"$output")" -eq 1 ] ||
		fail "the repeated headline is shown more than once"
	# both calls, each under the one headline (the second without its excerpt where room is short)
	jq -r .feedback "$T/next" >"$T/fb"
	run -0 sed -n '/_mm256_loadu_ps.: target/,$p' "$T/fb"
	assert_line "line 7:14: note: called from here"
	assert_line "line 6:14: note: called from here"
	refute_line --partial "more error"
	[ "$(jq -r '.feedback | utf8bytelength' "$T/next")" -le 1024 ]
}

@test "nvcc: an undefined identifier is quoted with nvcc's caret" {
	skip_unless_nvcc
	turn softmax cuda "$F/undefined.cu" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 'line 5:17: error: identifier "scale" is undefined'
	assert_line --index 2 --regexp '^ +y\[i\] = x\[i\] \* scale;$'
	assert_line --index 3 --regexp '^ +\^$'
	# the caret stands under the identifier
	src=$(sed -n 3p <<<"$output") caret=$(sed -n 4p <<<"$output")
	[ "${#caret}" -eq $((${#src} - 5)) ]
}

@test "nvcc: a kernel defined with the wrong signature is told the required prototype" {
	# issue 30: the linker's "undefined reference to \`transpose'" was all the model read
	skip_unless_nvcc
	turn transpose cuda "$F/wrong_signature.cu" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your code does not compile."
	assert_line --index 1 'transpose() is defined with another signature than the required prototype: extern "C" void transpose(const float *A, float *B, int rows, int cols);'
	assert_line --index 2 "link: error: undefined reference to \`transpose'"
	refute_output --regexp 'shim-[0-9a-f]|leap_entry|leap_shim|cudafe1'
	# a missing entry point (cpu, real gcc) gets the prototype to define, too
	printf 'void vector_add2(const float *a, const float *b, float *c, int n) { }\n' >"$T/missing.c"
	turn vector_add cpu "$T/missing.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 "the entry point vector_add() is not defined; define exactly: void vector_add(const float *a, const float *b, float *c, int n);"
}

@test "a diagnostic without the compiler's excerpt quotes the candidate's line from the code" {
	printf '%s\n' '{"group":"g","sample":0,"turn":1,"messages":[],"completion":"x","code":"void f(void)\n{\n\tint y = zz + 1;\n}\n","status":"compile_error","compile":{"status":"error","diagnostics":[{"line":3,"col":10,"severity":"error","message":"'"'"'zz'"'"' undeclared"}]}}' |
		leap-prune --preset debug-all --done "$T/done.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 "line 3:10: error: 'zz' undeclared"
	assert_line --index 2 "$(printf ' 3 | \tint y = zz + 1;')"
	# the tab before the caret is kept, so it lines up at any tab width
	assert_line --index 3 "$(printf '   | \t        ^')"
}

@test "cpu: a segfault names the candidate's line, in the verdict and in the feedback" {
	turn vector_add cpu "$F/segv_line.c" >"$T/next"
	run -0 jq -c '.verify.crash' "$T/done.jsonl"
	assert_output '{"line":7,"called":false,"function":"vector_add"}'
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your kernel failed at run time."
	assert_line --index 1 --partial "crashed with SIGSEGV (invalid memory access"
	assert_line --index 1 --partial ") at line 7 of your code (in vector_add) in case 1 (n=1), trial 1."
	assert_line --index 2 "$(printf ' 7 | \t\tc[i] = x + far[i];')"
	# by hand, the same message and the line
	run -1 leap-verify --seed 1 --task vector_add "$F/segv_line.c"
	assert_line --index 1 --partial "at line 7 of your code (in vector_add)"
	assert_line --index 2 "$(printf '  7 | \t\tc[i] = x + far[i];')"
}

@test "cpu: a fault inside a library function is outside the code, and names the candidate's call" {
	run -1 leap-verify --seed 1 --task vector_add "$F/segv_call.c"
	assert_line --index 1 --partial "crashed with SIGSEGV"
	assert_line --index 1 --partial "in case 1 (n=1), trial 1. The fault was outside your code, in the C library (libc.so.6), called at line 6 of your code (in vector_add): such a fault usually comes from"
	assert_line --index 2 "$(printf '  6 | \tmemset(c + (1L << 40), 0, (size_t)n * sizeof *c);')"
}

@test "cpu: a heap corrupted before a block faults in free: the feedback says the fault was outside the code" {
	# issue 30: a crash in the C library after a heap overrun read as SIGSEGV with no place
	turn transpose cpu "$F/heap_before.c" >"$T/next"
	run -0 jq -c '.verify.crash' "$T/done.jsonl"
	assert_output '{"called":true,"outside":"libc.so.6"}'
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your kernel failed at run time."
	assert_line --index 1 --partial "Your code aborted (SIGABRT"
	# free was the function's tail call: no frame of the candidate is left to name
	assert_line --index 1 --partial "in case 1 (rows=1, cols=1), trial 1. The fault was outside your code, in the C library (libc.so.6), with no call of your code on the stack: such a fault usually comes from an earlier write outside a buffer (past its end or before its start"
}

@test "cpu: a write past the end of a block the code allocated fails the smallest case, naming the allocation" {
	# issue 30: a scratch buffer one column short passed rows=1, cols=1 and crashed in malloc later
	turn transpose cpu "$F/heap_after.c" >"$T/next"
	run -0 jq -c '[.status, .verify.cases, .verify.heap]' "$T/done.jsonl"
	assert_output '["runtime_error",0,{"line":9,"function":"transpose"}]'
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 "Your code wrote past the end of a 0-byte block it allocated with malloc at line 9 of your code (in transpose) in case 1 (rows=1, cols=1), trial 1. A write past the end of a block corrupts the heap even where it does no visible harm: check the block's size and every index into it."
	assert_line --index 2 "$(printf ' 9 | \tfloat *tmp = malloc((size_t)(n - rows) * sizeof *tmp);')"
}

@test "cpu: a write on the guard page after an output names the line, the buffer and the element" {
	turn vector_add cpu "$FIXTURES/leap-verify/past_guard.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 --regexp '^Your code crashed with SIGSEGV .* at line 7 of your code \(in vector_add\) in case 1 \(n=1\), trial 1\. The address it faulted on is in the guard page after buffer c: c\[17\], 17 past its last element \(c has 1 element\)\.$'
}

@test "a mismatch in a 4-D output names each coordinate" {
	turn conv2d cpu "$F/conv2d_last.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	# case 1 is batch=1, cin=1, cout=1, height=3, width=4, k=2: y is 1 x 1 x 2 x 3
	assert_line --index 1 --regexp '^Wrong output in case 1 \(batch=1, cin=1, cout=1, height=3, width=4, k=2\): y\[0\]\[0\]\[1\]\[2\] = '
}

@test "cpu: a forged crash report from a runner that did not crash names no line" {
	run -1 leap-verify --seed 1 --task vector_add "$F/forged_crash.c"
	assert_line --index 0 --partial "runtime_error"
	assert_line --index 1 --partial "exited with status 0 during the call"
	refute_output --partial "of your code"
	leap-compile --task vector_add "$F/forged_crash.c" | leap-verify --seed 1 >"$T/rec"
	jq -e '.status == "runtime_error" and (.verify | has("crash") | not)' "$T/rec"
}

@test "cuda: the kernels of a real nvcc artifact are found (the names a device error gives)" {
	skip_unless_nvcc
	run -0 leap-compile --task vector_add "$F/two_kernels.cu"
	art=$(jq -r .compile.artifact <<<"$output")
	cat >"$T/k.c" <<-'C'
	#include <stdio.h>
	#include <stdlib.h>
	#include "sandbox/crash.h"
	int main(int argc, char **argv)
	{
		int n = 0;
		char *k = leap_artifact_kernels(argv[1], &n);
		printf("%d %s\n", n, k ? k : "-");
		free(k);
		return argc != 2;
	}
	C
	link_with_lib "$T/k.c" "$T/k"
	run -0 "$T/k" "$art"
	assert_output "2 detail::fill<...>, add_kernel"
	# a cpu artifact has none
	run -0 leap-compile --task vector_add "$FIXTURES/leap-verify/correct.c"
	run -0 "$T/k" "$(jq -r .compile.artifact <<<"$output")"
	assert_output "0 -"
}

@test "cuda: an illegal address names the CUDA error and the kernel" {
	skip_unless_gpu
	run -1 leap-verify --seed 1 --task vector_add "$F/illegal.cu"
	assert_line --index 0 --partial "runtime_error (task vector_add, cuda"
	assert_line --index 1 --partial "cudaErrorIllegalAddress"
	assert_line --index 1 --partial "in your kernel scatter_kernel"
}

@test "a small mismatch shows the inputs that reproduce it" {
	turn vector_add cpu "$FIXTURES/leap-verify/wrong.c" >"$T/next"
	jq -e '.verify.mismatch.case == 0 and (.verify.mismatch.inputs | keys) == ["a", "b"]' "$T/done.jsonl"
	# the inputs are those the candidate got: it computed a - b
	jq -e '.verify.mismatch | (.inputs.a[0] - .inputs.b[0] - .got | fabs) < 1e-6' "$T/done.jsonl"
	a=$(jq -r '.verify.mismatch.inputs.a[0]' "$T/done.jsonl")
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 --regexp '^Wrong output in case 1 \(n=1\): c\[0\] = .* 1 of 1 elements are wrong\. Inputs: a = \[[-0-9.e]+\], b = \[[-0-9.e]+\]\.$'
	[[ "${lines[1]}" == *"a = [$(printf '%.9g' "$a")]"* ]]
	# a large case shows none: they would not fit, and the model could not use them
	run -1 leap-verify --seed 1 --task vector_add "$F/wrong_large.c"
	assert_line --index 1 --partial "Wrong output in case"
	refute_output --partial "Inputs:"
}

@test "a race: the feedback says the results are nondeterministic and which cases passed" {
	turn softmax cpu "$FIXTURES/leap-verify/softmax/racy.c" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your kernel computes wrong results."
	assert_line --index 1 --partial "Nondeterministic: two runs of case 2 (rows=7, cols=33), trial 1, on the same inputs gave different outputs; a data race"
	assert_line --index 1 --partial "Case 1 (rows=1, cols=2) passed before it"
}

@test "a slow pass is told the machine, the benchmark case and what the baseline is" {
	leap-prompt --backend cpu softmax |
		jq -c --rawfile c "$FIXTURES/leap-bench/slow2x.c" '.completion = "```c\n\($c)```"' |
		leap-compile | leap-verify --seed 1 | leap-bench --seed 1 --max-time 0.5 >"$T/timed"
	jq -e '.status == "pass" and (.bench.status | IN("ok", "noisy"))' "$T/timed"
	# a noisy timing (a loaded machine) is never called slow: this test is about the words of
	# a trusted one, so a noisy record is given its measured speedup as if it were ok
	jq -c 'if .bench.status == "noisy" then .bench.status = "ok" | .bench.speedup = .bench.measured_speedup else . end' \
		"$T/timed" >"$T/trusted"
	device=$(jq -r .bench.device "$T/timed")
	leap-prune --expand-slow=100 --easy-below 0 --done "$T/done.jsonl" "$T/trusted" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	# whatever this machine's speedup, the headline says where it stands against the goal
	assert_line --index 0 --regexp '^Your kernel is correct (but slower than the baseline\.|and .*x as fast as the baseline, short of the 100x asked for\.)$'
	assert_line --index 1 --regexp "^Timed on .* \\([0-9]+ cores?\\) at rows=1024, cols=1024: median [0-9.e+-]+ ms, against [0-9.e+-]+ ms for the baseline, the task's C reference compiled with cc -O2 \(speedup [0-9.e+-]+x: [0-9.e+-]+x to [0-9.e+-]+x the baseline\)\.$"
	[[ "${lines[1]}" == "Timed on $device ("*" core"*") at"* ]]
	# on cuda the baseline is a kernel unless leap-bench names a vendor library
	jq -c '.backend = "cuda" | .bench.device = "NVIDIA H200" | .bench.baseline_kind = "vendor"' "$T/trusted" |
		leap-prune --expand-slow=100 --easy-below 0 --done "$T/done2.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 --regexp '^Timed on NVIDIA H200 at rows=1024, cols=1024: .* for the baseline, a vendor library \(cuBLAS or cuDNN\) \(speedup'
	# a module task's baseline is torch, and the feedback says so
	jq -c '.bench.baseline_kind = "torch-eager"' "$T/trusted" |
		leap-prune --expand-slow=100 --easy-below 0 --done "$T/done4.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 --regexp 'for the baseline, the PyTorch module run by torch \(eager\) \(speedup'
	jq -c '.bench.baseline_kind = "torch-compile"' "$T/trusted" |
		leap-prune --expand-slow=100 --easy-below 0 --done "$T/done5.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 1 --regexp 'for the baseline, the PyTorch module compiled by torch.compile \(AOTInductor\) \(speedup'
	# the speed is told as the interval the timing knows it to (issue 28)
	jq -c '.bench.speedup = 2 | .bench.speedup_ci = [1.8, 2.2]' "$T/trusted" |
		leap-prune --expand-slow=100 --easy-below 0 --done "$T/done3.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your kernel is correct and 1.8x to 2.2x as fast as the baseline, short of the 100x asked for."
	assert_line --index 1 --partial "(speedup 2x: 1.8x to 2.2x the baseline)."
}

@test "a wrong output leap-bench found while timing is told in bench's words, not verify's" {
	# verify passed; leap-bench found call 7 wrong and set the record's status
	echo '{"task":"vector_add","group":"g","sample":0,"turn":1,"backend":"cpu","status":"mismatch","code":"x","verify":{"status":"pass","message":"All 7 cases passed (3 trials each)."},"bench":{"status":"mismatch","message":"Wrong output in call 7 of the timing (input set 3): c[5] = 0 but expected 1.5."}}' |
		leap-prune --preset debug-all --done "$T/done.jsonl" >"$T/next"
	run -0 jq -r .feedback "$T/next"
	assert_line --index 0 "Your kernel computes wrong results."
	assert_line --index 1 --partial "Wrong output in call 7 of the timing"
	refute_output --partial "All 7 cases passed"
}
