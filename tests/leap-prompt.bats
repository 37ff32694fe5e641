#!/usr/bin/env bats
# leap-prompt.bats - turn-1 records: shape, groups, prototypes per backend, task sources, errors.
load helpers

@test "G=4 over three tasks gives 12 well-formed records in order" {
	run -0 --separate-stderr leap-prompt --backend cuda --group-size 4 vector_add softmax matmul
	assert_equal "$(wc -l <<<"$output")" 12
	assert_equal "$(jq -c '[.task, .group, .sample, .turn, .backend]' <<<"$output" | head -n 5 | tr '\n' ' ')" \
		'["vector_add","vector_add",0,1,"cuda"] ["vector_add","vector_add",1,1,"cuda"] ["vector_add","vector_add",2,1,"cuda"] ["vector_add","vector_add",3,1,"cuda"] ["softmax","softmax",0,1,"cuda"] '
	assert_equal "$(jq -r '.messages | map(.role) | join(",")' <<<"$output" | sort -u)" "system,user"
	# every record passes the record check
	run -0 leap-record --require task,group,sample,turn,backend,messages <<<"$output"
}

@test "the user message states the exact prototype, the memory model and the answer format" {
	run -0 --separate-stderr leap-prompt --backend cuda softmax
	user="$(jq -r '.messages[1].content' <<<"$output")"
	[[ "$user" == *'extern "C" void softmax(const float *x, float *y, int rows, int cols);'* ]]
	[[ "$user" == *"**device** memory"* ]]
	[[ "$user" == *'One fenced ```cuda block'* ]]
	[[ "$user" == *"rows=7, cols=33"* ]]
	[[ "$user" == *"rows=8192, cols=4096"* ]]
}

