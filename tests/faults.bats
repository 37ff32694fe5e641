# faults.bats - leap under faults: unwritable or limited cache, missing compiler, signals, SIGPIPE, shared cache, vanishing tasks.
# stream: bench
load helpers

F="$FIXTURES/leap-verify"

setup() {
	T="$BATS_TEST_TMPDIR"
	export LEAP_CACHE="$T/cache" TMPDIR="$T/tmp"
	mkdir -p "$TMPDIR"
}

# code_rec TASK CODE [SAMPLE]: a cpu record with code given directly.
code_rec() {
	jq -nc --arg t "$1" --arg c "$2" --argjson s "${3:-0}" '{task:$t,backend:"cpu",sample:$s,code:$c}'
}

# va_variants N: N distinct correct vector_add records (a comment makes each source unique).
va_variants() {
	local i
	for ((i = 0; i < $1; i++)); do
		code_rec vector_add "/* variant $i */
void vector_add(const float *a, const float *b, float *c, int n)
{
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i] * 1.0f;
}" "$i"
	done
}

# whole_lines FILE: every line of FILE is one complete JSON object and the file ends in a newline.
whole_lines() {
	if [ -s "$1" ]; then
		[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || return 1
	fi
	while IFS= read -r l; do
		jq -e 'type == "object"' <<<"$l" >/dev/null || return 1
	done <"$1"
}

# wait_for SECS CMD: polls CMD (evaluated) every 50 ms until it succeeds; fails after SECS seconds.
wait_for() {
	local end=$((SECONDS + $1))
	until eval "$2"; do
		[ "$SECONDS" -lt "$end" ] || { echo "timed out waiting for: $2"; return 1; }
		sleep 0.05
	done
}

# descendants PID: the process ids below PID (children, grandchildren...), one a line.
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# alive PID...: prints the given processes that still exist and are not zombies.
alive() {
	local p s
	for p in "$@"; do
		s=$(ps -o stat= -p "$p" 2>/dev/null) || continue
		[[ $s == Z* ]] || echo "$p"
	done
}

@test "compile: a cache directory that cannot be created is a fatal error naming it, no records" {
	touch "$T/file"
	va_variants 1 >"$T/in.jsonl"
	run --separate-stderr leap-compile --no-progress --cache "$T/file/cache" "$T/in.jsonl"
	assert_equal "$status" 2
	assert_output ""
	[[ $stderr == *"cannot create the cache directory $T/file/cache"*"Not a directory"* ]]
}

@test "compile: ulimit -f below the artifact size: output_limit verdicts, no artifact, a later run recompiles" {
	va_variants 2 >"$T/in.jsonl"
	run --separate-stderr bash -c "ulimit -f 8; leap-compile --no-progress '$T/in.jsonl' >'$T/small.jsonl'"
	assert_equal "$status" 0
	run jq -r '[.status, .compile.status, .compile.reason, (.compile.artifact // "none")] | @tsv' "$T/small.jsonl"
	assert_output "$(printf 'compile_error\terror\toutput_limit\tnone\n%.0s' 1 2)"
	run jq -r '.compile.message' "$T/small.jsonl"
	assert_line --index 0 "the compiler wrote a file larger than the limit of 8192 bytes"
	# no half-written artifact was stored
	run find "$LEAP_CACHE" -name '*.so'
	assert_output ""
	# without the limit the same records compile (the limit verdict is not reused) and load
	run leap-compile --no-progress "$T/in.jsonl"
	assert_success
	echo "$output" >"$T/full.jsonl"
	run jq -r '[.compile.status, .compile.cached] | @tsv' "$T/full.jsonl"
	assert_output "$(printf 'ok\tfalse\nok\tfalse')"
	run leap-verify --no-progress --seed 1 --trials 1 "$T/full.jsonl"
	assert_success
	[ "$(jq -r .status <<<"$output" | sort -u)" = pass ]
}

@test "compile: the C compiler missing (--cc /nonexistent): one error record per record naming it" {
	va_variants 2 >"$T/in.jsonl"
	run --separate-stderr leap-compile --no-progress --cc /nonexistent "$T/in.jsonl"
	assert_equal "$status" 1
	[ "${#lines[@]}" -eq 2 ]
	run jq -r '.error.message' <<<"$output"
	assert_line --index 0 "the cpu backend needs a C compiler, and '/nonexistent' was not found (use --cc)"
	assert_line --index 1 "the cpu backend needs a C compiler, and '/nonexistent' was not found (use --cc)"
	[[ $stderr == *"<stdin>"* || $stderr == *"in.jsonl:1:"* ]]
}

@test "compile: nvcc missing (--nvcc /nonexistent): cuda records get error records, cpu records still compile" {
	va_variants 1 >"$T/in.jsonl"
	jq -c '.backend = "cuda" | .sample = 1' "$T/in.jsonl" >>"$T/in.jsonl"
	run --separate-stderr leap-compile --no-progress --nvcc /nonexistent "$T/in.jsonl"
	assert_equal "$status" 1
	run jq -r '[.backend, (.compile.status // "-"), (.error.message // "-")] | @tsv' <<<"$output"
	assert_line --index 0 "$(printf 'cpu\tok\t-')"
	assert_line --index 1 "$(printf "cuda\t-\tthe cuda backend needs nvcc, and '/nonexistent' was not found (use --nvcc or set CUDA_HOME)")"
}

@test "compile: a compiler that cannot be executed any more is an error record, never a verdict on the candidate" {
	# a cc that, once $T/break exists, answers --version and then loses its execute bit: the
	# shim is in the cache from the first run, so the candidate's own execve is the one that
	# fails (lib/core/child.h contract 4: a set-up failure, not exit 127 read as the compiler's)
	printf '#!/bin/sh\nif [ "$1" = --version ]; then\n\tcc --version\n\t[ ! -e "%s" ] || chmod -x "$0"\n\texit 0\nfi\nexec cc "$@"\n' "$T/break" >"$T/cc"
	chmod +x "$T/cc"
	va_variants 1 >"$T/first.jsonl"
	run -0 leap-compile --no-progress --cc "$T/cc" "$T/first.jsonl"
	[ "$(jq -r .compile.status <<<"$output")" = ok ]
	touch "$T/break"
	va_variants 3 | tail -n 2 >"$T/in.jsonl"
	run --separate-stderr leap-compile --no-progress --cc "$T/cc" "$T/in.jsonl"
	assert_equal "$status" 1
	[ "${#lines[@]}" -eq 2 ]
	run jq -r '[(.status // "-"), .compile.status, .error.message] | @tsv' <<<"$output"
	assert_line --index 0 "$(printf -- '-\tinternal\tcompiler set-up: cannot run the compiler: Permission denied')"
	assert_line --index 1 "$(printf -- '-\tinternal\tcompiler set-up: cannot run the compiler: Permission denied')"
}

@test "compile: SIGTERM mid-run ends the running compilers with their process groups, removes the work directory and cache temporaries" {
	# a compiler driver that starts a stage (cc1, as, ld) in its process group and writes half
	# of its output file
	cat >"$T/cc" <<EOF
#!/bin/sh
case "\$*" in *--version*) echo 'cc (fake) 1.0'; exit 0 ;; esac
echo \$\$ >>'$T/cc.pids'
out=
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
[ -n "\$out" ] && echo half >"\$out"
sleep 300 &
echo \$! >>'$T/cc.pids'
wait
EOF
	chmod +x "$T/cc"
	va_variants 2 >"$T/in.jsonl"
	mkfifo "$T/fifo"
	leap-compile --no-progress --jobs 2 --cc "$T/cc" <"$T/fifo" >"$T/out.jsonl" 2>"$T/err" &
	local i pid=$!
	exec 7>"$T/fifo"
	cat "$T/in.jsonl" >&7
	wait_for 30 '[ -s "$T/cc.pids" ] && [ "$(wc -l <"$T/cc.pids")" -ge 2 ] && [ -n "$(find "$LEAP_CACHE/v1/tmp" -type f)" ]'
	ls -d "$TMPDIR"/leap-compile.* # the work directory exists while it runs
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	exec 7>&-
	assert_equal "$rc" 143
	sleep 0.3
	wait_for 10 '[ -z "$(alive $(cat "$T/cc.pids"))" ]'
	run ls "$TMPDIR"
	assert_output ""
	run find "$LEAP_CACHE/v1/tmp" -type f
	assert_output ""
	whole_lines "$T/out.jsonl"
}

