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

@test "python: the TRL reward and feedback tool, called as GRPOTrainer calls them" {
	unittest python3 tests/python/test_trl.py
}

@test "python: the TRL reward inside the real GRPOTrainer (one step, tiny random model)" {
	# pip install trl pulls torch with its CUDA libraries (5.9 GB, 2 min 21 s on this machine):
	# beyond what make check downloads. Point LEAP_TRL_PYTHON at a python that has trl.
	py=${LEAP_TRL_PYTHON:-python3}
	"$py" -c 'import trl, datasets, tokenizers' 2>/dev/null ||
		skip "trl is not installed for $py (pip install trl pulls torch, 5.9 GB; set LEAP_TRL_PYTHON=/path/to/python with trl)"
	HF_HUB_OFFLINE=1 unittest "$py" tests/python/test_trl_trainer.py
}