@test "the cpu backend: C prototype, host memory, c fence, cpu benchmark case" {
	run -0 --separate-stderr leap-prompt --backend cpu matmul
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
	[[ "$stderr" == *"leap-prompt: $BATS_TEST_TMPDIR/ids:5: task 'nope' not found in"* ]]
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

# sizes_fact TASK BACKEND: the size lines the prompt must hold, from task.json: each integer
# scalar's bounds from its "ranges" entry (else its least and greatest listed value) up to the
# speed case's value (bench_cpu on cpu), the checked bounds and the speed case, then which sizes
# the speed case takes beyond the checked bounds.
sizes_fact() {
	jq -r --arg b "$2" '. as $t | (if $b == "cpu" then ($t.bench_cpu // $t.bench) else $t.bench end) as $sp |
		def fmt: if type == "string" then "`\(.)`" else tostring end;
		[.params[] | select((.role // "scalar") == "scalar" and (.type == "int" or .type == "int64")) | .name] |
		map(. as $n | ($t.ranges[$n] // null) as $r | $sp[$n] as $v |
			(if $r != null then (if ($r | type) == "object" then $r.range else $r end)
			 else [([$t.cases[][$n]] | min), ([$t.cases[][$n]] | max)] end) as $s |
			(if ($r | type) == "object" and $r.multiple_of then ", a multiple of \($r.multiple_of | fmt)" else "" end) as $m |
			{n: $n, above: (($s[1] | type) == "number" and $v > $s[1]),
			 line: (if $s[0] == $s[1] and $s[0] == $v then "- `\($n)`: always \($v)"
				else "- `\($n)`: \($s[0] | fmt) to \(if ($s[1] | type) == "number" and $v > $s[1] then $v else $s[1] | fmt end)\($m) (checked: \($s[0] | fmt) to \($s[1] | fmt); speed case: \($v))" end)}) |
		(map(.line) | join("\n")) +
		(map(select(.above) | "`\(.n)`") | if length > 0 then "\nThe speed case goes beyond the checked bounds (\(join(", ")))" else "" end)' \
		"$LEAP_TASKS/$1/task.json"
}

@test "every task's prompt states the facts listed for it (tests/fixtures/leap-prompt/facts), on both backends" {
	local dev="$FIXTURES/leap-prompt/h200.json" failed="" nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
	for d in "$LEAP_TASKS"/*/task.json; do # leap's own suite (its suite folders hold other suites)
		t=$(basename "$(dirname "$d")")
		f="$FIXTURES/leap-prompt/facts/$t"
		[ -f "$f" ] || { failed+="$t: no facts file"$'\n'; continue; }
		# what the speed sentences say of the baselines is what their sources do: the cpu
		# reference is plain C, single-threaded; a vendor baseline calls SGEMM or the
		# convolution in fp32 without TF32
		! grep -Eq 'pragma +omp|pthread|immintrin' "$d/reference.c" || failed+="$t: reference.c is not plain C"$'\n'
		for lib in $(jq -r '(.baseline_libraries // [])[]' "$d/task.json"); do
			case $lib in
			cublas) grep -q 'cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)' "$d/baseline.cu" &&
				grep -Eq 'cublasSgemm(StridedBatched)?\(' "$d/baseline.cu" ;;
			cudnn) grep -q 'CUDNN_FMA_MATH' "$d/baseline.cu" && grep -q 'cudnnConvolutionForward(' "$d/baseline.cu" ;;
			*) false ;;
			esac || failed+="$t: baseline.cu does not call $lib as the prompt says"$'\n'
		done
		for b in cpu cuda; do
			p=$(leap-prompt --backend "$b" --device-info "$dev" "$t" 2>/dev/null | jq -r '.messages[1].content')
			want=$(sizes_fact "$t" "$b")
			[[ "$p" == *"$want"* ]] || failed+="$t/$b: missing: $want"$'\n'
			# every task, not one: may it allocate, and how deep is the stack
			[[ "$p" == *"cratch "*"memory of your own is allowed"* ]] || failed+="$t/$b: no word on scratch memory"$'\n'
			while IFS=$'\t' read -r kind fact; do
				case "$kind" in
				both | "$b") [[ "$p" == *"$fact"* ]] || failed+="$t/$b: missing: $fact"$'\n' ;;
				cudatc) [ "$b" != cuda ] || [ ! -x "$nvcc" ] || [[ "$p" == *"$fact"* ]] ||
					failed+="$t/$b: missing: $fact"$'\n' ;;
				not | "not$b") [[ "$p" != *"$fact"* ]] || failed+="$t/$b: must not say: $fact"$'\n' ;;
				esac
			done <"$f"
		done
	done
	[ -z "$failed" ] || { printf '%s' "$failed"; false; }
}

@test "the cpu prompt states this machine's cores, CPU and compiler when no --device-info is given" {
	run -0 --separate-stderr leap-prompt --backend cpu vector_add
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"Your code runs on the CPU ("*"): $(nproc) core"* ]]
	v=$(cc --version | head -1)
	[[ "$p" == *"It is compiled as one translation unit with "*"${v#* }: \`cc -std=gnu11 -O2"* ]]
	[ -z "$stderr" ]
}

# leap-bench charges a thread's wait for a core to the candidate (the running clock): on a loaded
# machine a parallel kernel's barriers pay for descheduled threads, and the model decides here.
@test "the cpu prompt says the timed cores are shared, and what a thread's wait for one costs a parallel kernel" {
	[ "$(nproc)" -ge 2 ] || skip "one CPU here: the prompt times on one core, and says nothing of sharing"
	run -0 --separate-stderr leap-prompt --backend cpu vector_add
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"OpenMP's default thread count is "*"). Other work may share those cores while your code is timed: the time in which one of your threads runs while another waits for a core is charged to you"* ]] ||
		fail "no shared-cores sentence after the thread count: $(grep -m1 'Your code runs' <<<"$p")"
	[[ "$p" == *"a parallel kernel pays for every barrier at which its threads wait for a descheduled one"* ]]
	# timed on one core, OpenMP's default is one thread: no barrier to speak of
	run -0 --separate-stderr taskset -c 0 leap-prompt --backend cpu vector_add
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"OpenMP's default thread count is 1)"* ]]
	[[ "$p" != *"Other work may share"* ]]
}

# leap-bench checks every call at the speed case, widening the tolerance by the square root of
# how much longer its sums are: the model must know what a float sum may cost there.
@test "the prompt says the tolerance at the speed case: widened with its numbers, or the same" {
	run -0 --separate-stderr leap-prompt --backend cuda matmul
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"The outputs of every call at the speed case are checked too, with the tolerance widened 5.61 times, to |out - ref| <= 0.112 + 0.0561 * |ref|: its sums are about 31.5 times longer than the checked cases'"* ]] ||
		fail "matmul: $(grep -o 'The outputs of every call[^:]*' <<<"$p")"
	# cumsum at cuda's 16384 columns: the same 1e-3 + 1e-4, which a float running sum meets
	run -0 --separate-stderr leap-prompt --backend cuda cumsum
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"|out - ref| <= 0.001 + 0.0001 * |ref|"* ]]
	[[ "$p" == *"The outputs of every call at the speed case are checked too, with the same tolerance."* ]]
	[[ "$p" == *"a running sum in float along a row stays within it up to 16384 columns"* ]]
	[[ "$p" == *"Speed is measured on rows=4096, cols=16384."* ]]
}

@test "cuda without --device-info: the prompt names no GPU and says so once on stderr" {
	run -0 --separate-stderr leap-prompt --backend cuda -g 3 vector_add
	[ "$(grep -c 'no GPU' <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *"give --device-info FILE"* ]]
	p=$(jq -r '.messages[1].content' <<<"$output" | head -50)
	[[ "$p" != *"Your code runs on"* ]]
	# the model is told that, and the rule of the arch flag rather than leap-compile's
	# no-GPU default as if it were the build's
	[[ "$p" == *"The GPU that will run your code is not known to this prompt (no GPU was visible where it was written): do not assume its model, SM count or memory"* ]]
	if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
		[[ "$p" == *'`nvcc -Xcompiler -fPIC -O3 ARCH`, where ARCH is the flag for the GPU leap-compile finds: `-gencode=arch=compute_90a,code=sm_90a` on compute capability 9.0 (H100, H200), `-gencode=arch=compute_100a,code=sm_100a` on 10.0 (B200), `-arch=sm_XY` on compute capability X.Y otherwise, and `-arch=sm_90` where it finds none'* ]]
		[[ "$p" != *"-O3 -arch=sm_90\`"* ]]
	fi
	# device facts with a compute capability but no arch: the arch leap-compile picks for it
	echo '{"name": "NVIDIA A100", "compute_capability": "8.0"}' >"$BATS_TEST_TMPDIR/a100.json"
	run -0 --separate-stderr leap-prompt --backend cuda --device-info "$BATS_TEST_TMPDIR/a100.json" vector_add
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"Your code runs on one NVIDIA A100: compute capability 8.0."* ]]
	[ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || [[ "$p" == *'`nvcc -Xcompiler -fPIC -O3 -arch=sm_80`'* ]]
	# a bad --device-info is a usage error
	echo '[1]' >"$BATS_TEST_TMPDIR/bad.json"
	run -2 --separate-stderr leap-prompt --device-info "$BATS_TEST_TMPDIR/bad.json" vector_add
	[[ "$stderr" == *"bad.json: not a JSON object"* ]]
}

@test "a task's own fields change the sentences: libraries, baseline kind, reference precision, ranges" {
	mkdir -p "$BATS_TEST_TMPDIR/suite"
	cp -R "$LEAP_TASKS/matmul" "$BATS_TEST_TMPDIR/suite/"
	run -0 --separate-stderr leap-prompt --backend cuda --tasks "$BATS_TEST_TMPDIR/suite" --device-info "$FIXTURES/leap-prompt/h200.json" matmul
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"no other library (cuBLAS, cuDNN...) is available for this task"* ]]
	[[ "$p" == *"against the task's vendor baseline, as PyTorch eager computes it by default: the matrix products in cuBLAS SGEMM"* ]]
	[[ "$p" == *"Precision class tf32"* ]]
	jq '.baseline_kind = "kernel" | del(.baseline_libraries) | .precision = "fp32"' "$LEAP_TASKS/matmul/task.json" \
		>"$BATS_TEST_TMPDIR/suite/matmul/task.json"
	run -0 --separate-stderr leap-prompt --backend cuda --tasks "$BATS_TEST_TMPDIR/suite" matmul
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"against a straightforward hand-written CUDA kernel."* ]]
	[[ "$p" == *"Precision class fp32"* ]]
	# a task.json without reference_precision says nothing of how the reference computes
	jq 'del(.reference_precision)' "$LEAP_TASKS/matmul/task.json" >"$BATS_TEST_TMPDIR/suite/matmul/task.json"
	run -0 --separate-stderr leap-prompt --tasks "$BATS_TEST_TMPDIR/suite" --backend cpu matmul
	[[ "$(jq -r '.messages[1].content' <<<"$output")" != *"double"* ]]
	jq '.reference_precision = "quad"' "$LEAP_TASKS/matmul/task.json" >"$BATS_TEST_TMPDIR/suite/matmul/task.json"
	run -1 --separate-stderr leap-prompt --tasks "$BATS_TEST_TMPDIR/suite" --backend cpu matmul
	[[ "$stderr" == *'reference_precision: must be "double" or "float"'* ]]
}

@test "--tolerance kernelbench states KernelBench's tolerance, never tighter than the task's own" {
	run -0 --separate-stderr leap-prompt --backend cuda --tolerance kernelbench softmax
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"|out - ref| <= 0.0001 + 0.0001 * |ref|"* ]]
	[[ "$p" == *"This is KernelBench's tolerance in fp32 (atol = rtol = 1e-4)"* ]]
	[[ "$p" != *"1e-06"* ]]
	run -0 --separate-stderr leap-prompt --backend cuda --tolerance kernelbench-v0.1 softmax
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"|out - ref| <= 0.01 + 0.01 * |ref|"* ]]
	[[ "$p" == *"This is KernelBench v0.1's tolerance (atol = rtol = 1e-2)"* ]]
	run -0 --separate-stderr leap-prompt --backend cuda softmax
	[[ "$(jq -r '.messages[1].content' <<<"$output")" == *"|out - ref| <= 1e-06 + 0.0001 * |ref|"* ]]
	# mlp_block's own tolerance is wider than KernelBench's: it stays
	run -0 --separate-stderr leap-prompt --backend cuda --tolerance kernelbench mlp_block
	[[ "$(jq -r '.messages[1].content' <<<"$output")" == *"|out - ref| <= 0.1 + 0.03 * |ref|"* ]]
	run -2 --separate-stderr leap-prompt --tolerance loose softmax
	[[ "$stderr" == *"--tolerance: 'loose' is not task, kernelbench or kernelbench-v0.1"* ]]
}

@test "sizes are a domain up to the speed case, apart from the sizes checked" {
	run -0 --separate-stderr leap-prompt --backend cpu attention
	p=$(jq -r '.messages[1].content' <<<"$output")
	# issue 30: "seq from 1 to 130" read as the domain; a float p[130] crashed at seq=256
	[[ "$p" == *"Sizes: your function must be correct for every value of each size within these bounds, from the least checked up to the speed case's; no other values are passed."* ]]
	[[ "$p" == *'- `seq`: 1 to 256 (checked: 1 to 130; speed case: 256)'* ]]
	[[ "$p" == *'- `dim`: 1 to 64 (checked: 1 to 64; speed case: 64)'* ]]
	[[ "$p" == *'The speed case goes beyond the checked bounds (`bh`, `seq`): size arrays, stack buffers and scratch memory for the sizes of each call'* ]]
	[[ "$p" == *"Speed is measured on bh=4, seq=256, dim=64."* ]]
	# an expression bound is quoted, and a size the speed case stays within keeps its bound
	run -0 --separate-stderr leap-prompt --backend cpu conv2d
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *'- `height`: `k` to 33 (checked: `k` to 33; speed case: 32)'* ]]
	# a task that draws no cases ("ranges": {}) checks its listed cases only
	mkdir -p "$BATS_TEST_TMPDIR/suite"
	cp -R "$LEAP_TASKS/vector_add" "$BATS_TEST_TMPDIR/suite/"
	jq '.ranges = {}' "$LEAP_TASKS/vector_add/task.json" >"$BATS_TEST_TMPDIR/suite/vector_add/task.json"
	run -0 --separate-stderr leap-prompt --backend cpu --tasks "$BATS_TEST_TMPDIR/suite" vector_add
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *'- `n`: 1 to 4194304 (checked: 1 to 65537; speed case: 4194304)'* ]]
	[[ "$p" == *"Correctness is checked on these cases: n=1; n=1000; n=65537. Speed"* ]]
}

# caches_fact: the caches of the first CPU this process may use, as sysfs has them, in the
# prompt's words ("L1d 32 KiB per CPU, ...; 64-byte lines").
caches_fact() {
	local cpu d out="" size sharers
	cpu=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status | cut -d, -f1 | cut -d- -f1)
	for d in /sys/devices/system/cpu/cpu"$cpu"/cache/index*; do
		case $(cat "$d/type") in Data | Unified) ;; *) continue ;; esac
		size=$(numfmt --from=iec --to-unit=1024 "$(cat "$d/size")")
		if [ $((size % 1024)) -eq 0 ]; then size="$((size / 1024)) MiB"; else size="$size KiB"; fi
		sharers=$(python3 -c 'import sys; print(sum(b - a + 1 for a, b in ((int(x.split("-")[0]), int(x.split("-")[-1])) for x in sys.argv[1].split(","))))' "$(cat "$d/shared_cpu_list")")
		out+="${out:+, }L$(cat "$d/level")$([ "$(cat "$d/type")" = Data ] && echo d) $size "
		if [ "$sharers" -gt 1 ]; then out+="shared by $sharers CPUs"; else out+="per CPU"; fi
	done
	echo "$out; $(cat /sys/devices/system/cpu/cpu"$cpu"/cache/index0/coherency_line_size)-byte lines"
}

@test "the cpu prompt states the caches, scratch memory and the stack the runner really gets" {
	[ -d /sys/devices/system/cpu/cpu0/cache/index0 ] || skip "no cache description in sysfs"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	run -0 --separate-stderr leap-prompt --backend cpu transpose
	p=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$p" == *"Caches: $(caches_fact)."* ]]
	[[ "$p" == *"Scratch memory of your own is allowed: malloc and free within a call (timed with it), or a buffer kept across calls in a static pointer"* ]]
	# the limit stated is leap-verify's default
	[[ "$p" == *"The process may map 4 GiB beyond the arguments (by default)."* ]]
	[[ "$(leap-verify --help)" == *"each cpu process's address space, beyond the shared regions"*"(default 4G"* ]]
	[[ "$p" == *"The stack is 8 MiB, each OpenMP thread's too: put large arrays on the heap. Every block you allocate is checked: a write past its end fails the case it happens in."* ]]
	# ... and it is what the code gets, whatever stack limit leap-verify itself runs under:
	# the fixture computes right only with an 8 MiB limit and 8 MiB OpenMP stacks
	(ulimit -s 16384 && leap-verify --seed 1 --task vector_add "$FIXTURES/leap-prompt/stack.c") >"$BATS_TEST_TMPDIR/v"
	[[ "$(head -1 "$BATS_TEST_TMPDIR/v")" == *": pass (task vector_add"* ]]
	# the baseline is the single-threaded reference
	[[ "$p" == *"against the task's reference: the plain C described above, single-threaded"* ]]
	# --device-info describing another CPU drops this machine's caches, or names its own
	echo '{"cpu_model": "Other CPU", "cores": 4}' >"$BATS_TEST_TMPDIR/other.json"
	run -0 --separate-stderr leap-prompt --backend cpu --device-info "$BATS_TEST_TMPDIR/other.json" transpose
	[[ "$(jq -r '.messages[1].content' <<<"$output")" != *"Caches:"* ]]
	echo '{"cpu_model": "Other CPU", "cpu_caches": "L1d 48 KiB per CPU, L2 2 MiB per CPU"}' >"$BATS_TEST_TMPDIR/other.json"
	run -0 --separate-stderr leap-prompt --backend cpu --device-info "$BATS_TEST_TMPDIR/other.json" transpose
	[[ "$(jq -r '.messages[1].content' <<<"$output")" == *"Caches: L1d 48 KiB per CPU, L2 2 MiB per CPU."* ]]
}
