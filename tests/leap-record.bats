#!/usr/bin/env bats
# leap-record.bats - the JSON Lines stream every filter shares, exercised through leap-record.
load helpers

@test "valid records pass through byte for byte, key order and number spelling kept" {
	printf '{"z":1,"a":{"y":[1.50,2e3]},"task":"t","turn":2}\n{"b":"\\u00e9\\u0000x"}\n' >"$BATS_TEST_TMPDIR/in"
	run -0 leap-record "$BATS_TEST_TMPDIR/in"
	assert_output "$(cat "$BATS_TEST_TMPDIR/in")"
}

@test "CRLF, blank lines and a missing final newline are accepted" {
	printf '{"a":1}\r\n\r\n   \n\t\n{"a":2}\n\n{"a":3}' >"$BATS_TEST_TMPDIR/in"
	run -0 leap-record "$BATS_TEST_TMPDIR/in"
	assert_output $'{"a":1}\n{"a":2}\n{"a":3}'
}

@test "an invalid line becomes an error record between its neighbours; exit 1" {
	printf '{"a":1}\n{"a":\n{"a":3}\n' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record "$BATS_TEST_TMPDIR/in"
	assert_equal "$(wc -l <<<"$output")" 3
	assert_equal "$(sed -n 1p <<<"$output")" '{"a":1}'
	assert_equal "$(sed -n 3p <<<"$output")" '{"a":3}'
	assert_equal "$(sed -n 2p <<<"$output" | jq -c '[.error.program, .error.line, .raw]')" '["leap-record",2,"{\"a\":"]'
	[[ "$(sed -n 2p <<<"$output" | jq -r .error.message)" == "invalid JSON at column"* ]]
	[[ "$stderr" == "leap-record: $BATS_TEST_TMPDIR/in:2: invalid JSON"* ]]
}

@test "JSON that is not an object is an error record" {
	printf '[1,2]\n"s"\n42\n' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record "$BATS_TEST_TMPDIR/in"
	assert_equal "$(jq -r '.error.message' <<<"$output" | sort -u)" "a record must be a JSON object"
	assert_equal "$(jq -r '.raw' <<<"$output" | tr '\n' ' ')" '[1,2] "s" 42 '
}

@test "invalid UTF-8 in a bad line is kept as U+FFFD, the record is valid JSON" {
	printf '{"a":"\xff\xfe"\n' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record "$BATS_TEST_TMPDIR/in"
	assert_equal "$(jq -r .raw <<<"$output")" $'{"a":"\xef\xbf\xbd\xef\xbf\xbd"'
}

@test "a 20 MB record is read and written whole" {
	python3 -c 'import json; print(json.dumps({"task": "big", "completion": "x" * 20_000_000}))' >"$BATS_TEST_TMPDIR/big"
	printf '{"after":1}\n' >>"$BATS_TEST_TMPDIR/big"
	leap-record "$BATS_TEST_TMPDIR/big" >"$BATS_TEST_TMPDIR/out"
	cmp "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/out"
}

@test "badly typed leap fields get an error naming the field; the rest is kept" {
	printf '{"task":"t","turn":0,"x":[1]}\n{"status":"great"}\n{"messages":[{"role":"user"}]}\n' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record "$BATS_TEST_TMPDIR/in"
	assert_equal "$(jq -r .error.message <<<"$output" | tr '\n' '|')" \
		"field 'turn' must be an integer >= 1|field 'status' must be one of no_code, compile_error, runtime_error, timeout, mismatch, pass|field 'messages' must be an array of {role, content} objects with string values|"
	assert_equal "$(sed -n 1p <<<"$output" | jq -c '[.task, .turn, .x]')" '["t",0,[1]]'
}

@test "bench.status must be one of leap-bench's verdicts (noisy and mismatch among them)" {
	printf '%s\n' '{"bench":{"status":"noisy"}}' '{"bench":{"status":"mismatch"}}' '{"bench":{"status":"fast"}}' \
		'{"bench":{"status":1}}' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record "$BATS_TEST_TMPDIR/in"
	assert_equal "$(jq -r '.error.message // "valid"' <<<"$output" | tr '\n' '|')" \
		"valid|valid|field 'bench.status' must be one of ok, noisy, suspicious, mismatch, runtime_error, timeout, no_device, skipped|field 'bench.status' must be one of ok, noisy, suspicious, mismatch, runtime_error, timeout, no_device, skipped|"
}

