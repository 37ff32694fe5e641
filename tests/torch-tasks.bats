#!/usr/bin/env bats
# torch-tasks.bats - module tasks: a PyTorch module file as a task, torch as its reference
# (leap-task --import, leap-prompt, leap-verify on the cpu backend).
#
# Cost: one import of the 20 modules of fixtures/torch/modules.jsonl in setup_file (torch's
# import is most of it) and one leap-verify run per test that verifies. Every test but the one
# without torch skips, saying so, where $LEAP_TORCH_PYTHON does not import torch. KernelBench's
# level 3 (all 50 derive) runs only with LEAP_LINT_ALL=1 (make lint-tasks): it takes minutes.
# The tests over other KernelBench files import one to four each (seconds); the agreement with
# the C tasks runs on four, the whole in make bench-agree.
load helpers
load artifact

KB="$ROOT/../shared/kernelbench/KernelBench/KernelBench"

have_torch() {
	[ -n "${LEAP_TORCH_PYTHON:-}" ] && "$LEAP_TORCH_PYTHON" -c 'import torch' >/dev/null 2>&1
}

skip_unless_torch() {
	have_torch || skip "no torch: set LEAP_TORCH_PYTHON to a Python that imports torch (tests/trainers/venvs.sh)"
}

# timed_against_eager ROOT TASK FILE: leap-bench times FILE, a correct candidate of TASK in
# the task root ROOT, against torch-eager: ok, or noisy (1), which a loaded machine may give
timed_against_eager() {
	LEAP_TASKS=$1 run leap-bench --no-progress --max-time 0.5 --min-runs 3 --task "$2" "$3"
	[ "$status" -le 1 ]
	assert_line --index 0 --regexp ": (ok|noisy) \\(task $2, cpu"
	assert_line '  against torch-eager'
}

# prompt_text ROOT TASK: the user message leap-prompt writes for TASK of the task root ROOT (cpu)
prompt_text() {
	local rec
	rec=$(leap-prompt --tasks "$1" --backend cpu "$2") && jq -r '.messages[1].content' <<<"$rec"
}

setup_file() {
	have_torch || return 0
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
	# the task root is the import's parent: its suite `mods` holds the tasks
	local rc=0
	leap-task --import "$BATS_FILE_TMPDIR/root/mods" "$ROOT/tests/fixtures/torch/modules.jsonl" \
		>"$BATS_FILE_TMPDIR/import.jsonl" 2>"$BATS_FILE_TMPDIR/import.err" || rc=$?
	echo $rc >"$BATS_FILE_TMPDIR/import.rc"
}

setup() {
	cd "$ROOT"
	export LEAP_CACHE="$BATS_FILE_TMPDIR/cache"
	IMPORT="$BATS_FILE_TMPDIR/import.jsonl"
	TROOT="$BATS_FILE_TMPDIR/root"
}

@test "without torch, --import fails saying which Python it needs" {
	LEAP_TORCH_PYTHON= run -2 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" \
		"$ROOT/tests/fixtures/torch/modules.jsonl"
	assert_output ""
	[[ "$stderr" == *"module tasks need torch: set LEAP_TORCH_PYTHON"* ]]
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/s")" ] # nothing half made
}

