# leap-compile.bats - extraction, cpu and cuda builds, diagnostics, cache, limits and order of leap-compile.
load helpers

F="$FIXTURES/leap-compile"

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	T="$BATS_TEST_TMPDIR"
}

# rec TASK BACKEND FILE: a record whose completion is the text of FILE.
rec() {
	jq -nc --arg t "$1" --arg b "$2" --rawfile c "$3" '{task:$t,backend:$b,completion:$c}'
}

# code_rec TASK BACKEND CODE [SAMPLE]: a record with code given directly.
code_rec() {
	jq -nc --arg t "$1" --arg b "$2" --arg c "$3" --argjson s "${4:-0}" '{task:$t,backend:$b,sample:$s,code:$c}'
}

# counting_cc LOG: writes $T/cc, a C compiler that appends each command line to LOG.
counting_cc() {
	cat >"$T/cc" <<EOF
#!/bin/sh
echo "\$*" >>'$1'
exec cc "\$@"
EOF
	chmod +x "$T/cc"
}

VA_OK='void vector_add(const float *a, const float *b, float *c, int n)
{
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i];
}'

@test "extraction corpus: each completion yields the expected code or no_code" {
	n=0
	for md in "$F"/extract/*.md; do
		exp="${md%.md}.expect"
		rec vector_add cpu "$md" >"$T/in.jsonl"
		run -0 leap-compile --backend cpu "$T/in.jsonl"
		echo "$output" >"$T/out.json"
		kind=$(head -n1 "$exp")
		if [ "$kind" = code ]; then
			field=$(jq -r '.code // ""' "$T/out.json")
			[ -n "$field" ] || { echo "$md: no code extracted"; false; }
		else
			[ "$(jq -r .status "$T/out.json")" = no_code ] || { echo "$md: expected no_code"; false; }
			field=$(jq -r .compile.message "$T/out.json")
		fi
		while IFS= read -r line; do
			case "$line" in
			+*) [[ "$field" == *"${line#+}"* ]] || { echo "$md: missing '${line#+}' in: $field"; false; } ;;
			-*) [[ "$field" != *"${line#-}"* ]] || { echo "$md: unexpected '${line#-}' in: $field"; false; } ;;
			esac
		done < <(tail -n +2 "$exp")
		n=$((n + 1))
	done
	[ "$n" -ge 15 ]
}

@test "extraction corpus: the cpu completions that define the entry point compile" {
	for md in 01-single-fence 04-bare-fence 06-two-definitions-last-wins 07-unterminated 09-plain-with-prose 12-think-then-answer 15-helper-and-entry-in-one-block 17-indented-fence-in-list; do
		rec vector_add cpu "$F/extract/$md.md"
	done >"$T/in.jsonl"
	run -0 leap-compile -j 2 "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(jq -r .compile.status "$T/out.jsonl" | sort -u)" = ok ]
	[ "$(wc -l <"$T/out.jsonl")" -eq 8 ]
}

@test "cpu: a correct candidate becomes a loadable artifact exporting the ABI" {
	code_rec vector_add cpu "$VA_OK" >"$T/in.jsonl"
	run -0 --separate-stderr leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .compile.status "$T/out.json")" = ok ]
	[ "$(jq -r .compile.cached "$T/out.json")" = false ]
	[ "$(jq -r .backend "$T/out.json")" = cpu ]
	jq -e '.compile.hash | test("^[0-9a-f]{64}$")' "$T/out.json"
	jq -e 'has("status") | not' "$T/out.json"
	art=$(jq -r .compile.artifact "$T/out.json")
	[[ "$art" == /* ]]
	[[ "$art" == "$LEAP_CACHE"/* ]]
	[ -s "$art" ]
	# load it and run it the way the runner does
	cat >"$T/load.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	int (*ver)(void) = (int (*)(void))dlsym(h, "leap_abi_version");
	int (*entry)(void *const *) = (int (*)(void *const *))dlsym(h, "leap_entry");
	if (!ver || !entry || ver() != 1) return 2;
	float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, c[3] = {0};
	int n = 3;
	void *args[4] = {a, b, c, &n};
	if (entry(args)) return 3;
	printf("%g %g %g\n", c[0], c[1], c[2]);
	return argc > 2;
}
EOF
	cc -o "$T/load" "$T/load.c" -ldl
	run -0 "$T/load" "$art"
	assert_output "11 22 33"
}

@test "cpu: a compile error points at the candidate's own line and column" {
	code_rec vector_add cpu "#include <stdint.h>

void vector_add(const float *a, const float *b, float *c, int n)
{
	for (int i = 0; i < n; i++) c[i] = a[i] + undefined_thing;
}" >"$T/in.jsonl"
	run -0 leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .status "$T/out.json")" = compile_error ]
	[ "$(jq -r .compile.status "$T/out.json")" = error ]
	[ "$(jq -r .compile.reason "$T/out.json")" = compile ]
	[ "$(jq -r '.compile.diagnostics[0].line' "$T/out.json")" = 5 ]
	[ "$(jq -r '.compile.diagnostics[0].col' "$T/out.json")" = 44 ]
	[ "$(jq -r '.compile.diagnostics[0].severity' "$T/out.json")" = error ]
	jq -e '.compile.diagnostics[0].message | test("undefined_thing")' "$T/out.json"
	jq -e '.compile.message | startswith("line 5, column 44:")' "$T/out.json"
	jq -e '.compile | has("artifact") | not' "$T/out.json"
}

@test "cpu: a missing entry point and a wrong signature are reported as such" {
	{
		code_rec vector_add cpu 'void vector_sum(const float *a, const float *b, float *c, int n) { }' 0
		code_rec vector_add cpu 'void vector_add(float *a, float *b, float *c, int n) { }' 1
		code_rec vector_add cpu 'double vector_add(const float *a, const float *b, float *c, int n) { return 0; }' 2
	} >"$T/in.jsonl"
	run -0 leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	run jq -r '[.sample, .compile.reason] | @tsv' "$T/out.jsonl"
	assert_output "$(printf '0\tmissing_entry\n1\twrong_signature\n2\twrong_signature')"
	jq -e -s '.[] | select(.sample == 0) | .compile.message | contains("void vector_add(const float *a, const float *b, float *c, int n);")' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 1) | .compile.diagnostics[0].line == 1' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 1) | .compile.diagnostics[1].where == "prelude"' "$T/out.jsonl"
}

@test "cpu: a link error (undefined symbol) is reported as a link error" {
	code_rec vector_add cpu 'extern float helper(float);
void vector_add(const float *a, const float *b, float *c, int n) { for (int i = 0; i < n; i++) c[i] = helper(a[i]) + b[i]; }' >"$T/in.jsonl"
	run -0 leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .compile.reason "$T/out.json")" = link ]
	jq -e '.compile.diagnostics[] | select(.where == "link") | .message | contains("helper")' "$T/out.json"
}

@test "logs: no path of this machine; --max-log cuts the log and keeps the first error" {
	code_rec vector_add cpu 'void vector_sum(void) { }' >"$T/in.jsonl"
	run -0 leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	log=$(jq -r .compile.log "$T/out.json")
	[ -n "$log" ]
	[[ "$log" != *"$T"* ]]
	[[ "$log" != *"${TMPDIR:-/tmp}/"* ]]
	[[ "$log" != *"/usr/bin/"* ]]
	# many errors: the log is cut to the bound and starts with the first one
	src=""
	for i in $(seq 1 60); do src+="int f$i(void) { return nope$i; }"$'\n'; done
	code_rec vector_add cpu "$src" >"$T/in2.jsonl"
	run -0 leap-compile --max-log 300 "$T/in2.jsonl"
	echo "$output" >"$T/out2.json"
	log=$(jq -r .compile.log "$T/out2.json")
	[ "${#log}" -le 340 ]
	[[ "$log" == *"nope1'"* ]]
	[[ "$log" == *"[leap: "*" bytes cut]"* ]]
	[ "$(jq '.compile.diagnostics | length' "$T/out2.json")" -ge 2 ]
}

@test "cache: a second run is a hit and runs no compiler; failures are cached too" {
	counting_cc "$T/cc.log"
	{
		code_rec vector_add cpu "$VA_OK" 0
		code_rec vector_add cpu 'void vector_add(const float *a, const float *b, float *c, int n) { oops }' 1
	} >"$T/in.jsonl"
	run -0 leap-compile --cc "$T/cc" "$T/in.jsonl"
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 2 ]
	run -0 leap-compile --cc "$T/cc" "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 2 ]
	[ "$(jq -r .compile.cached "$T/out.jsonl" | sort -u)" = true ]
	jq -e -s '.[] | select(.sample == 0) | .compile.status == "ok" and (.compile.artifact | length > 0)' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 1) | .status == "compile_error" and .compile.diagnostics[0].line == 1' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 0) | .compile.compiled_ms > 0' "$T/out.jsonl"
	# --no-cache runs the compiler again
	run -0 leap-compile --no-cache --cc "$T/cc" "$T/in.jsonl"
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 4 ]
	[ "$(echo "$output" | jq -r .compile.cached | sort -u)" = false ]
}

@test "cache: identical sources inside one input compile once, even in flight" {
	counting_cc "$T/cc.log"
	for s in 0 1 2 3 4 5 6 7; do
		code_rec vector_add cpu "$VA_OK /* variant $((s % 2)) */" "$s"
	done >"$T/in.jsonl"
	run -0 leap-compile -j 4 --cc "$T/cc" "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 2 ]
	[ "$(jq -r .compile.status "$T/out.jsonl" | sort -u)" = ok ]
	[ "$(jq -c 'select(.compile.cached == false)' "$T/out.jsonl" | wc -l)" -eq 2 ]
	[ "$(jq -r .compile.hash "$T/out.jsonl" | sort -u | wc -l)" -eq 2 ]
	run jq -r .sample "$T/out.jsonl"
	assert_output "$(seq 0 7)"
}