@test "compile: killed halfway (SIGKILL), a later run compiles every record and the artifacts load" {
	va_variants 30 >"$T/in.jsonl"
	leap-compile --no-progress --jobs 2 "$T/in.jsonl" >"$T/first.jsonl" 2>/dev/null &
	local pid=$! i
	for ((i = 0; i < 300; i++)); do
		[ -s "$T/first.jsonl" ] && break
		sleep 0.02
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || true
	[ "$(wc -l <"$T/first.jsonl")" -lt 30 ] # it really was killed halfway
	run leap-compile --no-progress --jobs 2 "$T/in.jsonl"
	assert_success
	echo "$output" >"$T/again.jsonl"
	[ "$(jq -r .compile.status "$T/again.jsonl" | sort | uniq -c | awk '{print $1, $2}')" = "30 ok" ]
	run leap-verify --no-progress --seed 1 --trials 1 "$T/again.jsonl"
	assert_success
	[ "$(jq -r .status <<<"$output" | sort | uniq -c | awk '{print $1, $2}')" = "30 pass" ]
}

@test "compile: two pipelines sharing one cache at full speed produce the same, loadable artifacts" {
	va_variants 24 >"$T/in.jsonl"
	leap-compile --no-progress --jobs 2 "$T/in.jsonl" >"$T/a.jsonl" 2>"$T/a.err" &
	local a=$!
	leap-compile --no-progress --jobs 2 "$T/in.jsonl" >"$T/b.jsonl" 2>"$T/b.err" &
	local b=$!
	wait "$a"
	wait "$b"
	for x in a b; do
		[ "$(jq -r .compile.status "$T/$x.jsonl" | sort | uniq -c | awk '{print $1, $2}')" = "24 ok" ]
		jq -r .compile.artifact "$T/$x.jsonl" | xargs ls >/dev/null
	done
	# same key, same artifact, in the same order
	assert_equal "$(jq -r .compile.artifact "$T/a.jsonl")" "$(jq -r .compile.artifact "$T/b.jsonl")"
	run leap-verify --no-progress --seed 1 --trials 1 "$T/b.jsonl"
	assert_success
	[ "$(jq -r .status <<<"$output" | sort | uniq -c | awk '{print $1, $2}')" = "24 pass" ]
	# nothing was left half-written in the cache's temporaries
	run find "$LEAP_CACHE/v1/tmp" -type f
	assert_output ""
}