@test "--import of 20 modules: 18 tasks, the two unfair ones refused with the reason" {
	skip_unless_torch
	[ "$(cat "$BATS_FILE_TMPDIR/import.rc")" = 1 ] # some refused
	[ "$(jq -s 'map(select(.id)) | length' "$IMPORT")" = 18 ]
	run jq -r 'select(.refused) | "\(.task): \(.refused)"' "$IMPORT"
	assert_line --partial "dropout_unfair: unfair: forward draws random numbers"
	assert_line --partial "zeros_unfair: unfair: the output does not depend on the inputs"
	[ "${#lines[@]}" = 2 ]
	[ ! -e "$TROOT/mods/dropout_unfair" ] # a refused module leaves no folder
	run -0 leap-task --check "$TROOT"/mods/*/
}

@test "the derived entry: forward inputs, state_dict entries, outputs, then the sizes as ints" {
	skip_unless_torch
	run -0 jq -r 'select(.id == "batchnorm") | .prototype.cpu' "$IMPORT"
	assert_output "void module_forward(const float *x, const float *bn_weight, const float *bn_bias, const float *bn_running_mean, const float *bn_running_var, const int64_t *bn_num_batches_tracked, float *out, int batch_size, int features);"
	run -0 jq -r 'select(.id == "min_max") | .prototype.cpu' "$IMPORT"
	assert_output "void module_forward(const float *x, float *out0, float *out1, int rows, int cols);"
	# a kernel's 3 stays a number; a convolution's output shrinks with the image
	run -0 jq -r 'select(.id == "conv2d") | .params[] | select(.name == "out" or .name == "conv_weight") | .size' "$IMPORT"
	assert_line "out_channels * in_channels * 3 * 3"
	assert_line "batch_size * out_channels * (height - 2) * (width - 2)"
	# bench is the file's sizes; the cases are smaller
	run -0 jq -c 'select(.id == "linear") | [.bench.values, ([.cases[].values.in_features] | max <= 16)]' "$IMPORT"
	assert_output '[{"batch_size":32,"in_features":256,"out_features":128},true]'
}

@test "the prompt shows the module's source and the derived prototype, and says torch is the reference" {
	skip_unless_torch
	run -0 prompt_text "$TROOT" min_max
	assert_output --partial "return torch.amin(x, dim=1), torch.amax(x, dim=1)"
	assert_output --partial "void module_forward(const float *x, float *out0, float *out1, int rows, int cols);"
	assert_output --partial $'    return []\n```\n' # the source's fence closes on a line of its own
	assert_output --partial "The reference is the PyTorch module above, run by torch on the CPU in double precision"
	refute_output --partial "plain C"
}

@test "a correct C candidate of a module task passes; a wrong one is a mismatch naming the output and index" {
	skip_unless_torch
	cat >"$BATS_TEST_TMPDIR/ok.c" <<'EOF'
void module_forward(const float *x, float *out0, float *out1, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		float lo = x[(long)r * cols], hi = lo;
		for (int c = 1; c < cols; c++) {
			float v = x[(long)r * cols + c];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		out0[r] = lo;
		out1[r] = hi;
	}
}
EOF
	# wrong in the second output's last row, only where there are more than 3 rows
	sed 's/out1\[r\] = hi;/out1[r] = r == rows - 1 \&\& rows > 3 ? lo : hi;/' "$BATS_TEST_TMPDIR/ok.c" >"$BATS_TEST_TMPDIR/bad.c"
	run leap-verify --tasks "$TROOT" --seed 3 --task min_max "$BATS_TEST_TMPDIR/ok.c" "$BATS_TEST_TMPDIR/bad.c"
	assert_line --partial "ok.c: pass (task min_max"
	assert_line --partial "bad.c: mismatch (task min_max"
	assert_output --regexp "out1\[[0-9]+\] = .* but expected"
}

@test "a module task runs through leap-prompt | sampler-replay | leap-compile | leap-verify | leap-bench | leap-prune" {
	skip_unless_torch
	printf 'void module_forward(const float *x, float *out, int b, int d)\n{\n\tfor (long i = 0; i < (long)b * d; i++)\n\t\tout[i] = x[i] > 0 ? x[i] : 0;\n}\n' \
		>"$BATS_TEST_TMPDIR/ok.c"
	sed 's/x\[i\] > 0 ? x\[i\] : 0/x[i]/' "$BATS_TEST_TMPDIR/ok.c" >"$BATS_TEST_TMPDIR/bad.c" # no ReLU
	jq -nc --rawfile ok "$BATS_TEST_TMPDIR/ok.c" --rawfile bad "$BATS_TEST_TMPDIR/bad.c" '
		{task: "relu", sample: 0, turn: 1, completion: ("```c\n" + $ok + "```")},
		{task: "relu", sample: 1, turn: 1, completion: ("```c\n" + $bad + "```")}' >"$BATS_TEST_TMPDIR/replay.jsonl"
	leap-prompt --tasks "$TROOT" --backend cpu --group-size 2 relu |
		"$ROOT/examples/sampler-replay" --strict -r "$BATS_TEST_TMPDIR/replay.jsonl" |
		leap-compile --tasks "$TROOT" --no-progress |
		leap-verify --tasks "$TROOT" --no-progress --seed 9 |
		leap-bench --tasks "$TROOT" --no-progress --max-time 0.5 --min-runs 3 | tee "$BATS_TEST_TMPDIR/out.jsonl" |
		leap-prune --done "$BATS_TEST_TMPDIR/done.jsonl" >"$BATS_TEST_TMPDIR/next.jsonl" || true
	run -0 jq -r '"\(.sample) \(.status) \(.verify.mismatch.output // "-") \(.bench.status) \(.bench.baseline_kind // "-")"' \
		"$BATS_TEST_TMPDIR/out.jsonl"
	assert_line --regexp '^0 pass - (ok|noisy) torch-eager$'
	assert_line "1 mismatch out skipped -"
	# one of two failed: the group expands, the failed sample gets a second turn, the other ends
	run -0 jq -r '"\(.sample) \(.turn)"' "$BATS_TEST_TMPDIR/next.jsonl"
	assert_output "1 2"
	run -0 jq -r '"\(.sample) \(.prune.decision) \(.prune.reason)"' "$BATS_TEST_TMPDIR/done.jsonl"
	assert_line --regexp '^0 [a-z]+ solved$'
	assert_line --regexp '^1 [a-z]+ failed$'
}

@test "a module's buffers are leap's drawn values: a training-mode BatchNorm in C passes" {
	skip_unless_torch
	cat >"$BATS_TEST_TMPDIR/bn.c" <<'EOF'
#include <math.h>
/* training mode: the batch's statistics (biased variance), the running buffers unread */
void module_forward(const float *x, const float *w, const float *b, const float *rm, const float *rv,
		    const int64_t *nbt, float *out, int n, int f)
{
	(void)rm, (void)rv, (void)nbt;
	for (int j = 0; j < f; j++) {
		double s = 0, q = 0;
		for (int i = 0; i < n; i++)
			s += x[(long)i * f + j];
		double mean = s / n;
		for (int i = 0; i < n; i++) {
			double d = x[(long)i * f + j] - mean;
			q += d * d;
		}
		double inv = 1 / sqrt(q / n + 1e-5);
		for (int i = 0; i < n; i++)
			out[(long)i * f + j] = (float)((x[(long)i * f + j] - mean) * inv * w[j] + b[j]);
	}
}
EOF
	run -0 leap-verify --tasks "$TROOT" --seed 4 --task batchnorm "$BATS_TEST_TMPDIR/bn.c"
	assert_line --partial "bn.c: pass (task batchnorm"
}

@test "without torch, verifying a module task fails saying which Python it needs" {
	skip_unless_torch # for the import; the verification runs without it
	printf 'void module_forward(const float *x, float *out, int b, int d)\n{ for (long i = 0; i < (long)b * d; i++) out[i] = x[i] > 0 ? x[i] : 0; }\n' \
		>"$BATS_TEST_TMPDIR/relu.c"
	LEAP_TORCH_PYTHON= run -2 --separate-stderr leap-verify --tasks "$TROOT" --task relu "$BATS_TEST_TMPDIR/relu.c"
	[[ "$stderr" == *"module tasks need torch: set LEAP_TORCH_PYTHON"* ]]
}

