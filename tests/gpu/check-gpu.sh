#!/usr/bin/env bash
# check-gpu.sh - make check-gpu: the cuda backend end to end on a real GPU, within one deadline,
# one line per check (PASS NAME: detail, FAIL NAME: detail, SKIP NAME (reason)) and a summary.
#
# A GPU is lent for minutes, once, on a machine that may lack nvcc, make, leap's build libraries
# and any network: so everything the checks run is built beforehand (--prepare, `make
# gpu-prepare`, here: the candidates by leap-compile in one batch, the references and baselines
# into the cache they are looked up in, the probes, the runtime libraries leap's programs load,
# the toolkit's forward-compatible libcuda where it is there and small enough, and where
# $LEAP_TORCH_PYTHON imports torch two module tasks of issue 42 with their kernels) into
# build/gpu/prep, packed into build/gpu-prep.tar.gz, which travels with bin/ and libexec/; the
# run (and --prepare too) unpacks it and builds nothing that is there (a content stamp says so,
# not file times, which a copy does not keep). The run: the driver's version against the CUDA
# runtime's minimum (before anything touches the device), the set-up, the preflight (doctor.sh:
# the driver, the toolchain, what the sandbox can do here, and the options its fallbacks call
# for), the libraries the artifacts load (cuBLAS, cuDNN: not carried), a CUDA context held open
# for the rest of the run (build/gpu/holdctx: no runner pays the driver's cold start, no device
# setting changed), then seven bounded steps, each one process over many records or one probe
# (leap-verify over every verdict fixture, leap-verify --timeout 5 over the hang, leap-bench
# over the baselines and the cheats, leap-bench --hot, the event loop, build/gpu/bandwidth,
# build/gpu/hostreg), then issue 42's four, after them so that they take none of their time (the
# torch probe, leap-verify and leap-bench --baseline torch-eager over the module tasks' kernels,
# and last leap-bench --baseline torch-compile, only where 60 s are left), then the checks,
# which read the records those steps wrote (JSON, with jq: never a line of stderr, where
# warnings come first). Every step runs under `timeout`, cut to what is left of the deadline
# (DEADLINE, 480 s). The report goes into $OUT as it is written (after every check, and as
# every step starts and ends), so that a run killed at any point still returns everything it
# did; told to stop (TERM, INT, HUP), it ends the step running and the context holder first,
# and says so in the report.
#
# Checks: the driver (older than the runtime's minimum without a forward-compatible libcuda: the
# first FAIL, naming both, and every later check skipped); the set-up (a GPU visible but no
# cuda runner, no bin/, or no prepared tree, is a FAIL); the preflight; cuBLAS and cuDNN found;
# the arch the candidates were built for; the cuda runner's own fixes of issue 27
# (the copy role's guards and inputs, device memory shared by descriptor, the host regions
# page-locked each on its own, a client's regions cleared between candidates, a candidate's
# own context); each representative task's baseline
# verified and timed against itself (speedup 0.9-1.1, roofline <= 1: a vendor GEMM, a cuDNN
# convolution, a reduction, an elementwise kernel, softmax, layernorm, attention; --full: every
# task), in a suite where its baseline's libraries are allowed; wrong -> mismatch; illegal
# address -> runtime_error and the GPU usable after; hang -> timeout and usable after; side
# stream, memoisation and deferred work earn no speedup (a cheat never timed does not pass);
# the event loop's own flush makes a read one L2 partition holds cold; leap-bench against that
# loop, flushed at 2^26 and 2^20 floats, and --hot at 2^20; the flush leaves a 16 MiB read
# cold; a read-only kernel does not outrun the copy the roofline's floor comes from. Issue 42,
# module tasks on cuda against torch (tests/fixtures/torch/modules.jsonl's relu and linear,
# their kernels in tests/fixtures/gpu/torch): torch with CUDA found ($LEAP_TORCH_PYTHON, else
# python3); the correct kernels pass against the reference (the module in float64 by CPU torch,
# in a trusted process), the wrong one is a mismatch; the correct ones timed against
# torch-eager (ok or noisy, a measured speedup, bench.baseline_kind torch-eager), relu's
# against torch-compile. Where the module tasks were not prepared (no torch there) or this
# machine has no torch with CUDA, that is one SKIP line saying why, never a FAIL; so is a
# Python without a shared libpython or a machine without cc (the torch baselines embed this
# machine's libpython and are built where they run) for the timings, and a torch-compile
# baseline torch says it cannot make (its reason). Without a GPU every check says SKIP with
# the reason, exit 0. Exit 1 when a check fails.
#
# usage: tests/gpu/check-gpu.sh [--full]            the run
#        tests/gpu/check-gpu.sh --prepare [--full]  build what the run needs (needs nvcc)
# env: OUT       also write the report there, as it goes: check-gpu.txt, check-gpu.jsonl (one
#                record per check), records.jsonl (every record the steps wrote), stderr.txt,
#                doctor.jsonl
#      DEADLINE  seconds for the whole run (480); MAX_TIME per timing (2)
#      LEAP_TORCH_PYTHON  the Python with torch: --prepare imports the module tasks with it
#                (unset: not prepared); the run's torch baselines (unset: python3 on PATH)
#      GPU_PREP  the prepared tree (build/gpu/prep); GPU_ARCH the arch to prepare for (the
#                visible GPU's, else sm_90a: an H100/H200); CHECK_GPU_TASKS the tasks to check;
#                COMPAT_MAX_MB the largest forward-compatible libcuda --prepare carries (64)
#      LEAP_TEST_DEVICE, CHECK_GPU_REPLAY, CHECK_GPU_STUB_STEP with CHECK_GPU_STUB_CMD: test
#                seams (tests/gpu.bats): the device probe's answer ("gpu NAME" or "none
#                REASON"); a directory of recorded step outputs read instead of running the
#                steps; a shell command run as the step named instead of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
export PATH="$ROOT/bin:$PATH" LC_ALL=C
. tests/gpu/lib.sh
START=$SECONDS
DEADLINE=${DEADLINE:-480}
MAX_TIME=${MAX_TIME:-2}
PREP=${GPU_PREP:-build/gpu/prep}
[[ "$PREP" == /* ]] || PREP=$ROOT/$PREP
G=tests/fixtures/gpu
LIBEXEC=${LEAP_LIBEXEC:-$ROOT/libexec}
RESERVE=10 # seconds kept for the checks and the report
# a vendor GEMM, a cuDNN convolution, a reduction, an elementwise kernel, a row-wise softmax,
# a normalisation, attention
REPRESENTATIVE="vector_add row_sum softmax layernorm attention matmul conv2d"
# issue 42's module tasks (tests/fixtures/torch/modules.jsonl): an elementwise module, and one
# whose parameters the torch baselines bind in place; their kernels in tests/fixtures/gpu/torch
TORCH_TASKS="relu linear"
TORCH_CANDIDATES=tests/fixtures/gpu/torch

mode=run full=0
for a in "$@"; do
	case "$a" in
	--prepare) mode=prepare ;;
	--full) full=1 ;;
	*)
		echo "usage: tests/gpu/check-gpu.sh [--prepare] [--full]" >&2
		exit 2
		;;
	esac
done
if [ -n "${CHECK_GPU_TASKS:-}" ]; then
	TASKS=$CHECK_GPU_TASKS
elif [ $full = 1 ]; then
	TASKS=$(find tasks -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
else
	TASKS=$REPRESENTATIVE
fi
read -r -a words <<<"$TASKS"
TASKS="${words[*]}" # one space between names

W=$(mktemp -d "${TMPDIR:-/tmp}/leap-check-gpu.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT

left() { echo $((DEADLINE - (SECONDS - START))); }

# ---- preparing: everything the run needs, built here once ----

# What --prepare makes, by version: bump it when prepare() makes something else.
PREP_FORMAT=5

# The stamp of a prepared tree: what it was built from (sources, programs, selection, arch).
stamp() {
	{
		echo "format $PREP_FORMAT; tasks: $TASKS; arch: $1; nvcc: $2"
		cat tests/fixtures/gpu/*.cu tests/gpu/eventloop.cu tests/gpu/hostreg.cu
		for t in $TASKS vector_add row_sum; do cat tasks/"$t"/*; done
		echo "torch: $TORCH_TASKS"
		cat tests/fixtures/torch/modules.jsonl "$TORCH_CANDIDATES"/*.cu "$LIBEXEC"/leap-torchref.py 2>/dev/null
		cat bin/leap-compile bin/leap-verify bin/leap-bench "$LIBEXEC"/leap-run-cuda 2>/dev/null
	} | sha256sum | cut -c1-64
}

# compile_batch TASKS ARCH IN OUT WHAT: leap-compile's one batch of IN for ARCH into OUT, each
# record without its code and its artifact relative to the tree (which travels); any record not
# compiled is a failure, said with WHAT.
compile_batch() {
	if ! leap-compile --no-progress --tasks "$1" --arch "$2" "$3" >"$W/compile.out" 2>"$W/compile.err" ||
		[ "$(jq -r .compile.status "$W/compile.out" | sort -u)" != ok ]; then
		echo "check-gpu: --prepare: leap-compile failed$5:" >&2
		jq -r 'select(.compile.status != "ok") | "\(.file): \(.compile.status // .error.message)"' "$W/compile.out" >&2
		cat "$W/compile.err" >&2
		return 1
	fi
	jq -c --arg root "$ROOT/" 'del(.code) | .compile.artifact |= ltrimstr($root)' "$W/compile.out" >"$4"
}

# suite_task SRC ID JQ: a copy of task SRC as ID in the prepared suite, its task.json through JQ;
# every task there allows the libraries its baseline calls, so that the baseline compiles as a
# candidate (leap-compile refuses a library its task does not allow).
suite_task() {
	local d=$PREP/suite/$2
	mkdir -p "$d"
	cp tasks/"$1"/reference.c tasks/"$1"/baseline.cu "$d/"
	jq --arg id "$2" '.id = $id | .libraries = ((.libraries // []) + (.baseline_libraries // []) | unique) | '"$3" \
		tasks/"$1"/task.json >"$d/task.json"
}

# record CHECK TASK FILE: one candidate record of the run, marked with the check it serves.
record() {
	jq -nc --arg k "$1" --arg t "$2" --arg f "$3" --rawfile c "$3" \
		'{task: $t, group: ($k + ":" + $t), sample: 0, turn: 1, backend: "cuda", gpu_check: $k, file: $f, code: $c}'
}

prepare() {
	local nvcc arch want dev
	# a carried pack first: what it holds is up to date if its stamp says so, and rebuilding it
	# on a GPU machine that has nvcc costs minutes of the device's time
	unpack
	nvcc=$(gpu_nvcc_name)
	if [ -z "$nvcc" ]; then
		echo "check-gpu: --prepare skipped: nvcc not found (NVCC, CUDA_HOME/bin, PATH)"
		return 0
	fi
	for f in bin/leap-compile build/gpu/prebuild; do
		[ -x "$f" ] || { echo "check-gpu: --prepare: $f is not built (make gpu-tools)" >&2; return 1; }
	done
	dev=$(gpu_device)
	arch=${GPU_ARCH:-}
	[ -z "$arch" ] && [ "${dev%% *}" = gpu ] && arch=$(gpu_arch_of "$(gpu_smi compute_cap)")
	arch=${arch:-sm_90a}
	want=$(stamp "$arch" "$nvcc")
	if [ -f "$PREP/stamp" ] && [ "$(cat "$PREP/stamp")" = "$want" ]; then
		echo "check-gpu: prepared, up to date: $PREP ($TASKS; $arch)"
		# the module tasks, where the tree was prepared without torch and torch is named now
		if [ ! -s "$PREP/torch.jsonl" ] && [ -n "${LEAP_TORCH_PYTHON:-}" ]; then
			export NVCC=$nvcc CC=${CC:-cc} LEAP_CACHE=$PREP/cache
			prepare_torch "$arch" || return 1
			echo "check-gpu: module tasks added: $TORCH_NOTE"
			pack_stale && pack && echo "check-gpu: packed again: $PACK"
			return 0
		fi
		pack_stale && pack && echo "check-gpu: packed again: $PACK (a tool changed)"
		return 0
	fi
	local t0=$SECONDS
	rm -rf "$PREP"
	mkdir -p "$PREP/suite" "$PREP/rt" || return 1
	for t in $TASKS; do suite_task "$t" "$t" .; done
	# the L2 checks at sizes one partition of the L2 holds (an H100's 50 MB are two partitions
	# of 25 MB; a line is cached in the partition near the SMs that read it, so a working set
	# larger than one partition need not stay): vector_add on 2^20 floats (12 MiB), row_sum
	# reading 16 MiB
	suite_task vector_add vector_add_l2 '.bench = {n: 1048576}'
	suite_task row_sum row_sum_l2 '.bench = {rows: 1024, cols: 4096}'
	{
		for t in $TASKS; do record baseline "$t" tasks/"$t"/baseline.cu; done
		record l2 vector_add_l2 tasks/vector_add/baseline.cu
		record l2 row_sum_l2 tasks/row_sum/baseline.cu
		for f in side_stream memo deferred; do record cheat vector_add $G/$f.cu; done
		record wrong vector_add $G/vector_add_wrong.cu
		record illegal vector_add $G/illegal.cu
		record after_illegal vector_add $G/vector_add_fast.cu
		record hang vector_add $G/hang.cu
		record after_hang vector_add $G/vector_add_fast.cu
		# issue 27: the copy role's guards and inputs; a guard of the owner's client region
		# damaged while timed, then a correct candidate on the same pool; a context of the
		# candidate's own, popped or left current
		record overrun vector_add $G/overrun.cu
		record input_write vector_add $G/input_write.cu
		record overrun_timed vector_add $G/overrun_timed.cu
		record after_overrun vector_add $G/vector_add_fast.cu
		record own_context vector_add $G/own_context.cu
		record own_context_current vector_add $G/own_context_current.cu
	} >"$W/candidates.jsonl"
	# one leap-compile for all, and the trusted builds, with nvcc and cc named as the run will
	# name them (their names enter the cache keys)
	export NVCC=$nvcc CC=${CC:-cc} LEAP_CACHE=$PREP/cache
	compile_batch "$PREP/suite" "$arch" "$W/candidates.jsonl" "$PREP/records.jsonl" "" || return 1
	prepare_torch "$arch" || return 1
	build/gpu/prebuild "$PREP/cache" "$PREP"/suite/* >"$PREP/trusted.txt" || return 1
	# the libraries leap's programs and jq load beyond the C library's, and jq itself, for a
	# machine without them
	local lib
	mkdir -p "$PREP/bin" && cp -L "$(command -v jq)" "$PREP/bin/jq"
	for lib in $(ldd bin/leap-verify bin/leap-bench bin/leap-compile "$LIBEXEC"/leap-run-* "$PREP/bin/jq" 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u); do
		case "$(basename "$lib")" in
		libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
		*) cp -L "$lib" "$PREP/rt/" ;;
		esac
	done
	# the CUDA runtime everything links (the runner, the artifacts: statically), whose minimum
	# driver the run compares with the device's before any step
	local inc cudart
	inc=$(dirname "$(readlink -f "$(command -v "$nvcc")")")/../include
	cudart=$(sed -n 's/^#define CUDART_VERSION *\([0-9][0-9]*\).*/\1/p' "$inc/cuda_runtime_api.h" 2>/dev/null | head -1)
	compat
	printf 'NVCC=%s\nCC=%s\nPREP_ARCH=%s\nCUDART=%s\n' "$nvcc" "$CC" "$arch" "$cudart" >"$PREP/env"
	echo "$want" >"$PREP/stamp"
	# one compressed file to carry to the GPU machine (the artifacts are mostly the static
	# CUDA runtime: a third of their size), with the probes and the event loop
	pack
	echo "check-gpu: prepared $PREP in $((SECONDS - t0)) s: $(wc -l <"$PREP/records.jsonl") candidates for $arch ($TASKS), $(wc -l <"$PREP/trusted.txt") trusted artifacts, CUDA runtime ${cudart:-unknown}, $(du -sh "$PREP" | cut -f1); to carry: $PACK ($(du -sh "$PACK" 2>/dev/null | cut -f1)); forward-compatible driver: $COMPAT_NOTE; module tasks: $TORCH_NOTE"
}

# prepare_torch ARCH: issue 42's module tasks (TORCH_TASKS) imported by $LEAP_TORCH_PYTHON into
# $PREP/torch, a task root of their own (prebuild builds the C tasks' references and baselines,
# which a module task has none of), and their kernels compiled for ARCH into $PREP/torch.jsonl.
# Without torch here they are not prepared, and $PREP/torch.note says why: the run's SKIP line
# gives it. The torch baselines themselves are built where they run: each embeds that
# machine's libpython (lib/referee/torchbase.c).
prepare_torch() {
	local d=$PREP/torch
	rm -rf "$d" "$PREP/torch.jsonl" "$PREP/torch.note"
	TORCH_NOTE=""
	if [ -z "${LEAP_TORCH_PYTHON:-}" ]; then
		TORCH_NOTE="LEAP_TORCH_PYTHON was unset when make gpu-prepare ran"
	elif ! jq -c --arg ts "$TORCH_TASKS" 'select(.id as $i | $ts | split(" ") | index($i))' \
		tests/fixtures/torch/modules.jsonl >"$W/modules.jsonl" ||
		! leap-task --import "$d" "$W/modules.jsonl" >"$W/import.jsonl" 2>"$W/import.err"; then
		TORCH_NOTE="leap-task --import failed where the run was prepared: $(grep -v '^leap-torchref: ' "$W/import.err" | head -1 | cut -c1-200)"
	fi
	if [ -n "$TORCH_NOTE" ]; then
		rm -rf "$d"
		echo "$TORCH_NOTE" >"$PREP/torch.note"
		echo "check-gpu: --prepare: module tasks not prepared: $TORCH_NOTE" >&2
		return 0
	fi
	{
		for t in $TORCH_TASKS; do record torch_ok "$t" "$TORCH_CANDIDATES/$t.cu"; done
		record torch_wrong relu "$TORCH_CANDIDATES/relu_wrong.cu"
	} >"$W/torch.in"
	compile_batch "$d" "$1" "$W/torch.in" "$PREP/torch.jsonl" " on the module tasks' kernels" || return 1
	TORCH_NOTE="$(wc -l <"$PREP/torch.jsonl") candidates of $TORCH_TASKS"
}

# compat: the toolkit's forward-compatible driver library (cuda-compat: libcuda.so.* in
# $CUDA_HOME/compat) copied into $PREP/compat, for a machine whose driver is older than the
# runtime's minimum; only where it is there and at most COMPAT_MAX_MB (64: the travelling tree
# is 64 MiB in all, and the pack compresses it), else the run's driver check FAILs naming both
# versions.
compat() {
	local dir=${CUDA_HOME:-/usr/local/cuda}/compat mb
	COMPAT_NOTE="no $dir here (the cuda-compat package)"
	[ -e "$dir/libcuda.so.1" ] || return 0
	mb=$(du -smL "$dir" 2>/dev/null | cut -f1)
	if [ "${mb:-0}" -gt "${COMPAT_MAX_MB:-64}" ]; then
		COMPAT_NOTE="$dir is $mb MB, over COMPAT_MAX_MB (${COMPAT_MAX_MB:-64}): not carried"
		return 0
	fi
	mkdir -p "$PREP/compat" && cp -L "$dir"/lib*.so* "$PREP/compat/" && COMPAT_NOTE="$dir carried ($mb MB)"
}

# pack: $PACK, what a GPU machine needs of build/gpu (the prepared tree, the probes, the event
# loop) in one file; the run unpacks it where $PREP is missing.
PACK=${GPU_PACK:-build/gpu-prep.tar.gz}
# the programs of build/gpu the run starts (make gpu-tools); those built with nvcc may be missing
GPU_TOOLS="build/gpu/probe build/gpu/holdctx build/gpu/eventloop build/gpu/hostreg build/gpu/bandwidth"
pack() {
	local rel=${PREP#"$ROOT"/} tools=()
	[[ "$rel" == /* ]] && return 0 # a prepared tree outside the repository is not packed
	for f in $GPU_TOOLS; do [ -x "$f" ] && tools+=("$f"); done
	tar czf "$PACK.tmp" "$rel" "${tools[@]}" && mv "$PACK.tmp" "$PACK"
}

# pack_stale: the pack is missing, or something in it changed since.
pack_stale() {
	local rel=${PREP#"$ROOT"/}
	[[ "$rel" != /* ]] || return 1
	# shellcheck disable=SC2086 # a list of paths without spaces
	[ ! -f "$PACK" ] || [ -n "$(find "$rel" $GPU_TOOLS -newer "$PACK" 2>/dev/null | head -1)" ]
}

unpack() {
	# only into the place it was packed from, and only where nothing is prepared yet
	[ "$PREP" = "$ROOT/build/gpu/prep" ] || return 0
	[ -f "$PREP/stamp" ] || [ ! -f "$PACK" ] || [ -n "${CHECK_GPU_REPLAY:-}" ] && return 0
	tar xzf "$PACK" && echo "check-gpu: unpacked $PACK ($(du -sh "$PACK" | cut -f1))"
}

if [ $mode = prepare ]; then
	prepare
	exit
fi

# ---- the run ----

npass=0 nfail=0 nskip=0
TORCH_STEPS="torchprobe torchverify torcheager torchcompile"
STEPS="verify hang bench hot eventloop bandwidth hostreg $TORCH_STEPS" # in the order they run
TORCH_WHY="" EAGER_WHY="" COMPILE_WHY="" # why the module tasks' steps, or some, were not run
why="" # the reason every GPU check is skipped, or ""
VOPTS=() BOPTS=() # the fallbacks' options each program takes
declare -A STEP_NOTE=()

# check NAME FUNCTION [ARG]...: FUNCTION sets $detail and returns 0 (PASS) or not (FAIL, or
# SKIP with the reason it puts in $skipped: what this machine lacks, never a verdict); SKIP
# with the reason while $why is set. $res is the result.
check() {
	local name=$1
	shift
	detail="" skipped=""
	if [ -n "$why" ]; then
		res=SKIP skipped=$why
	elif "$@"; then
		res=PASS
		echo "PASS $name${detail:+: $detail}"
		npass=$((npass + 1))
	elif [ -n "$skipped" ]; then
		res=SKIP
	else
		res=FAIL
		echo "FAIL $name${detail:+: $detail}"
		nfail=$((nfail + 1))
	fi
	if [ $res = SKIP ]; then
		echo "SKIP $name ($skipped)"
		nskip=$((nskip + 1))
		detail=$skipped
	fi
	jq -n 1 >/dev/null 2>&1 &&
		jq -nc --arg c "$name" --arg r "$res" --arg d "$detail" '{check: $c, result: $r, detail: $d}' >>"$W/checks.jsonl"
	save checks
}

# bounded STEP CAP CMD...: runs CMD (stdout to $W/STEP.jsonl, stderr to $W/STEP.err) under
# `timeout`, at most CAP seconds and never past the deadline; with CHECK_GPU_REPLAY, copies the
# recorded outputs instead. STEP_NOTE[STEP] says what became of it.
bounded() {
	local step=$1 cap=$2 t rc t0=$SECONDS
	shift 2
	t=$(($(left) - RESERVE))
	[ "$t" -gt "$cap" ] && t=$cap
	if [ "$t" -lt 5 ]; then
		: >"$W/$step.jsonl"
		STEP_NOTE[$step]="not run: the $DEADLINE s deadline left no time"
		echo "step $step: ${STEP_NOTE[$step]}"
		return 125
	fi
	if [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		cp "$CHECK_GPU_REPLAY/$step.jsonl" "$W/$step.jsonl" 2>/dev/null || : >"$W/$step.jsonl"
		cp "$CHECK_GPU_REPLAY/$step.err" "$W/$step.err" 2>/dev/null || : >"$W/$step.err"
		STEP_NOTE[$step]="replayed"
		echo "step $step: replayed from $CHECK_GPU_REPLAY"
		return 0
	fi
	# CHECK_GPU_STUB_STEP, CHECK_GPU_STUB_CMD: a test seam (tests/gpu.bats), a shell command run
	# as that step instead of its own (a step that hangs, to kill the run inside it)
	[ "$step" = "${CHECK_GPU_STUB_STEP:-}" ] && set -- bash -c "$CHECK_GPU_STUB_CMD"
	echo "step $step: started, limit $t s"
	STEP_NOTE[$step]="killed while running (the run ended inside it)"
	save
	# in the background, so that a signal to the run reaches the trap (stopped) at once; timeout
	# makes a process group of its own, which a signal to the run's group does not reach
	timeout -k 5 "$t" "$@" >"$W/$step.jsonl" 2>"$W/$step.err" &
	STEP_PID=$!
	wait "$STEP_PID"
	rc=$?
	STEP_PID=""
	case $rc in
	124 | 137) STEP_NOTE[$step]="killed at its limit of $t s" ;;
	*) STEP_NOTE[$step]="exit $rc" ;;
	esac
	echo "step $step: $(wc -l <"$W/$step.jsonl") lines in $((SECONDS - t0)) s (limit $t s, ${STEP_NOTE[$step]})"
	save
	return $rc
}

# get STEP CHECK [TASK] [FILE] JQ: JQ over the first record of STEP marked CHECK (and TASK, and
# whose file ends in FILE); "" when there is none.
get() {
	local step=$1 k=$2 t=$3 f=$4
	jq -r --arg k "$k" --arg t "$t" --arg f "$f" \
		"select(.gpu_check == \$k and (\$t == \"\" or .task == \$t) and (\$f == \"\" or (.file // \"\" | endswith(\$f)))) | $5" \
		"$W/$step.jsonl" 2>/dev/null | head -1
}

# missing STEP: the detail of a record STEP did not write.
missing() {
	local e
	e=$(grep -v 'persistence mode' "$W/$1.err" 2>/dev/null | head -1 | cut -c1-160)
	echo "no record (step $1: ${STEP_NOTE[$1]:-not run}${e:+; stderr: $e})"
}

# The fields that say why a record is what it is.
WHY='((if .bench.status == "ok" then null else .bench.message end) // (if .verify.status == "pass" then null else .verify.message end) // .error.message // "" | gsub("\\s+"; " ") | .[:160])'
# "STATUS SPEEDUP": the speedup an ok record carries, "-" for any other (a noisy record's is 0)
SPEEDUP='"\(.bench.status // "none") \(if .bench.status == "ok" then .bench.speedup else "-" end)"'

# ---- the set-up and the preflight ----

setup() {
	if [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		detail="replaying the recorded outputs in $CHECK_GPU_REPLAY"
		return 0
	fi
	local p
	for p in bin/leap-verify bin/leap-bench; do
		if [ ! -x "$p" ]; then
			detail="$p is not here: the run builds nothing (no make on a GPU machine); bring bin/ built where leap was built (bench/README.md section 4)"
			why="leap's programs are missing"
			return 1
		fi
	done
	if [ ! -x "$LIBEXEC/leap-run-cuda" ]; then
		detail="a GPU is visible, but $LIBEXEC/leap-run-cuda is not built (nvcc was not found when leap was built: build where NVCC, CUDA_HOME or PATH finds it, and bring libexec/)"
		why="the cuda runner is missing"
		return 1
	fi
	runtime || return 1 # before anything runs leap or jq, a preparation here included
	if [ ! -f "$PREP/stamp" ] || [ "$(cat "$PREP/stamp")" != "$(stamp "$(sed -n 's/^PREP_ARCH=//p' "$PREP/env" 2>/dev/null)" "$(sed -n 's/^NVCC=//p' "$PREP/env" 2>/dev/null)")" ]; then
		if [ -z "$(gpu_nvcc_name)" ]; then
			detail="$PREP is missing or was prepared from other sources or programs, and there is no nvcc here to prepare it (run make gpu-prepare where leap was built, and bring $PACK)"
			why="the run is not prepared"
			return 1
		fi
		echo "check-gpu: $PREP missing or stale: preparing it here"
		local args=(--prepare)
		[ $full = 1 ] && args+=(--full)
		timeout $(($(left) - RESERVE)) bash "$0" "${args[@]}" || {
			detail="preparing $PREP here failed"
			why="the run is not prepared"
			return 1
		}
	fi
	set -a
	. "$PREP/env"
	set +a
	export LEAP_CACHE=$PREP/cache
	detail="runner $LIBEXEC/leap-run-cuda, prepared $PREP for $PREP_ARCH ($(wc -l <"$PREP/records.jsonl") candidates), NVCC named $NVCC"
}

# The driver against the CUDA runtime that leap's runner and the prepared artifacts link (the
# prepared tree's env names it), before any step: a driver older than the minimum of the
# runtime's major version fails every CUDA call. Where it is older, a forward-compatible
# libcuda (cuda-compat: the prepared tree's compat/, else this machine's toolkit's) goes first
# on LD_LIBRARY_PATH, which the runners' minimal root shows; without one this is the run's
# first FAIL, naming both versions, and every later check is skipped with that reason.
driver() {
	local drv rt need rtname cdir
	drv=$(gpu_driver_version)
	rt=$(sed -n 's/^CUDART=//p' "$PREP/env" 2>/dev/null)
	if [ -z "$rt" ]; then
		detail="driver ${drv:-unknown}, not compared: $PREP/env names no CUDA runtime (not prepared, or prepared before it did)"
		return 0
	fi
	need=$(gpu_min_driver "$rt")
	rtname="CUDA $((rt / 1000)).$((rt % 1000 / 10)) runtime (CUDART_VERSION $rt)"
	if [ -z "$drv" ] || [ -z "$need" ]; then
		detail="driver ${drv:-unknown}, the $rtname needs ${need:-an unknown minimum}: not compared here (no version read); leap's programs compare them at their first CUDA call"
		return 0
	fi
	if [ "${drv%%.*}" -ge "$need" ]; then
		detail="driver $drv, at least $need: runs the $rtname that leap's runner and the artifacts link"
		return 0
	fi
	for cdir in "$PREP/compat" "${CUDA_HOME:-/usr/local/cuda}/compat"; do
		if [ -e "$cdir/libcuda.so.1" ]; then
			export LD_LIBRARY_PATH=$cdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
			detail="driver $drv is older than $need, the minimum of the $rtname: the forward-compatible libcuda of $cdir goes first on LD_LIBRARY_PATH (data-centre GPUs only; the preflight's cuda driver line says whether it started)"
			return 0
		fi
	done
	detail="driver $drv is older than $need, the minimum of the $rtname that leap's runner and the prepared artifacts link, and no forward-compatible libcuda (cuda-compat) was carried or is here: every CUDA step would fail (run where the driver is at least $need, or build and prepare with a CUDA $(gpu_driver_cuda "$drv").x toolkit)"
	why="driver $drv is older than $need, the CUDA runtime's minimum"
	return 1
}

# The libraries the prepared artifacts load, found before the steps that need them: cuBLAS and
# cuDNN are linked dynamically and not carried (cuBLASLt alone is over 500 MB), so each
# artifact's loader answer (ldd) is read; a library it does not find is looked for where GPU
# machines keep one (a CUDA toolkit, Python's nvidia wheels, /opt), and its directory goes
# first on LD_LIBRARY_PATH, which the runners' minimal root shows. FAIL names each library
# still missing and the tasks whose artifacts need it (their checks cannot pass).
libraries() {
	command -v ldd >/dev/null || {
		detail="no ldd here: the artifacts' libraries are not looked for before the steps"
		return 0
	}
	local arts=$W/artifacts t a so dir found=() missing=()
	{
		jq -r '"\(.task) \(.compile.artifact)"' "$PREP/records.jsonl"
		awk '{ print $1, $3 }' "$PREP/trusted.txt"
	} 2>/dev/null | sort -u >"$arts"
	for so in $(lib_missing "$arts" | awk '{ print $2 }' | sort -u); do
		dir=$(timeout 20 find /usr/local /usr/lib /opt /root /home -name "$so" -not -path '*/stubs/*' 2>/dev/null | head -1)
		[ -n "$dir" ] && dir=$(dirname "$dir") && export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} &&
			echo "check-gpu: $so found in $dir, not where the loader looks: first on LD_LIBRARY_PATH"
	done
	while read -r t so; do missing+=("$so ($t)"); done < <(lib_missing "$arts" | sort -u)
	while read -r t a; do
		[[ "$a" == /* ]] || a=$ROOT/$a
		found+=("$(ldd "$a" 2>/dev/null | awk -v t="$t" '$1 ~ /^lib(cublas|cublasLt|cudnn)/ && $3 ~ /^\// { print $1 " (" t "): " $3 }')")
	done <"$arts"
	local have
	have=$(printf '%s\n' "${found[@]}" | sed '/^$/d' | sort -u | tr '\n' ';' | sed 's/;$//; s/;/; /g')
	if [ ${#missing[@]} -gt 0 ]; then
		detail="not found: ${missing[*]} (the loader's places, LD_LIBRARY_PATH, /usr/local, /usr/lib, /opt, /root, /home): those tasks' checks cannot pass${have:+; found: $have}"
		return 1
	fi
	detail="$(wc -l <"$arts") artifacts load: ${have:-no cuBLAS nor cuDNN needed}"
}

# lib_missing FILE: "TASK SONAME" for each library the loader does not find for an artifact of
# FILE ("TASK ARTIFACT" lines).
lib_missing() {
	local t a
	while read -r t a; do
		[[ "$a" == /* ]] || a=$ROOT/$a
		ldd "$a" 2>/dev/null | awk -v t="$t" '/not found/ { print t, $1 }'
	done <"$1"
}

# hold_context: build/gpu/holdctx keeps a CUDA context open for the rest of the run, so that
# with persistence mode off the driver stays initialised between runners and none pays a cold
# start (seconds each, 21 runners in the verify step alone); it changes no device setting and
# ends with the run (killed at the end; its parent's death and the deadline end it too).
# Started after the preflight, which makes /dev/nvidia-uvm before anything takes the device
# list, and only in the Default compute mode (in an exclusive mode its context would lock the
# runners out). Whatever keeps it from holding one costs only its line.
HOLD_PID=""
hold_context() {
	local cm
	[ -n "${CHECK_GPU_REPLAY:-}" ] && return 0
	if [ ! -x build/gpu/holdctx ]; then
		echo "check-gpu: no context held: build/gpu/holdctx is not built (make gpu-tools): each runner may pay a cold start"
		return 0
	fi
	cm=$(gpu_smi compute_mode)
	if [ -n "$cm" ] && [ "$cm" != Default ]; then
		echo "check-gpu: no context held: compute mode $cm (a context held would lock the runners out)"
		return 0
	fi
	build/gpu/holdctx "$(($(left) > 1 ? $(left) : 1))" >"$W/holdctx.out" 2>&1 &
	HOLD_PID=$!
	for _ in $(seq 60); do # 30 s at most: a cold first context takes seconds
		[ -s "$W/holdctx.out" ] || ! kill -0 "$HOLD_PID" 2>/dev/null && break
		sleep 0.5
	done
	if grep -q '^holdctx: holding' "$W/holdctx.out" && kill -0 "$HOLD_PID" 2>/dev/null; then
		echo "check-gpu: $(head -1 "$W/holdctx.out") (pid $HOLD_PID, until the run ends)"
	else
		echo "check-gpu: no context held ($(head -1 "$W/holdctx.out" 2>/dev/null)): each runner may pay a cold start"
		release_context
	fi
}

# release_context: ends the context holder, if one runs.
release_context() {
	[ -n "$HOLD_PID" ] || return 0
	kill "$HOLD_PID" 2>/dev/null
	wait "$HOLD_PID" 2>/dev/null
	HOLD_PID=""
}

# leap's programs (and jq) must load: what the build machine had and this one lacks comes from
# the prepared tree's bin/ and rt/, copied into $USED (only what is missing: an older copy of a
# library the machine has must not shadow it), which goes first on PATH and LD_LIBRARY_PATH
# (the runners' minimal root shows it; it cannot follow a link out of it). $USED lies outside
# $PREP, which a preparation here replaces.
USED=$ROOT/build/gpu/rt-used
runtime() {
	local e p
	if ! jq -n 1 >/dev/null 2>&1 && [ -x "$PREP/bin/jq" ]; then
		mkdir -p "$USED" && cp "$PREP/bin/jq" "$USED/"
		export PATH=$USED:$PATH
	fi
	if bin/leap-verify --version >/dev/null 2>&1 && bin/leap-bench --version >/dev/null 2>&1 && jq -n 1 >/dev/null 2>&1; then
		return 0
	fi
	mkdir -p "$USED"
	export LD_LIBRARY_PATH=$USED${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	for _ in 1 2 3; do # a library found now may name one missing too
		for p in bin/leap-verify bin/leap-bench bin/leap-compile "$LIBEXEC"/leap-run-cuda "$(command -v jq)"; do
			for e in $(ldd "$p" 2>/dev/null | awk '/not found/ { print $1 }'); do
				cp "$PREP/rt/$e" "$USED/" 2>/dev/null
			done
		done
	done
	if ! bin/leap-verify --version >/dev/null 2>&1 || ! jq -n 1 >/dev/null 2>&1; then
		detail="leap's programs or jq do not load here: $(bin/leap-verify --version 2>&1 | head -1); $(jq -n 1 2>&1 | head -1)"
		why="leap's programs do not load here"
		return 1
	fi
	echo "check-gpu: leap's programs load with what $USED holds: $(ls "$USED" | tr '\n' ' ')"
}

# early_jq: jq from the prepared tree, where this machine has none, before the first check
# (whose JSON line needs it; runtime() below sees to leap's programs).
early_jq() {
	local e
	jq -n 1 >/dev/null 2>&1 || [ ! -x "$PREP/bin/jq" ] && return 0
	mkdir -p "$USED" && cp "$PREP/bin/jq" "$USED/" || return 0
	for e in $(ldd "$USED/jq" 2>/dev/null | awk '/not found/ { print $1 }'); do
		cp "$PREP/rt/$e" "$USED/" 2>/dev/null
	done
	export PATH=$USED:$PATH LD_LIBRARY_PATH=$USED${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# The doctor's findings; a failure there is a check failure. Its fallbacks' options are handed
# to the programs whose --help takes them.
preflight() {
	local failed
	failed=$(jq -r 'select(.status == "fail") | .name' "$W/doctor.jsonl" 2>/dev/null | sort -u | tr '\n' ',' | sed 's/,$//; s/,/, /g')
	local -a words
	local vhelp bhelp
	# Read each help whole: `--help | grep -q` under pipefail fails whenever grep stops
	# reading before a help longer than one pipe write is out (SIGPIPE, exit 141).
	vhelp=$(leap-verify --help) bhelp=$(leap-bench --help)
	while read -r -a words; do
		[ ${#words[@]} -eq 0 ] && continue
		grep -q -- "^ *${words[0]} " <<<"$vhelp" && VOPTS+=("${words[@]}")
		grep -q -- "^ *${words[0]} " <<<"$bhelp" && BOPTS+=("${words[@]}")
	done < <(jq -r 'select(.option) | .option' "$W/doctor.jsonl" 2>/dev/null | sort -u)
	detail="$(jq -s 'length' "$W/doctor.jsonl" 2>/dev/null || echo 0) findings${failed:+; failed: $failed}; options: leap-verify ${VOPTS[*]:-none}, leap-bench ${BOPTS[*]:-none}"
	[ -s "$W/doctor.jsonl" ] && [ -z "$failed" ]
}

# The arch the candidates were built for is the one leap-compile picks for this GPU.
env_arch() {
	local cc want got
	cc=$(gpu_smi compute_cap)
	want=$(gpu_arch_of "$cc")
	got=$(jq -r '.compile.arch' "$W/verify.jsonl" 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//')
	detail="compute capability ${cc:-unknown}: leap-compile picks ${want:-?}; the candidates were built for ${got:-?}"
	[ -n "$want" ] && [ "$got" = "$want" ]
}

# ---- the checks, over the steps' records ----

baseline_self() {
	local t=$1 v b st sp rf msg
	v=$(get verify baseline "$t" "" '.verify.status // "none"')
	b=$(get bench baseline "$t" "" "$SPEEDUP"' + " \(.bench.roofline // "-") \(.bench.baseline_kind // "-") " + '"$WHY")
	[ -z "$v" ] && { detail="verify: $(missing verify)"; return 1; }
	[ -z "$b" ] && { detail="verify $v; bench: $(missing bench)"; return 1; }
	read -r st sp rf kind msg <<<"$b"
	detail="verify $v, bench $st, speedup $sp against its $kind baseline, roofline $rf${msg:+ ($msg)}"
	[ "$v" = pass ] && [ "$st" = ok ] &&
		awk -v s="$sp" -v r="$rf" 'BEGIN { exit !(s >= 0.9 && s <= 1.1 && (r == "-" || r <= 1.0)) }'
}

# verdict_is STEP CHECK WANT: the record's verify.status is WANT.
verdict_is() {
	local v
	v=$(get "$1" "$2" "" "" '"\(.verify.status // "none") " + '"$WHY")
	[ -z "$v" ] && { detail="$2: $(missing "$1")"; return 1; }
	detail="$2: ${v% }"
	[ "${v%% *}" = "$3" ]
}

wrong_mismatch() {
	verdict_is verify wrong mismatch
}

# after_is STEP BAD WANT: BAD gets WANT, and the correct candidate run after it passes.
after_is() {
	local d1
	verdict_is "$1" "$2" "$3"
	local r=$?
	d1=$detail
	verdict_is "$1" "after_$2" pass
	local r2=$?
	detail="$d1; then vector_add_fast.cu: ${detail#*: }"
	[ $r = 0 ] && [ $r2 = 0 ]
}

# no_unearned FILE: the cheat FILE was timed against the vector_add baseline and earned no
# speedup: ok with a speedup of at most 1.1, or a verdict that carries none after timing
# (noisy, suspicious, mismatch), or leap-verify found it wrong. A record never timed (an error,
# a crash or a timeout of the harness, no device, none at all) proves nothing and fails.
no_unearned() {
	no_unearned_check cheat "$1"
}

# no_unearned_check CHECK FILE: no_unearned for the record marked CHECK.
no_unearned_check() {
	local k=$1 f=$2 v b st sp msg
	v=$(get verify "$k" vector_add "$f" '.verify.status // "none"')
	b=$(get bench "$k" vector_add "$f" "$SPEEDUP"' + " " + '"$WHY")
	if [ "$v" = mismatch ]; then
		detail="$f: caught by leap-verify (mismatch)"
		return 0
	fi
	[ -z "$b" ] && { detail="$f: verify ${v:-none}; bench: $(missing bench)"; return 1; }
	read -r st sp msg <<<"$b"
	detail="$f: verify $v, bench $st"
	[ "$sp" != - ] && detail+=", speedup ${sp}x"
	[ -n "$msg" ] && detail+=" ($msg)"
	case "$st" in
	ok) awk -v s="$sp" 'BEGIN { exit !(s != "-" && s <= 1.1) }' ;;
	noisy | suspicious | mismatch) true ;;
	*) detail+=" (never timed: proves nothing)" && false ;;
	esac
}

# ---- issue 27: the cuda runner's own fixes ----

# The copy role copies each slot with its guards to the device and back without touching a
# protected page (item 1): a write past an output comes back, and the canary check finds it.
copy_guards() {
	verdict_is verify overrun runtime_error || return 1
	[[ "$detail" == *"outside the bounds of buffer c"* ]]
}

# What the candidate may write comes back, inputs where they are not sealed (item 2, the
# leap-verify side; the sealed side is every bench record's baseline step): a changed input is
# leap-verify's input_modified.
copy_inputs() {
	local k
	verdict_is verify input_write mismatch || return 1
	k=$(get verify input_write "" "" '.verify.mismatch.kind // "none"')
	detail+=" (kind $k)"
	[ "$k" = input_modified ]
}

# Owner and client share device memory by descriptor (item 3): every record leap-bench timed
# got a device (no no_device, no harness error), and the baselines were timed.
shared_memory() {
	local n bad ok
	n=$(jq -s 'length' "$W/bench.jsonl" 2>/dev/null || echo 0)
	bad=$(jq -r 'select(.error or .bench.status == "no_device") | (.error.message // .bench.message // "" | .[:120])' \
		"$W/bench.jsonl" 2>/dev/null | sort -u | head -3 | tr '\n' ';')
	ok=$(jq -s 'map(select(.bench.status == "ok" or .bench.status == "noisy")) | length' "$W/bench.jsonl" 2>/dev/null || echo 0)
	detail="$n records, $ok timed ok or noisy${bad:+; no device or error: $bad}"
	[ "$n" -gt 0 ] && [ -z "$bad" ] && [ "$ok" -gt 0 ]
}

# The host regions page-locked each on its own (item 7): OUT wherever the device registers host
# memory, whatever became of IN (read-only registration may be refused: said, not failed); the
# copies through them right (build/gpu/hostreg).
host_register() {
	local h
	h=$(jq -r '"\(.host_register // "-") \(.readonly_supported // "-") \(.in // "-") \(.out // "-") \(.copies // .error // "-")"' \
		"$W/hostreg.jsonl" 2>/dev/null | head -1)
	[ -z "$h" ] && { detail=$(missing hostreg); return 1; }
	local reg ro in out copies
	read -r reg ro in out copies <<<"$h"
	detail="cudaHostRegister supported $reg, read-only supported $ro: IN $in, OUT $out, copies $copies"
	[ "$copies" = ok ] && { [ "$reg" = 0 ] || [ "$out" = registered ]; }
}

# A guard of the owner's client region damaged while timed is blamed on that candidate, and
# the regions are cleared before the next one, which is timed as any other (item 12).
overrun_once() {
	local a b
	a=$(get bench overrun_timed vector_add "" '"\(.bench.status // "none") " + '"$WHY")
	b=$(get bench after_overrun vector_add "" '"\(.bench.status // "none") " + '"$WHY")
	detail="overrun_timed.cu: ${a:-$(missing bench)}; then vector_add_fast.cu: ${b:-$(missing bench)}"
	[[ "${a%% *}" = runtime_error && "$a" == *"outside the bounds of buffer c while being timed"* ]] &&
		{ [ "${b%% *}" = ok ] || [ "${b%% *}" = noisy ]; }
}

# A candidate's own context, popped (out of the runner's reach): no pass, no unearned speedup.
own_context_popped() {
	local v
	v=$(get verify own_context vector_add "" '.verify.status // "none"')
	if [ "$v" = mismatch ] || [ "$v" = runtime_error ]; then
		detail="own_context.cu: caught by leap-verify ($v)"
		return 0
	fi
	no_unearned_check own_context own_context.cu
}

# ... left current: the runner waits for it, so the outputs are never read early (no
# mismatch); a pass is timed without an unearned speedup.
own_context_current() {
	local v
	v=$(get verify own_context_current vector_add "" '"\(.verify.status // "none") " + '"$WHY")
	detail="own_context_current.cu: verify ${v:-$(missing verify)}"
	case "${v%% *}" in
	runtime_error) true ;;
	pass) no_unearned_check own_context_current own_context_current.cu ;;
	*) false ;;
	esac
}

# loop N FIELD: the event loop's FIELD at N floats.
loop() {
	jq -r --argjson n "$1" "select(.n == \$n) | .$2" "$W/eventloop.jsonl" 2>/dev/null | head -1
}

# The event loop's flushed median is a cold one: at 2^20 floats (12 MiB, which one partition of
# the L2 holds) clearly above the hot one; otherwise comparing leap-bench's flush with it says
# nothing.
loop_l2() {
	local c h fits
	c=$(loop 1048576 flushed_ms) h=$(loop 1048576 hot_ms) fits=$(loop 1048576 fits_l2)
	[ -z "$c" ] && { detail="$(missing eventloop)"; return 1; }
	detail="2^20 floats ($(loop 1048576 bytes) bytes, L2 $(loop 1048576 l2_bytes) bytes, one partition holds it: $fits): flushed ${c} ms, hot ${h} ms"
	[ "$fits" = true ] && awk -v c="$c" -v h="$h" 'BEGIN { exit !(c > 1.2 * h) }'
}

# near STEP CHECK TASK N FIELD PCT: leap-bench's median of the record against the event loop's
# FIELD at N floats, within PCT percent.
near() {
	local b st med plain d
	b=$(get "$1" "$2" "$3" "" '"\(.bench.status // "none") \(.bench.median_ms // "-")"')
	plain=$(loop "$4" "$5")
	read -r st med <<<"${b:-none -}"
	detail="event loop ${plain:-?} ms, leap-bench ${med} ms ($st)"
	[ -z "$b" ] && detail+="; $(missing "$1")"
	[ -z "$plain" ] && detail+="; $(missing eventloop)"
	[ -n "$plain" ] && [ "$med" != - ] || return 1
	d=$(awk -v a="$plain" -v b="$med" 'BEGIN { printf "%.2f", 100 * (a > b ? a - b : b - a) / a }')
	detail+=", difference $d%"
	awk -v d="$d" -v p="$6" 'BEGIN { exit !(d < p) }'
}

# row_sum over 1024 x 4096 floats (a 16 MiB read, which one partition of an H100's or H200's
# L2 holds), flushed and --hot: the flushed median must be clearly the slower.
l2_cold() {
	local cold hot
	cold=$(get bench l2 row_sum_l2 "" '.bench.median_ms // empty')
	hot=$(get hot l2 row_sum_l2 "" '.bench.median_ms // empty')
	detail="16 MiB row_sum: flushed ${cold:-?} ms, --hot ${hot:-?} ms"
	[ -z "$cold" ] && detail+="; flushed: $(missing bench)"
	[ -z "$hot" ] && detail+="; --hot: $(missing hot)"
	[ -n "$cold" ] && [ -n "$hot" ] && awk -v c="$cold" -v h="$hot" 'BEGIN { exit !(c > 1.2 * h) }'
}

# The roofline's floor is the bandwidth of a device-to-device copy (runner/cuda.cu, rb_probe:
# read and write); a kernel that mostly reads can move bytes faster than that on HBM3, and then
# shows a roofline above 1. build/gpu/bandwidth measures both as the runner does (512 MiB,
# clocks warmed, the best of 5): the read-only rate within 5% of the copy's, or the floor is
# too low for read-mostly kernels (the detail gives both figures for the fix).
read_floor() {
	local b copy rd
	b=$(jq -r '"\(.copy_gbs // "-") \(.read_gbs // "-")"' "$W/bandwidth.jsonl" 2>/dev/null | head -1)
	[ -z "$b" ] && { detail=$(missing bandwidth); return 1; }
	read -r copy rd <<<"$b"
	detail="copy ${copy} GB/s (read + write, the roofline's peak), read-only ${rd} GB/s"
	[ "$copy" != - ] && [ "$rd" != - ] || return 1
	detail+=", ratio $(awk -v c="$copy" -v r="$rd" 'BEGIN { printf "%.3f", r / c }')"
	awk -v c="$copy" -v r="$rd" 'BEGIN { exit !(r <= 1.05 * c) }'
}

# ---- issue 42: module tasks on cuda, the torch baselines ----

# Torch with CUDA found: the probe's record (the Python, torch, the device torch sees). Where
# the module tasks were not prepared, or this machine has no torch with CUDA, the one SKIP of
# the module tasks, saying why; the checks below run only after a PASS here.
torch_found() {
	local r
	[ -n "$TORCH_WHY" ] && { skipped=$TORCH_WHY; return 1; }
	r=$(jq -r 'select(.cuda == true) | "\(.python): torch \(.torch) (CUDA \(.cuda_build)), \(.device) (compute capability \(.cc))"' \
		"$W/torchprobe.jsonl" 2>/dev/null | head -1)
	[ -z "$r" ] && { detail=$(missing torchprobe); return 1; }
	detail=$r
}

# The correct kernels pass against the reference: the module in float64, by CPU torch in a
# trusted process (leap-torchref.py), never in the sandbox.
torch_pass() {
	local t v bad=0
	for t in $TORCH_TASKS; do
		v=$(get torchverify torch_ok "$t" "" '"\(.verify.status // "none") " + '"$WHY")
		[ -z "$v" ] && v="none $(missing torchverify)"
		detail+="${detail:+; }$t.cu: ${v% }"
		[ "${v%% *}" = pass ] || bad=1
	done
	[ $bad = 0 ]
}

torch_wrong() {
	local v
	v=$(get torchverify torch_wrong relu "" '"\(.verify.status // "none") " + '"$WHY")
	[ -z "$v" ] && { detail="relu_wrong.cu: $(missing torchverify)"; return 1; }
	detail="relu_wrong.cu: ${v% }"
	[ "${v%% *}" = mismatch ]
}

# torch_timed STEP KIND WHY TASK...: each TASK's correct kernel timed against the KIND baseline
# on the device: ok or noisy, a measured speedup, bench.baseline_kind KIND. WHY (the step was
# not run for what this machine lacks) and a baseline torch says it cannot make (a skipped
# record, torch's reason) are SKIPs; a record never timed otherwise is a FAIL.
torch_timed() {
	local step=$1 kind=$2 t b st k sp bms msg bad=0 refused=""
	shift 2
	[ -n "$1" ] && { skipped=$1; return 1; }
	shift
	for t in "$@"; do
		b=$(get "$step" torch_ok "$t" "" '"\(.bench.status // "none") \(.bench.baseline_kind // "-") \(.bench.measured_speedup // .bench.speedup // "-") \(.bench.baseline_ms // "-") " + '"$WHY")
		if [ -z "$b" ]; then
			detail+="${detail:+; }$t.cu: $(missing "$step")"
			bad=1
			continue
		fi
		read -r st k sp bms msg <<<"$b"
		if [ "$st" = skipped ] && [[ "$msg" == *"baseline of task '$t' cannot be made"* ]]; then
			refused+="${refused:+; }$t: ${msg#not timed: }"
			continue
		fi
		case "$st" in
		ok | noisy)
			detail+="${detail:+; }$t.cu: $st, $(awk -v s="$sp" 'BEGIN { printf "%.2f", s }')x over $k (baseline $bms ms)"
			[ "$k" = "$kind" ] && awk -v s="$sp" 'BEGIN { exit !(s + 0 > 0) }' || bad=1
			;;
		*)
			detail+="${detail:+; }$t.cu: $st${msg:+ ($msg)}"
			bad=1
			;;
		esac
	done
	if [ -n "$refused" ] && [ -z "$detail" ]; then
		skipped="torch cannot make it here: $refused"
		return 1
	fi
	[ -n "$refused" ] && detail+="; not made: $refused"
	[ $bad = 0 ] && [ -z "$refused" ]
}

torch_eager() {
	# shellcheck disable=SC2086 # a list of task names
	torch_timed torcheager torch-eager "$EAGER_WHY" $TORCH_TASKS
}

torch_compile() {
	torch_timed torchcompile torch-compile "$COMPILE_WHY" relu
}

# ---- the steps ----

run_steps() {
	local recs=$W/prepared.jsonl
	[ -n "${CHECK_GPU_REPLAY:-}" ] && : >"$recs" ||
		jq -c --arg root "$ROOT/" '.compile.artifact |= (if startswith("/") then . else $root + . end)' \
			"$PREP/records.jsonl" >"$recs"
	local -a common=(--no-progress --seed 1 --tasks "$PREP/suite")
	# every verdict fixture in one leap-verify; the illegal address last but one, then a
	# correct candidate: is the GPU still usable?
	jq -c 'select(.gpu_check != "hang" and .gpu_check != "after_hang")' "$recs" >"$W/verify.in"
	bounded verify 180 leap-verify "${common[@]}" "${VOPTS[@]}" "$W/verify.in"
	jq -c 'select(.gpu_check == "hang" or .gpu_check == "after_hang")' "$recs" >"$W/hang.in"
	bounded hang 60 leap-verify "${common[@]}" "${VOPTS[@]}" --timeout 5 "$W/hang.in"
	# the baselines against themselves, the cheats, and the L2 sizes, in one leap-bench
	jq -c 'select(.gpu_check == "baseline" or .gpu_check == "cheat" or .gpu_check == "l2" or .gpu_check == "overrun_timed" or
		.gpu_check == "after_overrun" or (.gpu_check | startswith("own_context")))' "$W/verify.jsonl" >"$W/bench.in"
	bounded bench 240 leap-bench "${common[@]}" "${BOPTS[@]}" --max-time "$MAX_TIME" --target-ci 0.02 \
		--no-baseline-cache "$W/bench.in"
	jq -c 'select(.gpu_check == "l2")' "$W/verify.jsonl" >"$W/hot.in"
	bounded hot 60 leap-bench "${common[@]}" "${BOPTS[@]}" --hot --max-time "$MAX_TIME" --target-ci 0.02 "$W/hot.in"
	if [ -x build/gpu/eventloop ] || [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		bounded eventloop 60 build/gpu/eventloop 67108864 1048576
	else
		STEP_NOTE[eventloop]="build/gpu/eventloop is not built (no nvcc where leap was built)"
		: >"$W/eventloop.jsonl"
	fi
	if [ -x build/gpu/bandwidth ] || [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		bounded bandwidth 30 build/gpu/bandwidth
	else
		STEP_NOTE[bandwidth]="build/gpu/bandwidth is not built (no nvcc where leap was built)"
		: >"$W/bandwidth.jsonl"
	fi
	if [ -x build/gpu/hostreg ] || [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		bounded hostreg 30 build/gpu/hostreg
	else
		STEP_NOTE[hostreg]="build/gpu/hostreg is not built (no nvcc where leap was built)"
		: >"$W/hostreg.jsonl"
	fi
	torch_steps
}

# The probe of the Python that runs the torch baselines: one JSON line, whatever it finds (its
# torch, whether CUDA is usable and the device, its shared libpython, which the baselines embed).
TORCH_PROBE='
import json, os, sys, sysconfig, warnings
r = {"python": sys.executable}
lib = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
r["libpython"] = lib if sysconfig.get_config_var("Py_ENABLE_SHARED") and os.path.exists(lib) else None
def first(e):
    return ("%s: %s" % (type(e).__name__, e)).strip().splitlines()[0][:200]
try:
    import torch
except Exception as e:
    r["error"] = first(e)
else:
    r["torch"], r["cuda_build"], r["cuda"] = torch.__version__, torch.version.cuda, False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r["cuda"] = bool(torch.cuda.is_available())
            if r["cuda"]:
                r["device"] = torch.cuda.get_device_name(0)
                r["cc"] = "%d.%d" % torch.cuda.get_device_capability(0)
        except Exception as e:
            r["cuda"], r["error"] = False, first(e)
    if not r["cuda"] and "error" not in r and w:
        r["error"] = str(w[0].message).strip().splitlines()[0][:200]
print(json.dumps(r), flush=True)
'

# torch_skip STEPS REASON: the module tasks' STEPS not run, for REASON.
torch_skip() {
	local s
	for s in $1; do
		STEP_NOTE[$s]="not run: $2"
		: >"$W/$s.jsonl"
	done
	echo "step ${1// /, }: not run ($2)"
}

# no_torch REASON: this machine has no torch with CUDA, for REASON.
no_torch() {
	TORCH_WHY="no torch with CUDA on this machine ($1): the torch baselines' cuda path is not checked"
}

# issue 42's steps, after the rest, so that they take none of its time: the Python with torch
# ($LEAP_TORCH_PYTHON, else python3 on PATH; torch found without importing it, then the probe,
# its own step), the module tasks' kernels verified (the reference: CPU torch in float64), the
# correct ones timed against torch-eager, then relu's against torch-compile, last and only
# where 60 s are left: its first use compiles the module (AOTInductor; triton on a GPU).
torch_steps() {
	local py=${LEAP_TORCH_PYTHON:-python3} p="" t r
	if [ -z "${CHECK_GPU_REPLAY:-}" ]; then
		if [ ! -s "$PREP/torch.jsonl" ]; then
			TORCH_WHY="the module tasks were not prepared: $(cat "$PREP/torch.note" 2>/dev/null || echo "no $PREP/torch.jsonl"); the torch baselines' cuda path is not checked"
		elif ! p=$(command -v "$py" 2>/dev/null); then
			no_torch "no $py here"
		else
			t=$(($(left) - RESERVE))
			[ "$t" -gt 10 ] && t=10
			if [ "$t" -ge 1 ]; then
				timeout -k 2 "$t" "$p" -c 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") else 3)' >/dev/null 2>&1
				[ $? = 3 ] && no_torch "$p: no module named torch"
			fi
		fi
	fi
	[ -n "$TORCH_WHY" ] && { torch_skip "$TORCH_STEPS" "$TORCH_WHY"; return 0; }
	export LEAP_TORCH_PYTHON=${p:-$py}
	bounded torchprobe 60 "$LEAP_TORCH_PYTHON" -c "$TORCH_PROBE"
	r=$(jq -r 'if .cuda == true then "" elif .torch == null then "\(.python): \(.error // "no torch")"
		elif .cuda_build == null then "\(.python): torch \(.torch) is a CPU build"
		else "\(.python): torch \(.torch) (CUDA \(.cuda_build)) finds no usable device\(if .error then ": " + .error else "" end)" end' \
		"$W/torchprobe.jsonl" 2>/dev/null | head -1)
	[ -n "$r" ] && no_torch "$r" && { torch_skip "${TORCH_STEPS#torchprobe }" "$TORCH_WHY"; return 0; }
	if [ ! -s "$W/torchprobe.jsonl" ]; then
		torch_skip "${TORCH_STEPS#torchprobe }" "the probe wrote no record"
		return 0
	fi
	local recs=$W/torch.jsonl
	local -a tc=(--no-progress --seed 1 --tasks "$PREP/torch")
	[ -n "${CHECK_GPU_REPLAY:-}" ] && : >"$recs" ||
		jq -c --arg root "$ROOT/" '.compile.artifact |= (if startswith("/") then . else $root + . end)' \
			"$PREP/torch.jsonl" >"$recs"
	bounded torchverify 120 leap-verify "${tc[@]}" "${VOPTS[@]}" "$recs"
	# the baselines' artifact embeds this machine's libpython and is built by cc where it runs
	if [ -z "${CHECK_GPU_REPLAY:-}" ]; then
		if [ "$(jq -r '.libpython // ""' "$W/torchprobe.jsonl" | head -1)" = "" ]; then
			EAGER_WHY="$LEAP_TORCH_PYTHON has no shared libpython, which the torch baselines embed"
		elif ! command -v "${CC:-cc}" >/dev/null; then
			EAGER_WHY="no C compiler (${CC:-cc}) here: the torch baselines' artifact embeds this machine's libpython and is built where it runs"
		fi
	fi
	if [ -n "$EAGER_WHY" ]; then
		COMPILE_WHY=$EAGER_WHY
		torch_skip "torcheager torchcompile" "$EAGER_WHY"
		return 0
	fi
	jq -c 'select(.gpu_check == "torch_ok")' "$W/torchverify.jsonl" >"$W/torcheager.in"
	bounded torcheager 120 leap-bench "${tc[@]}" "${BOPTS[@]}" --baseline torch-eager --max-time "$MAX_TIME" \
		--no-baseline-cache "$W/torcheager.in"
	t=$(($(left) - RESERVE))
	if [ "$t" -lt 60 ]; then
		COMPILE_WHY="only $t s of the deadline left, and its first use compiles the module (AOTInductor, triton) in up to 120 s"
		torch_skip torchcompile "$COMPILE_WHY"
		return 0
	fi
	jq -c 'select(.gpu_check == "torch_ok" and .task == "relu")' "$W/torchverify.jsonl" >"$W/torchcompile.in"
	bounded torchcompile 120 leap-bench "${tc[@]}" "${BOPTS[@]}" --baseline torch-compile --max-time "$MAX_TIME" \
		--no-baseline-cache "$W/torchcompile.in"
}

# stopped SIGNAL: the run was told to end (the device call's limit, ^C): the step running and
# the context holder end too, the report so far is saved, and the run ends saying so.
STEP_PID=""
stopped() {
	local line="check-gpu: stopped by SIG$1 after $((SECONDS - START)) s: the report holds everything until then"
	# tee may have been stopped by the same signal: a write to it must not end this first
	trap '' PIPE
	trap - TERM INT HUP
	[ -n "$STEP_PID" ] && kill -TERM "$STEP_PID" 2>/dev/null && wait "$STEP_PID" 2>/dev/null
	release_context
	save
	# the line goes into the report itself (tee writes nothing more: main prints nothing else)
	[ -n "${OUT:-}" ] && echo "$line" >>"$OUT/check-gpu.txt"
	echo "$line" 2>/dev/null
	exit 143
}

main() {
	local dev
	trap 'stopped TERM' TERM
	trap 'stopped INT' INT
	trap 'stopped HUP' HUP
	echo "check-gpu: $(date -u +%Y-%m-%dT%H:%M:%SZ), deadline $DEADLINE s, MAX_TIME $MAX_TIME s, tasks: $TASKS"
	dev=$(gpu_device)
	[ -n "${CHECK_GPU_REPLAY:-}" ] && [ -z "${LEAP_TEST_DEVICE:-}" ] && dev="gpu (replayed)"
	[ "${dev%% *}" = gpu ] || why=${dev#none }
	echo "check-gpu: device: ${dev#* }"
	unpack
	early_jq
	[ -z "${CHECK_GPU_REPLAY:-}" ] && check "driver" driver
	check "setup" setup
	echo "check-gpu: preflight (tests/gpu/doctor.sh)"
	if [ -n "${CHECK_GPU_REPLAY:-}" ]; then
		cp "$CHECK_GPU_REPLAY/doctor.jsonl" "$W/doctor.jsonl" 2>/dev/null || : >"$W/doctor.jsonl"
		jq -r '"  \(.status) \(.name): \(.detail)"' "$W/doctor.jsonl"
	else
		DOCTOR_JSON=$W/doctor.jsonl timeout $(($(left) > 100 ? 90 : $(left) / 2)) bash tests/gpu/doctor.sh 2>&1 | sed 's/^/  /'
	fi
	save
	check "preflight" preflight
	[ -z "${CHECK_GPU_REPLAY:-}" ] && check "cuBLAS and cuDNN: the artifacts' libraries found" libraries
	if [ -z "$why" ]; then
		hold_context
		run_steps
		release_context
	else
		echo "step ${STEPS// /, }: not run ($why)"
	fi
	check "env arch" env_arch
	for t in $TASKS; do
		check "baseline $t" baseline_self "$t"
	done
	check "wrong -> mismatch" wrong_mismatch
	check "illegal address -> runtime_error, GPU usable after" after_is verify illegal runtime_error
	check "hang -> timeout, GPU usable after" after_is hang hang timeout
	check "side stream: no unearned speedup" no_unearned side_stream.cu
	check "memoisation: no unearned speedup" no_unearned memo.cu
	check "deferred work: no unearned speedup" no_unearned deferred.cu
	check "copy role: a write past an output comes back and is caught" copy_guards
	check "copy role: a changed input comes back where it is not sealed" copy_inputs
	check "owner and client share device memory by descriptor: every bench record timed" shared_memory
	check "host regions page-locked each on its own" host_register
	check "a guard damaged while timed is blamed once, then cleared" overrun_once
	check "own context, popped: no pass, no unearned speedup" own_context_popped
	check "own context, left current: waited for" own_context_current
	check "event loop: its flush makes a read one L2 partition holds cold" loop_l2
	check "leap-bench vs a CUDA-event loop within 5% (2^26 floats, flushed)" near bench baseline vector_add 67108864 flushed_ms 5
	check "leap-bench vs a CUDA-event loop within 5% (2^20 floats, flushed)" near bench l2 vector_add_l2 1048576 flushed_ms 5
	check "leap-bench --hot vs the event loop's hot median within 10% (2^20 floats)" near hot l2 vector_add_l2 1048576 hot_ms 10
	check "L2 flush leaves a 16 MiB read cold" l2_cold
	check "roofline floor: a read-only kernel does not outrun the copy" read_floor
	check "module tasks on cuda: torch with CUDA for the torch baselines" torch_found
	if [ "$res" = PASS ]; then
		check "module tasks on cuda: correct kernels pass against float64 CPU torch (relu, linear)" torch_pass
		check "module tasks on cuda: a wrong kernel -> mismatch" torch_wrong
		check "module tasks on cuda: timed against the torch-eager baseline" torch_eager
		check "module tasks on cuda: timed against the torch-compile baseline (AOTInductor)" torch_compile
	fi
	echo "check-gpu: $npass passed, $nfail failed, $nskip skipped in $((SECONDS - START)) s (deadline $DEADLINE s)"
	[ "$nfail" -eq 0 ]
}

# save [checks]: the report so far into $OUT (five files: check-gpu.txt, which tee writes as it
# goes, check-gpu.jsonl, doctor.jsonl, records.jsonl, stderr.txt), after every check and every
# step's start and end, so that a run killed at any point (the device call's limit, a step
# that outlives its own) returns everything it did. Each file is written beside its name and
# renamed, never left half-written; `checks` saves the checks' file alone (the steps' files
# change only with a step).
save() {
	[ -n "${OUT:-}" ] || return 0
	put check-gpu.jsonl <"$W/checks.jsonl"
	[ "${1:-}" = checks ] && return 0
	[ -f "$W/doctor.jsonl" ] && put doctor.jsonl <"$W/doctor.jsonl"
	local s
	for s in $STEPS; do
		[ -f "$W/$s.jsonl" ] && jq -c --arg s "$s" '. + {gpu_step: $s}' "$W/$s.jsonl" 2>/dev/null
	done | put records.jsonl
	for s in $STEPS; do
		[ -s "$W/$s.err" ] && { echo "== $s"; cat "$W/$s.err"; }
	done | put stderr.txt
}

# put NAME: stdin into $OUT/NAME, through a file beside it renamed at the end.
put() {
	cat >"$OUT/$1.part" && mv -f "$OUT/$1.part" "$OUT/$1"
}

: >"$W/checks.jsonl"
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT" || exit 2
	rm -f "$OUT"/*.part
fi
# tee writes the report into $OUT as it goes: lines printed before a kill are there. A signal
# is main's to handle (stopped); this shell waits for it, and $W stays until it has saved.
trap : TERM INT HUP
main 2>&1 | tee "$W/report.txt" ${OUT:+"$OUT/check-gpu.txt"}
rc=${PIPESTATUS[0]}
save
exit $rc
