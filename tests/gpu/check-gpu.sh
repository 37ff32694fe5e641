#!/usr/bin/env bash
# check-gpu.sh - make check-gpu: the cuda backend end to end on a real GPU, one line per check
# (PASS NAME: detail, FAIL NAME: detail, or SKIP NAME (reason)) and a summary line. Checks:
# the environment (driver against leap's CUDA runtime, the arch leap-compile picks, persistence
# mode, /dev/nvidia-uvm); every baseline verified and timed against itself (speedup 0.9-1.1,
# roofline <= 100%); wrong -> mismatch; illegal address -> runtime_error and the GPU usable
# after; hang -> timeout and the GPU usable after; side stream, memoisation and deferred work
# earn no speedup; leap-bench against a plain CUDA-event loop (tests/gpu/eventloop.cu) within
# 5%; the L2 flush leaves a 32 MiB read cold. Under 8 minutes on one H200; every command runs
# under `timeout`. Without a GPU (or nvcc, or the cuda runner) every check says SKIP with the
# reason and the script exits 0. Exit status 1 when any check fails.
# usage: tests/gpu/check-gpu.sh   (env: MAX_TIME=2 s per timing, OUT: also write the report
# to $OUT/check-gpu.txt)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks" LC_ALL=C
NVCC="${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}"
MAX_TIME=${MAX_TIME:-2}
G=tests/fixtures/gpu
npass=0 nfail=0 nskip=0

# The reason every GPU check is skipped, or "" when they can run.
why=""
if [ ! -x "$NVCC" ]; then
	why="nvcc not found at $NVCC (set NVCC or CUDA_HOME)"
elif [ ! -x libexec/leap-run-cuda ]; then
	why="libexec/leap-run-cuda is not built (run make where nvcc is found)"
elif ! command -v nvidia-smi >/dev/null 2>&1; then
	why="no nvidia-smi: no NVIDIA driver here"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	why="no CUDA GPU visible (nvidia-smi -L lists none)"
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/leap-check-gpu.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
export LEAP_CACHE="$W/cache"

# check NAME FUNCTION [ARG]...: runs FUNCTION, which sets $detail and returns 0 (PASS) or not
# (FAIL); SKIP with the reason when GPU checks cannot run.
check() {
	local name=$1
	shift
	if [ -n "$why" ]; then
		echo "SKIP $name ($why)"
		nskip=$((nskip + 1))
		return
	fi
	detail=""
	if "$@"; then
		echo "PASS $name${detail:+: $detail}"
		npass=$((npass + 1))
	else
		echo "FAIL $name${detail:+: $detail}"
		nfail=$((nfail + 1))
	fi
}

# smi FIELD: the first GPU's value of an nvidia-smi query field.
smi() {
	timeout 20 nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -1 | sed 's/ *$//'
}

# verdict TASK FILE [OPTION]...: leap-verify's status word for one source (ad-hoc mode).
verdict() {
	local task=$1 file=$2
	shift 2
	timeout 120 leap-verify --task "$task" "$@" "$file" 2>&1 | head -1 | sed -E 's/^[^:]*: ([a-z_]+).*/\1/'
}

# ---- the environment ----

env_driver() {
	local drv rt need
	drv=$(smi driver_version)
	rt=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$(dirname "$NVCC")/../include/cuda_runtime_api.h")
	case "${rt:0:2}" in 13) need=580 ;; 12) need=525 ;; *) need=0 ;; esac
	detail="driver $drv, leap's CUDA runtime $rt (needs driver >= $need)"
	[ -n "$drv" ] && [ "${drv%%.*}" -ge "$need" ]
}