@test "leap-bench times a module task against torch-eager; wrong while timed is a mismatch; no torch, skipped" {
	skip_unless_torch
	printf 'void module_forward(const float *x, float *out, int b, int d)\n{\n\tfor (long i = 0; i < (long)b * d; i++)\n\t\tout[i] = x[i] > 0 ? x[i] : 0;\n}\n' \
		>"$BATS_TEST_TMPDIR/ok.c"
	# right while leap-verify looks, wrong from its 300th call: only a checked timing sees it
	sed 's/^}$/\tstatic long calls;\n\tif (++calls > 300)\n\t\tout[0] += 1;\n}/' "$BATS_TEST_TMPDIR/ok.c" >"$BATS_TEST_TMPDIR/late.c"
	jq -nc --rawfile ok "$BATS_TEST_TMPDIR/ok.c" --rawfile late "$BATS_TEST_TMPDIR/late.c" '
		{task: "relu", sample: 0, turn: 1, completion: ("```c\n" + $ok + "```")},
		{task: "relu", sample: 1, turn: 1, completion: ("```c\n" + $late + "```")}' >"$BATS_TEST_TMPDIR/replay.jsonl"
	leap-prompt --tasks "$TROOT" --backend cpu --group-size 2 relu |
		"$ROOT/examples/sampler-replay" --strict -r "$BATS_TEST_TMPDIR/replay.jsonl" |
		leap-compile --tasks "$TROOT" --no-progress |
		leap-verify --tasks "$TROOT" --no-progress --seed 9 >"$BATS_TEST_TMPDIR/verified.jsonl"
	leap-bench --tasks "$TROOT" --no-progress --max-time 1 <"$BATS_TEST_TMPDIR/verified.jsonl" \
		>"$BATS_TEST_TMPDIR/out.jsonl" || true
	# the honest one is timed against torch (a verdict with a measured speedup, whatever the load)
	run -0 jq -r 'select(.sample == 0) | .bench | "\(.baseline_kind) \(.status) \(.baseline_ms > 0) \((.measured_speedup // .speedup) > 0)"' \
		"$BATS_TEST_TMPDIR/out.jsonl"
	assert_output --regexp '^torch-eager (ok|noisy) true true$'
	run -0 jq -r 'select(.sample == 1) | "\(.status) \(.bench.status)"' "$BATS_TEST_TMPDIR/out.jsonl"
	assert_output "mismatch mismatch"
	# without torch the module task is not timed, and the record says why
	LEAP_TORCH_PYTHON= run -0 leap-bench --tasks "$TROOT" --no-progress <"$BATS_TEST_TMPDIR/verified.jsonl"
	run -0 jq -r '"\(.status) \(.bench.status) \(.bench.message)"' <<<"$output"
	assert_line "pass skipped not timed: module tasks need torch: set LEAP_TORCH_PYTHON to a Python that imports torch"
}

@test "a module task's candidate that withholds its hello is bounded by a runner's start, not torch's import" {
	skip_unless_torch
	cat >"$BATS_TEST_TMPDIR/withhold.c" <<'EOF'
#include <unistd.h>
__attribute__((constructor)) static void stall(void) { for (;;) sleep(1); }
void module_forward(const float *x, float *out, int b, int d)
{
	for (long i = 0; i < (long)b * d; i++)
		out[i] = x[i] > 0 ? x[i] : 0;
}
EOF
	LEAP_TASKS="$TROOT" build_artifact relu "$BATS_TEST_TMPDIR/withhold.c" "$BATS_TEST_TMPDIR/withhold.so"
	compiled_record relu "$BATS_TEST_TMPDIR/withhold.so" '{"status":"pass"}' >"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 leap-bench --tasks "$TROOT" --no-progress --max-time 1 "$BATS_TEST_TMPDIR/in.jsonl"
	# a timeout, and not the record's 31 s: the torch baseline's seconds of import (after its
	# hello) do not widen the candidate's bound (2 s + 10 times the trusted runner's start)
	run -0 jq -r '"\(.status) \(.bench.status) \(.bench.ms < 25000)"' <<<"$output"
	assert_output "timeout timeout true"
}

# relu_record OUT: a record of relu's candidate that passed, as leap-verify writes it
relu_record() {
	printf 'void module_forward(const float *x, float *out, int b, int d)\n{ for (long i = 0; i < (long)b * d; i++) out[i] = x[i] > 0 ? x[i] : 0; }\n' \
		>"$BATS_TEST_TMPDIR/relu.c"
	LEAP_TASKS="$TROOT" build_artifact relu "$BATS_TEST_TMPDIR/relu.c" "$BATS_TEST_TMPDIR/relu.so"
	compiled_record relu "$BATS_TEST_TMPDIR/relu.so" '{"status":"pass"}' >"$1"
}

