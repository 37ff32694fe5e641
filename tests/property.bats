#!/usr/bin/env bats
# property.bats - "no record lost": 100 000 hostile, mixed records through the whole cpu pipeline
# (tests/property/: gen.py writes the input, run.sh runs the stages, check.py checks each).
# Not in the bench stream (tests/README.md): its leap-bench has a cache and a lock of its own,
# and any verdict will do.

load helpers

@test "property: 100 000 records through compile, verify, bench, prune, rank, advantage: each once, in order, fields unchanged" {
	run -0 "$ROOT/tests/property/run.sh" "$BATS_TEST_TMPDIR/p" 100000 1
	echo "$output"
	refute_line --partial "FAIL"
	assert_line --regexp "^input: 100000 lines, [0-9]+ records, [0-9]+ not records, [0-9]+ blank$"
	assert_line --regexp "^a +[0-9]{5} records checked$"
	# Every kind of verdict is in the mix, hostile candidates included: the candidates of the
	# input, each record's verdict checked against its own (check.py; a timeout is accepted for
	# any sandboxed candidate: 2 s beside fork bombs is more than a loaded machine promises)
	assert_line --regexp '^candidates: compile_error [0-9]+, mismatch [0-9]+, no_code [0-9]+, pass [0-9]+, runtime_error 6, timeout 2, timeout\|runtime_error 2$'
	assert_line --regexp '^after leap-bench: compile_error [0-9]+, error [0-9]+, mismatch [0-9]+, no_code [0-9]+, pass [0-9]+, (runtime_error [0-9]+, )?timeout [0-9]+$'
}

@test "property: the checker finds a lost, doubled, reordered, rounded or non-JSON record" {
	d=$BATS_TEST_TMPDIR/small
	run -0 "$ROOT/tests/property/run.sh" "$d" 3000 2
	refute_line --partial "FAIL"
	cp "$d/a.jsonl" "$d/a.orig"
	# mutate PYTHON: rewrites a.jsonl from a.orig with one fault, then runs the checker.
	mutate() {
		python3 - "$d" "$1" <<-'PY'
			import json, sys
			d, code = sys.argv[1], sys.argv[2]
			ls = open(d + "/a.orig", "rb").read().split(b"\n")[:-1]
			recs = [json.loads(l) for l in ls]
			big = next(i for i, r in enumerate(recs) if abs(r.get("id", 0)) > 2**53)
			exec(code)
			open(d + "/a.jsonl", "wb").write(b"\n".join(ls) + b"\n")
		PY
		python3 "$ROOT/tests/property/check.py" "$d" 4
	}
	run -1 mutate 'ls.pop(100)'
	assert_line --partial "FAIL a: 1 input lines lost"
	run -1 mutate 'ls.insert(10, ls[20])'
	assert_line --partial "came out twice"
	run -1 mutate 'ls[3], ls[4] = ls[4], ls[3]'
	assert_line --partial "out of order"
	run -1 mutate 'recs[big]["id"] = int(float(recs[big]["id"])); ls[big] = json.dumps(recs[big]).encode()'
	assert_line --partial "no input id"
	run -1 mutate 'recs[big]["turn"] = 1.0; ls[big] = json.dumps(recs[big]).encode()'
	assert_line --partial "field 'turn' changed"
	run -1 mutate 'ls[big] = ls[big][:-1] + b",\"x\":NaN}"'
	assert_line --partial "not strict JSON"
	# in place, the rest of the line byte for byte; or appended, a field given again
	run -1 mutate 'ls[big] = ls[big].replace(b"\"turn\": 1,", b"\"turn\": 2,", 1)'
	assert_line --partial "field 'turn' changed"
	run -1 mutate 'ls[big] = ls[big][:-1] + b",\"turn\": 2}"'
	assert_line --partial "field 'turn' changed"
	run -1 mutate 'ls[-1] = ls[-1][:-3]'
	assert_line --partial "FAIL"
	run -0 mutate 'pass'
}