@test "--no-cache: identical sources inside one input each run the compiler, in flight or not" {
	counting_cc "$T/cc.log"
	for s in 0 1 2 3 4 5; do
		code_rec vector_add cpu "$VA_OK /* variant $((s % 2)) */" "$s"
	done >"$T/in.jsonl"
	# warm the cache first: --no-cache must not answer from it either
	run -0 leap-compile --cc "$T/cc" "$T/in.jsonl"
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 2 ]
	for j in 1 4; do
		run -0 leap-compile -j "$j" --no-cache --cc "$T/cc" "$T/in.jsonl"
		[ "$(jq -r .compile.cached <<<"$output" | sort -u)" = false ] || fail "-j $j: a record was answered from the cache"
	done
	[ "$(grep -c 'kernel\.c' "$T/cc.log")" -eq 14 ]
}

@test "cache: concurrent processes share one cache safely" {
	for s in $(seq 0 5); do
		code_rec vector_add cpu "$VA_OK /* $s */" "$s"
	done >"$T/in.jsonl"
	for p in 1 2 3 4; do
		leap-compile -j 2 "$T/in.jsonl" >"$T/out$p.jsonl" 2>"$T/err$p" &
	done
	wait
	for p in 1 2 3 4; do
		[ ! -s "$T/err$p" ]
		[ "$(jq -r .compile.status "$T/out$p.jsonl" | sort -u)" = ok ]
		[ "$(wc -l <"$T/out$p.jsonl")" -eq 6 ]
		for art in $(jq -r .compile.artifact "$T/out$p.jsonl"); do [ -s "$art" ]; done
	done
	[ "$(find "$LEAP_CACHE/v1" -name '*.so' | wc -l)" -eq 6 ]
	[ "$(find "$LEAP_CACHE/v1/tmp" -type f | wc -l)" -eq 0 ]
	run -0 leap-compile "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.cached | sort -u)" = true ]
}

