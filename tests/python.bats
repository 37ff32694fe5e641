# python.bats - the leap Python package (python/) and the trainer glue of examples/trl, examples/verl
# and examples/openrlhf, against the real programs on the cpu backend (tests/python/*.py).
load helpers

setup() {
	command -v python3 >/dev/null || skip "python3 not found"
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	cd "$ROOT"
}

# unittest PYTHON FILE: runs one test module, shows its report when it fails.
unittest() {
	run "$1" -m unittest -v "$2"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "python: the package runs the filters as a pipeline: batch, stream, errors, turns, pip install" {
	unittest python3 tests/python/test_leap.py
}

