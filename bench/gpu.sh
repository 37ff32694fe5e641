#!/usr/bin/env bash
# gpu.sh - make bench-gpu: leap-verify's throughput on the cuda backend, the cost of a CUDA
# context per child, and leap-bench's repeatability (5 runs of one candidate). Needs a GPU and
# nvcc; without them it says why and exits 0. About 2 minutes on an H200 (limit: 5). With $OUT
# set, the report is also written to $OUT/bench-gpu.txt.
# usage: bench/gpu.sh   (env: N=64 verify records, REPEATS=5, MAX_TIME=3 s per leap-bench run)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks" LC_ALL=C
. tests/gpu/lib.sh
NVCC=$(gpu_nvcc_name) # as leap finds it: $NVCC, $CUDA_HOME/bin/nvcc, PATH
N=${N:-64}
REPEATS=${REPEATS:-5}
MAX_TIME=${MAX_TIME:-3}
report=/dev/null
[ -n "${OUT:-}" ] && mkdir -p "$OUT" && report=$OUT/bench-gpu.txt
skip() {
	echo "bench-gpu: skipped: $*" | tee "$report"
	exit 0
}
[ -n "$NVCC" ] || skip "nvcc not found (NVCC, CUDA_HOME/bin, PATH)"
dev=$(gpu_device)
[ "${dev%% *}" = gpu ] || skip "${dev#none }"
[ -x libexec/leap-run-cuda ] || skip "libexec/leap-run-cuda is not built (run make where nvcc is found)"
W=$(mktemp -d "${TMPDIR:-/tmp}/leap-bench-gpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
export LEAP_CACHE="$W/cache"
. bench/lib.sh
fail=0
G=tests/fixtures/gpu
{
bench_header "GPU: leap-verify throughput, CUDA context per child, leap-bench repeatability" \
	"make bench-gpu   (bench/gpu.sh: N=$N REPEATS=$REPEATS MAX_TIME=$MAX_TIME)"

# candidates compiled by leap-compile, as in a rollout
for f in tasks/vector_add/baseline.cu $G/vector_add_fast.cu; do
	jq -nc --arg c "$(cat "$f")" --arg f "$f" '{task: "vector_add", group: "g", sample: 0, turn: 1, backend: "cuda", file: $f, code: $c}'
done | timeout 300 leap-compile >"$W/compiled.jsonl" 2>"$W/compile.err"
if [ "$(jq -r .compile.status "$W/compiled.jsonl" 2>/dev/null | sort -u)" != ok ]; then
	echo "FAIL  leap-compile could not build the candidates:"
	cat "$W/compile.err" "$W/compiled.jsonl" | head -20
	exit 1
fi

echo "### leap-verify on the cuda backend: $N records of a correct vector_add (3 cases x 3 trials each)"
echo
printf '    %-40s %9s %12s %14s %12s\n' run "wall s" "cpu s" "candidates/s" "ms/candidate"
jq -c --argjson n "$N" '. as $r | range($n) | $r + {sample: .}' <(tail -n 1 "$W/compiled.jsonl") >"$W/verify.jsonl"
timeout 120 leap-verify --seed 1 <(head -n 1 "$W/verify.jsonl") >/dev/null # the reference, built once and cached
per_candidate=0
for jobs in 1 4; do
	opts=(-j "$jobs")
	[ "$jobs" -gt 1 ] && opts+=(--share-gpu)
	if timed "$W/verified.jsonl" timeout 240 leap-verify --seed 1 "${opts[@]}" "$W/verify.jsonl" &&
		[ "$(jq -r .status "$W/verified.jsonl" | sort -u)" = pass ]; then
		awk -v name="leap-verify ${opts[*]}" -v n="$N" -v el="$T_EL" -v cpu="$T_CPU" \
			'BEGIN { printf "    %-40s %9.2f %12.2f %14.1f %12.1f\n", name, el, cpu, n / el, 1000 * el / n }'
		[ "$jobs" = 1 ] && per_candidate=$(awk -v n="$N" -v el="$T_EL" 'BEGIN { print 1000 * el / n }')
	else
		echo "FAIL  leap-verify ${opts[*]}: $(jq -r .status "$W/verified.jsonl" 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
		fail=1
	fi
done
echo

echo "### The cost of a CUDA context per child (a fresh process: first CUDA call, then a 1 MiB buffer)"
echo
if "$NVCC" -O2 -o "$W/ctx" bench/gpu/ctx.cu 2>"$W/ctx.err"; then
	for _ in 1 2 3 4 5 6 7 8 9 10; do timeout 30 "$W/ctx" || fail=1; done >"$W/ctx.txt"
	sort -n "$W/ctx.txt" | awk -v per="$per_candidate" '{ c[NR] = $1; b[NR] = $2 } END {
		if (NR == 0) exit 1
		m = c[int((NR + 1) / 2)]
		printf "    context: median %.1f ms (min %.1f, max %.1f, %d processes); first 1 MiB buffer %.2f ms\n", m, c[1], c[NR], NR, b[int((NR + 1) / 2)]
		if (per > 0) printf "    leap-verify -j 1 spends %.1f ms per cuda candidate: the context is %.0f%% of it\n", per, 100 * m / per }' || fail=1
else
	echo "FAIL  nvcc could not build bench/gpu/ctx.cu:"
	cat "$W/ctx.err"
	fail=1
fi
echo

echo "### leap-bench repeatability: $REPEATS runs of the same candidate (softmax_fast), --max-time $MAX_TIME"
echo
: >"$W/rep.txt"
for i in $(seq "$REPEATS"); do
	timeout 120 leap-bench --max-time "$MAX_TIME" --no-baseline-cache --task softmax $G/softmax_fast.cu >"$W/bench.txt" 2>&1
	row=$(awk '$1 == "candidate" { m = $2; ci = $4 } $1 == "baseline" { b = $2 } $1 == "speedup" { s = $2 } END { sub(/x$/, "", s); if (m != "") print m, ci, b, s }' "$W/bench.txt")
	if [ -z "$row" ]; then
		echo "FAIL  leap-bench run $i:"
		head -5 "$W/bench.txt"
		fail=1
		continue
	fi
	echo "$row" >>"$W/rep.txt"
	read -r med ci base sp <<<"$row"
	printf '    run %d: candidate median %s ms (CI %s), baseline %s ms, speedup %sx\n' "$i" "$med" "$ci" "$base" "$sp"
done
sort -n -k4 "$W/rep.txt" | awk '{ s[NR] = $4; m[NR] = $1 } END {
	if (NR < 2) exit
	med = s[int((NR + 1) / 2)]
	printf "    speedup: median %.3fx, spread (max - min) / median %.2f%% over %d runs\n", med, 100 * (s[NR] - s[1]) / med, NR }'
echo
if [ $fail = 0 ]; then echo "bench-gpu: done"; else echo "bench-gpu: SOME MEASUREMENTS FAILED (above)"; fi
[ $fail = 0 ]
} 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