@test "cache: the size bound evicts the least recently used results" {
	for s in $(seq 0 7); do
		code_rec vector_add cpu "$VA_OK /* $s */" "$s"
	done >"$T/in.jsonl"
	run -0 leap-compile -j 1 --cache-size 60K "$T/in.jsonl"
	total=$(find "$LEAP_CACHE/v1" -path '*/tmp' -prune -o -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	[ "$total" -le $((60 * 1024)) ]
	n=$(find "$LEAP_CACHE/v1" -name '*.so' | wc -l)
	[ "$n" -ge 1 ] && [ "$n" -lt 8 ]
	# the last one compiled is still there; the first one is gone
	first=$(echo "$output" | head -n1 | jq -r .compile.artifact)
	last=$(echo "$output" | tail -n1 | jq -r .compile.artifact)
	[ -s "$last" ]
	[ ! -e "$first" ]
}

@test "limits: a compiler that hangs is stopped at --timeout" {
	cat >"$T/slowcc" <<'EOF'
#!/bin/sh
case "$*" in *kernel.c*) sleep 1000 ;; esac
exec cc "$@"
EOF
	chmod +x "$T/slowcc"
	code_rec vector_add cpu "$VA_OK" >"$T/in.jsonl"
	# stopped long before the compiler's 1000 s (300 s: a bound no load reaches; the record
	# says which limit stopped it)
	run -0 timeout 300 leap-compile --cc "$T/slowcc" --timeout 1 "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .compile.status "$T/out.json")" = timeout ]
	[ "$(jq -r .status "$T/out.json")" = compile_error ]
	jq -e '.compile.message | contains("longer than 1 s")' "$T/out.json"
}

