#!/usr/bin/env bats
# cache-full.bats - leap-compile with its cache on a small tmpfs that fills up: verdicts stay
# right (an artifact that loads, or an internal error on the record), nothing truncated is ever
# used or cached, and a later run with space compiles what could not be stored.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	export LEAP_CACHE="$T/refcache" # leap-verify's reference builds: not on the small disk
	[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs (running as uid $(id -u))"
	mkdir -p "$T/tfs"
	mount -t tmpfs -o size=1m leap-test "$T/tfs" 2>"$T/mount.err" ||
		skip "cannot mount a tmpfs here: $(cat "$T/mount.err")"
}

teardown() {
	if mountpoint -q "$T/tfs" 2>/dev/null; then umount "$T/tfs"; fi
}

# candidates N FILE: writes N distinct correct vector_add candidates (each ~20 KB compiled, a
# padded array makes them distinct), a candidate with a wrong signature and one without code.
candidates() {
	python3 - "$1" "$FIXTURES/leap-verify/correct.c" >"$2" <<-'PY'
		import json, sys
		c = open(sys.argv[2]).read()
		for i in range(int(sys.argv[1])):
		    print(json.dumps({"id": i, "task": "vector_add", "backend": "cpu",
		                      "code": c + "\nint pad_%d[1000] = {1};\n" % i}))
		print(json.dumps({"id": 1000, "task": "vector_add", "backend": "cpu", "code": "void vector_add(int n) { (void)n; }"}))
		print(json.dumps({"id": 1001, "task": "vector_add", "backend": "cpu", "completion": "no code here"}))
	PY
}

@test "cache full: ok records load and pass, the others are internal errors, nothing bad is cached, a later run with space compiles them" {
	candidates 120 "$T/in.jsonl"
	run --separate-stderr leap-compile --no-progress --jobs 2 --cache "$T/tfs/c" "$T/in.jsonl"
	[ "$status" -eq 1 ]
	echo "$output" >"$T/c1.jsonl"
	# Every record has its verdict: an artifact, or internal with an error naming the full disk.
	run jq -r '[.id, .compile.status] | @tsv' "$T/c1.jsonl"
	echo "$output" | awk '{print $2}' | sort | uniq -c
	[ "$(grep -c . "$T/c1.jsonl")" -eq 122 ]
	n_ok=$(jq -s '[.[] | select(.compile.status == "ok")] | length' "$T/c1.jsonl")
	n_int=$(jq -s '[.[] | select(.compile.status == "internal")] | length' "$T/c1.jsonl")
	[ "$n_ok" -ge 1 ] && [ "$n_int" -ge 1 ]
	run -0 jq -s '[.[] | select(.compile.status == "internal" and
		((.error.message // "") | test("no space left on the device") | not))] | length' "$T/c1.jsonl"
	assert_output 0
	run -0 jq -s '[.[] | select(.compile.status != "ok" and .compile.status != "internal" and
		.compile.status != "no_code" and .compile.status != "error")] | length' "$T/c1.jsonl"
	assert_output 0
	run -0 jq -r 'select(.id == 1001) | .compile.status' "$T/c1.jsonl"
	assert_output no_code
	# No stored result is internal, and each artifact the cache holds is whole: every ok record
	# (and every .so in the cache) loads and passes.
	run -0 bash -c "grep -l '\"status\": *\"internal\"' -r '$T/tfs/c/v1' --include='*.json' | wc -l"
	assert_output 0
	run -0 bash -c "find '$T/tfs/c/v1' -name '*.so' | wc -l"
	[ "$output" -ge "$n_ok" ]
	run --separate-stderr leap-verify --no-progress --seed 1 --trials 1 "$T/c1.jsonl"
	echo "$output" >"$T/v1.jsonl"
	run -0 jq -s '[.[] | select(.compile.status == "ok" and .verify.status != "pass")] | length' "$T/v1.jsonl"
	assert_output 0
	# With space, a later run compiles what could not be stored, and reuses what was.
	mount -o remount,size=64m "$T/tfs"
	run --separate-stderr leap-compile --no-progress --jobs 2 --cache "$T/tfs/c" "$T/in.jsonl"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/c2.jsonl"
	run -0 jq -s '[.[] | select(.id < 1000 and .compile.status != "ok")] | length' "$T/c2.jsonl"
	assert_output 0
	run -0 jq -s '[.[] | select(.id < 1000 and .compile.cached)] | length' "$T/c2.jsonl"
	assert_output "$n_ok"
	run -0 jq -r 'select(.id == 1000) | .compile.reason' "$T/c2.jsonl"
	assert_output wrong_signature
	run --separate-stderr leap-verify --no-progress --seed 1 --trials 1 "$T/c2.jsonl"
	echo "$output" >"$T/v2.jsonl"
	run -0 jq -s '[.[] | select(.id < 1000 and .verify.status == "pass")] | length' "$T/v2.jsonl"
	assert_output 120
}

@test "cache full before the task's shim is built: one-line internal errors; space freed mid-run, the next record compiles" {
	candidates 3 "$T/in.jsonl"
	# Fill the disk with other data.
	dd if=/dev/zero of="$T/tfs/filler" bs=4k count=1000 2>/dev/null || true
	coproc LC { leap-compile --no-progress --cache "$T/tfs/c" 2>"$T/c.err"; }
	to=${LC[1]}
	# Records go in one at a time: each answer is read before the next record is sent.
	sed -n 1p "$T/in.jsonl" >&"$to"
	read -r -t 60 first <&"${LC[0]}"
	echo "$first" >"$T/first.jsonl"
	rm "$T/tfs/filler"
	sed -n 2p "$T/in.jsonl" >&"$to"
	read -r -t 60 second <&"${LC[0]}"
	exec {to}>&- # end of input: leap-compile ends
	wait "$LC_PID" || [ $? -eq 1 ]
	cat "$T/c.err"
	run -0 jq -r '[.compile.status, .error.message] | @tsv' "$T/first.jsonl"
	assert_output "internal	the compiler could not write the shim of task 'vector_add': no space left on the device (is the cache directory full?)"
	run -0 jq -r '.compile.status' <<<"$second"
	assert_output ok
	run -0 jq -r '.compile.artifact' <<<"$second"
	[ -s "$output" ]
}

@test "a full work directory is said as a full disk, and is not remembered: space freed, the next record compiles" {
	# the cache has room, TMPDIR (leap-compile's job directories) has none: the prelude cannot
	# be written. That once read "cannot write ...: No space left on device" and, on the shim's
	# first build, stayed the task's error for the rest of the run.
	candidates 2 "$T/in.jsonl"
	mkdir -p "$T/tfs/tmp"
	dd if=/dev/zero of="$T/tfs/filler" bs=4k 2>/dev/null || true
	coproc LC { TMPDIR="$T/tfs/tmp" leap-compile --no-progress --cache "$T/cache" 2>"$T/c.err"; }
	to=${LC[1]}
	sed -n 1p "$T/in.jsonl" >&"$to"
	read -r -t 60 first <&"${LC[0]}"
	rm "$T/tfs/filler"
	sed -n 2p "$T/in.jsonl" >&"$to"
	read -r -t 60 second <&"${LC[0]}"
	exec {to}>&-
	wait "$LC_PID" || [ $? -eq 1 ]
	run -0 jq -r '[.compile.status, (.error.message | test("no space left on the device \\(is the cache directory or TMPDIR full\\?\\)$"))] | @tsv' <<<"$first"
	assert_output "internal	true"
	run -0 jq -r '.compile.status' <<<"$second"
	assert_output ok
}
