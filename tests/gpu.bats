# gpu.bats - the GPU machine's side that runs without a GPU: nvcc found the same way by make,
# leap-compile and the baselines' build; the doctor's probes (make doctor) and its fallbacks;
# check-gpu's set-up, deadline and steps, and its verdicts read from recorded records (issue 27).
# The recorded outputs (tests/fixtures/gpu/replay/) are the records and probe lines a good H200
# run writes, made from the prepared candidates with verify and bench objects in the programs'
# shape, and stderr files whose first line is the persistence-mode warning.
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
	CUDA_HOME=/nonexistent PATH="$T/bin:$BARE_PATH" run -0 make -n -W runner/cuda.cu -W lib/backend/gpu.c -C "$ROOT" all
	assert_line --partial "$(readlink -f "$NVCC_REAL") -O3"
	assert_line --partial "-o libexec/leap-run-cuda"
	assert_line --regexp "-DLEAP_CUDART_VERSION=[0-9]+ .*-o build/lib/backend/gpu.o lib/backend/gpu.c"
	# nowhere: no runner, no runtime version
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" run -0 make -n -W runner/cuda.cu -W lib/backend/gpu.c -C "$ROOT" all
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
	# cuBLAS and cuDNN are still looked for: a prepared run needs their libraries, not nvcc
	assert_line --regexp '^(ok|fallback) +cuBLAS: '
	assert_line --regexp '^(ok|fallback) +cuDNN: '
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

@test "doctor: a library early in a long loader cache is found (no SIGPIPE read as 'missing')" {
	# grep -q stops reading at its first match; under pipefail the writer's SIGPIPE made the
	# lookup fail whenever the cache listing was longer than one pipe write
	mkdir -p "$T/bin"
	printf '%s\n' '#!/bin/bash' \
		'printf "\tlibjansson.so.4 (libc6,x86-64) => /x/libjansson.so.4\n"' \
		'yes "	libfiller.so.1 (libc6,x86-64) => /x/libfiller.so.1" | head -n 100000' >"$T/bin/ldconfig"
	chmod +x "$T/bin/ldconfig"
	CUDA_HOME=/nonexistent PATH="$T/bin:$BARE_PATH" run -0 bash "$ROOT/tests/gpu/doctor.sh"
	assert_line --regexp '^ok +build library: jansson \(JSON\)$'
}

@test "doctor: a GPU visible without a cuda runner is a FAIL, not a skip" {
	mkdir -p "$T/empty"
	LEAP_TEST_DEVICE="gpu NVIDIA H200 (test seam)" LEAP_LIBEXEC="$T/empty" run -1 bash "$ROOT/tests/gpu/doctor.sh"
	assert_line "ok        GPU: NVIDIA H200 (test seam)"
	assert_line "FAIL      cuda runner: a GPU is visible, but $T/empty/leap-run-cuda is not built (nvcc was not found when leap was built)"
}

@test "doctor: the /sys bind probe answers as util-linux's mount does in a user namespace, and leap's bind works" {
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
	# leap's sandbox binds it all the same: recursively where the plain bind is refused
	if [ "$want" = "bind: ok" ]; then
		assert_line "$(printf "ok\t/sys bind\t%s, recursive bind: ok; leap's sandbox: plain, read-only\t" "$want")"
	else
		assert_line "$(printf "ok\t/sys bind\t%s, recursive bind: ok; leap's sandbox: recursive, every mount read-only\t" "$want")"
	fi
}

@test "doctor: without a memory cgroup (as nobody) the finding says --memory bounds each process, not the sandbox" {
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot run the probe as another user"
	command -v setpriv >/dev/null || skip "no setpriv"
	cp "$ROOT/build/gpu/probe" "$T/probe"
	chmod 755 "$T" "$T/probe"
	HOME="$T" run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/probe" freezer
	assert_line --regexp $'^fallback\tmemory cgroup\tnone this process may use.*\tautomatic: --memory bounds each cpu process\'s address space, not a sandbox\'s processes together; a cuda sandbox has no memory limit'
	# as root, where the controller is mounted, the sandbox is bounded as a whole
	awk '$1 == "memory" && $4 == 1 { ok = 1 } END { exit !ok }' /proc/cgroups ||
		grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null || return 0
	run -0 "$ROOT/build/gpu/probe" freezer
	assert_line --regexp $'^ok\tmemory cgroup\tcgroup v[12]: --memory bounds each sandbox\'s processes together'
}