@test "leap-bench times a module task against torch-compile, compiled once ahead of time and kept" {
	skip_unless_torch
	relu_record "$BATS_TEST_TMPDIR/in.jsonl"
	# the compile (tens of seconds, the file's cache shares it) is never timed: the verdict is
	# the timing's, whatever the load
	run -0 leap-bench --tasks "$TROOT" --no-progress --baseline torch-compile --max-time 0.5 --min-runs 3 \
		"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.status) \(.bench.baseline_kind) \(.bench.status) \(.bench.baseline_ms > 0) \((.bench.measured_speedup // .bench.speedup) > 0)"' <<<"$output"
	assert_output --regexp '^pass torch-compile (ok|noisy) true true$'
	# AOTInductor's shared object, kept by content; a second run loads it, compiling nothing
	local so=("$LEAP_CACHE"/torch-compile/*.so)
	[ "${#so[@]}" = 1 ]
	local before
	before=$(stat -c '%i %Y' "${so[0]}")
	run -0 leap-bench --tasks "$TROOT" --no-progress --baseline torch-compile --max-time 0.5 --min-runs 3 \
		"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench.baseline_kind' <<<"$output"
	assert_output torch-compile
	[ "$(stat -c '%i %Y' "${so[0]}")" = "$before" ]
	[ "$(ls "$LEAP_CACHE"/torch-compile/ | grep -c '\.so$')" = 1 ]
	[ -z "$(ls -d "$LEAP_CACHE"/torch-compile/tmp.* 2>/dev/null)" ] # its scratch is gone
}

@test "the task field baseline_kind picks torch-compile, --baseline overrides it; C tasks cannot name torch" {
	skip_unless_torch
	relu_record "$BATS_TEST_TMPDIR/in.jsonl"
	cp -r "$TROOT/mods/relu" "$BATS_TEST_TMPDIR/relu"
	jq '.baseline_kind = "torch-compile"' "$TROOT/mods/relu/task.json" >"$BATS_TEST_TMPDIR/relu/task.json"
	run -0 leap-bench --tasks "$BATS_TEST_TMPDIR" --no-progress --max-time 0.5 --min-runs 3 "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.bench.baseline_kind) \(.bench.status)"' <<<"$output"
	assert_output --regexp '^torch-compile (ok|noisy)$'
	run -0 leap-bench --tasks "$BATS_TEST_TMPDIR" --no-progress --baseline torch-eager --max-time 0.5 --min-runs 3 \
		"$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench.baseline_kind' <<<"$output"
	assert_output torch-eager
	run -2 --separate-stderr leap-bench --baseline torch-jit --task relu "$BATS_TEST_TMPDIR/relu.c"
	[[ "$stderr" == *"--baseline: 'torch-jit' is not torch-eager or torch-compile"* ]]
	# only a module task may name torch
	jq 'del(.module) | .baseline_kind = "torch-compile"' "$TROOT/mods/relu/task.json" >"$BATS_TEST_TMPDIR/relu/task.json"
	: >"$BATS_TEST_TMPDIR/relu/reference.c"
	run -1 leap-task --check "$BATS_TEST_TMPDIR/relu"
	assert_output --partial 'baseline_kind: "torch-compile" is a module task'"'"'s baseline'
}

@test "a module torch.export cannot trace is not timed against torch-compile, saying why; the reason is kept" {
	skip_unless_torch
	local root="$BATS_TEST_TMPDIR/r"
	run -0 --separate-stderr leap-task --import "$root/m" "$ROOT/tests/fixtures/torch/untraceable.jsonl"
	printf 'void module_forward(const float *x, float *out, int n)\n{\n\tdouble s = 0;\n\tfor (int i = 0; i < n; i++)\n\t\ts += x[i];\n\tfor (int i = 0; i < n; i++)\n\t\tout[i] = x[i] * (s > 0 ? 2 : 3);\n}\n' \
		>"$BATS_TEST_TMPDIR/branchy.c"
	LEAP_TASKS="$root" build_artifact branchy "$BATS_TEST_TMPDIR/branchy.c" "$BATS_TEST_TMPDIR/branchy.so"
	{
		compiled_record branchy "$BATS_TEST_TMPDIR/branchy.so" '{"status":"pass"}'
		compiled_record branchy "$BATS_TEST_TMPDIR/branchy.so" '{"status":"pass","sample":1}'
	} >"$BATS_TEST_TMPDIR/in.jsonl"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	# the candidate passed: the task has no baseline to time it against, which is no error of its
	run -0 leap-bench --tasks "$root" --no-progress --baseline torch-compile "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '"\(.status) \(.bench.status) \(.bench.message)"' <<<"$output"
	[ "${#lines[@]}" = 2 ]
	assert_line --index 0 --regexp "^pass skipped not timed: the torch-compile baseline of task 'branchy' cannot be made: torch.export cannot trace the module: .*data-dependent"
	assert_equal "${lines[1]}" "${lines[0]}"
	# the refusal is kept by content: the next run reads it, compiling nothing
	local no=("$LEAP_CACHE"/torch-compile/*.refused)
	[ "${#no[@]}" = 1 ]
	printf 'the reason kept' >"${no[0]}"
	run -0 leap-bench --tasks "$root" --no-progress --baseline torch-compile "$BATS_TEST_TMPDIR/in.jsonl"
	run -0 jq -r '.bench.message' <<<"$output"
	assert_line --index 0 --partial "not timed: the torch-compile baseline of task 'branchy' cannot be made: the reason kept (kept in $LEAP_CACHE/torch-compile/"
	# by hand: the same, and exit status 1 (not timed)
	run -1 leap-bench --tasks "$root" --baseline torch-compile --task branchy "$BATS_TEST_TMPDIR/branchy.c"
	assert_line --partial "branchy.c: skipped (task branchy"
	assert_line --partial "cannot be made: the reason kept"
}

@test "KernelBench's level 3 by hand: MLP, RNN cell, LeNet5, ResNet block, Fire module in float pass; a wrong one names output and index" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	# tests/fixtures/torch/l3/: hand-written candidates in plain float32, one running sum per
	# output. LeNet5, the ResNet block and the Fire module failed while a stack of layers had
	# every parameter drawn from the input patterns ("large" in every layer at once cancels in
	# the next) and the tolerance was measured on the module's own weights, not leap's draws
	local l3="$FIXTURES/torch/l3" root="$BATS_TEST_TMPDIR/r" t s
	local all="1_MLP 33_VanillaRNN 4_LeNet5 8_ResNetBasicBlock 17_SqueezeNetFireModule"
	leap-task --import "$root/l3" $(for t in $all; do echo "$KB/level3/$t.py"; done) >/dev/null 2>&1
	for t in $all; do
		for s in 1 2 3; do
			run -0 leap-verify --tasks "$root" --seed "$s" --task "$t" "$l3/$t.c"
			assert_line --index 0 --partial ": pass (task $t, cpu"
		done
	done
	# parameters at their initialisation's scale: a Linear's U(+-1 / sqrt(in_features)) at
	# each case's sizes, at He's gain (sqrt(6)); a BatchNorm's variance positive
	run jq -c '.params[] | select(.name == "network_2_weight") | .init[] | [.center, (.spread * .spread | round), .fan]' \
		"$root/l3/1_MLP/task.json"
	assert_output '[0,6,"layer_sizes_0"]'
	run jq -c '.params[] | select(.name == "bn1_running_var") | .init' "$root/l3/8_ResNetBasicBlock/task.json"
	assert_output '[{"center":1,"spread":0.5}]'
	# the last layer without its bias, LeNet5's convolutions without theirs: the mismatch names
	# the output and its coordinates
	sed 's/float s = b\[o\];/float s = relu ? b[o] : 0;/' "$l3/1_MLP.c" >"$BATS_TEST_TMPDIR/nobias.c"
	run -1 leap-verify --tasks "$root" --seed 3 --task 1_MLP "$BATS_TEST_TMPDIR/nobias.c"
	assert_line --index 1 --regexp 'out\[[0-9]+\]\[[0-9]+\] = .* but expected'
	sed 's/float s = b\[oc\];/float s = 0;/' "$l3/4_LeNet5.c" >"$BATS_TEST_TMPDIR/lenet.c"
	run -1 leap-verify --tasks "$root" --seed 3 --task 4_LeNet5 "$BATS_TEST_TMPDIR/lenet.c"
	assert_line --index 0 --partial ': mismatch (task 4_LeNet5'
	assert_line --index 1 --regexp 'out\[[0-9]+\]\[[0-9]+\] = .* but expected'
	# timed against torch itself
	timed_against_eager "$root" 1_MLP "$l3/1_MLP.c"
}

@test "a causal mask is the module's own: a kernel masking j > i passes, one ignoring the mask is a mismatch" {
	skip_unless_torch
	# a buffer torch.tril made was drawn from the input patterns, which almost never give 0: the
	# attention was not causal, a kernel ignoring the mask passed and a causal one failed
	local root="$BATS_TEST_TMPDIR/r" c="$FIXTURES/torch/causal/masked.c"
	run -0 --separate-stderr leap-task --import "$root/m" "$FIXTURES/torch/causal.jsonl"
	run -0 jq -c '.params[] | select(.name == "mask") | .init' "$root/m/causal/task.json"
	assert_output '[{"tril":"block"}]'
	run -0 prompt_text "$root" causal
	assert_line --partial "- \`mask\`: the module's causal mask, not drawn: n x n matrices (n = block) of 1 where the column <= the row"
	sed 's/^#define MASKED.*/#define MASKED(i, j) ((j) > (i))/' "$c" >"$BATS_TEST_TMPDIR/byindex.c"
	sed 's/^#define MASKED.*/#define MASKED(i, j) 0/' "$c" >"$BATS_TEST_TMPDIR/none.c"
	for s in 1 2; do
		run -0 leap-verify --tasks "$root" --seed "$s" --task causal "$c"
		assert_line --index 0 --partial ": pass (task causal, cpu"
		run -0 leap-verify --tasks "$root" --seed "$s" --task causal "$BATS_TEST_TMPDIR/byindex.c"
		assert_line --index 0 --partial ": pass (task causal, cpu"
		run -1 leap-verify --tasks "$root" --seed "$s" --task causal "$BATS_TEST_TMPDIR/none.c"
		assert_line --index 0 --partial ": mismatch (task causal, cpu"
	done
	# leap-bench's derived sets keep the mask in place: every timed call of the causal kernel is
	# checked against torch's
	timed_against_eager "$root" causal "$BATS_TEST_TMPDIR/byindex.c"
}

@test "a table the module makes the same at every size is its own: an index computed as __init__ does passes" {
	skip_unless_torch
	# an integer buffer (a window attention's relative position index) was drawn in [-1000,
	# 1000]: torch's reference failed on every case (IndexError), so no candidate could pass
	local root="$BATS_TEST_TMPDIR/r" c="$FIXTURES/torch/table/lookup.c"
	run -0 --separate-stderr leap-task --import "$root/m" "$FIXTURES/torch/table.jsonl"
	run -0 jq -c '[.params[] | select(.init[0].values) | [.name, (.init[0].values | length)]]' "$root/m/table/task.json"
	assert_output '[["index",49],["scale",7]]'
	run -0 prompt_text "$root" table
	assert_line "- \`index\`: the module's own 49 values, not drawn: as its __init__ makes them, the same in every case"
	sed 's/^#define INDEX.*/#define INDEX(i, j) ((i) - (j) + 6)/' "$c" >"$BATS_TEST_TMPDIR/computed.c"
	sed 's/^#define SCALE.*/#define SCALE(j) 1.0f/' "$c" >"$BATS_TEST_TMPDIR/noscale.c"
	run -0 leap-verify --tasks "$root" --task table "$c"
	assert_line --index 0 --partial ": pass (task table, cpu"
	run -0 leap-verify --tasks "$root" --task table "$BATS_TEST_TMPDIR/computed.c"
	assert_line --index 0 --partial ": pass (task table, cpu"
	run -1 leap-verify --tasks "$root" --task table "$BATS_TEST_TMPDIR/noscale.c"
	assert_line --index 0 --partial ": mismatch (task table, cpu"
	# every set leap-bench derives keeps the table: the computed index is checked at each call
	timed_against_eager "$root" table "$BATS_TEST_TMPDIR/computed.c"
	# a table that does not fill its run at some case is the task's error, said by the loader
	jq '.params[2].init[0].values |= .[1:]' "$root/m/table/task.json" >"$BATS_TEST_TMPDIR/t.json"
	mv "$BATS_TEST_TMPDIR/t.json" "$root/m/table/task.json"
	run -2 --separate-stderr leap-verify --tasks "$root" --task table "$c"
	[[ "$stderr" == *"init[0] of 'index' holds 48 values, but its run has 49 elements here"* ]]
}

@test "KernelBench's level 4 is refused: it loads weights from a model hub" {
	skip_unless_torch
	[ -d "$KB/level4" ] || skip "no KernelBench checkout at $KB"
	run -1 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/l4" "$KB/level4"
	[ "$(jq -s 'map(select(.refused | test("model hub"))) | length' <<<"$output")" = \
		"$(ls "$KB"/level4/*.py | wc -l)" ]
}

@test "KernelBench's level 3: each of the 50 modules is a task or refused with its reason (LEAP_LINT_ALL=1)" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	[ -n "${LEAP_LINT_ALL:-}" ] || skip "minutes of torch: run with LEAP_LINT_ALL=1 (make lint-tasks)"
	run --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/l3" "$KB/level3"
	[ "$(wc -l <<<"$output")" = 50 ]
	jq -r 'select(.refused) | "\(.task): \(.refused)"' <<<"$output" >&3
}