@test "a task folder that disappears mid-run: records of tasks not yet loaded get error records, no crash" {
	mkdir "$T/tasks"
	cp -r "$ROOT/tasks/vector_add" "$ROOT/tasks/softmax" "$T/tasks/"
	export LEAP_TASKS="$T/tasks"
	va_variants 1 >"$T/va.jsonl"
	code_rec softmax 'void softmax(const float *x, float *y, int rows, int cols) { (void)x; (void)y; (void)rows; (void)cols; }' >"$T/sm.jsonl"
	leap-compile --no-progress "$T/va.jsonl" >"$T/cva.jsonl"
	leap-compile --no-progress "$T/sm.jsonl" >"$T/csm.jsonl"
	# each stage reads through a FIFO: one record, wait for its output, remove the suite, go on
	for prog in "leap-compile --no-progress" "leap-verify --no-progress --trials 1"; do
		local a="$T/va.jsonl" b="$T/sm.jsonl"
		[[ $prog == leap-verify* ]] && { a="$T/cva.jsonl"; b="$T/csm.jsonl"; }
		rm -rf "$T/tasks" "$T/fifo" "$T/out.jsonl"
		mkdir "$T/tasks"
		cp -r "$ROOT/tasks/vector_add" "$ROOT/tasks/softmax" "$T/tasks/"
		mkfifo "$T/fifo"
		$prog <"$T/fifo" >"$T/out.jsonl" 2>"$T/err" &
		local pid=$!
		exec 7>"$T/fifo"
		cat "$a" >&7
		wait_for 120 '[ -s "$T/out.jsonl" ]' # the first record's task is loaded
		rm -rf "$T/tasks"
		cat "$a" "$b" >&7
		exec 7>&-
		local rc=0
		wait "$pid" || rc=$?
		assert_equal "$rc" 1
		run jq -r '[.task, (.error.message // .status // .compile.status)] | @tsv' "$T/out.jsonl"
		assert_equal "${#lines[@]}" 3
		[[ ${lines[0]} == vector_add$'\t'* && ${lines[0]} != *"not found"* ]]
		[[ ${lines[1]} == vector_add$'\t'* && ${lines[1]} != *"not found"* ]]
		assert_line --index 2 "$(printf "softmax\ttask 'softmax' not found in %s" "$T/tasks")"
	done
}

