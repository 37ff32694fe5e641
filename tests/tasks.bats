# tasks.bats - the bundled task suite is complete, loads, and every task is fair (make lint-tasks).
load helpers

CHECK="$FIXTURES/tasks/check-task.sh"

# The folders of leap's own suite (tasks/ID/); the suite folders beside them (tasks/kernelbench-l1/)
# are linted by tests/kernelbench.bats.
own_tasks() {
	for f in tasks/*/task.json; do echo "${f%task.json}"; done
}

setup() {
	cd "$ROOT"
	WORK="$BATS_TEST_TMPDIR/work"
	mkdir -p "$WORK"
}

@test "tasks: every folder of the suite loads and validates" {
	run -0 bash -c 'leap-task --check $(dirname tasks/*/task.json) > "$1/check.jsonl"' _ "$WORK"
	run -0 jq -s 'length' "$WORK/check.jsonl"
	[ "$output" -eq "$(own_tasks | wc -l)" ]
	run -0 jq -s '[.[] | select(.error)] | length' "$WORK/check.jsonl"
	assert_output 0
}

@test "tasks: at least 30 tasks over the three levels" {
	run -0 bash -c 'leap-task --all > "$1/all.jsonl"' _ "$WORK"
	run -0 jq -s 'length' "$WORK/all.jsonl"
	[ "$output" -ge 30 ]
	for level in 1 2 3; do
		run -0 jq -s "[.[] | select(.level == $level)] | length" "$WORK/all.jsonl"
		[ "$output" -ge 5 ] || fail "level $level has only $output tasks"
	done
}

@test "tasks: each has reference.c, baseline.cu, bytes, flops, a cpu benchmark case, 3-4 cases, ranges and a fixture solution" {
	bad=""
	for d in $(own_tasks); do
		id=$(basename "$d")
		[ -s "$d/reference.c" ] && [ -s "$d/baseline.cu" ] || bad="$bad $id:files"
		jq -e '.bytes and .flops and .bench_cpu and (.ranges | length > 0) and (.cases | length >= 3 and length <= 4)' \
			"$d/task.json" >/dev/null ||
			bad="$bad $id:fields"
		[ -s "$FIXTURES/tasks/$id/solution.c" ] || bad="$bad $id:solution"
		! cmp -s "$d/reference.c" "$FIXTURES/tasks/$id/solution.c" || bad="$bad $id:solution-is-the-reference"
		head -1 "$d/reference.c" | grep -q "^/\* $id reference: " || bad="$bad $id:reference-header"
		head -1 "$d/baseline.cu" | grep -q "^// $id baseline: " || bad="$bad $id:baseline-header"
	done
	[ -z "$bad" ] || fail "incomplete tasks:$bad"
}

@test "tasks: no solution for tests lives in the suite a model sees" {
	# tasks/kernelbench/ is the KernelBench suites' generator, which writes the fixture solutions
	# under tests/: it holds no task, and make install leaves it out (build.bats)
	run -0 bash -c 'find tasks -path tasks/kernelbench -prune -o -type f ! -name task.json ! -name reference.c ! -name baseline.cu -print'
	assert_output ""
	run -0 find tasks/kernelbench -name task.json
	assert_output ""
}

@test "tasks: every task naming an operator of a family declares the family, or its notes say why not" {
	run -0 python3 "$FIXTURES/patterns/families-lint.py" $(own_tasks)
	# the lint finds a task that names softmax and declares nothing
	mkdir -p "$WORK/t/softmax"
	cp tasks/softmax/reference.c "$WORK/t/softmax/"
	jq 'del(.families)' tasks/softmax/task.json >"$WORK/t/softmax/task.json"
	run -1 python3 "$FIXTURES/patterns/families-lint.py" "$WORK/t/softmax"
	assert_output "softmax: names 'softmax' but declares no family exp"
}

@test "tasks: every task checks a case of every remainder of a size modulo 64 (32 where its range is narrower)" {
	# 32 only where the scalar's range ends below 63: 64 would have remainders with no value
	run -0 bash -c 'leap-task --all | jq -r -f "$1"' _ "$FIXTURES/patterns/residues.jq"
	assert_output ""
}

# The two fairness tests share their builds (check-task.sh builds a task once per directory).
FAIR="$BATS_FILE_TMPDIR/fair"

@test "tasks: every task is fair, at its listed sizes and at sizes drawn from its ranges: the fixture solution passes, zeros, constants and another seed's output fail" {
	failed=""
	for d in $(own_tasks); do
		id=$(basename "$d")
		if ! "$CHECK" "$id" "$FAIR" >"$WORK/$id.log" 2>&1; then
			failed="$failed $id"
			grep -E "FAIL|error" "$WORK/$id.log" | head -5
		fi
	done
	[ -z "$failed" ] || fail "unfair or broken tasks:$failed"
}

