#!/usr/bin/env bats
# kernelbench.bats - KernelBench's suites (tasks/kernelbench-l1, -l2): generated in step, complete,
# fair (the lint), their baselines compile, every reference agrees with PyTorch (the oracle), and
# the programs find them as suites.
#
# Cost: the lint and the nvcc check run on a sample of tasks (one per family of operators) in every
# run, on every task under `make lint-tasks` (LEAP_LINT_ALL=1); the torch oracle runs on every
# task wherever torch is installed (python3, or $LEAP_TORCH_PYTHON), and skips saying so where not.
load helpers

# One task per family of operators and per kind of baseline: what a change to the generator breaks
# first shows in one of these.
SAMPLE="kb1_019_relu kb1_012_diag_matmul kb1_023_softmax kb1_051_argmax_dim kb1_035_groupnorm
	kb1_037_frobenius_norm kb1_090_cumprod kb1_095_cross_entropy_loss kb1_043_maxpool3d
	kb1_014_upper_triangular_matmul kb1_072_conv_transpose3d_strided_padded_grouped kb1_097_scaled_dot_product_attention
	kb2_011_convtranspose2d_batchnorm_tanh_maxpool_groupnorm kb2_038_avgpool_convtranspose3d_clamp_softmax_mul
	kb2_075_linear_groupnorm_min_biasadd kb2_098_linear_avgpool_gelu_scale_max"

setup() {
	cd "$ROOT"
	WORK="$BATS_TEST_TMPDIR/work"
	mkdir -p "$WORK"
}

# the ids the run checks: all under LEAP_LINT_ALL=1, else the sample (and the level-2 sample)
lint_ids() {
	if [ -n "${LEAP_LINT_ALL:-}" ]; then
		leap-task --suite kernelbench-l1 --list
		leap-task --suite kernelbench-l2 --list 2>/dev/null || true
	else
		echo $SAMPLE | tr ' ' '\n'
	fi
}

torch_python() {
	local py=${LEAP_TORCH_PYTHON:-python3}
	"$py" -c 'import torch' >/dev/null 2>&1 || return 1
	echo "$py"
}

@test "kernelbench: the suites are in step with their generator (python3 tasks/kernelbench/gen.py --check)" {
	run -0 python3 tasks/kernelbench/gen.py --check
}

# KernelBench's 73 names groups=4, but its get_init_inputs() lands that 4 on __init__'s unused
# output_padding: what it runs, and so what its published numbers measure, is groups=1.
@test "kernelbench: kb1_073 is the convolution KernelBench runs (groups 1), its notes say why it is named grouped" {
	run -0 python3 -c 'import sys, json; sys.path.insert(0, "tasks/kernelbench"); import level1
t = [t for t in level1.convs() if t.num == 73][0]; print(json.dumps(t.task_json()))'
	printf '%s\n' "$output" >"$WORK/73.json"
	run -0 jq -r '.params[] | select(.name == "weight") | .size' "$WORK/73.json"
	assert_output 'in_channels*out_channels*3*3*3'
	run -0 jq -r '.flops' "$WORK/73.json"
	assert_output '2*batch_size*in_channels*depth*height*width*out_channels*27'
	run -0 jq -r '.prompt' "$WORK/73.json"
	assert_output --partial 'nn.ConvTranspose3d(in_channels, out_channels, kernel_size=3, stride=2, padding=1, bias=False)'
	refute_output --partial 'groups=4'
	run -0 jq -r '.notes' "$WORK/73.json"
	assert_output --partial 'output_padding'
	assert_output --partial 'KernelBench runs groups = 1'
	# the committed task is the generator's (the first test checks every file; this one by name)
	run -0 jq -r '.flops' tasks/kernelbench-l1/kb1_073_conv_transpose3d_strided_grouped/task.json
	assert_output '2*batch_size*in_channels*depth*height*width*out_channels*27'
}