@test "a strided, padded or dilated window's output size is derived: (m x + c) / k, x / k, x - j w + c" {
	skip_unless_torch
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$ROOT/tests/fixtures/torch/sizes.jsonl"
	[ "$(jq -s 'map(select(.dir)) | length' <<<"$output")" = 4 ]
	out() { jq -r '.params[] | select(.name == "out") | .size' "$BATS_TEST_TMPDIR/s/$1/task.json"; }
	[ "$(out strided_conv)" = "4 * out_channels * ((height - 2) / 2) * ((width - 2) / 2)" ]
	[ "$(out transposed_conv)" = "4 * out_channels * (3 * length - 1)" ]
	[ "$(out pool_drawn_kernel)" = "4 * channels * (height / kernel_size) * (width / kernel_size)" ]
	# a kernel of (3, 9), dilated by 2 along the width: its 9 is a size, drawn too
	[ "$(out tuple_kernel)" = "4 * out_channels * (height - 2) * (width - 2 * kernel_size_1 + 2)" ]
}

@test "a module whose output ignores its inputs at some shrunk sizes, not all, is a task" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	# a min over many channels summed over the rows is so negative that GELU gives 0; a RegNet
	# whose last stage is drawn 2 channels wide gives every image zero features
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$KB"/level2/36_ConvTranspose2d_Min_Sum_GELU_Add.py \
		"$KB"/level3/27_RegNet.py
	[ "$(jq -s 'map(select(.dir)) | length' <<<"$output")" = 2 ]
}