@test "tasks: every task is fair under --tolerance kernelbench (atol = rtol = 1e-4 in fp32) too" {
	failed=""
	for d in $(own_tasks); do
		id=$(basename "$d")
		if ! "$CHECK" --tolerance kernelbench "$id" "$FAIR" >"$WORK/$id.log" 2>&1; then
			failed="$failed $id"
			grep -E "FAIL|error" "$WORK/$id.log" | head -5
		fi
		# the checker applied KernelBench's tolerance: atol and rtol at least 1e-4
		sed -n "s/^task $id: .* tolerance kernelbench (atol \([0-9.e-]*\), rtol \([0-9.e-]*\)).*/\1 \2/p" "$WORK/$id.log" |
			awk '{ ok = $1 >= 0.0001 && $2 >= 0.0001 } END { exit !ok }' || failed="$failed $id:not-kernelbench"
	done
	[ -z "$failed" ] || fail "tasks unfair under KernelBench's tolerance:$failed"
}

@test "tasks: each names its precision class, GEMM and convolution tf32 and the rest fp32" {
	bad=""
	for d in $(own_tasks); do
		id=$(basename "$d")
		p=$(jq -r '.precision // "missing"' "$d/task.json")
		case $id in
		matmul | matmul_* | linear_gelu | mlp_block | rmsnorm_linear | conv* | attention | causal_attention) want=tf32 ;;
		*) want=fp32 ;;
		esac
		[ "$p" = "$want" ] || bad="$bad $id:$p"
	done
	[ -z "$bad" ] || fail "precision classes:$bad"
}

@test "tasks: the checker flags a task of precision tf32 whose tolerance TF32 cannot meet" {
	export LEAP_TASKS="$FIXTURES/tasks/unfair"
	run -1 "$CHECK" --drawn 0 --solution "$FIXTURES/tasks/matmul/solution.c" matmul_tf32_tight "$WORK"
	assert_output --partial "FAIL: matmul_tf32_tight case 0 trial 0: a TF32 computation (float inputs rounded to 10 mantissa bits) is outside the tolerance of a task of precision tf32"
	refute_output --partial "the solution is outside the tolerance"
}

@test "tasks: the checker flags, under --tolerance kernelbench-v0.1 only, a task whose outputs are within 1e-2 of zero" {
	export LEAP_TASKS="$FIXTURES/tasks/unfair"
	run -0 "$CHECK" --drawn 0 --solution "$FIXTURES/tasks/vector_add/solution.c" vector_add_small "$WORK"
	assert_output --partial "tolerance task (atol 1e-06, rtol 1e-06)"
	run -1 "$CHECK" --drawn 0 --tolerance kernelbench-v0.1 --solution "$FIXTURES/tasks/vector_add/solution.c" vector_add_small "$WORK"
	assert_output --partial "FAIL: vector_add_small case 0 trial 0: a candidate writing zeros passes"
	assert_output --partial "tolerance kernelbench-v0.1 (atol 0.01, rtol 0.01)"
}

@test "tasks: a case of fewer than 16 output elements needs a trivial answer to fail in one trial, not in all" {
	# matmul n = 1 is one element: within 2e-2 (tf32) it meets zeros in some trials, never in all
	run -0 "$CHECK" --drawn 0 matmul "$WORK"
	assert_output --regexp "matmul case 0 trial [0-9]+: .*(zeros PASS|mean PASS|other seed PASS)"
	refute_output --partial FAIL
}

@test "tasks: the checker rejects a solution that misses an element" {
	run -1 "$CHECK" --solution "$FIXTURES/tasks/wrong/vector_add_short.c" vector_add "$WORK"
	assert_output --partial "FAIL: vector_add case 0 trial 0: the solution is outside the tolerance"
}

@test "tasks: the checker rejects a solution that writes into its input" {
	run -1 "$CHECK" --solution "$FIXTURES/tasks/wrong/softmax_clobber.c" softmax "$WORK"
	assert_output --partial "the solution modified an input"
	refute_output --partial "the solution is outside the tolerance"
}

@test "tasks: the checker rejects a wrong index that only small cases hide" {
	run -1 "$CHECK" --solution "$FIXTURES/tasks/wrong/matmul_transposed.c" matmul "$WORK"
	assert_output --partial "FAIL: matmul case 1 trial 0: the solution is outside the tolerance"
	refute_output --partial "FAIL: matmul case 0 "
}

@test "tasks: the checker rejects an unrolled loop right only at the listed sizes (n % 8 <= 1)" {
	# passes every listed case (n = 1, 1000, 65537) and fails at drawn sizes
	run -1 "$CHECK" --solution "$FIXTURES/tasks/wrong/vector_add_unroll8.c" vector_add "$WORK"
	assert_output --regexp "FAIL: vector_add drawn case [0-9]+ \{\"n\":[0-9]+\} trial 0: the solution is outside the tolerance"
	refute_output --regexp "FAIL: vector_add case [0-9]"
	run -0 "$CHECK" --drawn 0 --solution "$FIXTURES/tasks/wrong/vector_add_unroll8.c" vector_add "$WORK"
}

