# cuda.bats - the cuda backend's machine facts against a faked driver and nvidia-smi (lib/backend/gpu.c):
# the driver check, the exact arch, device narrowing and the persistence note; and what the cuda
# runner decides on the host, asked without a GPU: its copies and guards (lib/sandbox/runplan.c), the
# page-locking of the host regions, device memory passed from owner to client by descriptor.
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

# arch_of ARTIFACT: the architectures of the SASS in it: cuobjdump's list where the toolkit has
# it, else the ptxas options each cubin of the fatbin records ("-arch sm_90a").
arch_of() {
	local objdump="${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump"
	if [ -x "$objdump" ]; then
		"$objdump" --list-elf "$1" | sed -n 's/.*\(sm_[0-9]*[a-z]*\).*/\1/p' | sort -u
	else
		strings -a "$1" | grep -o -- '-arch sm_[0-9]*[a-z]*' | sed 's/^-arch //' | sort -u
	fi
}

@test "arch: an H200 (compute 9.0) builds for sm_90a, so wgmma and setmaxnreg compile" {
	skip_unless_nvcc
	jq -nc --arg c '__global__ void k(float *c)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
	asm volatile("wgmma.fence.sync.aligned;\n");
	c[threadIdx.x] = 0.0f;
}
extern "C" void vector_add(const float *a, const float *b, float *c, int n) { k<<<1, 128>>>(c); }' \
		'{task:"vector_add",backend:"cuda",code:$c}' >"$T/in.jsonl"
	PATH="$SMI:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(jq -r .compile.status <<<"$output")" = ok ]
	[ "$(jq -r .compile.arch <<<"$output")" = sm_90a ]
	[ "$(arch_of "$(jq -r .compile.artifact <<<"$output")")" = sm_90a ]
	# the same source for plain sm_90 (--arch overrides the device) does not assemble
	PATH="$SMI:$PATH" run -0 leap-compile --arch sm_90 "$T/in.jsonl"
	[ "$(jq -r .status <<<"$output")" = compile_error ]
	[[ "$(jq -r .compile.message <<<"$output")" == *"not supported on .target 'sm_90'"* ]]
}

@test "arch: compute 10.0 -> sm_100a, 8.6 -> sm_86; --arch overrides; no GPU -> sm_90" {
	skip_unless_nvcc
	jq -nc '{task:"vector_add",backend:"cuda",code:"extern \"C\" void vector_add(const float *a, const float *b, float *c, int n) { }"}' >"$T/in.jsonl"
	FAKE_GPUS="0, NVIDIA B200, 10.0, GPU-b, Enabled, 183359" PATH="$SMI:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(jq -r .compile.arch <<<"$output")" = sm_100a ]
	FAKE_GPUS="0, NVIDIA A10, 8.6, GPU-a, Enabled, 23028" PATH="$SMI:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(jq -r .compile.arch <<<"$output")" = sm_86 ]
	[ "$(arch_of "$(jq -r .compile.artifact <<<"$output")")" = sm_86 ]
	PATH="$SMI:$PATH" run -0 leap-compile --arch sm_80 "$T/in.jsonl"
	[ "$(jq -r .compile.arch <<<"$output")" = sm_80 ]
	FAKE_GPUS="" PATH="$SMI:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(jq -r .compile.arch <<<"$output")" = sm_90 ]
}

@test "prompt: a visible H200 is named with its arch and the flags leap-compile uses" {
	skip_unless_nvcc
	PATH="$SMI:$PATH" run -0 --separate-stderr leap-prompt --backend cuda vector_add
	user=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$user" == *"Your code runs on one NVIDIA H200: compute capability 9.0, 140 GiB of memory."* ]]
	[[ "$user" == *"-gencode=arch=compute_90a,code=sm_90a"* ]]
	[[ "$stderr" != *"name no GPU"* ]]
	# --device-info names another GPU: its arch replaces the flag
	echo '{"name":"NVIDIA B200","compute_capability":"10.0","arch":"sm_100a"}' >"$T/b200.json"
	PATH="$SMI:$PATH" run -0 leap-prompt --backend cuda --device-info "$T/b200.json" vector_add
	user=$(jq -r '.messages[1].content' <<<"$output")
	[[ "$user" == *"NVIDIA B200"* && "$user" == *"-gencode=arch=compute_100a,code=sm_100a"* ]]
	[[ "$user" != *"sm_90a"* ]]
}

# fake_runner: $T/lx, a runner directory whose leap-run-cuda only says what it was given
# (CUDA_VISIBLE_DEVICES and its device argument), sends a hello (its set-up went well:
# runproto.h) and exits 3 when told to load: the code's output of a runtime_error. The real
# runner needs a GPU; the cpu runner is the real one.
fake_runner() {
	mkdir -p "$T/lx"
	chmod 755 "$T" "$T/lx"
	ln -sf "$ROOT/libexec/leap-run-cpu" "$T/lx/"
	cat >"$T/lx/fake.c" <<-'EOF'
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	#include "sandbox/runproto.h"
	int main(int argc, char **argv)
	{
		const char *v = getenv("CUDA_VISIBLE_DEVICES");
		fprintf(stderr, "VISIBLE=%s DEVICE=%s\n", v ? v : "(unset)", argc > 1 ? argv[1] : "?");
		struct leap_run_reply r;
		memset(&r, 0, sizeof r);
		r.magic = LEAP_RUN_MAGIC;
		strcpy(r.msg, "fake GPU");
		if (write(LEAP_RUN_FD_REPLY, &r, sizeof r) != (ssize_t)sizeof r)
			return 2;
		struct leap_run_go g;
		if (read(LEAP_RUN_FD_CMD, &g, sizeof g) < 0)
			return 2;
		return 3;
	}
	EOF
	cc -I"$ROOT/lib" -o "$T/lx/leap-run-cuda" "$T/lx/fake.c"
	export LEAP_LIBEXEC="$T/lx"
}

