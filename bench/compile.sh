#!/usr/bin/env bash
# compile.sh - leap-compile against bare nvcc: cold cache, warm cache rate, duplicate collapse, nvcc phases.
# Usage: bench/compile.sh   (env: NVCC, ARCH=sm_90, WARM=10000 records, CANDIDATES=20 (4 to 20: a
# spread of the 20 variants), REPS=3). Prints a markdown report.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH" LEAP_TASKS="$PWD/tasks" LC_ALL=C
NVCC="${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}"
ARCH="${ARCH:-sm_90}"
WARM="${WARM:-10000}"
[ -x "$NVCC" ] || { echo "compile.sh: nvcc not found at $NVCC (set NVCC or CUDA_HOME); nothing to measure" >&2; exit 0; }
W="$(mktemp -d "${TMPDIR:-/tmp}/leap-bench-compile.XXXXXX")"
trap 'rm -rf "$W"' EXIT
now_ms() { date +%s%N | awk '{printf "%.1f", $1 / 1e6}'; }
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# 20 distinct candidates: the templates of bench/candidates with their tuning constant varied.
mkdir -p "$W/src"
i=0
variant() { # TEMPLATE MACRO VALUE
	local f="bench/candidates/$1.cu" out
	out="$W/src/$(printf %02d $i)-$1-$3.cu"
	sed "s/^#define $2 .*/#define $2 $3/" "$f" >"$out"
	i=$((i + 1))
}
for v in 128 256 512 1024; do variant vector_add-gridstride BLOCK $v; done
for v in 128 256; do variant vector_add-float4 BLOCK $v; done
for v in 256 512; do variant vector_add-bounds BLOCK $v; done
for v in 128 256 512; do variant softmax-block BLOCK $v; done
for v in 2 4 8; do variant softmax-warp WARPS $v; done
variant softmax-online BLOCK 256
for v in 8 16; do variant matmul-naive BLOCK $v; done
for v in 16 32; do variant matmul-tiled BLOCK $v; done
variant matmul-regblock BLOCK 64
# fewer candidates (make bench: the 10-minute budget): keep a spread over the templates
CANDIDATES="${CANDIDATES:-20}"
if [ "$CANDIDATES" -lt 4 ] || [ "$CANDIDATES" -gt 20 ]; then echo "compile.sh: CANDIDATES must be 4 to 20" >&2; exit 2; fi
# the first file of each of CANDIDATES equal slices of the 20 stays
printf '%s\n' "$W"/src/*.cu | awk -v k="$CANDIDATES" '{ f[NR - 1] = $0 } END {
	for (i = 1; i < NR; i++) if (int(i * k / NR) == int((i - 1) * k / NR)) print f[i] }' | xargs -r rm -f
n=$(ls "$W/src" | wc -l)
[ "$(cat "$W"/src/*.cu | sha256sum | cut -c1-8)" ] && [ "$(for f in "$W"/src/*.cu; do sha256sum <"$f"; done | sort -u | wc -l)" -eq "$n" ]

for f in "$W"/src/*.cu; do
	t=$(basename "$f" | cut -d- -f2)
	jq -nc --arg t "$t" --rawfile c "$f" --arg f "$(basename "$f")" '{task:$t,backend:"cuda",file:$f,code:$c}'
done >"$W/in.jsonl"

. bench/lib.sh
bench_header "leap-compile against bare nvcc ($("$NVCC" --version | tail -n1), arch $ARCH)" "CANDIDATES=$CANDIDATES REPS=${REPS:-3} WARM=$WARM bench/compile.sh"

# 1+2. bare nvcc vs leap-compile on the same source, interleaved (load on the machine drifts),
# REPS times each (order alternating); per candidate the median of each.
# leap-compile: one record per process, --no-cache (the compiler always runs), the shim
# objects already built: compile.ms is the compiler run, wall the whole process.
REPS="${REPS:-3}"
"$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$W/src/00-"*.cu -o "$W/warmup.so" # file cache warm-up
leap-compile -j 1 --arch "$ARCH" --cache "$W/cache-i" --no-cache "$W/in.jsonl" >/dev/null # builds the shims
: >"$W/runs.tsv"
bare() {
	local t0 t1
	t0=$(now_ms)
	"$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$1" -o "$W/bare.so"
	t1=$(now_ms)
	printf '%s\tbare\t%s\n' "$(basename "$1")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" >>"$W/runs.tsv"
}
leap() {
	local t0 t1 ms
	t0=$(now_ms)
	ms=$(grep -F "\"file\":\"$(basename "$1")\"" "$W/in.jsonl" | leap-compile -j 1 --arch "$ARCH" --cache "$W/cache-i" --no-cache | jq -r .compile.ms)
	t1=$(now_ms)
	printf '%s\tleap\t%s\n%s\twall\t%s\n' "$(basename "$1")" "$ms" "$(basename "$1")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" >>"$W/runs.tsv"
}
for r in $(seq "$REPS"); do
	for f in "$W"/src/*.cu; do
		if [ $((r % 2)) -eq 1 ]; then bare "$f"; leap "$f"; else leap "$f"; bare "$f"; fi
	done
done
med_of() { awk -F'\t' -v f="$1" -v k="$2" '$1 == f && $2 == k {print $3}' "$W/runs.tsv" | median; }
: >"$W/both.tsv"
for f in "$W"/src/*.cu; do
	b=$(basename "$f")
	printf '%s\t%s\t%s\t%s\n' "$b" "$(med_of "$b" bare)" "$(med_of "$b" leap)" "$(med_of "$b" wall)" >>"$W/both.tsv"
done
echo "## Cold: $n distinct CUDA candidates, leap-compile vs bare nvcc -shared (same flags, median of $REPS interleaved runs)"
echo
echo "| candidate | bare nvcc ms | leap-compile compile.ms | ratio | leap-compile process ms | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
awk -F'\t' '{printf "| %s | %.0f | %.0f | %.3f | %.0f | %.3f |\n", $1, $2, $3, $3 / $2, $4, $4 / $2}' "$W/both.tsv"
med=$(awk -F'\t' '{print $3 / $2}' "$W/both.tsv" | median)
medw=$(awk -F'\t' '{print $4 / $2}' "$W/both.tsv" | median)
echo
echo "- median ratio, compiler run (compile.ms / bare nvcc): **$(printf %.3f "$med")** (target <= 1.05)"
echo "- median ratio, whole leap-compile process for one record (start, toolchain queries, extraction, hashing, compile, publish): **$(printf %.3f "$medw")**"

# one cold process over all records, fresh cache (pays the 3 shim objects once)
bare_sum=$(awk -F'\t' '{s += $2} END {print s}' "$W/both.tsv")
t0=$(now_ms)
leap-compile -j 1 --arch "$ARCH" --cache "$W/cache" "$W/in.jsonl" >"$W/cold.jsonl"
t1=$(now_ms)
[ "$(jq -r .compile.status "$W/cold.jsonl" | sort -u)" = ok ] || { echo "compile.sh: a candidate failed" >&2; exit 1; }
echo "- one leap-compile -j 1 process, fresh cache, all $n records (3 shim objects built once): $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') ms; the bare nvcc medians sum to $(printf %.0f "$bare_sum") ms"
t0=$(now_ms)
leap-compile --arch "$ARCH" --cache "$W/cache" --no-cache "$W/in.jsonl" >/dev/null
t1=$(now_ms)
echo "- the same with the default -j $(nproc) (shims cached): $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') ms"

# 2b. --batch: the same 20 records, one process, compiler always run
: >"$W/batch.tsv"
for r in $(seq "$REPS"); do
	t0=$(now_ms)
	leap-compile -j 1 --arch "$ARCH" --cache "$W/cache-b" --no-cache "$W/in.jsonl" >/dev/null
	t1=$(now_ms)
	leap-compile -j 1 --batch 4 --arch "$ARCH" --cache "$W/cache-b" --no-cache "$W/in.jsonl" >"$W/batch.out"
	t2=$(now_ms)
	leap-compile --batch 4 --arch "$ARCH" --cache "$W/cache-b" --no-cache "$W/in.jsonl" >/dev/null
	t3=$(now_ms)
	printf '%s\t%s\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" "$(awk -v a="$t1" -v b="$t2" 'BEGIN {print b - a}')" "$(awk -v a="$t2" -v b="$t3" 'BEGIN {print b - a}')" >>"$W/batch.tsv"
done
[ "$(jq -r .compile.status "$W/batch.out" | sort -u)" = ok ]
alone=$(cut -f1 "$W/batch.tsv" | median)
b4=$(cut -f2 "$W/batch.tsv" | median)
b4j=$(cut -f3 "$W/batch.tsv" | median)
echo
echo "## --batch 4 (kept, opt-in): the $n records in one process, --no-cache, median of $REPS"
echo
echo "| run | ms | vs alone |"
echo "| --- | ---: | ---: |"
echo "| -j 1, each alone | $(printf %.0f "$alone") | 1.000 |"
echo "| -j 1 --batch 4 | $(printf %.0f "$b4") | $(awk -v a="$b4" -v b="$alone" 'BEGIN {printf "%.3f", a / b}') |"
echo "| -j $(nproc) --batch 4 | $(printf %.0f "$b4j") | $(awk -v a="$b4j" -v b="$alone" 'BEGIN {printf "%.3f", a / b}') |"
echo
echo "batch sizes used (-j 1): $(jq -r '.compile.batch // 1' "$W/batch.out" | sort | uniq -c | awk '{printf "%s x %s; ", $1, $2}')"

# 3. warm cache rate
for _ in $(seq $((WARM / n))); do cat "$W/in.jsonl"; done >"$W/warm.jsonl"
wn=$(wc -l <"$W/warm.jsonl")
t0=$(now_ms)
leap-compile --arch "$ARCH" --cache "$W/cache" "$W/warm.jsonl" >"$W/warm.out"
t1=$(now_ms)
[ "$(jq -r .compile.cached "$W/warm.out" | sort -u)" = true ]
echo
echo "## Warm cache"
echo
echo "- $wn records (every one a hit): $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') ms, **$(awk -v a="$t0" -v b="$t1" -v n="$wn" 'BEGIN {printf "%.0f", n / ((b - a) / 1000)}') records/s** (target >= 500)"

# 4. a group of 16 with 4 distinct sources
cat >"$W/nvcc" <<EOS
#!/bin/sh
case "\$*" in *kernel.cu*) echo run >>'$W/nvcc.log' ;; esac
exec '$NVCC' "\$@"
EOS
chmod +x "$W/nvcc"
: >"$W/nvcc.log"
head -n 4 "$W/in.jsonl" >"$W/four.jsonl"
for s in $(seq 0 15); do sed -n "$((s % 4 + 1))p" "$W/four.jsonl" | jq -c --argjson s "$s" '.sample = $s | .group = "g"'; done >"$W/group.jsonl"
leap-compile --arch "$ARCH" --nvcc "$W/nvcc" --cache "$W/cache-group" "$W/group.jsonl" >"$W/group.out"
echo
echo "## Duplicate collapse"
echo
echo "- a group of 16 records with 4 distinct sources (interleaved), fresh cache, -j $(nproc): nvcc ran **$(wc -l <"$W/nvcc.log") times** for candidates; $(jq -c 'select(.compile.cached)' "$W/group.out" | wc -l) records marked cached"

# 5. where nvcc's time goes, for the first candidate
f=$(ls "$W"/src/*.cu | head -n1)
t=$(basename "$f" | cut -d- -f2)
leap-task --shim cuda "$t" | sed -n '/---- prelude ----/,/---- shim ----/p' | sed '1d;$d' >"$W/leap_prelude.h"
leap-task --shim cuda "$t" | sed -n '/---- shim ----/,$p' | sed '1d' >"$W/leap_shim.cu"
phases() { # label, then an nvcc command line
	local label="$1"
	shift
	"$@" --time "$W/time.csv" >/dev/null 2>&1 || true
	echo "| $label | $(awk -F, '$2 ~ /cudafe|cicc|ptxas|gcc|nvlink|fatbinary/ {gsub(/^ +| +$/, "", $2); t[$2] += $(NF - 1)} END {for (k in t) printf "%s %.0f; ", k, t[k]}' "$W/time.csv") | $(awk -F, '$2 ~ /cudafe|cicc|ptxas|gcc|nvlink|fatbinary|driver/ {s += $(NF - 1)} END {printf "%.0f", s}' "$W/time.csv") |"
	rm -f "$W/time.csv"
}
echo
echo "## Where nvcc's time goes ($(basename "$f"), nvcc --time, one run each, ms)"
echo
echo "| build | phases | total |"
echo "| --- | --- | ---: |"
cd "$W"
phases "bare nvcc -shared" "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$f" -o x.so
phases "candidate + shim as two .cu files" "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" -include leap_prelude.h "$f" leap_shim.cu -o x.so
"$NVCC" -c -Xcompiler -fPIC -O3 -arch="$ARCH" -include leap_prelude.h leap_shim.cu -o shim.o
phases "candidate + prebuilt shim.o (leap-compile)" "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" -include leap_prelude.h "$f" shim.o -o x.so -Xlinker -z,defs
printf '#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n' | cat leap_prelude.h - >fat_prelude.h
phases "as above, prelude also including cuda_fp16.h + cuda_bf16.h" "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" -include fat_prelude.h "$f" shim.o -o x.so -Xlinker -z,defs
printf '\n' >empty.cu
phases "an empty .cu file (nvcc's fixed cost)" "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" empty.cu -o x.so

# 6. ideas measured, not kept: four candidates in one translation unit; host code at -O0
mk_batch() { # files...: one TU, each candidate in its own namespace, includes hoisted
	{ grep -h '^#include' "$@" || true; } | sort -u
	local k=0
	for g in "$@"; do
		echo "namespace leap_c$k {"
		echo "#line 1 \"c$k.cu\""
		sed -e 's/extern "C" void \([a-z_]*\)/void \1/' -e 's/^#include.*//' "$g"
		echo "}"
		sed -n 's/^#define \([A-Za-z_0-9]*\).*/#undef \1/p' "$g"
		k=$((k + 1))
	done
}
four=$(ls "$W"/src/*.cu | grep -v online | head -n 4)
# shellcheck disable=SC2086
mk_batch $four >batch.cu
echo
echo "## Ideas measured (ms, median of $REPS interleaved runs)"
echo
: >"$W/idea.tsv"
for r in $(seq "$REPS"); do
	t0=$(now_ms)
	for f in $four; do "$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$f" -o x.so; done
	t1=$(now_ms)
	"$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" batch.cu -o x.so
	t2=$(now_ms)
	for f in $four; do "$NVCC" -shared -Xcompiler -fPIC -O0 -arch="$ARCH" "$f" -o x.so; done
	t3=$(now_ms)
	printf '%s\t%s\t%s\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" "$(awk -v a="$t1" -v b="$t2" 'BEGIN {print b - a}')" "$(awk -v a="$t2" -v b="$t3" 'BEGIN {print b - a}')" >>"$W/idea.tsv"
done
sep=$(cut -f1 "$W/idea.tsv" | median)
bat=$(cut -f2 "$W/idea.tsv" | median)
o0=$(cut -f3 "$W/idea.tsv" | median)
echo "| build of 4 candidates | ms | vs separate |"
echo "| --- | ---: | ---: |"
echo "| 4 separate nvcc -shared -O3 | $(printf %.0f "$sep") | 1.000 |"
echo "| 1 translation unit, 4 namespaces | $(printf %.0f "$bat") | $(awk -v a="$bat" -v b="$sep" 'BEGIN {printf "%.3f", a / b}') |"
echo "| 4 separate, host code at -O0 | $(printf %.0f "$o0") | $(awk -v a="$o0" -v b="$sep" 'BEGIN {printf "%.3f", a / b}') |"