@test "limits: #include \"/dev/zero\" ends as a compile error, not a hang" {
	code_rec vector_add cpu '#include "/dev/zero"' >"$T/in.jsonl"
	run -0 leap-compile --memory 512M --timeout 20 "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .status "$T/out.json")" = compile_error ]
	[ "$(jq -r .compile.reason "$T/out.json")" = memory_limit ]
	# the same limit reuses the verdict; a larger one does not
	run -0 leap-compile --memory 512M --timeout 20 "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.cached)" = true ]
	run -0 leap-compile --memory 600M --timeout 20 "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.cached)" = false ]
	[ "$(echo "$output" | jq -r .compile.reason)" = memory_limit ]
}

@test "-j 2 keeps the input order when later records finish first" {
	cat >"$T/slowcc" <<'EOF'
#!/bin/sh
if grep -q SLOW kernel.c 2>/dev/null; then sleep 1; fi
exec cc "$@"
EOF
	chmod +x "$T/slowcc"
	{
		code_rec vector_add cpu "$VA_OK /* SLOW */" 0
		code_rec vector_add cpu "$VA_OK /* fast 1 */" 1
		code_rec vector_add cpu "$VA_OK /* fast 2 */" 2
		code_rec vector_add cpu "$VA_OK /* fast 3 */" 3
	} >"$T/in.jsonl"
	run -0 leap-compile -j 2 --cc "$T/slowcc" "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	run jq -r .sample "$T/out.jsonl"
	assert_output "$(seq 0 3)"
	[ "$(jq -r .compile.status "$T/out.jsonl" | sort -u)" = ok ]
}

@test "a malformed line and a bad record pass as error records; the rest is compiled" {
	{
		echo '{"task": "vector_add", "backend": "cpu", "code": "broken'
		code_rec vector_add cpu "$VA_OK" 1
		echo '{"task": "no_such_task", "code": "int x;"}'
		echo '{"task": "vector_add", "backend": "tpu", "code": "int x;"}'
		echo '{"task": "vector_add", "backend": "cpu"}'
	} >"$T/in.jsonl"
	run -1 --separate-stderr leap-compile "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(wc -l <"$T/out.jsonl")" -eq 5 ]
	run jq -r 'if .error then "error:\(.error.line // "-")" else .compile.status end' "$T/out.jsonl"
	assert_output "$(printf 'error:1\nok\nerror:3\nerror:4\nerror:5')"
	jq -e -s '.[] | select(.error) | .error.program == "leap-compile"' "$T/out.jsonl"
}

@test "fields it does not own pass through untouched; backend is added when missing" {
	jq -nc --arg c "$VA_OK" '{task:"vector_add",code:$c,group:"g",sample:3,turn:2,extra:{"x":[1,2]}}' >"$T/in.jsonl"
	run -0 leap-compile --backend cpu "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	jq -e '.group == "g" and .sample == 3 and .turn == 2 and .extra == {"x":[1,2]} and .backend == "cpu"' "$T/out.json"
	jq -e 'has("code") and (.code | startswith("void vector_add"))' "$T/out.json"
	# a record that compiles now loses the compile_error of an earlier run
	jq -c '.status = "compile_error"' "$T/out.json" >"$T/again.jsonl"
	run -0 leap-compile "$T/again.jsonl"
	echo "$output" | jq -e 'has("status") | not'
}