@test "record_version: leap-prompt writes the format's version; a newer or a malformed one is an error" {
	run -0 leap-prompt --backend cpu --group-size 2 vector_add
	[ "$(jq -r .record_version <<<"$output" | sort -u)" = 2 ]
	run -0 leap-record <<<"$output"
	# absent (leap 0.1, or a record not made by leap-prompt) and version 1 are valid
	printf '%s\n' '{"task":"t"}' '{"task":"t","record_version":1}' '{"task":"t","record_version":3}' \
		'{"task":"t","record_version":"2"}' '{"task":"t","record_version":0}' >"$BATS_TEST_TMPDIR/in"
	run -1 --separate-stderr leap-record "$BATS_TEST_TMPDIR/in"
	run -0 jq -r '.error.message // "ok"' <<<"$output"
	assert_line --index 0 ok
	assert_line --index 1 ok
	assert_line --index 2 --partial "field 'record_version' is 3: a newer format than this leap's (2)"
	assert_line --index 3 "field 'record_version' must be an integer >= 1"
	assert_line --index 4 "field 'record_version' must be an integer >= 1"
}

@test "bench.speedup_ci must be [lo, hi] with lo <= hi" {
	printf '%s\n' '{"bench":{"status":"ok","speedup":1.1,"speedup_ci":[1.05,1.15]}}' '{"bench":{"speedup_ci":[1.2,1.1]}}' \
		'{"bench":{"speedup_ci":[1]}}' >"$BATS_TEST_TMPDIR/in"
	run -1 --separate-stderr leap-record "$BATS_TEST_TMPDIR/in"
	run -0 jq -r '.error.message // "ok"' <<<"$output"
	assert_output "ok
field 'bench.speedup_ci' must be [lo, hi], two numbers with lo <= hi
field 'bench.speedup_ci' must be [lo, hi], two numbers with lo <= hi"
}

@test "--require names a missing field" {
	printf '{"task":"t"}\n{"task":"t","completion":"c"}\n' >"$BATS_TEST_TMPDIR/in"
	run --separate-stderr -1 leap-record --require task,completion "$BATS_TEST_TMPDIR/in"
	assert_equal "$(jq -r '.error.message // "ok"' <<<"$output" | tr '\n' '|')" "required field 'completion' is missing|ok|"
}

@test "files are read in order; one that will not open is reported, the rest processed, exit 2" {
	printf '{"f":1}\n' >"$BATS_TEST_TMPDIR/one"
	printf '{"f":2}\n' >"$BATS_TEST_TMPDIR/two"
	run --separate-stderr -2 leap-record "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/missing" - "$BATS_TEST_TMPDIR/two" <<<'{"f":"stdin"}'
	assert_output $'{"f":1}\n{"f":"stdin"}\n{"f":2}'
	assert_equal "$stderr" "leap-record: $BATS_TEST_TMPDIR/missing: No such file or directory"
}

@test "records reach the next stage before the input ends" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	leap-record <"$BATS_TEST_TMPDIR/fifo" >"$BATS_TEST_TMPDIR/out" &
	pid=$!
	exec 4>"$BATS_TEST_TMPDIR/fifo"
	printf '{"first":1}\n' >&4
	until_lines "$BATS_TEST_TMPDIR/out" 1 || true
	first="$(cat "$BATS_TEST_TMPDIR/out")"
	printf '{"second":2}\n' >&4
	exec 4>&-
	wait "$pid"
	assert_equal "$first" '{"first":1}'
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/out")" 2
}

@test "a closed output pipe ends the program quietly" {
	run -0 bash -c 'yes "{\"a\":1}" | head -n 2000000 | leap-record 2>"$1" | head -n 1; echo "status ${PIPESTATUS[2]}"' _ "$BATS_TEST_TMPDIR/err"
	assert_output $'{"a":1}\nstatus 0'
	assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" ""
}

@test "an upstream error record passes unchanged and counts as an error" {
	run -1 leap-record <<<'{"error":{"program":"x","message":"m"},"raw":"r"}'
	assert_output '{"error":{"program":"x","message":"m"},"raw":"r"}'
}

@test "a write error is reported and exits 2" {
	[ -w /dev/full ] || skip "no /dev/full"
	run --separate-stderr -2 bash -c 'leap-record >/dev/full <<<"{\"a\":1}"'
	[[ "$stderr" == "leap-record: write error: No space left on device" ]]
}
