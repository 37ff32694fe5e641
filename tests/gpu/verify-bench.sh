#!/usr/bin/env bash
# verify-bench.sh - leap-verify and leap-bench on a real GPU (part of make check-gpu): the
# verdicts of correct, wrong, crashing and hanging CUDA candidates, then a timing table,
# repeatability, a side-stream cheat and a cross-check against a plain CUDA-event loop.
# Needs a GPU; about 4 minutes on an H200. Exit status 1 when any check fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks"
LEAP_CACHE="${LEAP_CACHE:-$(mktemp -d)}"
export LEAP_CACHE
G=tests/fixtures/gpu
fail=0
nvidia-smi -L || { echo "verify-bench: no GPU" >&2; exit 2; }

# expect STATUS TASK FILE [OPTION]...: the first word after "FILE: " of leap-verify's verdict.
expect() {
	local want=$1 task=$2 file=$3 got line
	shift 3
	line=$(leap-verify --task "$task" "$@" "$file" | head -2 | tr '\n' ' ')
	got=$(sed -E 's/^[^:]*: ([a-z_]+).*/\1/' <<<"$line")
	if [ "$got" = "$want" ]; then
		printf 'ok    verify %-22s %-11s %s\n' "$(basename "$file")" "$task" "$got"
	else
		printf 'FAIL  verify %-22s %-11s %s (want %s): %s\n' "$(basename "$file")" "$task" "$got" "$want" "$line"
		fail=1
	fi
}

echo "== leap-verify on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
for t in vector_add softmax matmul; do
	expect pass $t tasks/$t/baseline.cu
	expect pass $t $G/${t}_fast.cu
done
expect mismatch vector_add $G/vector_add_wrong.cu
expect runtime_error vector_add $G/illegal.cu
expect timeout vector_add $G/hang.cu --timeout 5
expect pass vector_add $G/vector_add_fast.cu # the GPU is still usable after the hang

echo "== leap-bench: baselines and faster candidates"
for t in vector_add softmax matmul; do
	leap-bench --max-time 8 --task $t tasks/$t/baseline.cu $G/${t}_fast.cu || fail=1
done

echo "== leap-bench: five measurements of one kernel (median, CI half-width)"
medians=()
for i in 1 2 3 4 5; do
	row=$(leap-bench --max-time 6 --no-baseline-cache --task softmax $G/softmax_fast.cu | awk '$1 == "candidate" { print $2, $4 }')
	echo "  run $i: median $row"
	medians+=("$row")
done
printf '%s\n' "${medians[@]}" | awk '{ m[NR] = $1; c[NR] = $2 + 0 } END {
	lo = hi = m[1]; w = 0
	for (i = 1; i <= NR; i++) { if (m[i] < lo) lo = m[i]; if (m[i] > hi) hi = m[i]; if (c[i] > w) w = c[i] }
	spread = (hi - lo) / ((hi + lo) / 2) * 100
	printf "  spread of the medians %.2f%%, largest reported CI +-%.2f%%\n", spread, w
	exit !(spread <= 2 * w + 1) }' || { echo "FAIL  medians spread beyond their CIs"; fail=1; }

echo "== leap-bench: a kernel that leaves its work on a side stream"
line=$(leap-bench --max-time 5 --task vector_add $G/side_stream.cu | head -1)
echo "  $line"
[[ "$line" == *": suspicious "* ]] || { echo "FAIL  side stream not flagged"; fail=1; }

echo "== cross-check: leap-bench's baseline median vs a plain CUDA-event loop (vector_add, n = 2^26)"
"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -O2 -o "$LEAP_CACHE/eventloop" tests/gpu/eventloop.cu || fail=1
plain=$("$LEAP_CACHE/eventloop" 67108864)
leap=$(leap-bench --max-time 8 --no-baseline-cache --task vector_add tasks/vector_add/baseline.cu |
	awk '$1 == "candidate" { print $2 }')
echo "  event loop $plain ms, leap-bench $leap ms"
awk -v a="$plain" -v b="$leap" 'BEGIN { d = (a > b ? a - b : b - a) / a; printf "  difference %.2f%%\n", 100 * d; exit !(d < 0.05) }' ||
	{ echo "FAIL  leap-bench and the event loop disagree by 5% or more"; fail=1; }

[ $fail = 0 ] && echo "verify-bench: all GPU checks passed" || echo "verify-bench: SOME GPU CHECKS FAILED"
exit $fail