@test "--task compiles source files and -H prints a readable verdict" {
	printf '%s\n' "$VA_OK" >"$T/va.c"
	run -0 leap-compile --task vector_add --backend cpu -H "$T/va.c"
	assert_line --partial "va.c: vector_add (cpu): ok"
	assert_line --partial "artifact: $LEAP_CACHE/"
	printf 'void vector_add(const float *a, const float *b, float *c, int n)\n{\n\tc[0] = a[0] + zz;\n}\n' >"$T/bad.c"
	run -1 leap-compile --task vector_add --backend cpu -H "$T/bad.c"
	assert_line --partial "bad.c: vector_add (cpu): compile error (compile)"
	assert_line --partial "$T/bad.c:3:"
	run -1 leap-compile --task vector_add --backend cpu "$T/bad.c"
	echo "$output" | jq -e '.status == "compile_error"'
}

@test "cuda: a correct candidate compiles with nvcc into an artifact exporting the ABI" {
	skip_unless_nvcc
	rec softmax cuda "$F/softmax-cuda.md" >"$T/in.jsonl"
	run -0 leap-compile --arch sm_90 "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	[ "$(jq -r .compile.status "$T/out.json")" = ok ]
	[ "$(jq -r .compile.arch "$T/out.json")" = sm_90 ]
	art=$(jq -r .compile.artifact "$T/out.json")
	run -0 nm -D --defined-only "$art"
	assert_output --partial " T leap_entry"
	assert_output --partial " T leap_abi_version"
	assert_output --partial " T softmax"
}

@test "cuda: compile errors, a missing entry point and a wrong signature map to the candidate" {
	skip_unless_nvcc
	{
		code_rec softmax cuda '#include <math.h>
__global__ void k(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = expf(x[i]) + not_declared;
}
extern "C" void softmax(const float *x, float *y, int rows, int cols) { k<<<rows, cols>>>(x, y, rows * cols); }' 0
		code_rec softmax cuda 'extern "C" void soft_max(const float *x, float *y, int rows, int cols) { }' 1
		code_rec softmax cuda 'extern "C" void softmax(float *x, float *y, int rows, int cols) { }' 2
		code_rec softmax cuda '__global__ void k(float *y)
{
	__shared__ float big[100000];
	big[threadIdx.x] = 1.0f;
	__syncthreads();
	y[threadIdx.x] = big[threadIdx.x + 1];
}
extern "C" void softmax(const float *x, float *y, int rows, int cols) { k<<<1, 32>>>(y); }' 3
	} >"$T/in.jsonl"
	run -0 leap-compile -j 3 --arch sm_90 "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 0) | .compile.reason == "compile" and .compile.diagnostics[0].line == 5 and .compile.diagnostics[0].col == 33' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 1) | .compile.reason == "missing_entry"' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 2) | .compile.reason == "wrong_signature"' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 3) | .compile.diagnostics[0].where == "ptxas" and (.compile.message | contains("too much shared data"))' "$T/out.jsonl"
	[ "$(jq -r .status "$T/out.jsonl" | sort -u)" = compile_error ]
	! grep -q tmpxft "$T/out.jsonl"
}

@test "cuda: the default --arch comes from nvidia-smi (CUDA device 0), else sm_90" {
	skip_unless_nvcc
	export FAKE_GPUS=$'0, NVIDIA A100, 8.0, GPU-a, Enabled, 81920\n1, NVIDIA A10, 8.6, GPU-b, Enabled, 23028'
	code_rec vector_add cuda 'extern "C" void vector_add(const float *a, const float *b, float *c, int n) { }' >"$T/in.jsonl"
	CUDA_DEVICE_ORDER=PCI_BUS_ID PATH="$FIXTURES/gpu/bin:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.arch)" = sm_80 ]
	[ "$(echo "$output" | jq -r .compile.status)" = ok ]
	# unlike GPUs in CUDA's default order (fastest first): nvidia-smi cannot tell which is 0
	PATH="$FIXTURES/gpu/bin:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.arch)" = sm_90 ]
	CUDA_VISIBLE_DEVICES=1,0 PATH="$FIXTURES/gpu/bin:$PATH" run -0 leap-compile "$T/in.jsonl"
	[ "$(echo "$output" | jq -r .compile.arch)" = sm_86 ]
	if ! command -v nvidia-smi >/dev/null; then
		run -0 leap-compile "$T/in.jsonl"
		[ "$(echo "$output" | jq -r .compile.arch)" = sm_90 ]
	fi
}