@test "doctor: libcuda linked into another directory: the runner's root shows it, unless leap hides it (--no-namespaces)" {
	local stub="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so"
	[ -e "$stub" ] || skip "no CUDA toolkit stub libcuda.so"
	mkdir -p "$T/lib" "$T/real" "$T/same" "$T/lib2" "$T/hidden"
	cp "$stub" "$T/real/libcuda.so"
	ln -s ../real/libcuda.so "$T/lib/libcuda.so.1"
	LD_LIBRARY_PATH="$T/lib" run -0 "$ROOT/build/gpu/probe" libcuda cuda
	assert_line "$(printf "ok\tlibcuda\t%s -> %s; the runner's minimal root shows %s\t" "$T/lib/libcuda.so.1" "$T/real/libcuda.so" "$T/real")"
	# the toolkit's stub is no driver, and says so
	assert_line --regexp $'^skip\tcuda driver\tcuInit: this libcuda.so.1 is the toolkit.s stub, not a driver \\(34\\)'
	# a link within a directory the root shows is fine
	cp "$stub" "$T/same/libcuda.so"
	ln -s libcuda.so "$T/same/libcuda.so.1"
	LD_LIBRARY_PATH="$T/same" run -0 "$ROOT/build/gpu/probe" libcuda
	assert_line --regexp "^ok"$'\t'"libcuda"$'\t'".*; the runner's minimal root shows $T/same"$'\t'"$"
	# a link into a directory no candidate may see (here a task suite's): not shown, and the
	# doctor hands the fallback's option on
	cp "$stub" "$T/hidden/libcuda.so"
	ln -s ../hidden/libcuda.so "$T/lib2/libcuda.so.1"
	LEAP_TASKS="$T/hidden" LD_LIBRARY_PATH="$T/lib2" run -0 "$ROOT/build/gpu/probe" libcuda
	assert_line "$(printf 'fallback\tlibcuda\t%s -> %s; the runner%ss minimal root does not show %s: a cuda runner would find no driver (no_device)\t--no-namespaces (no minimal root: the runner sees the machine%ss files), or add the directory to LD_LIBRARY_PATH, which the minimal root shows' \
		"$T/lib2/libcuda.so.1" "$T/hidden/libcuda.so" "'" "$T/hidden" "'")"
	LEAP_TASKS="$T/hidden" LEAP_TEST_DEVICE="gpu test seam" LD_LIBRARY_PATH="$T/lib2" DOCTOR_JSON="$T/d.jsonl" run bash "$ROOT/tests/gpu/doctor.sh"
	assert_line "doctor: options the fallbacks call for: --no-namespaces"
	jq -e -s 'map(select(.name == "libcuda"))[0] | .status == "fallback" and .option == "--no-namespaces"' "$T/d.jsonl"
}

# ---- check-gpu ----

@test "check-gpu runs here end to end under its deadline: each check and each GPU step SKIPs with its reason, exit 0" {
	local t0=$SECONDS checks
	FAKE_GPUS="" PATH="$SMI:$PATH" DEADLINE=120 OUT="$T/out" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	[ $((SECONDS - t0)) -lt 120 ]
	local why="no CUDA GPU visible (nvidia-smi -L lists none)"
	assert_line --index 0 --regexp '^check-gpu: .*, deadline 120 s, MAX_TIME 2 s, tasks: vector_add row_sum softmax layernorm attention matmul conv2d$'
	assert_line "check-gpu: device: $why"
	assert_line "step verify, hang, bench, hot, eventloop, bandwidth, hostreg, torchprobe, torchverify, torcheager, torchcompile: not run ($why)"
	# the set-up's 5, the 7 baselines, 19 more, and one line for the module tasks
	checks=$((5 + 7 + 19 + 1))
	[ "$(grep -c "^SKIP .* ($why)$" <<<"$output")" -eq "$checks" ]
	[ "$(grep -cE '^(PASS|FAIL) ' <<<"$output")" -eq 0 ]
	for name in driver setup preflight "cuBLAS and cuDNN: the artifacts' libraries found" "env arch" "baseline vector_add" "baseline matmul" "baseline conv2d" \
		"wrong -> mismatch" "illegal address -> runtime_error, GPU usable after" "hang -> timeout, GPU usable after" \
		"side stream: no unearned speedup" "memoisation: no unearned speedup" "deferred work: no unearned speedup" \
		"event loop: its flush makes a read one L2 partition holds cold" "L2 flush leaves a 16 MiB read cold" \
		"roofline floor: a read-only kernel does not outrun the copy" \
		"owner and client share device memory by descriptor: every bench record timed" \
		"a guard damaged while timed is blamed once, then cleared" "module tasks on cuda: torch with CUDA for the torch baselines"; do
		assert_line "SKIP $name ($why)"
	done
	assert_line --regexp "^check-gpu: 0 passed, 0 failed, $checks skipped in [0-9]+ s \(deadline 120 s\)$"
	# the preflight ran all the same, and everything went into $OUT
	assert_line --regexp '^  doctor: [0-9]+ ok, '
	cmp <(printf '%s\n' "$output") "$T/out/check-gpu.txt"
	[ "$(jq -s 'length' "$T/out/check-gpu.jsonl")" -eq "$checks" ]
	[ -z "$(jq -c --arg w "$why" 'select(.result != "SKIP" or .detail != $w)' "$T/out/check-gpu.jsonl")" ]
	[ -s "$T/out/doctor.jsonl" ]
}