env_arch() {
	local cc want got
	cc=$(smi compute_cap)
	case "$cc" in 9.0) want=sm_90a ;; 10.0) want=sm_100a ;; *) want="sm_${cc/./}" ;; esac
	got=$(jq -nc '{task:"vector_add",backend:"cuda",code:"extern \"C\" void vector_add(const float *a, const float *b, float *c, int n) { }"}' |
		timeout 120 leap-compile 2>/dev/null | jq -r .compile.arch)
	detail="$(smi name), compute $cc: leap-compile builds for $got (want $want)"
	[ "$got" = "$want" ]
}

env_persistence() {
	local pm
	pm=$(smi persistence_mode)
	detail="persistence mode $pm"
	[ "$pm" = Enabled ] || detail+=" (every runner pays a full GPU initialisation: sudo nvidia-smi -pm 1)"
	[ "$pm" = Enabled ]
}

env_uvm() {
	detail="/dev/nvidia-uvm"
	[ -c /dev/nvidia-uvm ] || { detail+=" missing (load nvidia-uvm: sudo modprobe nvidia-uvm)"; return 1; }
}

# ---- every baseline against itself ----

# Compiles, verifies and times every task's baseline.cu as a candidate (one process each), into
# $W/bench.jsonl; then one check per task reads its record.
run_baselines() {
	for d in tasks/*/; do
		t=$(basename "$d")
		jq -nc --arg t "$t" --rawfile c "$d/baseline.cu" '{task:$t,group:$t,sample:0,turn:1,backend:"cuda",code:$c}'
	done >"$W/baselines.jsonl"
	timeout 300 leap-compile "$W/baselines.jsonl" 2>"$W/compile.err" |
		timeout 300 leap-verify 2>"$W/verify.err" |
		timeout 900 leap-bench --max-time "$MAX_TIME" --target-ci 0.02 --no-baseline-cache >"$W/bench.jsonl" 2>"$W/bench.err"
}

baseline_self() {
	local t=$1 line
	line=$(jq -r --arg t "$t" 'select(.task == $t) | "\(.verify.status // "none") \(.bench.status // "none") " +
		"\(.bench.speedup // "-") \(.bench.roofline // "-") \(.error.message // "" | .[:100])"' "$W/bench.jsonl")
	read -r st bst sp rf err <<<"${line:-missing none - -}"
	detail="verify $st, bench $bst, speedup $sp, roofline $rf${err:+ ($err)}"
	[ "$st" = pass ] && [ "$bst" = ok ] &&
		awk -v s="$sp" -v r="$rf" 'BEGIN { exit !(s >= 0.9 && s <= 1.1 && (r == "-" || r <= 1.0)) }'
}

# ---- verdicts and recovery ----

wrong_mismatch() {
	local v
	v=$(verdict vector_add $G/vector_add_wrong.cu)
	detail="vector_add_wrong.cu: $v"
	[ "$v" = mismatch ]
}

illegal_runtime_error() {
	local v u
	v=$(verdict vector_add $G/illegal.cu)
	u=$(verdict vector_add $G/vector_add_fast.cu)
	detail="illegal.cu: $v; then vector_add_fast.cu: $u"
	[ "$v" = runtime_error ] && [ "$u" = pass ]
}

hang_timeout() {
	local v u
	v=$(verdict vector_add $G/hang.cu --timeout 5)
	u=$(verdict vector_add $G/vector_add_fast.cu)
	detail="hang.cu: $v; then vector_add_fast.cu: $u"
	[ "$v" = timeout ] && [ "$u" = pass ]
}

# no_unearned FILE: leap-bench times FILE against the vector_add baseline; it must not come out
# ok with a speedup above 1.1. Any other verdict passes; no verdict (no_device, an error) fails.
no_unearned() {
	local f=$1 out st sp
	out=$(timeout 180 leap-bench --max-time "$MAX_TIME" --task vector_add "$f" 2>&1)
	st=$(head -1 <<<"$out" | sed -E 's/^[^:]*: ([a-z_]+).*/\1/')
	sp=$(awk '$1 == "speedup" { sub(/x$/, "", $2); print $2 }' <<<"$out")
	detail="$(basename "$f"): $st${sp:+, speedup ${sp}x}"
	case "$st" in
	ok) awk -v s="${sp:-0}" 'BEGIN { exit !(s <= 1.1) }' ;;
	mismatch | suspicious | noisy | runtime_error | timeout) true ;;
	*) false ;;
	esac
}