@test "kernelbench: all 100 level-1 problems are tasks, each named after its problem" {
	run -0 leap-task --suite kernelbench-l1 --all
	printf '%s\n' "$output" >"$WORK/l1.jsonl"
	run -0 jq -s 'length' "$WORK/l1.jsonl"
	assert_output 100
	# ids kb1_NNN_name, NNN the problem's number, 1 to 100 once each
	run -0 jq -r '.id' "$WORK/l1.jsonl"
	[ "$(sed -n 's/^kb1_\([0-9][0-9][0-9]\)_[a-z0-9_]*$/\1/p' <<<"$output" | sort -n | uniq | wc -l)" -eq 100 ]
	[ "$(sed -n 's/^kb1_\([0-9][0-9][0-9]\)_.*/\1/p' <<<"$output" | sort -n | tail -1)" = 100 ]
	# the problem's own file name in the prompt and the tags, the suite said
	for d in tasks/kernelbench-l1/*/; do
		jq -e '(.tags | index("kernelbench")) and (.prompt | startswith("KernelBench level 1, problem "))
			and (.tags[2] as $f | .prompt | contains("(" + $f + ")"))' "$d/task.json" >/dev/null ||
			fail "$d: no problem name"
	done
	run -0 jq -r '.suite' "$WORK/l1.jsonl"
	[ "$(sort -u <<<"$output")" = kernelbench-l1 ]
}

# A prompt that explains BatchNorm's statistics to a model that has none sends it looking for one.
@test "kernelbench: a level-2 prompt speaks of BatchNorm's statistics exactly where the problem has a BatchNorm" {
	for d in tasks/kernelbench-l2/*/; do
		jq -e '(.tags[2] | test("BatchNorm")) == (.prompt | test("BatchNorm|batch.s statistics"))' "$d/task.json" \
			>/dev/null || fail "$d: BatchNorm in the prompt and in the problem's name disagree"
	done
	run -0 jq -r .prompt tasks/kernelbench-l2/kb2_014_gemm_div_sum_scale/task.json
	refute_output --partial 'BatchNorm'
	run -0 jq -r .prompt tasks/kernelbench-l2/kb2_073_conv2d_batchnorm_scale/task.json
	assert_output --partial "never calls model.eval(): BatchNorm uses the batch's statistics."
}

@test "kernelbench: level 2's problems are tasks but for the three excluded, each named with its reason" {
	run -0 leap-task --suite kernelbench-l2 --list
	[ "${#lines[@]}" -eq 97 ]
	# every number from 1 to 100 but the excluded
	run -0 bash -c 'comm -13 <(leap-task --suite kernelbench-l2 --list | sed -n "s/^kb2_\([0-9]*\)_.*/\1/p" | sed "s/^0*//" | sort) <(seq 1 100 | sort) | sort -n | tr "\n" " "'
	assert_output "66 80 83 "
	run -0 python3 -c 'import sys; sys.path.insert(0, "tasks/kernelbench"); import level2; print(" ".join(map(str, sorted(level2.EXCLUDED))))'
	assert_output "66 80 83"
}