@test "usage: --help, --version and a bad option" {
	run -0 leap-compile --help
	assert_line --index 0 "usage: leap-compile [OPTION]... [FILE]..."
	run -0 leap-compile --version
	assert_output --partial "leap-compile (leap)"
	run -2 leap-compile --frobnicate
	run -2 leap-compile --jobs 0
	run -2 leap-compile --task vector_add
}

@test "cuda --batch: candidates share one nvcc run; each artifact binds its own entry point" {
	skip_unless_nvcc
	for k in 0 1 2; do
		code_rec vector_add cuda "#define BLOCK $((128 << k))
__global__ void add$k(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
extern \"C\" void vector_add(const float *a, const float *b, float *c, int n) { add$k<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, b, c, n); }" "$k"
	done >"$T/in.jsonl"
	code_rec vector_add cuda 'extern "C" void vector_add(const float *a, const float *b, float *c, int n)
{
	c[0] = oops;
}' 3 >>"$T/in.jsonl"
	run -0 leap-compile --batch 8 -j 1 --arch sm_90 "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	run jq -r '[.sample, .compile.status, (.compile.batch // 0)] | @tsv' "$T/out.jsonl"
	assert_output "$(printf '0\tok\t3\n1\tok\t3\n2\tok\t3\n3\terror\t0')"
	jq -e -s '.[] | select(.sample == 3) | .compile.diagnostics[0].line == 3' "$T/out.jsonl"
	for k in 0 1 2; do
		art=$(jq -r "select(.sample == $k) | .compile.artifact" "$T/out.jsonl")
		nm -D --defined-only "$art" >"$T/nm"
		grep -q ' T leap_entry$' "$T/nm"
		entry=$(awk '$3 == "vector_add" {print $1}' "$T/nm")
		mine=$(awk -v s="leap_b${k}_vector_add" '$3 == s {print $1}' "$T/nm")
		[ -n "$entry" ] && [ "$entry" = "$mine" ]
	done
}

@test "cuda --batch: a candidate with a dynamic initializer is never batched" {
	skip_unless_nvcc
	{
		code_rec vector_add cuda '#include <stdlib.h>
static int seed = rand();
extern "C" void vector_add(const float *a, const float *b, float *c, int n) { (void)seed; }' 0
		code_rec vector_add cuda 'extern "C" void vector_add(const float *a, const float *b, float *c, int n) { }' 1
		code_rec vector_add cuda '__attribute__((constructor)) static void hook(void) { }
extern "C" void vector_add(const float *a, const float *b, float *c, int n) { }' 2
	} >"$T/in.jsonl"
	run -0 leap-compile --batch 4 -j 1 --arch sm_90 "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(jq -r .compile.status "$T/out.jsonl" | sort -u)" = ok ]
	[ "$(jq -c 'select(.compile.batch)' "$T/out.jsonl" | wc -l)" -eq 0 ]
}

@test "a backend whose compiler is missing gives error records, not verdicts" {
	code_rec vector_add cuda 'extern "C" void vector_add(const float *a, const float *b, float *c, int n) { }' >"$T/in.jsonl"
	code_rec vector_add cpu "$VA_OK" 1 >>"$T/in.jsonl"
	run -1 --separate-stderr leap-compile --nvcc "$T/no-such-nvcc" "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	jq -e -s '.[0].error.message | contains("needs nvcc")' "$T/out.jsonl"
	jq -e -s '.[0] | has("status") | not' "$T/out.jsonl"
	jq -e -s '.[1].compile.status == "ok"' "$T/out.jsonl"
	[[ "$stderr" == *"needs nvcc"* ]]
}

