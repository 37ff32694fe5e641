#!/usr/bin/env bats
# conventions.bats - what leap(7) promises of every program, checked program by program: exit 2
# for a missing or unreadable input (a directory included), a malformed line reported on stderr
# as "program: file:line: message", reals written in their shortest round-trip form.
# stream: bench
load helpers

setup() {
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	mkdir -p "$BATS_TEST_TMPDIR/adir"
}

# bad_inputs PROG [ARG]...: PROG ARG... DIR and PROG ARG... MISSING both exit 2, write no record
# and name the path on stderr.
bad_inputs() {
	local dir="$BATS_TEST_TMPDIR/adir" missing="$BATS_TEST_TMPDIR/missing.jsonl"
	run --separate-stderr "$@" "$dir" </dev/null
	[ "$status" -eq 2 ] || fail "$* DIR: exit $status, not 2 (stderr: $stderr)"
	[[ "$stderr" == *"$1: $dir: Is a directory"* ]] || fail "$* DIR: stderr: $stderr"
	run --separate-stderr "$@" "$missing" </dev/null
	[ "$status" -eq 2 ] || fail "$* MISSING: exit $status, not 2 (stderr: $stderr)"
	[[ "$stderr" == *"$missing: No such file or directory"* ]] || fail "$* MISSING: stderr: $stderr"
}

@test "exit 2 for a directory or a missing input: leap-compile" { bad_inputs leap-compile --no-progress; }
@test "exit 2 for a directory or a missing input: leap-verify" { bad_inputs leap-verify --no-progress; }
@test "exit 2 for a directory or a missing input: leap-bench" { bad_inputs leap-bench --no-progress; }
@test "exit 2 for a directory or a missing input: leap-prune" { bad_inputs leap-prune --annotate; }
@test "exit 2 for a directory or a missing input: leap-rank" { bad_inputs leap-rank; }
@test "exit 2 for a directory or a missing input: leap-advantage" { bad_inputs leap-advantage; }
@test "exit 2 for a directory or a missing input: leap-report" { bad_inputs leap-report; }
@test "exit 2 for a directory or a missing input: leap-record" { bad_inputs leap-record; }
@test "exit 2 for a directory or a missing input: leap-prompt --file" { bad_inputs leap-prompt --file; }

@test "exit 2 for a directory or a missing input: a directory as standard input" {
	for p in leap-compile leap-verify leap-bench leap-rank leap-advantage leap-report leap-record; do
		run --separate-stderr "$p" <"$BATS_TEST_TMPDIR/adir"
		[ "$status" -eq 2 ] || fail "$p < DIR: exit $status"
	done
}

@test "exit 2 for a directory or a missing input: the source files of --task" {
	for p in leap-compile leap-verify leap-bench; do
		run --separate-stderr "$p" --task vector_add "$BATS_TEST_TMPDIR/adir"
		[ "$status" -eq 2 ] || fail "$p --task vector_add DIR: exit $status ($stderr)"
		run --separate-stderr "$p" --task vector_add "$BATS_TEST_TMPDIR/missing.c"
		[ "$status" -eq 2 ] || fail "$p --task vector_add MISSING: exit $status ($stderr)"
	done
	run --separate-stderr leap-bench --stats "$BATS_TEST_TMPDIR/adir"
	[ "$status" -eq 2 ] || fail "leap-bench --stats DIR: exit $status"
}

# bad_line PROG [ARG]...: a malformed second line becomes an error record in its place and one
# line "PROG: FILE:2: invalid JSON ..." on stderr.
bad_line() {
	local in="$BATS_TEST_TMPDIR/in.jsonl"
	printf '{"task":"vector_add","group":"g","sample":0,"turn":1,"status":"pass"}\n{"task":\n' >"$in"
	run --separate-stderr "$@" "$in"
	[ "$status" -eq 1 ] || fail "$*: exit $status, not 1 (stderr: $stderr)"
	[ "$(grep -c "^$1: $in:2: invalid JSON at column" <<<"$stderr")" -eq 1 ] ||
		fail "$*: stderr does not report line 2 exactly once: $stderr"
}

@test "a malformed line is reported on stderr: leap-compile" { bad_line leap-compile --no-progress; }
@test "a malformed line is reported on stderr: leap-verify" { bad_line leap-verify --no-progress; }
@test "a malformed line is reported on stderr: leap-bench" { bad_line leap-bench --no-progress; }
@test "a malformed line is reported on stderr: leap-prune" { bad_line leap-prune --annotate; }
@test "a malformed line is reported on stderr: leap-rank (a file, read twice)" { bad_line leap-rank; }
@test "a malformed line is reported on stderr: leap-advantage (a file, read twice)" { bad_line leap-advantage; }
@test "a malformed line is reported on stderr: leap-report" { bad_line leap-report; }
@test "a malformed line is reported on stderr: leap-record" { bad_line leap-record; }