@test "check-gpu: a GPU visible without the cuda runner is a FAIL, not a SKIP" {
	mkdir -p "$T/empty"
	LEAP_TEST_DEVICE="gpu NVIDIA H200 (test seam)" LEAP_LIBEXEC="$T/empty" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "FAIL setup: a GPU is visible, but $T/empty/leap-run-cuda is not built (nvcc was not found when leap was built: build where NVCC, CUDA_HOME or PATH finds it, and bring libexec/)"
	assert_line "SKIP baseline vector_add (the cuda runner is missing)"
	assert_line --regexp '^check-gpu: 1 passed, 1 failed, 30 skipped in '
}

# The runner is a stand-in: a machine without the CUDA toolkit builds none, and its first FAIL
# would be that (the test above); this is the step after it, on every machine.
@test "check-gpu: a GPU visible, no prepared tree and no nvcc to prepare one is a FAIL" {
	mkdir -p "$T/libexec"
	printf '#!/bin/sh\nexit 1\n' >"$T/libexec/leap-run-cuda"
	chmod +x "$T/libexec/leap-run-cuda"
	LEAP_TEST_DEVICE="gpu NVIDIA H200 (test seam)" GPU_PREP="$T/none" CUDA_HOME=/nonexistent PATH="$BARE_PATH" \
		LEAP_LIBEXEC="$T/libexec" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "FAIL setup: $T/none is missing or was prepared from other sources or programs, and there is no nvcc here to prepare it (run make gpu-prepare where leap was built, and bring build/gpu-prep.tar.gz)"
	assert_line "SKIP wrong -> mismatch (the run is not prepared)"
}

@test "check-gpu reads records, not stderr: a recorded good run passes every check, warnings first or not" {
	head -1 "$REPLAY/verify.err" | grep -q 'persistence mode is off'
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$REPLAY" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line --regexp '^check-gpu: 34 passed, 0 failed, 0 skipped in '
	assert_line "PASS wrong -> mismatch: wrong: mismatch Case n=1: output c differs from the reference at element 0: got 0, expected 1.337 (atol 1e-05, rtol 1e-05)."
	assert_line "PASS baseline matmul: verify pass, bench ok, speedup 0.9968 against its vendor baseline, roofline 0.33"
	assert_line "PASS leap-bench vs a CUDA-event loop within 5% (2^26 floats, flushed): event loop 0.193 ms, leap-bench 0.1912 ms (ok), difference 0.93%"
	# issue 42: module tasks on cuda, against torch
	assert_line "PASS module tasks on cuda: torch with CUDA for the torch baselines: /usr/bin/python3: torch 2.9.1+cu130 (CUDA 13.0), NVIDIA H200 (compute capability 9.0)"
	assert_line "PASS module tasks on cuda: correct kernels pass against float64 CPU torch (relu, linear): relu.cu: pass; linear.cu: pass"
	assert_line --partial "PASS module tasks on cuda: a wrong kernel -> mismatch: relu_wrong.cu: mismatch Wrong output in case 1 (batch_size=2, dim=5): out[0][0] = -0.0113311298 but expected 0"
	assert_line "PASS module tasks on cuda: timed against the torch-eager baseline: relu.cu: ok, 3.81x over torch-eager (baseline 0.0118 ms); linear.cu: ok, 2.27x over torch-eager (baseline 0.0141 ms)"
	assert_line "PASS module tasks on cuda: timed against the torch-compile baseline (AOTInductor): relu.cu: ok, 2.32x over torch-compile (baseline 0.0072 ms)"
}

# replay_with STEP JQ: a copy of the recorded run with STEP's records passed through JQ; its
# directory on stdout.
replay_with() {
	local d="$T/replay-$1"
	rm -rf "$d"
	cp -r "$REPLAY" "$d"
	jq -c "$2" "$REPLAY/$1.jsonl" >"$d/$1.jsonl"
	echo "$d"
}

