# gpu.bats - the GPU machine's side that runs without a GPU: nvcc found the same way by make,
# leap-compile and the baselines' build; the doctor's probes (make doctor) and its fallbacks
# (issue 27).
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

# ---- the doctor ----

@test "doctor: a node without nvcc says what that costs; the kernel's part is still tried" {
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" DOCTOR_JSON="$T/d.jsonl" run -0 bash "$ROOT/tests/gpu/doctor.sh"
	assert_line --regexp '^fallback +nvcc: not found \(NVCC unset or not there, no /nonexistent/bin/nvcc, none on PATH\)$'
	assert_line --partial "-> no cuda candidate compiles here and no cuda runner is built; the cpu backend works"
	refute_line --partial "CUDA headers"
	for name in "user namespace" "PID namespace" "mount namespace" "network namespace" "/sys bind" "memfd seals" \
		seccomp "cgroup freezer" "sandbox namespaces" "cpu pipeline"; do
		assert_line --regexp "^(ok|fallback|FAIL|skip) +$name: "
	done
	assert_line --regexp '^doctor: [0-9]+ ok, [0-9]+ fallback, 0 failed, [0-9]+ skipped$'
	# every finding is a JSON line too, with its status and fallback
	[ "$(grep -cE '^(ok|fallback|FAIL|skip) ' <<<"$output")" -eq "$(wc -l <"$T/d.jsonl")" ]
	jq -e -s 'map(select(.name == "nvcc"))[0] | .status == "fallback" and (.fallback | startswith("no cuda candidate"))' "$T/d.jsonl"
	jq -e -s 'map(select(.name == "cpu pipeline"))[0] | .status == "ok"' "$T/d.jsonl"
}

@test "doctor: a GPU visible without a cuda runner is a FAIL, not a skip" {
	mkdir -p "$T/empty"
	LEAP_TEST_DEVICE="gpu NVIDIA H200 (test seam)" LEAP_LIBEXEC="$T/empty" run -1 bash "$ROOT/tests/gpu/doctor.sh"
	assert_line "ok        GPU: NVIDIA H200 (test seam)"
	assert_line "FAIL      cuda runner: a GPU is visible, but $T/empty/leap-run-cuda is not built (nvcc was not found when leap was built)"
}

@test "doctor: the /sys bind probe answers as util-linux's mount does in a user namespace" {
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot run the probe as another user"
	command -v setpriv >/dev/null && command -v unshare >/dev/null || skip "setpriv or unshare missing"
	local as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${as[@]}" unshare --user --map-root-user true 2>/dev/null || skip "no unprivileged user namespaces"
	cp "$ROOT/build/gpu/probe" "$T/probe"
	chmod 755 "$T" "$T/probe"
	local want mnt
	mnt=$("${as[@]}" mktemp -d)
	if "${as[@]}" unshare --user --map-root-user --mount sh -c "mount --make-rprivate / && mount --bind /sys $mnt" 2>/dev/null; then
		want="bind: ok"
	else
		want="bind: Invalid argument"
	fi
	rmdir "$mnt"
	HOME="$T" run -0 "${as[@]}" "$T/probe" sysbind
	[[ "$output" == *$'\t'"$want, recursive bind: ok"$'\t'* ]]
	if [ "$want" != "bind: ok" ]; then
		assert_line --regexp $'^fallback\t/sys bind\t.*\tautomatic on an NVIDIA machine: the minimal root cannot be made'
	fi
}

@test "doctor: libcuda linked into a directory the runner's root does not show calls for --no-namespaces" {
	local stub="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so"
	[ -e "$stub" ] || skip "no CUDA toolkit stub libcuda.so"
	mkdir -p "$T/lib" "$T/real" "$T/same"
	cp "$stub" "$T/real/libcuda.so"
	ln -s ../real/libcuda.so "$T/lib/libcuda.so.1"
	LD_LIBRARY_PATH="$T/lib" run -0 "$ROOT/build/gpu/probe" libcuda cuda
	assert_line "$(printf 'fallback\tlibcuda\t%s -> %s; the runner%ss minimal root does not show %s: a cuda runner would find no driver (no_device)\t--no-namespaces (no minimal root: the runner sees the machine%ss files), or add the directory to LD_LIBRARY_PATH, which the minimal root shows' \
		"$T/lib/libcuda.so.1" "$T/real/libcuda.so" "'" "$T/real" "'")"
	# the toolkit's stub is no driver, and says so
	assert_line --regexp $'^skip\tcuda driver\tcuInit: this libcuda.so.1 is the toolkit.s stub, not a driver \\(34\\)'
	# a link within a directory the root shows is fine
	cp "$stub" "$T/same/libcuda.so"
	ln -s libcuda.so "$T/same/libcuda.so.1"
	LD_LIBRARY_PATH="$T/same" run -0 "$ROOT/build/gpu/probe" libcuda
	assert_line --regexp "^ok"$'\t'"libcuda"$'\t'".*; the runner's minimal root shows $T/same"$'\t'"$"
	# the doctor hands the fallback's option on
	LEAP_TEST_DEVICE="gpu test seam" LD_LIBRARY_PATH="$T/lib" DOCTOR_JSON="$T/d.jsonl" run bash "$ROOT/tests/gpu/doctor.sh"
	assert_line "doctor: options the fallbacks call for: --no-namespaces"
	jq -e -s 'map(select(.name == "libcuda"))[0] | .status == "fallback" and .option == "--no-namespaces"' "$T/d.jsonl"
}