@test "kernelbench: every task loads; no solution and nothing but the three files lies in a suite" {
	run -0 bash -c 'leap-task --check tasks/kernelbench-l*/*/ > "$1/check.jsonl"' _ "$WORK"
	run -0 jq -s '[.[] | select(.error)] | length' "$WORK/check.jsonl"
	assert_output 0
	run -0 find tasks/kernelbench-l* -type f ! -name task.json ! -name reference.c ! -name baseline.cu
	assert_output ""
	for d in tasks/kernelbench-l*/*/; do
		[ -s "tests/fixtures/tasks/$(basename "$(dirname "$d")")/$(basename "$d")/solution.c" ] || fail "$d: no solution"
	done
}

@test "kernelbench: every task whose reference calls exp, tanh or erf declares family exp, or its notes say why not" {
	run -0 python3 "$FIXTURES/patterns/families-lint.py" --reference-only tasks/kernelbench-l1/*/ tasks/kernelbench-l2/*/
}

@test "kernelbench: the generator writes each family from its operators and draws its hard region" {
	run -0 bash -c 'leap-task --suite kernelbench-l1 --all; leap-task --suite kernelbench-l2 --all'
	fams() { jq -r --arg id "$1" 'select(.id == $id) | [(.families | join(",")), (.params[] | select(.name == "'"${2:-x}"'") | .dist | join(","))] | join(" ")' <<<"$output"; }
	assert_equal "$(fams kb1_023_softmax)" "exp normal,uniform,large,logits"
	assert_equal "$(fams kb1_040_layernorm)" "norm normal,uniform,small,large,near_one"
	assert_equal "$(fams kb1_051_argmax_dim)" "tie normal,uniform,large,ties"
	# level 2 keeps its products from large magnitudes: large_int, exact in fp32, takes their place
	assert_equal "$(fams kb2_099_linear_gelu_softmax)" "exp normal,uniform,large_int"
	# a norm of an intermediate: no input pattern reaches it, and the notes say so
	jq -e '(.families // [] | index("norm") | not) and (.notes | test("not of family norm: "))' \
		tasks/kernelbench-l2/kb2_073_conv2d_batchnorm_scale/task.json
}

@test "kernelbench: every task checks a case of every remainder of a size modulo 64, as leap's own tasks do" {
	run -0 bash -c 'for s in kernelbench-l1 kernelbench-l2; do leap-task --suite $s --all; done | jq -r -f "$1"' _ \
		"$FIXTURES/patterns/residues.jq"
	assert_output ""
	# the size a vector runs along: a row's length, a convolution's width (its range widened to
	# hold every remainder), a linear layer's output features (the input's range is too short)
	run -0 bash -c 'for s in kernelbench-l1 kernelbench-l2; do leap-task --suite $s --all; done |
		jq -r "select(.id | test(\"^kb1_023|^kb1_063|^kb2_099\")) | [.id, (.residues | tostring), (.ranges.width // [] | tostring)] | @tsv"'
	assert_output "$(printf '%s\t%s\t%s\n' kb1_023_softmax '{"dim":64}' '[]' \
		kb1_063_conv2d_square '{"width":64}' '[3,66]' kb2_099_linear_gelu_softmax '{"out_features":64}' '[]')"
}

@test "kernelbench: baselines are cuBLAS for matrix products, cuDNN for convolutions, kernels elsewhere" {
	bad=""
	for d in tasks/kernelbench-l1/*/; do
		id=$(basename "$d")
		kind=$(jq -r '.baseline_kind + ":" + ((.baseline_libraries // []) | join(","))' "$d/task.json")
		case $id in
		kb1_00[1-4]_* | kb1_00[6-9]_* | kb1_01[013-8]_* | kb1_097_*) want=vendor:cublas ;;
		kb1_05[04-9]_* | kb1_0[67]?_* | kb1_08[0-7]_*) want=vendor:cudnn ;;
		*) want=kernel: ;;
		esac
		[ "$kind" = "$want" ] || bad="$bad $id:$kind"
		# a vendor baseline includes its library; a kernel one calls none
		if [ "$want" = kernel: ]; then
			! grep -qE "#include <cu(blas|dnn)" "$d/baseline.cu" || bad="$bad $id:includes-a-library"
		fi
	done
	# level 2: the front layer's library, cuDNN for a convolution, cuBLAS for a linear layer
	for d in tasks/kernelbench-l2/*/; do
		id=$(basename "$d")
		kind=$(jq -r '.baseline_kind + ":" + ((.baseline_libraries // []) | join(","))' "$d/task.json")
		case $id in
		*conv*) want=vendor:cudnn ;;
		*) want=vendor:cublas ;;
		esac
		[ "$kind" = "$want" ] || bad="$bad $id:$kind"
	done
	[ -z "$bad" ] || fail "baseline kinds:$bad"
}

@test "kernelbench: each benchmark case's input set (inputs and output) fits 16 GiB, one H200's budget" {
	for d in tasks/kernelbench-l*/*/; do
		run -0 leap-task "$(basename "$d")"
		b=$(jq '.bench.bytes' <<<"$output")
		[ "$b" -le $((16 << 30)) ] || fail "$d: $b bytes"
	done
}

@test "kernelbench: the sample (every task under make lint-tasks) is fair under its own tolerance and KernelBench's" {
	run tasks/kernelbench/lint.sh "$WORK" $(lint_ids)
	[ "$status" -eq 0 ] || fail "$(grep -A3 FAIL <<<"$output")"
	[ "$(grep -c '^ok ' <<<"$output")" -eq $((2 * $(lint_ids | wc -l))) ]
}

@test "kernelbench: the sample's baselines (every one under make lint-tasks) compile with nvcc and link their libraries" {
	skip_unless_nvcc
	nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
	export nvcc WORK
	run bash -c 'xargs -P 2 -I{} sh -c '\''
		d=$(leap-task {} | jq -r .dir) &&
		leap-task --shim cuda {} | sed -n "/---- prelude ----/,/---- shim ----/p" | sed "1d;\$d" >"$WORK/{}.h" &&
		libs=$(jq -r "(.baseline_libraries // [])[] | \"-l\" + ." "$d/task.json") &&
		"$nvcc" -shared -Xcompiler -fPIC -arch=sm_90 -Werror all-warnings -include "$WORK/{}.h" -o "$WORK/{}.so" \
			"$d/baseline.cu" $libs -Xlinker --no-undefined ||
		echo "FAILED {}"'\''' < <(lint_ids)
	refute_output --partial FAILED
	[ "$(ls "$WORK"/*.so | wc -l)" -eq "$(lint_ids | wc -l)" ]
}

@test "kernelbench: the oracle, PyTorch's own operators in float64, agrees with every reference" {
	py=$(torch_python) || skip "torch is not installed for ${LEAP_TORCH_PYTHON:-python3} (pip install torch; or set LEAP_TORCH_PYTHON=/path/to/python with torch)"
	run "$py" tasks/kernelbench/oracle.py
	[ "$status" -eq 0 ] || fail "$(grep -v '^ok ' <<<"$output")"
	n=$(cat tests/fixtures/kernelbench/torch.jsonl | wc -l)
	assert_output --partial "oracle: $n tasks, $n passed, 0 failed"
}