# ---- timing against an independent loop, and the L2 flush ----

eventloop() {
	local plain leap
	[ -x build/gpu/eventloop ] || {
		detail="build/gpu/eventloop is not built (make gpu-tools where nvcc is found)"
		return 1
	}
	plain=$(timeout 120 build/gpu/eventloop 67108864 2>"$W/eventloop.err" | jq -r .flushed_ms)
	leap=$(timeout 180 leap-bench --max-time 4 --no-baseline-cache --task vector_add tasks/vector_add/baseline.cu 2>&1 |
		awk '$1 == "candidate" { print $2 }')
	detail="vector_add n = 2^26: event loop ${plain:-?} ms, leap-bench ${leap:-?} ms"
	[ -n "$plain" ] || detail+=" ($(head -1 "$W/eventloop.err"))"
	[ -n "$plain" ] && [ -n "$leap" ] || return 1
	local d
	d=$(awk -v a="$plain" -v b="$leap" 'BEGIN { printf "%.2f", 100 * (a > b ? a - b : b - a) / a }')
	detail+=", difference $d%"
	awk -v d="$d" 'BEGIN { exit !(d < 5) }'
}

# row_sum over 2048 x 4096 floats: a 32 MiB read, which fits the L2 of an H100/H200. Timed with
# the flush (the default) and with --hot: the flushed median must be clearly the slower.
l2_cold() {
	local suite=$W/l2 cold hot
	mkdir -p "$suite/row_sum"
	cp tasks/row_sum/baseline.cu tasks/row_sum/reference.c "$suite/row_sum/"
	jq '.bench = {"rows": 2048, "cols": 4096}' tasks/row_sum/task.json >"$suite/row_sum/task.json"
	cold=$(timeout 180 leap-bench --tasks "$suite" --max-time 3 --task row_sum tasks/row_sum/baseline.cu 2>&1 |
		awk '$1 == "candidate" { print $2 }')
	hot=$(timeout 180 leap-bench --tasks "$suite" --hot --max-time 3 --task row_sum tasks/row_sum/baseline.cu 2>&1 |
		awk '$1 == "candidate" { print $2 }')
	detail="32 MiB row_sum: flushed ${cold:-?} ms, --hot ${hot:-?} ms"
	[ -n "$cold" ] && [ -n "$hot" ] && awk -v c="$cold" -v h="$hot" 'BEGIN { exit !(c > 1.2 * h) }'
}

main() {
echo "check-gpu: $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${why:+no GPU}$([ -z "$why" ] && smi name)"
check "env driver" env_driver
check "env arch" env_arch
check "env persistence" env_persistence
check "env nvidia-uvm" env_uvm
[ -z "$why" ] && run_baselines
for d in tasks/*/; do
	check "baseline $(basename "$d")" baseline_self "$(basename "$d")"
done
check "wrong -> mismatch" wrong_mismatch
check "illegal address -> runtime_error, GPU usable after" illegal_runtime_error
check "hang -> timeout, GPU usable after" hang_timeout
check "side stream: no unearned speedup" no_unearned $G/side_stream.cu
check "memoisation: no unearned speedup" no_unearned $G/memo.cu
check "deferred work: no unearned speedup" no_unearned $G/deferred.cu
check "leap-bench vs a CUDA-event loop within 5%" eventloop
check "L2 flush leaves a 32 MiB read cold" l2_cold
echo "check-gpu: $npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
}

report=/dev/null
[ -n "${OUT:-}" ] && mkdir -p "$OUT" && report=$OUT/check-gpu.txt
main 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
