#!/usr/bin/env bash
# compile.sh - leap-compile against bare nvcc: cold cache, warm cache rate, duplicate collapse, nvcc phases.
# Usage: bench/compile.sh   (env: NVCC, ARCH=sm_90, WARM=10000 records). Prints a markdown report.
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
n=$(ls "$W/src" | wc -l)
[ "$(cat "$W"/src/*.cu | sha256sum | cut -c1-8)" ] && [ "$(for f in "$W"/src/*.cu; do sha256sum <"$f"; done | sort -u | wc -l)" -eq "$n" ]

for f in "$W"/src/*.cu; do
	t=$(basename "$f" | cut -d- -f2)
	jq -nc --arg t "$t" --rawfile c "$f" --arg f "$(basename "$f")" '{task:$t,backend:"cuda",file:$f,code:$c}'
done >"$W/in.jsonl"

echo "# leap-compile benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $("$NVCC" --version | tail -n1), arch $ARCH)"
echo

# 1. bare nvcc, one run per source, same flags
"$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$W/src/00-"*.cu -o "$W/warmup.so" # file cache warm-up
: >"$W/bare.tsv"
for f in "$W"/src/*.cu; do
	t0=$(now_ms)
	"$NVCC" -shared -Xcompiler -fPIC -O3 -arch="$ARCH" "$f" -o "$W/bare.so"
	t1=$(now_ms)
	printf '%s\t%s\n' "$(basename "$f")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" >>"$W/bare.tsv"
done

# 2. leap-compile, cold cache, one compiler at a time
t0=$(now_ms)
leap-compile -j 1 --arch "$ARCH" --cache "$W/cache" "$W/in.jsonl" >"$W/cold.jsonl"
t1=$(now_ms)
cold_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
[ "$(jq -r .compile.status "$W/cold.jsonl" | sort -u)" = ok ] || { echo "compile.sh: a candidate failed" >&2; exit 1; }
jq -r '[.file, .compile.ms] | @tsv' "$W/cold.jsonl" >"$W/leap.tsv"
join -t $'\t' "$W/bare.tsv" "$W/leap.tsv" >"$W/both.tsv"
echo "## Cold cache: $n distinct CUDA candidates, leap-compile -j 1 vs bare nvcc -shared"
echo
echo "| candidate | bare nvcc ms | leap-compile ms | ratio |"
echo "| --- | ---: | ---: | ---: |"
awk -F'\t' '{printf "| %s | %.0f | %.0f | %.3f |\n", $1, $2, $3, $3 / $2}' "$W/both.tsv"
med=$(awk -F'\t' '{print $3 / $2}' "$W/both.tsv" | median)
bare_sum=$(awk -F'\t' '{s += $2} END {print s}' "$W/both.tsv")
echo
echo "- median ratio (compile.ms / bare nvcc): **$(printf %.3f "$med")** (target <= 1.05)"
echo "- whole leap-compile process, all $n records, including the 3 shim objects built once per task: $(printf %.0f "$cold_wall") ms vs $(printf %.0f "$bare_sum") ms of bare nvcc (ratio $(awk -v a="$cold_wall" -v b="$bare_sum" 'BEGIN {printf "%.3f", a / b}'))"
t0=$(now_ms)
leap-compile --arch "$ARCH" --cache "$W/cache-j" --no-cache "$W/in.jsonl" >/dev/null
t1=$(now_ms)
echo "- with -j $(nproc) (default): $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') ms for the $n records"

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
	echo "| $label | $(awk -F, '$2 ~ /cudafe|cicc|ptxas|gcc|nvlink|fatbinary/ {gsub(/^ +| +$/, "", $2); t[$2] += $(NF - 1)} END {for (k in t) printf "%s %.0f; ", k, t[k]}' "$W/time.csv") | $(awk -F, '$2 ~ /nvcc \(driver\)/ {print int($(NF-1))}' "$W/time.csv") |"
	rm -f "$W/time.csv"
}
echo
echo "## Where nvcc's time goes ($(basename "$f"), one run each, ms)"
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