@test "kernelbench: the oracle fails a reference that is wrong, naming the element" {
	py=$(torch_python) || skip "torch is not installed for ${LEAP_TORCH_PYTHON:-python3}"
	mkdir -p "$WORK/root/kernelbench-l1"
	cp -R tasks/kernelbench-l1/kb1_036_rmsnorm "$WORK/root/kernelbench-l1/"
	# the mean of squares taken over R - 1 channels: right when there is one, wrong otherwise
	sed -i 's|s / R + 1e-05|s / (R > 1 ? R - 1 : 1) + 1e-05|' "$WORK/root/kernelbench-l1/kb1_036_rmsnorm/reference.c"
	! cmp -s "$WORK/root/kernelbench-l1/kb1_036_rmsnorm/reference.c" tasks/kernelbench-l1/kb1_036_rmsnorm/reference.c
	run -1 "$py" tasks/kernelbench/oracle.py --tasks "$WORK/root" --only kb1_036
	assert_output --regexp "FAIL kb1_036_rmsnorm: case [0-9] .*: element [0-9]+: reference"
	assert_output --partial "oracle: 1 tasks, 0 passed, 1 failed"
}

@test "kernelbench: leap-prompt --suite takes one suite whole; --all and --level stay within it" {
	run -0 --separate-stderr leap-prompt --backend cpu --suite kernelbench-l1 --all
	assert_equal "$(jq -r .task <<<"$output")" "$(leap-task --suite kernelbench-l1 --list)"
	[ "$(jq -r .task <<<"$output" | wc -l)" -eq 100 ]
	# without --suite, --all is leap's own suite: no KernelBench task
	run -0 --separate-stderr leap-prompt --backend cpu --all
	refute_output --partial '"task":"kb1_'
	assert_equal "$(jq -r .task <<<"$output")" "$(leap-task --list)"
	run -2 --separate-stderr leap-prompt --backend cpu --suite kernelbench-l1 --level 3 --all
	[[ "$stderr" == *"--level 3: no task of that level in suite 'kernelbench-l1'"* ]]
	run -2 --separate-stderr leap-prompt --backend cpu --suite nope --all
	[[ "$stderr" == *"--suite: no suite 'nope' in "*"(its suites: leap, kernelbench-l1"* ]]
	# an id of another suite is not taken from it
	run -1 --separate-stderr leap-prompt --backend cpu --suite kernelbench-l1 softmax
	[[ "$stderr" == *"task 'softmax' not found in suite 'kernelbench-l1'"* ]]
	run -0 --separate-stderr leap-prompt --backend cpu --suite leap softmax
	run -0 leap-task --suites
	assert_line --index 0 leap
	assert_line kernelbench-l1
}

@test "kernelbench: the programs find a suite's task by its id: a cpu answer compiles and verifies" {
	cp tests/fixtures/tasks/kernelbench-l1/kb1_023_softmax/solution.c "$WORK/softmax.c"
	run -0 leap-verify --task kb1_023_softmax "$WORK/softmax.c"
	assert_output --partial ": pass (task kb1_023_softmax, cpu,"
	leap-prompt --backend cpu kb1_019_relu >"$WORK/p.jsonl"
	jq -c --rawfile c tests/fixtures/tasks/kernelbench-l1/kb1_019_relu/solution.c '. + {completion: ("```c\n" + $c + "```")}' \
		"$WORK/p.jsonl" >"$WORK/c.jsonl"
	run -0 bash -c 'leap-compile < "$1" | leap-verify' _ "$WORK/c.jsonl"
	[ "$(jq -r .status <<<"$output")" = pass ]
}

@test "kernelbench: the sample's baselines (every one under make lint-tasks) pass their tasks on the GPU" {
	skip_unless_gpu
	failed=""
	# a vendor baseline is verified as a candidate of a task that allows its libraries
	for id in $(lint_ids); do
		d=$(leap-task "$id" | jq -r .dir)
		s=$(basename "$(dirname "$d")")
		mkdir -p "$WORK/root/$s"
		cp -R "$d" "$WORK/root/$s/"
		jq '. + {libraries: (.baseline_libraries // [])}' "$d/task.json" >"$WORK/root/$s/$id/task.json"
		leap-verify --tasks "$WORK/root" --task "$id" "$d/baseline.cu" >"$WORK/$id.txt" 2>&1 ||
			{ failed="$failed $id"; head -3 "$WORK/$id.txt"; }
	done
	[ -z "$failed" ] || fail "baselines that do not pass:$failed"
}