@test "--progress: a progress line with the cached count, and a summary" {
	code_rec vector_add cpu "$VA_OK" >"$T/in.jsonl"
	code_rec vector_add cpu "$VA_OK" 1 >>"$T/in.jsonl"
	run -0 --separate-stderr leap-compile --progress "$T/in.jsonl"
	[[ "$stderr" == *"leap-compile: 2/2 records (100%) in "*"/s; 1 compiled, 1 cached, 0 compile errors, 0 without code; 0 errors"* ]]
}

@test "records stream: the first result is written before the input ends" {
	code_rec vector_add cpu "$VA_OK" >"$T/r.jsonl"
	# the second record is held back until the first came out (until_lines)
	{ cat "$T/r.jsonl"; until_lines "$T/out.jsonl" 1 && cp "$T/out.jsonl" "$T/out.early"; cat "$T/r.jsonl"; } |
		leap-compile >"$T/out.jsonl"
	[ "$(wc -l <"$T/out.early")" -eq 1 ]
	[ "$(wc -l <"$T/out.jsonl")" -eq 2 ]
}

# replay_cc: writes $T/cc, a C compiler that, for the candidate, prints the file named on the
# candidate's first line ("/* PATH */") as its output and fails; other builds (the shim) are real.
replay_cc() {
	cat >"$T/cc" <<'EOF2'
#!/bin/sh
case " $* " in
*" kernel.c "*)
	f=$(sed -n '1s|^/\* \(.*\) \*/$|\1|p' kernel.c)
	cat "$f" >&2
	exit 1 ;;
esac
exec cc "$@"
EOF2
	chmod +x "$T/cc"
}

@test "diagnostics: every compiler output of the fuzz corpus (real nvcc, gcc, ld, ptxas logs and fuzz finds) becomes a verdict" {
	replay_cc
	n=0
	for f in "$ROOT"/tests/fuzz/corpus/diag/*; do
		code_rec vector_add cpu "/* $f */
$VA_OK" "$n"
		n=$((n + 1))
	done >"$T/in.jsonl"
	run -0 --separate-stderr leap-compile --no-cache --cc "$T/cc" "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	[ "$(wc -l <"$T/out.jsonl")" -eq "$n" ]
	[ "$(jq -s '[.[] | select(.status == "compile_error")] | length' "$T/out.jsonl")" -eq "$n" ]
	jq -e -s 'map(.compile.diagnostics[]) | all(.message | type == "string")' "$T/out.jsonl"
	jq -e -s 'map(.compile.message) | all(type == "string" and length > 0)' "$T/out.jsonl"
	# found by fuzzing: "kernel.c:0:6: error" gave a column without a line
	jq -e -s 'map(.compile.diagnostics[]) | all((has("col") | not) or has("line"))' "$T/out.jsonl"
	# the file names and lines of real logs are read
	jq -e -s '[.[].compile.diagnostics[] | select(.where == "ptxas")] | length >= 2' "$T/out.jsonl"
	# ptxas on inline PTX names the .ptx file and its line: "ptxas F.ptx, line 44; error   : ..."
	jq -e -s --arg m "ptxas: Unknown modifier '.bogus'" 'map(select(.compile.log | contains(".bogus"))) |
		length == 1 and .[0].compile.message == $m' "$T/out.jsonl"
	jq -e -s '[.[].compile.diagnostics[] | select(.where == "link")] | length >= 2' "$T/out.jsonl"
}

@test "diagnostics: a NUL byte in the compiler output does not cut the log or hide the errors after it" {
	printf 'kernel.c:1:1: warning: first\0 after the NUL\nkernel.c:2:3: error: second\n' >"$T/nul.txt"
	replay_cc
	code_rec vector_add cpu "/* $T/nul.txt */
$VA_OK" >"$T/in.jsonl"
	run -0 --separate-stderr leap-compile --no-cache --cc "$T/cc" "$T/in.jsonl"
	echo "$output" >"$T/out.json"
	jq -e '.compile.diagnostics[1] | .line == 2 and .col == 3 and .message == "second"' "$T/out.json"
	jq -e '.compile.log | contains("after the NUL")' "$T/out.json"
}