# shortest_reals: fails, naming them, when a real in the JSON Lines on stdin has more digits
# than the shortest text that reads back to the same double (Python's repr is that text).
shortest_reals() {
	python3 -c '
import json, re, sys
bad = []
def walk(v):
    if isinstance(v, dict):
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
def real(text):
    f = float(text)
    digits = lambda s: len(re.sub(r"^0+", "", re.sub(r"[eE].*$", "", s).replace("-", "").replace(".", "")).rstrip("0") or "0")
    if digits(text) > digits(repr(f)):
        bad.append(text)
    return f
n = 0
for line in sys.stdin:
    json.loads(line, parse_float=real)
    n += 1
print(n, "lines", len(bad), "long reals", " ".join(bad[:5]))
sys.exit(1 if bad or n == 0 else 0)
'
}

@test "reals are written in their shortest round-trip form: leap-task" {
	run -0 leap-task vector_add softmax layernorm
	shortest_reals <<<"$output"
	assert_output --partial '"atol":1e-06'
}

@test "reals are written in their shortest round-trip form: a cpu pipeline through every filter" {
	leap-prompt --backend cpu -g 3 vector_add softmax | "$ROOT/examples/sampler-replay" |
		leap-compile --no-progress | leap-verify --seed 1 --no-progress >"$BATS_TEST_TMPDIR/v.jsonl"
	leap-bench --seed 1 --no-progress --max-time 0.05 --min-runs 2 --max-runs 3 --target-ci 0.5 \
		<"$BATS_TEST_TMPDIR/v.jsonl" >"$BATS_TEST_TMPDIR/b.jsonl"
	leap-prune --group-size 3 --max-turns 1 --done "$BATS_TEST_TMPDIR/done.jsonl" --no-progress <"$BATS_TEST_TMPDIR/b.jsonl" >/dev/null
	leap-rank <"$BATS_TEST_TMPDIR/done.jsonl" | leap-advantage --estimator grpo --reward binary >"$BATS_TEST_TMPDIR/train.jsonl"
	for f in v b done train; do
		shortest_reals <"$BATS_TEST_TMPDIR/$f.jsonl"
	done
	leap-report --format json "$BATS_TEST_TMPDIR/train.jsonl" | shortest_reals
	# the numbers a run computes, not only those read from task.json: milliseconds and scores
	run -0 jq -r '.compile.ms, .verify.ms' "$BATS_TEST_TMPDIR/v.jsonl"
	[ -n "$output" ]
}