@test "a module of more than 64 parameters takes its state packed, and a C candidate reading it passes" {
	skip_unless_torch
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/r/deep" "$ROOT/tests/fixtures/torch/deep.jsonl"
	# 33 layers: 66 state_dict entries, packed into one buffer after x
	run -0 jq -c '[.params[] | .name]' "$BATS_TEST_TMPDIR/r/deep/deep_linear/task.json"
	assert_output '["x","state","out","batch_size","features","depth"]'
	cat >"$BATS_TEST_TMPDIR/deep.c" <<'EOF'
/* each layer's weight (f x f, out by in) then bias (f), one after another */
void module_forward(const float *x, const float *state, float *out, int n, int f, int depth)
{
	double a[16][16], b[16][16];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < f; j++)
			a[i][j] = x[i * f + j];
	for (int l = 0; l < depth; l++) {
		const float *w = state + (long)l * (f * f + f), *bias = w + f * f;
		for (int i = 0; i < n; i++)
			for (int o = 0; o < f; o++) {
				double s = bias[o];
				for (int k = 0; k < f; k++)
					s += a[i][k] * w[o * f + k];
				b[i][o] = s > 0 ? s : 0;
			}
		for (int i = 0; i < n; i++)
			for (int j = 0; j < f; j++)
				a[i][j] = b[i][j];
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < f; j++)
			out[i * f + j] = (float)a[i][j];
}
EOF
	run leap-verify --tasks "$BATS_TEST_TMPDIR/r" --seed 5 --task deep_linear "$BATS_TEST_TMPDIR/deep.c"
	assert_line --partial "deep.c: pass (task deep_linear"
	# torch-eager binds each packed entry to its slice of the buffer (it once returned 3)
	timed_against_eager "$BATS_TEST_TMPDIR/r" deep_linear "$BATS_TEST_TMPDIR/deep.c"
}

