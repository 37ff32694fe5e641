# helpers.bash - common setup of every test file: bin/ on PATH, the bundled suite, assertions.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
PATH="$ROOT/bin:$PATH"
FIXTURES="$ROOT/tests/fixtures"
export LEAP_TASKS="$ROOT/tasks"
export LC_ALL=C.UTF-8

# skip_unless_nvcc: skips the test, saying why, when the CUDA compiler is missing.
skip_unless_nvcc() {
	local nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
	[ -x "$nvcc" ] || skip "nvcc not found at $nvcc (set CUDA_HOME)"
}

# nvcc_found: whether the programs find a CUDA compiler where lib/compile/toolchain.c looks for one
# ($CUDA_HOME/bin/nvcc, default /usr/local/cuda, else nvcc on PATH).
nvcc_found() {
	[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null 2>&1
}

# skip_unless_gpu: skips the test, saying why, when no CUDA GPU is visible.
skip_unless_gpu() {
	skip_unless_nvcc
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU ||
		skip "no CUDA GPU visible (nvidia-smi -L lists none)"
}

# link_with_lib SRC OUT: compiles the C file SRC against lib/libleap.a into OUT, linked as the
# programs are (build/flags: sanitized when the build is, make check SANITIZE=1, and the same
# libraries).
link_with_lib() {
	local san libs
	san=$(grep -o -- '-fsanitize=[a-z,]*' "$ROOT/build/flags" | head -n 1 || true)
	libs=$(grep -o -- ' -l[a-z0-9]*' "$ROOT/build/flags" | tr -d '\n')
	# shellcheck disable=SC2086
	cc -std=c11 -D_GNU_SOURCE $san -I"$ROOT/lib" -o "$2" "$1" "$ROOT/lib/libleap.a" $libs
}

# until_lines FILE N: waits until FILE has at least N lines; fails after 120 s. A test of
# streaming waits for the output it expects with it, rather than sleeping a guessed time or
# killing the program after one: a loaded machine may take longer than a guess, never minutes.
until_lines() {
	local end=$((SECONDS + 120))
	until [ -e "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# json_field FILE JQ: prints the result of a jq filter over one JSON document.
json_field() {
	jq -r "$2" <"$1"
}
