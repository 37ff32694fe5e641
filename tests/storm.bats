#!/usr/bin/env bats
# storm.bats - the storm of issue 26: a candidate whose behaviour is drawn call by call from a
# seed (tests/fixtures/storm/storm.c: shrink or scribble the shared regions, random bytes and
# forged replies on the runner's descriptors, signals, exits, hangs, forks, lingering threads,
# memory held in several processes)
# through leap-verify and leap-bench; tests/storm/run.sh runs it and checks what leap promises
# whatever a candidate does. `make bench-storm` runs thousands of records.
# Not in the bench stream (tests/README.md): its leap-bench has a cache of its own and accepts
# any timing verdict.

load helpers

@test "storm: 300 records through leap-verify and 100 through leap-bench: each a verdict, leap lives, nothing left" {
	run "$ROOT/tests/storm/run.sh" "$BATS_TEST_TMPDIR/s" 300 100
	echo "$output"
	[ "$status" -eq 0 ]
	refute_line --partial FAIL
	# the storm storms: its candidates pass, fail and crash (the mix is drawn, the kinds are not rare)
	assert_line --regexp '^storm: leap-verify: 300 records in .*mismatch [0-9]+, pass [0-9]+, runtime_error [0-9]+'
	assert_line --regexp '^storm: leap-bench: 100 records in .*runtime_error/runtime_error [0-9]+'
	# it draws memory held in several processes at once, which a memory cgroup bounds as a whole
	assert_line --regexp '^storm: leap-verify: memory acts [1-9][0-9]*, all four held '
}