@test "the torch reference answers each set with torch's own forward of its values, a 48 MB state too" {
	skip_unless_torch
	# refdump asks leap_torchref_case as leap-verify does (sets 0, 1, 2, 0 of every case, then the
	# first case again after the larger ones: the shared memory grown, its bytes overwritten);
	# refcheck recomputes each answer with torch alone from what was sent
	link_with_lib "$ROOT/tests/fixtures/torch/refdump.c" "$BATS_TEST_TMPDIR/refdump"
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/r/deep" "$ROOT/tests/fixtures/torch/deep.jsonl"
	local dirs=("$TROOT/mods/batchnorm" "$TROOT/mods/mlp" "$BATS_TEST_TMPDIR/r/deep/deep_linear")
	if [ -d "$KB/level3" ]; then # a packed state of 11.7M floats
		run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/r/kb" "$KB"/level3/9_ResNet18.py
		dirs+=("$BATS_TEST_TMPDIR/r/kb/9_ResNet18")
	fi
	for d in "${dirs[@]}"; do
		mkdir -p "$BATS_TEST_TMPDIR/out/${d##*/}"
		LEAP_LIBEXEC="$ROOT/libexec" "$BATS_TEST_TMPDIR/refdump" "$d" "$BATS_TEST_TMPDIR/out/${d##*/}" >"$BATS_TEST_TMPDIR/asks"
		run -0 "$LEAP_TORCH_PYTHON" "$ROOT/tests/fixtures/torch/refcheck.py" "$ROOT/libexec" "$d" \
			"$BATS_TEST_TMPDIR/out/${d##*/}" <"$BATS_TEST_TMPDIR/asks"
		assert_output --regexp "^ok: [0-9]+ answers$"
	done
}

@test "a module task's candidate holds no descriptor of the torch reference's shared memory" {
	skip_unless_torch
	# the reference holds the memfd all along; the candidate, in the sandbox beside it, answers
	# wrong where it finds it among its descriptors or mappings, or finds no descriptor at all
	run leap-verify --tasks "$TROOT" --seed 3 --task min_max "$ROOT/tests/fixtures/torch/fdpeek.c"
	assert_line --partial "fdpeek.c: pass (task min_max"
}

@test "the reference's float64 grouped convolutions are torch's own to float64's rounding" {
	skip_unless_torch
	# torch's float64 convolution of groups > 1 runs one per group (a depthwise 3x3 took 30
	# times float32's time): torchref computes it over the kernel's taps instead, for the
	# reference and the tolerance alike
	run -0 "$LEAP_TORCH_PYTHON" - "$ROOT/libexec/leap-torchref.py" <<'EOF'
import importlib.util, random, sys
import torch
F = torch.nn.functional
own1, own2 = F.conv1d, F.conv2d
spec = importlib.util.spec_from_file_location("torchref", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
tr.load_torch()
assert F.conv2d is not own2 and F.conv1d is not own1, "torchref left torch's grouped convolutions"
rng, worst = random.Random(1), 0.0
with torch.no_grad():
    for _ in range(100):
        g, cg = rng.choice([2, 3, 8]), rng.choice([1, 1, 2, 3])
        co = g * rng.randint(1, 3) * (1 if cg == 1 else rng.randint(1, 2))
        k, s, p, d = [(rng.randint(1, 4), rng.randint(1, 4)), (rng.randint(1, 3), rng.randint(1, 3)),
                      (rng.randint(0, 2), rng.randint(0, 2)), (rng.randint(1, 2), rng.randint(1, 2))]
        x = torch.randn(rng.randint(1, 3), g * cg, rng.randint(8, 17), rng.randint(8, 17), dtype=torch.float64)
        w = torch.randn(co, cg, *k, dtype=torch.float64)
        b = torch.randn(co, dtype=torch.float64) if rng.random() < 0.5 else None
        for got, want in ((F.conv2d(x, w, b, s, p, d, g), own2(x, w, b, s, p, d, g)),
                          (F.conv1d(x[:, :, 0], w[:, :, 0], b, s[1], p[1], d[1], g),
                           own1(x[:, :, 0], w[:, :, 0], b, s[1], p[1], d[1], g))):
            assert got.shape == want.shape, (got.shape, want.shape)
            worst = max(worst, float(((got - want).abs() / (1 + want.abs())).max()))
    x = torch.randn(2, 4, 9, 9)  # float32: torch's own
    assert torch.equal(F.conv2d(x, torch.ones(4, 1, 3, 3), groups=4), own2(x, torch.ones(4, 1, 3, 3), groups=4))
print("worst %.3g" % worst)
assert worst < 1e-13, worst
EOF
}

@test "sizes in a tuple or list are sizes too; sizes equal in the file are drawn equal where they must be" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	# the hinge loss's (batch, n) predictions times its (batch,) targets broadcast only where n = batch
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$KB"/level1/100_HingeLoss.py "$KB"/level3/1_MLP.py
	jq -e '.cases | all(.batch_size == .input_shape_0)' "$BATS_TEST_TMPDIR/s/100_HingeLoss/task.json"
	run -0 jq -r '.params[] | select(.name == "network_2_weight") | .size' "$BATS_TEST_TMPDIR/s/1_MLP/task.json"
	assert_output "layer_sizes_1 * layer_sizes_0"
}

@test "KernelBench's modules imported agree with the C tasks of kernelbench-l1 and -l2 (a sample)" {
	skip_unless_torch
	[ -d "$KB/level2" ] || skip "no KernelBench checkout at $KB"
	# the whole: make bench-agree
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/kb" "$KB"/level1/19_ReLU.py \
		"$KB"/level1/23_Softmax.py "$KB"/level1/63_conv_standard_2D__square_input__square_kernel.py \
		"$KB"/level2/12_Gemm_Multiply_LeakyReLU.py
	run -0 "$LEAP_TORCH_PYTHON" tasks/kernelbench/agree.py --modules "$BATS_TEST_TMPDIR/kb" \
		--only kb1_019 --only kb1_023 --only kb1_063 --only kb2_012
	assert_line "agree: 4 tasks, 4 agree, 0 disagree, 0 differ by design, 0 not comparable, 0 not imported"
}