@test "SIGPIPE downstream (| head -n 1): every filter stops quietly with status 0" {
	export LEAP_CACHE="$T/cache"
	va_variants 2 >"$T/one.jsonl"
	for i in $(seq 50); do cat "$T/one.jsonl"; done >"$T/c.in"
	leap-compile --no-progress "$T/one.jsonl" >"$T/c1.jsonl"
	for i in $(seq 50); do cat "$T/c1.jsonl"; done >"$T/v.in"
	leap-verify --no-progress --seed 1 --trials 1 "$T/c1.jsonl" >"$T/v1.jsonl"
	for i in $(seq 50); do cat "$T/v1.jsonl"; done >"$T/b.in"
	leap-bench --no-progress --seed 1 --max-time 0.02 --min-runs 2 --max-runs 3 "$T/v1.jsonl" >"$T/b1.jsonl"
	jq -c -n --slurpfile r "$T/b1.jsonl" 'range(1; 501) as $i | $r[] | .group = "g\($i)" | .turn = 1' >"$T/p.in"
	leap-prune --no-progress --annotate --group-size 2 "$T/p.in" >"$T/r.in"
	leap-rank --no-progress --group-size 2 "$T/r.in" >"$T/a.in"
	leap-advantage --no-progress "$T/a.in" >"$T/rep.in"
	# prog|input pairs
	local cases=(
		"leap-prompt --backend cpu --group-size 64 --all|/dev/null"
		"leap-compile --no-progress|$T/c.in"
		"leap-verify --no-progress --seed 1 --trials 1|$T/v.in"
		"leap-bench --no-progress --seed 1 --max-time 0.02 --min-runs 2 --max-runs 3|$T/b.in"
		"leap-prune --no-progress --annotate --group-size 2|$T/p.in"
		"leap-rank --no-progress --group-size 2|$T/r.in"
		"leap-rank --no-progress|$T/r.in"
		"leap-advantage --no-progress|$T/a.in"
		"leap-record|$T/a.in"
		"leap-report --format csv|$T/rep.in"
	)
	for c in "${cases[@]}"; do
		local prog=${c%|*} in=${c##*|}
		run --separate-stderr bash -c "set -o pipefail; timeout 120 $prog <'$in' | head -n 1 >/dev/null; echo \${PIPESTATUS[0]}"
		echo "$prog: exit $output, stderr: $stderr"
		assert_output 0
		assert_equal "$stderr" ""
	done
}

# sandbox_procs: the processes (not zombies) whose environment names a sandbox temp dir under
# $TMPDIR: every sandbox of this test, wherever it was reparented to. (One grep over every
# environment: a process per /proc entry took seconds on a loaded machine.)
sandbox_procs() {
	local e st
	for e in $(grep -lsaF "TMPDIR=$TMPDIR/leap-sandbox." /proc/[0-9]*/environ); do
		st=$(cat "${e%/environ}/stat" 2>/dev/null) || continue
		st=${st##*) }
		[ "${st%% *}" = Z ] || echo "${e:6:-8}"
	done
}

# stalled: whether a sandboxed candidate of this test is stalled at load (stall_at_load.c names
# its process "stalled").
stalled() {
	local p
	for p in $(sandbox_procs); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = stalled ] && return 0
	done
	return 1
}

# signal_records: $T/fast.jsonl (one correct vector_add candidate, verified: status pass),
# $T/slow.jsonl (a candidate whose calls sleep 1000 s) and $T/stall.jsonl (one that stalls 1000 s
# at load), both marked pass so that leap-bench takes them. leap-verify's deadline for a record
# is its --timeout; leap-bench ends a block of calls that takes a hundred times the baseline's
# calls, and writes a timeout record within seconds: leap-bench's tests take the candidate
# stalled at load, which only --timeout ends, so that its record is unfinished when the signal
# comes however loaded the machine is.
signal_records() {
	va_variants 1 >"$T/in.jsonl"
	leap-compile --no-progress "$T/in.jsonl" | leap-verify --no-progress --seed 1 --trials 1 >"$T/fast.jsonl"
	leap-compile --no-progress --backend cpu --task vector_add "$F/sleep.c" | jq -c '.status = "pass"' >"$T/slow.jsonl"
	leap-compile --no-progress --backend cpu --task vector_add "$FIXTURES/faults/stall_at_load.c" |
		jq -c '.status = "pass"' >"$T/stall.jsonl"
}

# midrun SIG NSANDBOX PROG...: runs PROG (SIG at its default action, as in a terminal) on a FIFO:
# the fast record, then two slow ones (MIDRUN_SLOW=stall: two stalled at load); once NSANDBOX
# sandboxes run (and a stalled candidate is stalled), sends SIG and checks the end: status
# 128 + SIG, the fast record alone in the output as a whole line, no process of the run
# (workers, sandboxes, the candidate) and no temporary directory left.
midrun() {
	local sig=$1 nsb=$2 slow="$T/${MIDRUN_SLOW:-slow}.jsonl"
	shift 2
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	# MIDRUN_GROUP=1: in a process group of its own, signalled as a whole (a terminal's ^C
	# reaches the program and its workers at once)
	${MIDRUN_GROUP:+setsid} env --default-signal=INT,TERM "$@" <"$T/fifo" >"$T/out.jsonl" 2>"$T/err" &
	local pid=$!
	exec 7>"$T/fifo"
	cat "$T/fast.jsonl" >&7
	wait_for 120 '[ -s "$T/out.jsonl" ]'
	cat "$slow" "$slow" >&7
	wait_for 120 '[ "$(ls -d "$TMPDIR"/leap-sandbox.* 2>/dev/null | wc -l)" -ge "$nsb" ] && [ "$(sandbox_procs | wc -l)" -ge "$nsb" ]'
	[ "${MIDRUN_SLOW:-}" != stall ] || wait_for 120 stalled
	local kids
	kids=$(descendants "$pid")
	if [ -n "${MIDRUN_GROUP:-}" ]; then
		[ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]
		kill -"$sig" -- -"$pid"
	else
		kill -"$sig" "$pid"
	fi
	local rc=0
	wait "$pid" || rc=$?
	exec 7>&-
	cat "$T/err"
	assert_equal "$rc" "$((128 + $(kill -l "$sig")))"
	# nothing of the run outlives it (checked with a deadline: the kernel may lag a little)
	if ! wait_for 10 '[ -z "$(alive $kids)" ] && [ -z "$(sandbox_procs)" ]'; then
		local left="$(alive $kids) $(sandbox_procs)"
		kill -KILL $left 2>/dev/null || true
		echo "processes $left outlived $1 after SIG$sig"
		return 1
	fi
	run ls -A "$TMPDIR"
	assert_output ""
	# the record finished before the signal came out whole, and nothing after it
	whole_lines "$T/out.jsonl"
	[ "$(wc -l <"$T/out.jsonl")" -eq 1 ]
	[[ $(cat "$T/err") != *"write error"* ]]
}

@test "verify: SIGTERM mid-run: status 143, whole lines, no sandbox process and no temp dir behind" {
	signal_records
	midrun TERM 1 leap-verify --no-progress --seed 1 --trials 1 --timeout 120
	run jq -r .status "$T/out.jsonl"
	assert_output pass
}

@test "verify: SIGINT mid-run with --jobs 2: status 130, the workers and both sandboxes end, no temp dir" {
	signal_records
	midrun INT 2 leap-verify --no-progress --seed 1 --trials 1 --timeout 120 --jobs 2
	run jq -r .status "$T/out.jsonl"
	assert_output pass
}

@test "verify: SIGTERM mid-run with --devices 0,1 (cpu slots): status 143, nothing left" {
	signal_records
	midrun TERM 2 leap-verify --no-progress --seed 1 --trials 1 --timeout 120 --devices 0,1
	run jq -r '[.status, .verify.device_index] | @tsv' "$T/out.jsonl"
	assert_output "$(printf 'pass\t0')"
}

@test "verify: SIGINT to the whole process group (a terminal's ^C) with --jobs 2: status 130, nothing left" {
	signal_records
	MIDRUN_GROUP=1 midrun INT 2 leap-verify --no-progress --seed 1 --trials 1 --timeout 120 --jobs 2
	run jq -r .status "$T/out.jsonl"
	assert_output pass
}

@test "bench: SIGINT mid-run: status 130, whole lines, no sandbox process and no temp dir behind" {
	signal_records
	MIDRUN_SLOW=stall midrun INT 1 leap-bench --no-progress --seed 1 --max-time 0.05 --min-runs 2 --max-runs 3 --timeout 120
	run jq -r .bench.status "$T/out.jsonl"
	assert_output noisy # three blocks give no interval
}

@test "bench: SIGTERM mid-run with --devices 0,1: status 143, the worker and its sandbox end, no temp dir" {
	signal_records
	MIDRUN_SLOW=stall midrun TERM 1 leap-bench --no-progress --seed 1 --max-time 0.05 --min-runs 2 --max-runs 3 --timeout 120 --devices 0,1
	run jq -r .bench.status "$T/out.jsonl"
	assert_output noisy # three blocks give no interval
}

@test "verify: SIGINT ignored on entry (nohup, a script's background job) stays ignored" {
	signal_records
	(trap '' INT; exec leap-verify --no-progress --seed 1 --trials 1 --timeout 120 "$T/fast.jsonl" "$T/slow.jsonl" >"$T/out.jsonl" 2>"$T/err") &
	local pid=$!
	wait_for 120 '[ -n "$(sandbox_procs)" ]'
	kill -INT "$pid"
	sleep 0.3
	[ -d "/proc/$pid" ] # still verifying
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	wait_for 10 '[ -z "$(sandbox_procs)" ]'
	[ "$(wc -l <"$T/out.jsonl")" -eq 1 ]
}

# fd_watch PID OUT: appends the open descriptor count of PID to OUT every 0.05 s while it runs.
fd_watch() {
	while [ -d "/proc/$1/fd" ]; do
		ls "/proc/$1/fd" 2>/dev/null | wc -l >>"$2"
		sleep 0.05
	done
}

@test "descriptors stay bounded: leap-verify over 100 candidates, leap-compile over 20000 cache hits" {
	va_variants 1 >"$T/one.jsonl"
	leap-compile --no-progress "$T/one.jsonl" >"$T/c1.jsonl"
	for i in $(seq 100); do cat "$T/c1.jsonl"; done >"$T/v.in"
	for i in $(seq 20000); do cat "$T/one.jsonl"; done >"$T/c.in"
	for prog in "leap-verify --no-progress --seed 1 --trials 1 --jobs 2|$T/v.in" "leap-compile --no-progress|$T/c.in"; do
		: >"$T/fds"
		: >"$T/out"
		# a FIFO keeps the program waiting for its first record until the watcher runs; the
		# input goes in ten parts, each once the records before it came out, and the count is
		# taken at each: ten samples spread over the run however fast the machine is, and the
		# watcher's in between
		rm -f "$T/fifo" "$T/part".*
		mkfifo "$T/fifo"
		${prog%|*} <"$T/fifo" >"$T/out" &
		local pid=$!
		fd_watch "$pid" "$T/fds" &
		local w=$!
		local in=${prog##*|} total part=0 done=0
		total=$(wc -l <"$in")
		split -n l/10 "$in" "$T/part."
		exec 8>"$T/fifo"
		for f in "$T/part".*; do
			wait_for 120 '[ "$(wc -l <"$T/out")" -ge "$done" ]'
			cat "$f" >&8
			done=$((done + $(wc -l <"$f")))
			part=$((part + 1))
			ls "/proc/$pid/fd" | wc -l >>"$T/fds"
		done
		exec 8>&-
		wait "$pid"
		wait "$w"
		[ "$part" -eq 10 ]
		[ "$(wc -l <"$T/out")" -eq "$total" ]
		local max
		max=$(sort -n "$T/fds" | tail -n 1)
		echo "${prog%% *}: $(wc -l <"$T/fds") samples, at most $max descriptors"
		# 0-2, a few pipes, the shared-memory and artifact descriptors of the candidate running
		[ "$max" -le 16 ]
	done
}

@test "verify --jobs 2 and bench --devices from a file: a finished record is written at once while a later one runs" {
	signal_records
	cat "$T/fast.jsonl" "$T/slow.jsonl" >"$T/verify.jsonl"
	cat "$T/fast.jsonl" "$T/stall.jsonl" >"$T/bench.jsonl"
	for prog in "leap-verify --no-progress --seed 1 --trials 1 --timeout 120 --jobs 2|verify" \
		"leap-bench --no-progress --seed 1 --max-time 0.05 --min-runs 2 --max-runs 3 --timeout 120 --devices 0,1|bench"; do
		: >"$T/out.jsonl"
		${prog%|*} "$T/${prog##*|}.jsonl" >"$T/out.jsonl" 2>"$T/err" &
		local pid=$!
		wait_for 120 '[ -s "$T/out.jsonl" ]'
		# the slow candidate runs (1000 s, in its calls or stalled at load): the first record
		# did not wait for it
		wait_for 60 '[ -n "$(sandbox_procs)" ]'
		[ "${prog##*|}" = verify ] || wait_for 120 stalled
		whole_lines "$T/out.jsonl"
		kill -TERM "$pid"
		local rc=0
		wait "$pid" || rc=$?
		assert_equal "$rc" 143
		[ "$(wc -l <"$T/out.jsonl")" -eq 1 ]
		wait_for 10 '[ -z "$(sandbox_procs)" ]'
	done
}

@test "the default cache directory is the same for leap-compile, leap-verify and leap-bench: XDG_CACHE_HOME, then HOME" {
	unset LEAP_CACHE
	va_variants 1 >"$T/in.jsonl"
	for where in xdg home; do
		local dir
		if [ "$where" = xdg ]; then
			export XDG_CACHE_HOME="$T/xdg" HOME="$T/h1"
			dir="$T/xdg/leap"
		else
			unset XDG_CACHE_HOME
			export HOME="$T/h2"
			dir="$T/h2/.cache/leap"
		fi
		leap-compile --no-progress "$T/in.jsonl" >"$T/c.jsonl"
		[[ $(jq -r .compile.artifact "$T/c.jsonl") == "$dir/"* ]]
		leap-verify --no-progress --seed 1 --trials 1 "$T/c.jsonl" >"$T/v.jsonl"
		leap-bench --no-progress --seed 1 --max-time 0.05 --min-runs 2 --max-runs 3 "$T/v.jsonl" >"$T/b.jsonl"
		[ "$(jq -r .bench.status "$T/b.jsonl")" = noisy ] # timed, on three blocks: no interval
		# the reference build (leap-verify) and the baseline (leap-bench) went to the same cache
		[ -n "$(find "$dir/artifacts" -name '*.so')" ]
		[ ! -e "$T/h1/.cache" ] # XDG_CACHE_HOME wins over HOME
	done
	# a relative HOME or XDG_CACHE_HOME is not used (the next one in line is)
	export HOME="$T/h3" XDG_CACHE_HOME=relative
	leap-compile --no-progress "$T/in.jsonl" >"$T/c.jsonl"
	[[ $(jq -r .compile.artifact "$T/c.jsonl") == "$T/h3/.cache/leap/"* ]]
}
