# gpu.bats - the GPU machine's side that runs without a GPU: nvcc found the same way by make,
# leap-compile and the baselines' build (issue 27).
load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	export LEAP_CACHE="$T/cache"
	SMI="$FIXTURES/gpu/bin"
	REPLAY="$FIXTURES/gpu/replay"
	NVCC_REAL="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
	# a PATH without any nvcc (and without the fake nvidia-smi)
	BARE_PATH="$ROOT/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

# record FILE TASK: a cuda candidate record of FILE for TASK.
record() {
	jq -nc --arg t "$2" --rawfile c "$1" '{task: $t, backend: "cuda", code: $c}'
}

# ---- nvcc: one lookup for make, leap-compile and the baselines ----

@test "nvcc on PATH alone: make builds the cuda runner with it (its real path), its headers give the runtime version" {
	skip_unless_nvcc
	mkdir -p "$T/bin"
	ln -s "$(readlink -f "$NVCC_REAL")" "$T/bin/nvcc"
	CUDA_HOME=/nonexistent PATH="$T/bin:$BARE_PATH" run -0 make -n -W runner/cuda.cu -W lib/gpu.c -C "$ROOT" all
	assert_line --partial "$(readlink -f "$NVCC_REAL") -O3"
	assert_line --partial "-o libexec/leap-run-cuda"
	assert_line --regexp "-DLEAP_CUDART_VERSION=[0-9]+ .*-o build/lib/gpu.o lib/gpu.c"
	# nowhere: no runner, no runtime version
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -0 make -n -W runner/cuda.cu -W lib/gpu.c -C "$ROOT" all
	refute_line --partial "leap-run-cuda"
	refute_line --partial "LEAP_CUDART_VERSION"
}

@test "nvcc: leap-compile and the baselines' build look in the same places (\$NVCC, CUDA_HOME, PATH)" {
	skip_unless_nvcc
	record "$LEAP_TASKS/vector_add/baseline.cu" vector_add >"$T/in.jsonl"
	mkdir -p "$T/bin"
	ln -s "$(readlink -f "$NVCC_REAL")" "$T/bin/nvcc"
	# $NVCC alone (no CUDA_HOME, none on PATH): both use it
	local real
	real=$(readlink -f "$NVCC_REAL")
	NVCC="$real" CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -0 leap-compile --arch sm_90 --no-progress "$T/in.jsonl"
	[ "$(jq -r .compile.status <<<"$output")" = ok ]
	NVCC="$real" CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -0 "$ROOT/build/gpu/prebuild" "$T/c1" "$LEAP_TASKS/vector_add"
	assert_line --regexp "^vector_add baseline $T/c1/artifacts/[0-9a-f]{64}\.so$"
	# $NVCC first, wherever else nvcc is
	NVCC=/nonexistent/nvcc run -1 --separate-stderr leap-compile --no-progress "$T/in.jsonl"
	[ "$(jq -r .error.message <<<"$output")" = "the cuda backend needs nvcc, and '/nonexistent/nvcc' (from NVCC) was not found (set NVCC to nvcc's path, or unset it)" ]
	NVCC=/nonexistent/nvcc run -1 --separate-stderr "$ROOT/build/gpu/prebuild" "$T/c2" "$LEAP_TASKS/vector_add"
	[[ "$stderr" == *"cannot run /nonexistent/nvcc"* ]]
	# PATH alone: both find it there
	CUDA_HOME=/nonexistent PATH="$T/bin:$BARE_PATH" run -0 leap-compile --arch sm_90 --no-progress "$T/in.jsonl"
	[ "$(jq -r .compile.status <<<"$output")" = ok ]
	CUDA_HOME=/nonexistent PATH="$T/bin:$BARE_PATH" run -0 "$ROOT/build/gpu/prebuild" "$T/c3" "$LEAP_TASKS/vector_add"
	assert_line --partial "vector_add baseline $T/c3/artifacts/"
	# nowhere: both say where they looked
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -1 --separate-stderr leap-compile --no-progress "$T/in.jsonl"
	[ "$(jq -r .error.message <<<"$output")" = "the cuda backend needs nvcc, and '/nonexistent/bin/nvcc' was not found, nor nvcc on PATH (use --nvcc, or set NVCC or CUDA_HOME)" ]
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -1 --separate-stderr "$ROOT/build/gpu/prebuild" "$T/c4" "$LEAP_TASKS/vector_add"
	[[ "$stderr" == *"cannot run /nonexistent/bin/nvcc"* ]]
}