@test "a module whose torch process is killed is refused saying so; the modules after it are imported" {
	skip_unless_torch
	run -1 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$ROOT/tests/fixtures/torch/killed.jsonl"
	run -0 jq -r '"\(.task // .id) \(.dir // .refused)"' <<<"$output"
	assert_line "relu $BATS_TEST_TMPDIR/s/relu"
	assert_line "killed the torch process deriving it was ended by signal 9 (Killed)"
	assert_line "gelu $BATS_TEST_TMPDIR/s/gelu"
}

@test "a float the forward takes is a float scalar of the entry, its value in every case" {
	skip_unless_torch
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/r/m" "$ROOT/tests/fixtures/torch/scalar.jsonl"
	run -0 jq -c '[.params[-1], (.cases | map(.s) | unique)]' "$BATS_TEST_TMPDIR/r/m/scale/task.json"
	assert_output '[{"name":"s","type":"float","doc":"forward input 1, a float"},[2.5]]'
	printf 'void module_forward(const float *A, float *out, int M, int N, float s)\n{\n\tfor (long i = 0; i < (long)M * N; i++)\n\t\tout[i] = A[i] * s;\n}\n' \
		>"$BATS_TEST_TMPDIR/ok.c"
	sed 's/A\[i\] \* s/A[i] * 2/' "$BATS_TEST_TMPDIR/ok.c" >"$BATS_TEST_TMPDIR/bad.c"
	run leap-verify --tasks "$BATS_TEST_TMPDIR/r" --seed 6 --task scale "$BATS_TEST_TMPDIR/ok.c" "$BATS_TEST_TMPDIR/bad.c"
	assert_line --partial "ok.c: pass (task scale"
	assert_line --partial "bad.c: mismatch (task scale"
	# torch-eager's forward gets the float too (it once read it as a size: "returned 3")
	timed_against_eager "$BATS_TEST_TMPDIR/r" scale "$BATS_TEST_TMPDIR/ok.c"
}

@test "a tensor a module holds in a plain attribute is an input, set before each call" {
	skip_unless_torch
	# forward replaces self.h: the reference sets it from leap's drawn values before every call
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/r/m" "$ROOT/tests/fixtures/torch/held.jsonl"
	run -0 jq -c '[.params[] | .name]' "$BATS_TEST_TMPDIR/r/m/held/task.json"
	assert_output '["x","fc_weight","fc_bias","h","out","batch_size","features"]'
	cat >"$BATS_TEST_TMPDIR/held.c" <<'EOF'
#include <math.h>
void module_forward(const float *x, const float *w, const float *b, const float *h, float *out, int n, int f)
{
	for (int i = 0; i < n; i++)
		for (int o = 0; o < f; o++) {
			double s = b[o];
			for (int k = 0; k < f; k++)
				s += ((double)x[i * f + k] + h[i * f + k]) * w[o * f + k];
			out[i * f + o] = (float)(2 * tanh(s));
		}
}
EOF
	run leap-verify --tasks "$BATS_TEST_TMPDIR/r" --seed 7 --task held "$BATS_TEST_TMPDIR/held.c"
	assert_line --partial "held.c: pass (task held"
	# torch-eager sets self.h before each call as the reference does, after choosing its
	# threads (whose trial forwards replace self.h): never a mismatch of the right candidate
	timed_against_eager "$BATS_TEST_TMPDIR/r" held "$BATS_TEST_TMPDIR/held.c"
}

@test "a network that float32 cannot follow at shrunk sizes runs at the file's sizes alone" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	# ResNet18 over a shrunk image: BatchNorms over two values a channel by its last stage
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$KB"/level3/9_ResNet18.py
	run -0 jq -c '[(.cases | length), .cases[0].input_shape_2, .atol]' "$BATS_TEST_TMPDIR/s/9_ResNet18/task.json"
	assert_output '[1,224,0.0001]'
}

@test "KernelBench's Mamba2 modules (level 3's 48 and 49) are tasks where torch's Python has einops" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	"$LEAP_TORCH_PYTHON" -c 'import einops' 2>/dev/null ||
		skip "no einops beside torch: tests/trainers/venvs.sh installs tests/trainers/requirements-modules.txt"
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$KB"/level3/48_Mamba2ReturnY.py \
		"$KB"/level3/49_Mamba2ReturnFinalState.py
	[ "$(jq -s 'map(select(.dir)) | length' <<<"$output")" = 2 ]
}

@test "a module that imports a package torch's Python lacks is refused naming the package" {
	skip_unless_torch
	run -1 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$ROOT/tests/fixtures/torch/missing.jsonl"
	run -0 jq -r .refused <<<"$output"
	assert_output "it imports leap_no_such_package, which this Python (LEAP_TORCH_PYTHON) cannot import: install it beside torch"
}

@test "a module whose forward calls its layers through a closure is a task: its float64 and float32 copies are its own" {
	skip_unless_torch
	[ -d "$KB/level3" ] || skip "no KernelBench checkout at $KB"
	# the MiniGPT block keeps its MLP in a lambda over its own layers: a deep copy of the module
	# shares the lambda, and the copy's forward ran the original's layers in the other precision
	run -0 --separate-stderr leap-task --import "$BATS_TEST_TMPDIR/s" "$KB"/level3/44_MiniGPTBlock.py
	jq -e '.dir' <<<"$output"
}