@test "tasks: the checker rejects a kernel exact only at the listed sizes" {
	run -1 "$CHECK" --solution "$FIXTURES/tasks/wrong/softmax_listed_only.c" softmax "$WORK"
	assert_output --regexp "FAIL: softmax drawn case [0-9]+ \{\"rows\":[0-9]+,\"cols\":[0-9]+\} trial 0: the solution is outside the tolerance"
	refute_output --regexp "FAIL: softmax case [0-9]"
}

@test "tasks: the checker flags ranges that reach a size where a constant passes" {
	export LEAP_TASKS="$FIXTURES/tasks/unfair"
	run -1 "$CHECK" --solution "$LEAP_TASKS/softmax_cols1/reference.c" softmax_cols1 "$WORK"
	assert_output --partial 'FAIL: softmax_cols1 smallest case {"rows":1,"cols":1} trial 0: a candidate writing 1 passes'
	refute_output --regexp "FAIL: softmax_cols1 case [0-9]"
}

@test "tasks: the checker flags a task whose output does not depend on its input" {
	export LEAP_TASKS="$FIXTURES/tasks/unfair"
	run -1 "$CHECK" --solution "$LEAP_TASKS/softmax_one/reference.c" softmax_one "$WORK"
	assert_output --partial "a candidate writing 1 passes"
	assert_output --partial "the reference output of another seed passes"
}

@test "tasks: the checker flags a task where zeros pass within the tolerance" {
	export LEAP_TASKS="$FIXTURES/tasks/unfair"
	run -1 "$CHECK" --solution "$LEAP_TASKS/matmul_small/reference.c" matmul_small "$WORK"
	assert_output --partial "a candidate writing zeros passes"
}

@test "tasks: every baseline.cu compiles with nvcc for sm_90 against its prelude and links its baseline_libraries" {
	skip_unless_nvcc
	nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
	export nvcc WORK
	run bash -c 'ls tasks/*/task.json | cut -d/ -f2 | xargs -P 2 -I{} sh -c '\''
		leap-task --shim cuda {} | sed -n "/---- prelude ----/,/---- shim ----/p" | sed "1d;\$d" >"$WORK/{}.h" &&
		libs=$(jq -r "(.baseline_libraries // [])[] | \"-l\" + ." tasks/{}/task.json) &&
		"$nvcc" -shared -Xcompiler -fPIC -arch=sm_90 -Werror all-warnings -include "$WORK/{}.h" -o "$WORK/{}.so" \
			tasks/{}/baseline.cu $libs -Xlinker --no-undefined ||
		echo "FAILED {}"'\'''
	refute_output --partial FAILED
	[ "$(ls "$WORK"/*.so | wc -l)" -eq "$(own_tasks | wc -l)" ]
	run -0 readelf -d "$WORK/matmul.so"
	assert_output --partial "libcublas.so"
	run -0 readelf -d "$WORK/conv2d.so"
	assert_output --partial "libcudnn.so"
}

@test "tasks: GEMM and convolution tasks have vendor baselines naming their library, the rest kernels without cudaMalloc" {
	bad=""
	for d in $(own_tasks); do
		id=$(basename "$d")
		kind=$(jq -r '.baseline_kind // "kernel"' "$d/task.json")
		libs=$(jq -r '(.baseline_libraries // []) | join(",")' "$d/task.json")
		case $id in
		matmul | matmul_rect | matmul_nt | matmul_batched | linear_gelu | mlp_block | swiglu_mlp | rmsnorm_linear) want=vendor:cublas ;;
		conv1d | conv2d | conv2d_silu) want=vendor:cudnn ;;
		*) want=kernel: ;;
		esac
		[ "$kind:$libs" = "$want" ] || bad="$bad $id:$kind:$libs"
		if [ "$kind" = vendor ]; then
			grep -q "#include <${libs}" "$d/baseline.cu" || bad="$bad $id:no-include"
		else
			! grep -qE "#include <cu(blas|dnn)" "$d/baseline.cu" || bad="$bad $id:kernel-includes-a-library"
			! grep -q "cudaMalloc" "$d/baseline.cu" || bad="$bad $id:cudaMalloc-in-a-kernel-baseline"
		fi
	done
	[ -z "$bad" ] || fail "baseline kinds:$bad"
}

@test "tasks: every baseline.cu passes its task on the GPU" {
	skip_unless_gpu
	command -v leap-verify >/dev/null || skip "leap-verify is not built in this checkout"
	failed=""
	# a vendor baseline is verified as a candidate of a task that allows its libraries
	cp -R tasks "$WORK/suite"
	for d in $(own_tasks); do
		id=$(basename "$d")
		jq '. + {libraries: (.baseline_libraries // [])}' "$d/task.json" >"$WORK/suite/$id/task.json"
		leap-verify --tasks "$WORK/suite" --task "$id" "$d/baseline.cu" >"$WORK/$id.txt" 2>&1 ||
			{ failed="$failed $id"; head -3 "$WORK/$id.txt"; }
	done
	[ -z "$failed" ] || fail "baselines that do not pass:$failed"
}