@test "a record that carries an earlier stage's error passes on byte for byte: its cause stays in front" {
	printf '%s\n' '{"task":"vector_add","backend":"cpu","z":1.50,"error":{"program":"sampler-openai","message":"connection refused"}}' >"$T/in.jsonl"
	code_rec vector_add cpu "$VA_OK" 1 >>"$T/in.jsonl"
	run -0 --separate-stderr leap-compile "$T/in.jsonl"
	assert_equal "$(sed -n 1p <<<"$output")" "$(sed -n 1p "$T/in.jsonl")"
	assert_equal "$(sed -n 2p <<<"$output" | jq -r .compile.status)" ok
}

@test "cuda: a vendor library the task does not allow is refused: its headers, or its name for dlopen" {
	skip_unless_nvcc
	{
		code_rec matmul cuda '#include <cublas_v2.h>
extern "C" void matmul(const float *A, const float *B, float *C, int n) { }' 0
		code_rec matmul cuda '#include <dlfcn.h>
extern "C" void matmul(const float *A, const float *B, float *C, int n) { dlopen("libcudnn.so.9", RTLD_NOW); }' 1
		code_rec matmul cuda 'extern "C" void matmul(const float *A, const float *B, float *C, int n) { }' 2
	} >"$T/in.jsonl"
	run -0 leap-compile -j 2 --arch sm_90 "$T/in.jsonl"
	echo "$output" >"$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 0) | .status == "compile_error" and .compile.reason == "library_not_allowed" and (.compile.message | contains("includes the headers of cublas, a library that is not allowed for this task"))' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 1) | .compile.reason == "library_not_allowed" and (.compile.message | contains("names cudnn"))' "$T/out.jsonl"
	jq -e -s '.[] | select(.sample == 2) | .compile.status == "ok"' "$T/out.jsonl"
	# a task that allows cuBLAS: a candidate calling it compiles and links against it
	mkdir -p "$T/suite"
	cp -R "$ROOT/tasks/matmul" "$T/suite/"
	jq '. + {libraries: ["cublas"]}' "$ROOT/tasks/matmul/task.json" >"$T/suite/matmul/task.json"
	code_rec matmul cuda '#include <cublas_v2.h>
extern "C" void matmul(const float *A, const float *B, float *C, int n) { cublasHandle_t h; cublasCreate(&h); }' 0 >"$T/one.jsonl"
	run -0 leap-compile --tasks "$T/suite" --arch sm_90 "$T/one.jsonl"
	jq -e '.compile.status == "ok"' <<<"$output"
	run -0 readelf -d "$(jq -r .compile.artifact <<<"$output")"
	assert_output --partial "libcublas.so"
}

@test "a link error reads as the harness's call of the function, without leap's internal file names" {
	# issue 30: model-facing logs carried shim-<hash>.o, leap_entry and leap_shim.c
	printf 'void vector_add2(const float *a, const float *b, float *c, int n) { }\n' >"$T/missing.c"
	run -1 leap-compile --task vector_add "$T/missing.c"
	leap-compile --task vector_add "$T/missing.c" | jq -r .compile.log >"$T/log" || true
	assert_equal "$(head -2 "$T/log")" "$(printf "ld: in the harness's call of your function (the required prototype):\n  undefined reference to \`vector_add'")"
	! grep -Eq 'shim-[0-9a-f]|leap_entry|leap_shim' "$T/log"
	# the cached result reads the same
	leap-compile --task vector_add "$T/missing.c" | jq -e '.compile.cached and (.compile.log | test("shim-|leap_entry|leap_shim") | not)'
	# nvcc: the same, where its host object is leap_shim.cudafe1.cpp
	skip_unless_nvcc
	leap-compile --arch sm_90 --task transpose "$FIXTURES/feedback/wrong_signature.cu" >"$T/cu" || true
	jq -e '.compile.reason == "wrong_signature"' "$T/cu"
	run -0 jq -r .compile.log "$T/cu"
	assert_line --index 0 "ld: in the harness's call of your function (the required prototype):"
	assert_line --index 1 "  undefined reference to \`transpose'"
	refute_output --regexp 'shim-[0-9a-f]|leap_entry|leap_shim|cudafe1'
}
