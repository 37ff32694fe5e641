# cuda.bats - the cuda backend's machine facts against a faked driver and nvidia-smi (lib/gpu.c):
# the driver check, the exact arch, device narrowing and the persistence note.
load helpers

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	T="$BATS_TEST_TMPDIR"
	SMI="$FIXTURES/gpu/bin"
}

# fake_driver VERSION: builds $T/lib/libcuda.so.1 whose cuDriverGetVersion says VERSION (the
# only call the driver check makes; cuInit and cuDeviceGetCount answer "one device").
fake_driver() {
	mkdir -p "$T/lib"
	cat >"$T/lib/fake.c" <<-EOF
	int cuDriverGetVersion(int *v) { *v = $1; return 0; }
	int cuInit(unsigned f) { (void)f; return 0; }
	int cuDeviceGetCount(int *n) { *n = 1; return 0; }
	EOF
	cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$T/lib/libcuda.so.1" "$T/lib/fake.c"
}

# runtime_version: CUDART_VERSION of the toolkit leap was built with.
runtime_version() {
	sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "${CUDA_HOME:-/usr/local/cuda}/include/cuda_runtime_api.h"
}

@test "driver: one older than leap's CUDA runtime is said once with the fix, exit 2, no record" {
	skip_unless_nvcc
	[ "$(runtime_version)" -ge 13000 ] || skip "the toolkit is older than CUDA 13"
	fake_driver 12040
	LD_LIBRARY_PATH="$T/lib" run -2 --separate-stderr leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "leap-verify: "*"CUDA 12.4 (cuDriverGetVersion 12040)"*"CUDA 13.0 runtime"*"update the driver to >= 580"*"toolkit 12.x"* ]]
	LD_LIBRARY_PATH="$T/lib" run -2 --separate-stderr leap-bench --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	[ -z "$output" ]
	[[ "$stderr" == "leap-bench: "*"update the driver to >= 580"* ]]
}

@test "driver: records are never labelled no_device for it (leap-verify, leap-bench)" {
	skip_unless_nvcc
	[ "$(runtime_version)" -ge 13000 ] || skip "the toolkit is older than CUDA 13"
	fake_driver 12040
	jq -nc --arg a "$T/none.so" '{task:"vector_add",backend:"cuda",status:"pass",compile:{status:"ok",artifact:$a}}' >"$T/in.jsonl"
	LD_LIBRARY_PATH="$T/lib" run -2 --separate-stderr leap-verify "$T/in.jsonl"
	[ -z "$output" ]
	[[ "$stderr" == *"cuDriverGetVersion 12040"* ]]
	LD_LIBRARY_PATH="$T/lib" run -2 --separate-stderr leap-bench "$T/in.jsonl"
	[ -z "$output" ]
	[[ "$stderr" == *"cuDriverGetVersion 12040"* ]]
}

@test "driver: one as new as the runtime passes the check (the verdict is the runner's)" {
	skip_unless_nvcc
	fake_driver "$(runtime_version)"
	LD_LIBRARY_PATH="$T/lib" run -1 --separate-stderr leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line --index 0 --partial "baseline.cu: no_device (task vector_add, cuda"
	[[ "$stderr" != *cuDriverGetVersion* ]]
}
