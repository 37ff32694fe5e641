# lib.sh - shared by the bench/*.sh scripts: the header every table carries, and a timed run.
# shellcheck shell=bash disable=SC2034

# bench_header TITLE COMMAND: prints the title, the date, the machine, its load and the command.
bench_header() {
	local gpu mem
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
	mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "## $1"
	echo
	echo "    date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "    machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $mem, ${gpu:-no GPU}"
	echo "    load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
	echo "    command: $2"
	echo
}

# timed OUT CMD...: runs CMD with stdout to OUT under /usr/bin/time; sets T_EL (elapsed s),
# T_CPU (user + sys s) and T_RSS (peak RSS KiB). On failure prints CMD's stderr and returns 1.
timed() {
	local out=$1 tf
	shift
	tf=$(mktemp)
	if ! /usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" >"$out" 2>"$tf.err"; then
		echo "bench: failed: $*" >&2
		cat "$tf.err" >&2
		rm -f "$tf" "$tf.err"
		return 1
	fi
	read -r T_EL us sy T_RSS <"$tf"
	T_CPU=$(awk -v a="$us" -v b="$sy" 'BEGIN { printf "%.2f", a + b }')
	rm -f "$tf" "$tf.err"
}

# trivial_records DIR N: DIR/correct.so, a correct vector_add (the trivial kernel, where
# leap-verify's own cost is everything), and DIR/in.jsonl, N compiled records of it: the
# input of verify-overhead.sh and verify-ab.sh. Needs PATH and LEAP_TASKS set.
trivial_records() {
	source tests/artifact.bash
	build_artifact vector_add tests/fixtures/leap-verify/correct.c "$1/correct.so" || return 1
	for _ in $(seq "$2"); do compiled_record vector_add "$1/correct.so"; done >"$1/in.jsonl"
}