@test "check-gpu: a cheat never timed (runtime_error, timeout, no_device) does not pass 'no unearned speedup'" {
	local d
	d=$(replay_with bench 'if (.file // "") | endswith("side_stream.cu") then .bench = {status: "runtime_error", message: "The runner crashed"}
		elif (.file // "") | endswith("memo.cu") then .bench = {status: "timeout"}
		elif (.file // "") | endswith("deferred.cu") then .bench = {status: "ok", speedup: 3.5} else . end')
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "FAIL side stream: no unearned speedup: side_stream.cu: verify pass, bench runtime_error (The runner crashed) (never timed: proves nothing)"
	assert_line "FAIL memoisation: no unearned speedup: memo.cu: verify pass, bench timeout (never timed: proves nothing)"
	assert_line "FAIL deferred work: no unearned speedup: deferred.cu: verify pass, bench ok, speedup 3.5x"
	# noisy (timed, carries no speedup) passes; so does a cheat leap-verify already found wrong
	d=$(replay_with bench 'if (.file // "") | endswith("side_stream.cu") then .bench = {status: "noisy", speedup: 0} else . end')
	jq -c 'if (.file // "") | endswith("memo.cu") then .verify.status = "mismatch" else . end' "$REPLAY/verify.jsonl" >"$d/verify.jsonl"
	jq -c 'if (.file // "") | endswith("memo.cu") then .bench = {status: "skipped"} else . end' "$d/bench.jsonl" >"$d/b" && mv "$d/b" "$d/bench.jsonl"
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "PASS side stream: no unearned speedup: side_stream.cu: verify pass, bench noisy"
	assert_line "PASS memoisation: no unearned speedup: memo.cu: caught by leap-verify (mismatch)"
}

@test "check-gpu: the cuda runner's fixes FAIL when a record says they did not hold" {
	local d
	# the candidate after an overrun blamed for it too; a record without a device
	d=$(replay_with bench 'if .gpu_check == "after_overrun" then .bench = {status: "runtime_error",
			message: "Your code wrote outside the bounds of buffer c while being timed (call 0, benchmark case n=67108864)."}
		elif .gpu_check == "l2" and .task == "row_sum_l2" then .bench = {status: "no_device", message: "Not timed: x."} else . end')
	# a context left current read before its work ended; an input written and not seen
	jq -c 'if .gpu_check == "own_context_current" then .verify.status = "mismatch"
		elif .gpu_check == "input_write" then .verify.status = "pass" | del(.verify.mismatch) else . end' "$REPLAY/verify.jsonl" >"$d/verify.jsonl"
	echo '{"host_register": 1, "readonly_supported": 0, "in": "not", "out": "not", "copies": "the device into OUT failed"}' >"$d/hostreg.jsonl"
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line --partial "FAIL a guard damaged while timed is blamed once, then cleared: overrun_timed.cu: runtime_error Your code wrote outside the bounds of buffer c while being timed (call 0, benchmark case n=67108864).; then vector_add_fast.cu: runtime_error"
	assert_line "FAIL owner and client share device memory by descriptor: every bench record timed: 15 records, 10 timed ok or noisy; no device or error: Not timed: x.;"
	assert_line --partial "FAIL own context, left current: waited for: own_context_current.cu: verify mismatch"
	assert_line --partial "FAIL copy role: a changed input comes back where it is not sealed: input_write: pass"
	assert_line "FAIL host regions page-locked each on its own: cudaHostRegister supported 1, read-only supported 0: IN not, OUT not, copies the device into OUT failed"
	# the copy of the recorded run without them passes the rest
	assert_line "PASS copy role: a write past an output comes back and is caught: overrun: runtime_error Your code wrote outside the bounds of buffer c (case 1, n=1)."
}

@test "check-gpu: missing records, a failed baseline and a weak flush are FAILs that say why" {
	local d
	d=$(replay_with bench 'select(.task != "conv2d") | if .task == "matmul" then .bench.speedup = 0.7 else . end')
	jq -c 'select(.gpu_check != "hang")' "$REPLAY/hang.jsonl" >"$d/hang.jsonl"
	jq -c 'if .n == 1048576 then .hot_ms = .flushed_ms else . end' "$REPLAY/eventloop.jsonl" >"$d/eventloop.jsonl"
	echo '{"bytes": 536870912, "copy_gbs": 3350.2, "read_gbs": 4012.9}' >"$d/bandwidth.jsonl"
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "FAIL baseline matmul: verify pass, bench ok, speedup 0.7 against its vendor baseline, roofline 0.33"
	assert_line "FAIL baseline conv2d: verify pass; bench: no record (step bench: replayed)"
	assert_line --partial "FAIL hang -> timeout, GPU usable after: hang: no record (step hang: replayed"
	assert_line "FAIL event loop: its flush makes a read one L2 partition holds cold: 2^20 floats (12582912 bytes, L2 62914560 bytes, one partition holds it: true): flushed 0.0115 ms, hot 0.0115 ms"
	# a read-only kernel faster than the copy the roofline's floor comes from
	assert_line "FAIL roofline floor: a read-only kernel does not outrun the copy: copy 3350.2 GB/s (read + write, the roofline's peak), read-only 4012.9 GB/s, ratio 1.198"
	# the persistence warning, first on stderr, is never read as a verdict
	refute_line --partial "persistence mode is off"
}

@test "check-gpu: the preflight's failures fail it, and its fallbacks' options reach the programs that take them" {
	local d="$T/r"
	cp -r "$REPLAY" "$d"
	{
		echo '{"name":"sandbox namespaces","status":"fallback","detail":"x","fallback":"--no-namespaces (y)","option":"--no-namespaces"}'
		echo '{"name":"cgroup freezer","status":"fallback","detail":"x","fallback":"--freezer signals (y)","option":"--freezer signals"}'
		echo '{"name":"compute mode","status":"fail","detail":"compute mode EXCLUSIVE_PROCESS","fallback":"one context at a time","option":null}'
	} >>"$d/doctor.jsonl"
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "FAIL preflight: 12 findings; failed: compute mode; options: leap-verify --no-namespaces, leap-bench --freezer signals --no-namespaces"
}

# ---- check-gpu: module tasks on cuda (issue 42), against the torch baselines ----

TORCH_FOUND="module tasks on cuda: torch with CUDA for the torch baselines"

@test "check-gpu: no torch with CUDA on the GPU machine is one SKIP saying why, never a FAIL" {
	local d why
	# no torch at all: one line for the module tasks, the steps after the probe not run
	d=$(replay_with torchprobe '{python: "/usr/bin/python3", libpython: null, error: "ModuleNotFoundError: No module named '"'torch'"'"}')
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" OUT="$T/out" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	why="no torch with CUDA on this machine (/usr/bin/python3: ModuleNotFoundError: No module named 'torch'): the torch baselines' cuda path is not checked"
	assert_line "SKIP $TORCH_FOUND ($why)"
	assert_line "step torchverify, torcheager, torchcompile: not run ($why)"
	[ "$(grep -c 'module tasks on cuda' <<<"$output")" = 1 ]
	assert_line --regexp '^check-gpu: 29 passed, 0 failed, 1 skipped in '
	[ "$(jq -r --arg c "$TORCH_FOUND" 'select(.check == $c) | "\(.result) \(.detail)"' "$T/out/check-gpu.jsonl")" = "SKIP $why" ]
	# torch built for the CPU alone; a CUDA build that finds no device, with torch's warning
	d=$(replay_with torchprobe '{python: "/opt/py/bin/python", torch: "2.9.1+cpu", cuda_build: null, cuda: false}')
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "SKIP $TORCH_FOUND (no torch with CUDA on this machine (/opt/py/bin/python: torch 2.9.1+cpu is a CPU build): the torch baselines' cuda path is not checked)"
	d=$(replay_with torchprobe '{python: "/opt/py/bin/python", torch: "2.9.1+cu130", cuda_build: "13.0", cuda: false,
		error: "CUDA initialization: The NVIDIA driver on your system is too old (found version 12040)."}')
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "SKIP $TORCH_FOUND (no torch with CUDA on this machine (/opt/py/bin/python: torch 2.9.1+cu130 (CUDA 13.0) finds no usable device: CUDA initialization: The NVIDIA driver on your system is too old (found version 12040).): the torch baselines' cuda path is not checked)"
	# a module torch-compile cannot make here is torch's limit, said with its reason: a SKIP
	d=$(replay_with torchcompile '.bench = {status: "skipped", message: "not timed: the torch-compile baseline of task '"'relu'"' cannot be made: AOTInductor cannot compile the module: InvalidCxxCompiler: No working C++ compiler found"}')
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -0 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "SKIP module tasks on cuda: timed against the torch-compile baseline (AOTInductor) (torch cannot make it here: relu: the torch-compile baseline of task 'relu' cannot be made: AOTInductor cannot compile the module: InvalidCxxCompiler: No working C++ compiler found)"
	assert_line --regexp '^check-gpu: 33 passed, 0 failed, 1 skipped in '
}

@test "check-gpu: module tasks on cuda: a wrong verdict, a record never timed or timed against another baseline FAIL" {
	local d
	# the wrong kernel passed, the linear one's reference failed, the probe found torch
	d=$(replay_with torchverify 'if .gpu_check == "torch_wrong" then .verify = {status: "pass"} | .status = "pass"
		elif .task == "linear" then del(.verify, .status) | .error = {program: "leap-verify", message: "the reference of task '"'linear'"' failed: torch died"} else . end')
	# relu timed against a kernel baseline, linear's torch baseline not built
	jq -c 'if .task == "relu" then .bench.baseline_kind = "kernel"
		else del(.bench) | .error = {program: "leap-bench", message: "the torch baseline of task '"'linear'"' does not build: cc failed"} end' \
		"$REPLAY/torcheager.jsonl" >"$d/torcheager.jsonl"
	# torch-compile's step killed at its limit: no record
	: >"$d/torchcompile.jsonl"
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$d" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line --partial "PASS $TORCH_FOUND: "
	assert_line "FAIL module tasks on cuda: correct kernels pass against float64 CPU torch (relu, linear): relu.cu: pass; linear.cu: none the reference of task 'linear' failed: torch died"
	assert_line "FAIL module tasks on cuda: a wrong kernel -> mismatch: relu_wrong.cu: pass"
	assert_line "FAIL module tasks on cuda: timed against the torch-eager baseline: relu.cu: ok, 3.81x over kernel (baseline 0.0118 ms); linear.cu: none (the torch baseline of task 'linear' does not build: cc failed)"
	assert_line "FAIL module tasks on cuda: timed against the torch-compile baseline (AOTInductor): relu.cu: no record (step torchcompile: replayed)"
	assert_line --regexp '^check-gpu: 30 passed, 4 failed, 0 skipped in '
}

@test "check-gpu: a step the deadline leaves no time for is not run, and its checks fail saying so" {
	PATH="$SMI:$PATH" CHECK_GPU_REPLAY="$REPLAY" DEADLINE=5 run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "step verify: not run: the 5 s deadline left no time"
	assert_line "step eventloop: not run: the 5 s deadline left no time"
	assert_line "FAIL wrong -> mismatch: wrong: no record (step verify: not run: the 5 s deadline left no time)"
}

@test "check-gpu --prepare: one build of what the run needs, with the baselines' libraries allowed; then nothing" {
	skip_unless_nvcc
	local p="$T/prep"
	CHECK_GPU_TASKS="vector_add matmul" GPU_PREP="$p" FAKE_GPUS="" PATH="$SMI:$PATH" run -0 bash "$ROOT/tests/gpu/check-gpu.sh" --prepare
	assert_line --regexp "^check-gpu: prepared $p in [0-9]+ s: 18 candidates for sm_90a \(vector_add matmul\), 8 trusted artifacts, "
	# matmul's baseline calls cuBLAS: allowed in the prepared suite, so it compiled as a candidate
	jq -e '.libraries == ["cublas"]' "$p/suite/matmul/task.json"
	jq -e -s 'map(select(.gpu_check == "baseline" and .task == "matmul"))[0] | .compile.status == "ok" and .compile.arch == "sm_90a"' "$p/records.jsonl"
	# artifacts named relative to the tree, there in the prepared cache
	for a in $(jq -r .compile.artifact "$p/records.jsonl"); do
		[[ "$a" != /* ]] && [ -f "$ROOT/$a" ] || [ -f "$a" ]
	done
	[ "$(awk '{ print $2 }' "$p/trusted.txt" | sort | uniq -c | tr -s ' ')" = "$(printf ' 4 baseline\n 4 reference')" ]
	grep -q '^NVCC=/' "$p/env"
	# the same again: nothing to do
	CHECK_GPU_TASKS="vector_add matmul" GPU_PREP="$p" FAKE_GPUS="" PATH="$SMI:$PATH" run -0 bash "$ROOT/tests/gpu/check-gpu.sh" --prepare
	assert_output "check-gpu: prepared, up to date: $p (vector_add matmul; sm_90a)"
	# no nvcc: skipped, saying why
	CUDA_HOME=/nonexistent PATH="$BARE_PATH" GPU_PREP="$T/p2" run -0 bash "$ROOT/tests/gpu/check-gpu.sh" --prepare
	assert_output "check-gpu: --prepare skipped: nvcc not found (NVCC, CUDA_HOME/bin, PATH)"
}

@test "check-gpu: a driver older than the runtime's minimum is the first FAIL, naming both; a forward-compatible libcuda is used instead" {
	mkdir -p "$T/prep"
	echo CUDART=13000 >"$T/prep/env"
	FAKE_DRIVER=570.86.15 GPU_PREP="$T/prep" CUDA_HOME=/nonexistent PATH="$SMI:$BARE_PATH" OUT="$T/out" \
		run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	[ "$(grep -m1 -E '^(PASS|FAIL|SKIP) ' <<<"$output")" = "FAIL driver: driver 570.86.15 is older than 580, the minimum of the CUDA 13.0 runtime (CUDART_VERSION 13000) that leap's runner and the prepared artifacts link, and no forward-compatible libcuda (cuda-compat) was carried or is here: every CUDA step would fail (run where the driver is at least 580, or build and prepare with a CUDA 12.x toolkit)" ]
	# nothing after it runs on the device: every other check says why it was skipped
	assert_line "SKIP setup (driver 570.86.15 is older than 580, the CUDA runtime's minimum)"
	assert_line "step verify, hang, bench, hot, eventloop, bandwidth, hostreg, torchprobe, torchverify, torcheager, torchcompile: not run (driver 570.86.15 is older than 580, the CUDA runtime's minimum)"
	assert_line --regexp '^check-gpu: 0 passed, 1 failed, 31 skipped in '
	[ "$(jq -sr '.[0] | "\(.check) \(.result)"' "$T/out/check-gpu.jsonl")" = "driver FAIL" ]
	# a forward-compatible libcuda carried in the prepared tree is put first, not failed
	mkdir -p "$T/prep/compat"
	: >"$T/prep/compat/libcuda.so.1"
	FAKE_DRIVER=570.86.15 GPU_PREP="$T/prep" CUDA_HOME=/nonexistent PATH="$SMI:$BARE_PATH" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "PASS driver: driver 570.86.15 is older than 580, the minimum of the CUDA 13.0 runtime (CUDART_VERSION 13000): the forward-compatible libcuda of $T/prep/compat goes first on LD_LIBRARY_PATH (data-centre GPUs only; the preflight's cuda driver line says whether it started)"
	# a driver new enough
	rm -r "$T/prep/compat"
	FAKE_DRIVER=580.65.06 GPU_PREP="$T/prep" CUDA_HOME=/nonexistent PATH="$SMI:$BARE_PATH" run -1 bash "$ROOT/tests/gpu/check-gpu.sh"
	assert_line "PASS driver: driver 580.65.06, at least 580: runs the CUDA 13.0 runtime (CUDART_VERSION 13000) that leap's runner and the artifacts link"
}

@test "make check-gpu builds and prepares nothing first: it runs the script" {
	run -0 make -n --no-print-directory -C "$ROOT" check-gpu
	assert_output "bash tests/gpu/check-gpu.sh"
}

# toolless_path DIR: DIR holds links to the commands of /usr/local/bin, /usr/bin and /bin but
# the compilers, linkers, make and jq (a GPU machine without a toolchain; the run brings jq).
toolless_path() {
	local f n
	mkdir -p "$1"
	for f in /usr/local/bin/* /usr/bin/* /bin/*; do
		n=${f##*/}
		case "$n" in
		cc | c++ | cpp | gcc* | g++* | clang* | nvcc | make | ld | ld.* | as | *-linux-gnu-* | jq) continue ;;
		esac
		[ -e "$1/$n" ] || ln -s "$f" "$1/$n"
	done
}

# start_rehearsal TREE OUT ENV...: check-gpu in TREE with ENV, in a session of its own (its id
# in $T/pid, the background job's in $pid, no descriptor of bats's own), once its verify step
# has started.
start_rehearsal() {
	local c=$1 out=$2
	shift 2
	(cd "$c" && env "$@" OUT="$out" setsid bash -c 'echo $$ >"$0"; exec bash tests/gpu/check-gpu.sh' "$T/pid" \
		>"$T/run.log" 2>&1 3>&-) &
	pid=$!
	for _ in $(seq 240); do
		grep -q '^step verify: started' "$out/check-gpu.txt" 2>/dev/null && break
		sleep 0.5
	done
	grep -q '^step verify: started' "$out/check-gpu.txt"
}

@test "check-gpu rehearsed as a GPU session runs it: no toolchain, no rebuild, the report saved after every step, a kill included" {
	skip_unless_nvcc
	local c="$T/tree" out pid
	# the tree a GPU session carries: the tracked files, bin/, libexec/ and the pack, prepared
	# here (vector_add alone, for time; the module tasks where torch is here); build/gpu/
	# itself does not travel
	local torch=""
	[ -n "${LEAP_TORCH_PYTHON:-}" ] && "$LEAP_TORCH_PYTHON" -c 'import torch' >/dev/null 2>&1 && torch=$LEAP_TORCH_PYTHON
	mkdir -p "$c"
	(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar cf - bin libexec build/gpu) | tar xf - -C "$c"
	(cd "$c" && CHECK_GPU_TASKS=vector_add FAKE_GPUS="" PATH="$SMI:$PATH" LEAP_TORCH_PYTHON="$torch" \
		bash tests/gpu/check-gpu.sh --prepare) >"$T/prepare.log" 2>&1
	[ -f "$c/build/gpu-prep.tar.gz" ]
	rm -rf "$c/build/gpu"
	toolless_path "$T/path"
	! PATH="$T/path" command -v cc
	! PATH="$T/path" command -v make
	! PATH="$T/path" command -v jq
	local -a env=(LEAP_TEST_DEVICE="gpu NVIDIA H100 (rehearsal)" CHECK_GPU_TASKS=vector_add CUDA_HOME=/nonexistent
		PATH="$T/path" LEAP_TORCH_PYTHON= CHECK_GPU_STUB_STEP=verify CHECK_GPU_STUB_CMD="sleep 600")
	# killed from outside while a step runs, as the device call's limit kills its command (the
	# whole process group, no clean-up possible): what it did so far is in $OUT
	out="$T/out1"
	start_rehearsal "$c" "$out" "${env[@]}"
	kill -KILL -- "-$(cat "$T/pid")"
	wait "$pid" || true
	# the step's timeout has a process group of its own: the rest of the session goes too
	pkill -KILL -s "$(cat "$T/pid")" || true
	run cat "$out/check-gpu.txt"
	assert_line "check-gpu: device: NVIDIA H100 (rehearsal)"
	assert_line --regexp "^check-gpu: unpacked build/gpu-prep.tar.gz "
	assert_line --regexp "^PASS setup: runner $c/libexec/leap-run-cuda, prepared $c/build/gpu/prep for sm_90a \(17 candidates\)"
	refute_line --partial "preparing it here"
	assert_line --regexp '^check-gpu: no context held \(holdctx: '
	assert_line --regexp '^step verify: started, limit [0-9]+ s$'
	refute_line --regexp '^check-gpu: [0-9]+ passed'
	[ "$(jq -r .check "$out/check-gpu.jsonl" | tr '\n' ,)" = "driver,setup,preflight,cuBLAS and cuDNN: the artifacts' libraries found," ]
	[ -s "$out/doctor.jsonl" ]
	# nothing else comes back but, killed in the middle of a write, the file being written
	[ -z "$(ls "$out" | grep -v -e '^check-gpu.txt$' -e '^check-gpu.jsonl$' -e '^doctor.jsonl$' -e '^records.jsonl$' -e '^stderr.txt$' -e '\.part$')" ]
	# an artifact that loads a library this machine lacks: named with its task before the steps
	mkdir -p "$T/gone"
	echo 'int gone(void) { return 0; }' | cc -shared -fPIC -x c - -Wl,-soname,libleapgone.so.13 -o "$T/gone/libleapgone.so.13"
	echo 'int gone(void); int f(void) { return gone(); }' |
		cc -shared -fPIC -x c - -L"$T/gone" -l:libleapgone.so.13 -o "$c/build/gpu/prep/needs-gone.so"
	rm -r "$T/gone"
	jq -nc --arg a "$c/build/gpu/prep/needs-gone.so" '{task: "vector_add", gpu_check: "libraries", compile: {status: "ok", artifact: $a}}' \
		>>"$c/build/gpu/prep/records.jsonl"
	# a step that outlives its limit is killed by the run itself, which goes on to every check
	out="$T/out2"
	(cd "$c" && env "${env[@]}" DEADLINE=90 OUT="$out" bash tests/gpu/check-gpu.sh) >"$T/run2.log" 2>&1 || true
	run cat "$out/check-gpu.txt"
	assert_line --regexp "^FAIL cuBLAS and cuDNN: the artifacts' libraries found: not found: libleapgone.so.13 \(vector_add\) .*: those tasks' checks cannot pass$"
	assert_line --regexp '^step verify: 0 lines in [0-9]+ s \(limit [0-9]+ s, killed at its limit of [0-9]+ s\)$'
	assert_line --regexp '^FAIL wrong -> mismatch: wrong: no record \(step verify: killed at its limit of [0-9]+ s\)$'
	# the module tasks: not prepared without torch, a SKIP that says so; prepared, their probe
	# had no time left, which fails as every step's check does
	if [ -z "$torch" ]; then
		assert_line "SKIP module tasks on cuda: torch with CUDA for the torch baselines (the module tasks were not prepared: LEAP_TORCH_PYTHON was unset when make gpu-prepare ran; the torch baselines' cuda path is not checked)"
	else
		assert_line --regexp '^FAIL module tasks on cuda: torch with CUDA for the torch baselines: no record \(step torchprobe: not run: the 90 s deadline left no time\)$'
	fi
	assert_line --regexp '^check-gpu: [0-9]+ passed, [0-9]+ failed, [01] skipped in [0-9]+ s \(deadline 90 s\)$'
	[ "$(jq -s length "$out/check-gpu.jsonl")" -eq "$(grep -cE '^(PASS|FAIL|SKIP) ' "$out/check-gpu.txt")" ]
	# the steps all run, on a machine whose Python has no torch with CUDA (this one has no GPU):
	# the module tasks are one SKIP naming why, before any torch step starts
	[ -n "$torch" ] || return 0
	out="$T/out3"
	(cd "$c" && env "${env[@]}" CHECK_GPU_STUB_CMD=true DEADLINE=120 OUT="$out" bash tests/gpu/check-gpu.sh) >"$T/run3.log" 2>&1 || true
	run cat "$out/check-gpu.txt"
	assert_line --regexp '^step hostreg: [0-9]+ lines in '
	assert_line --regexp "^SKIP module tasks on cuda: torch with CUDA for the torch baselines \(no torch with CUDA on this machine \(.+\): the torch baselines' cuda path is not checked\)$"
	refute_line --regexp '^step torch[a-z]+: started'
	[ "$(grep -c 'module tasks on cuda' <<<"$output")" = 1 ]
}