TWO_H200=$'0, NVIDIA H200, 9.0, GPU-aaaa, Disabled, 143771\n1, NVIDIA H200, 9.0, GPU-bbbb, Enabled, 143771'

@test "devices: each runner sees its own device alone, by UUID, as device 0" {
	skip_unless_nvcc
	fake_runner
	FAKE_GPUS="$TWO_H200" PATH="$SMI:$PATH" run -1 leap-verify --device 1 --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line "VISIBLE=GPU-bbbb DEVICE=0"
	# the caller's own list: the child gets its entry of it
	CUDA_VISIBLE_DEVICES=3,5 FAKE_GPUS="$TWO_H200" PATH="$SMI:$PATH" run -1 leap-verify --device 1 --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line "VISIBLE=5 DEVICE=0"
	# no nvidia-smi: the index itself
	FAKE_GPUS="" PATH="$SMI:$PATH" run -1 leap-verify --device 1 --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	assert_line "VISIBLE=1 DEVICE=0"
}

@test "devices: --devices gives each worker its own GPU's UUID" {
	skip_unless_nvcc
	fake_runner
	jq -nc --arg a "$LEAP_TASKS/vector_add/reference.c" '{task:"vector_add",backend:"cuda",compile:{status:"ok",artifact:$a}}' >"$T/one.jsonl"
	cat "$T/one.jsonl" "$T/one.jsonl" >"$T/in.jsonl"
	FAKE_GPUS="$TWO_H200" PATH="$SMI:$PATH" run -0 --separate-stderr leap-verify --devices 0,1 "$T/in.jsonl"
	run -0 jq -r '"\(.verify.device_index) \(.verify.output | rtrimstr("\n"))"' <<<"$output"
	assert_output $'0 VISIBLE=GPU-aaaa DEVICE=0\n1 VISIBLE=GPU-bbbb DEVICE=0'
}

@test "persistence mode off is said once on stderr with how to enable it" {
	skip_unless_nvcc
	fake_runner
	FAKE_GPUS="$TWO_H200" PATH="$SMI:$PATH" run -1 --separate-stderr leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu" "$FIXTURES/gpu/illegal.cu"
	[ "$(grep -c 'persistence mode is off on GPU 0' <<<"$stderr")" -eq 1 ]
	[[ "$stderr" == *'enable it with `sudo nvidia-smi -pm 1`'* ]]
	FAKE_GPUS="${TWO_H200/Disabled/Enabled}" PATH="$SMI:$PATH" run -1 --separate-stderr leap-verify --task vector_add "$LEAP_TASKS/vector_add/baseline.cu"
	[[ "$stderr" != *persistence* ]]
}

# ---- the cuda runner's host side (issue 27), without a GPU ----

@test "copy role: host guards stay accessible, copies both ways touch no protected page, nothing goes back into a sealed input" {
	[ -r "$ROOT/build/flags" ] || skip "needs the build tree (build/flags) to link a C test against lib/libleap.a"
	link_with_lib "$FIXTURES/cuda/plan.c" "$T/plan"
	run -0 "$T/plan"
	assert_output ok
}

@test "device memory by descriptor: an owner's two descriptors reach leap and, inherited, every client, cleared first" {
	[ -r "$ROOT/build/flags" ] || skip "needs the build tree (build/flags) to link a C test against lib/libleap.a"
	mkdir -p "$T/lx"
	chmod 755 "$T" "$T/lx"
	ln -sf "$ROOT/libexec/leap-run-cpu" "$T/lx/"
	# the fake runner is built from the same lib/sandbox/runproto.c as the real one's sending code
	cc -std=c11 -D_GNU_SOURCE -I"$ROOT/lib" -o "$T/lx/leap-run-cuda" "$FIXTURES/cuda/fake_runner.c" "$ROOT/lib/sandbox/runproto.c" "$ROOT/lib/core/fdio.c"
	link_with_lib "$FIXTURES/cuda/handles.c" "$T/handles"
	run -0 "$T/handles" "$T/lx" "$T/cache"
	assert_output ok
}

@test "minimal root of an NVIDIA machine: /sys shows, read-only with the mounts under it, as root and in a user namespace" {
	[ -r "$ROOT/build/flags" ] || skip "needs the build tree (build/flags) to link a C test against lib/libleap.a"
	link_with_lib "$FIXTURES/cuda/sysbind.c" "$T/sysbind"
	run -0 "$T/sysbind" "$T/sysbind"
	assert_output ok
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot run it as another user"
	command -v setpriv >/dev/null && command -v unshare >/dev/null || skip "setpriv or unshare missing"
	local as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${as[@]}" unshare --user --map-root-user true 2>/dev/null || skip "no unprivileged user namespaces"
	# as an ordinary user the sandbox adds a user namespace, where a plain bind of /sys is
	# refused (EINVAL) wherever mounts lie under it (in a directory nobody reaches)
	local d
	d=$(mktemp -d /tmp/leap-sysbind.XXXXXX)
	cp "$T/sysbind" "$d/"
	chown -R nobody:nogroup "$d"
	HOME="$d" TMPDIR="$d" run "${as[@]}" "$d/sysbind" "$d/sysbind"
	rm -rf "$d"
	assert_success
	assert_output ok
}