@test "reals are written in their shortest round-trip form: leap_fmt_double on 300 000 doubles" {
	link_with_lib "$FIXTURES/conventions/fmt_double.c" "$BATS_TEST_TMPDIR/fmt"
	# random bit patterns, powers of two (where the doubles around are unevenly spaced),
	# subnormals, short decimals, large integers; each must read back to the same bits, in
	# no more digits than Python's repr (the shortest), in %g's style
	run -0 python3 -c '
import random, re, struct, subprocess, sys
r = random.Random(7)
vals = [0.0, -0.0, 5e-324, 1.7976931348623157e308, 58.44, 1e-6, 2.0**-24, 1e15, 1e16, 0.1, 100.0]
while len(vals) < 300000:
    k = r.random()
    if k < 0.3:
        v = struct.unpack("d", struct.pack("Q", r.getrandbits(64)))[0]
        if v != v or abs(v) == float("inf"): continue
    elif k < 0.5: v = 2.0 ** r.randint(-1074, 1023) * r.choice((1, -1))
    elif k < 0.7: v = round(r.uniform(-1e6, 1e6), r.randint(0, 8))
    elif k < 0.8: v = float(r.randint(-10**17, 10**17))
    else: v = r.random() * 10.0 ** r.randint(-300, 300)
    vals.append(v)
out = subprocess.run([sys.argv[1]], input="".join(repr(v) + "\n" for v in vals),
                     capture_output=True, text=True, check=True).stdout.split("\n")
digits = lambda s: len(re.sub(r"[eE].*$", "", s).replace("-", "").replace(".", "").strip("0") or "0")
bad = [(repr(v), o) for v, o in zip(vals, out)
       if float(o).hex() != v.hex() or digits(o) > digits(repr(v))
       or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?(e[+-][0-9]{2,3})?", o)]
print(len(vals), "doubles,", len(bad), "wrong:", bad[:5])
sys.exit(1 if bad else 0)
' "$BATS_TEST_TMPDIR/fmt"
	assert_output "300000 doubles, 0 wrong: []"
}

# compiled_records N: N cpu records of four tasks, compiled (some pass, some fail, some do not
# compile), in $BATS_TEST_TMPDIR/c.jsonl.
compiled_records() {
	leap-prompt --backend cpu -g "$1" vector_add softmax gelu layernorm | "$ROOT/examples/sampler-replay" |
		leap-compile --no-progress >"$BATS_TEST_TMPDIR/c.jsonl"
}

# sleeper_first IN OUT: OUT is a vector_add candidate that sleeps past a 1 s --timeout, then
# IN's records: the line is first drawn half a second in, and a fast machine verifies IN's
# records in less (CI of 2026-12-05 did 16 in 0.37 s and drew no line before the final one).
sleeper_first() {
	source "$ROOT/tests/artifact.bash"
	build_artifact vector_add "$FIXTURES/leap-verify/sleep.c" "$BATS_TEST_TMPDIR/sleep.so"
	{ compiled_record vector_add "$BATS_TEST_TMPDIR/sleep.so"; cat "$1"; } >"$2"
}

@test "progress: done/total, percentage, ETA and the outcomes when the input is a file" {
	compiled_records 4
	sleeper_first "$BATS_TEST_TMPDIR/c.jsonl" "$BATS_TEST_TMPDIR/s.jsonl"
	run -0 --separate-stderr leap-verify --progress --seed 1 --timeout 1 "$BATS_TEST_TMPDIR/s.jsonl"
	# the final line: every record, the time taken, the verdicts counted
	final=$(tr '\r' '\n' <<<"$stderr" | grep -a 'in [0-9]' | tail -n 1)
	[[ "$final" =~ ^leap-verify:\ 17/17\ records\ \(100%\)\ in\ [0-9]+s,\ [0-9.]+/s\;\ .*[0-9]+\ pass ]] ||
		fail "final line: $final"
	# the sleeper's timeout at least: under a load that holds a sandbox's start past --timeout 1
	# (a fresh root's make check beside CI: 2 timeouts) another record may be one too
	[[ "$final" == *" mismatch"* && "$final" == *" skipped"* && "$final" =~ [1-9][0-9]*\ timeout && "$final" == *"; 0 errors"* ]] ||
		fail "final line: $final"
	# lines before the end say how far and how long still
	tr '\r' '\n' <<<"$stderr" | grep -aq '^leap-verify: [0-9]*/17 records ([0-9]*%), [0-9.]*/s, ETA [0-9]*s' ||
		fail "no line with done/total and ETA: $stderr"
	# from a pipe the total is unknown: counts and outcomes only
	run -0 --separate-stderr bash -c 'cat "$1" | leap-verify --progress --seed 1' _ "$BATS_TEST_TMPDIR/c.jsonl"
	[[ "$stderr" == *"leap-verify: 16 records in "* ]] || fail "$stderr"
}

@test "progress: leap-compile's line counts what its summary counts" {
	compiled_records 2
	run -0 --separate-stderr leap-compile --progress "$BATS_TEST_TMPDIR/c.jsonl"
	final=$(tr '\r' '\n' <<<"$stderr" | grep -a 'in [0-9]' | tail -n 1)
	[[ "$final" =~ ^leap-compile:\ 8/8\ records\ \(100%\)\ in\ [0-9]+s,\ [0-9.]+/s\;\ 0\ compiled,\ 8\ cached,\ [0-9]+\ compile\ errors,\ 0\ without\ code\;\ 0\ errors ]] ||
		fail "final line: $final"
}

@test "progress: in a pipeline on one terminal only the bottleneck stage redraws its line" {
	command -v script >/dev/null || skip "script(1) (util-linux) is needed for a terminal"
	compiled_records 12
	sleeper_first "$BATS_TEST_TMPDIR/c.jsonl" "$BATS_TEST_TMPDIR/s.jsonl"
	# a fast stage reading a file | the slow stage (sandboxed runs, a sleeper first: slow on any
	# machine) | a starved stage, all on one pseudo-terminal
	cd "$BATS_TEST_TMPDIR"
	script -qec "leap-record --progress s.jsonl | leap-verify --progress --seed 1 --timeout 1 | leap-record --progress >/dev/null" \
		/dev/null >tty.log </dev/null
	# split the transcript into drawn lines: one followed by a newline is a stage's final line,
	# the others were redrawn in place
	python3 - tty.log <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
parts = text.split("\r")
redrawn, final = [], []
for i, seg in enumerate(parts):
    if "\x1b[K" not in seg:
        continue
    line = seg.split("\x1b[K")[0]
    nxt = parts[i + 1] if i + 1 < len(parts) else ""
    if nxt.startswith("\n") or seg.endswith("\n"):
        final.append(line)
    elif not any(l.startswith("leap-verify:") for l in final):
        # once the slow stage has ended, the stage after it may have the line for what is left
        # (CI of 2026-12-03, under load: leap-record drew once after leap-verify's last line)
        redrawn.append(line)
print("redrawn:", redrawn)
print("final:", final)
# once the slow stage has the line, no other stage draws over it while it runs
first = next((i for i, l in enumerate(redrawn) if l.startswith("leap-verify:")), None)
assert first is not None, "the slow stage never drew its line"
assert first <= 1 and all(l.startswith("leap-verify:") for l in redrawn[first:]), f"redrawn: {redrawn}"
assert sorted(l.split(":")[0] for l in final) == ["leap-record", "leap-record", "leap-verify"], final
assert any(l.startswith("leap-record: 49/49 records (100%)") for l in final), final
PY
}
