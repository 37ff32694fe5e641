# python.bats - the leap Python package (python/) and the trainer glue of examples/trl and
# examples/verl, against the real programs on the cpu backend (tests/python/*.py), called as the
# trainers call them. Inside the trainers' own classes, and examples/openrlhf in OpenRLHF's agent
# classes: tests/trainers.bats.
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

@test "python: the TRL reward and feedback tool, called as GRPOTrainer calls them" {
	unittest python3 tests/python/test_trl.py
}

@test "python: the verl reward functions and interaction, called as verl 0.6.1 calls them" {
	# verl's own BaseInteraction when its wheel can be had (1.7 MB, no dependencies: verl's
	# package __init__ imports torch and ray, so only verl/interactions/base.py is loaded)
	if python3 -m pip download -q --no-deps verl==0.6.1 -d "$BATS_TEST_TMPDIR/verl" >/dev/null 2>&1; then
		python3 -c 'import zipfile, glob, sys
z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/verl-*.whl")[0])
open(sys.argv[1] + "/base.py", "wb").write(z.read("verl/interactions/base.py"))' "$BATS_TEST_TMPDIR/verl"
		export LEAP_VERL_BASE="$BATS_TEST_TMPDIR/verl/base.py"
	else
		echo "# the verl 0.6.1 wheel could not be downloaded: LeapInteraction runs without verl's base class" >&3
	fi
	PYTHONPATH=$ROOT/python unittest python3 tests/python/test_verl.py
}
