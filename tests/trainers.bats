# trainers.bats - leap inside the trainers' own classes (TRL's GRPOTrainer; verl's config,
# dataset, DataProto, AgentLoopWorker, agent loops and reward manager; verl 0.6.1's ToolAgentLoop;
# OpenRLHF's MultiTurnAgentExecutor; Prime Intellect's verifiers: load_environment, MultiTurnEnv,
# Rubric, its OpenAI client), at the versions tests/trainers/requirements*.txt pin, on the cpu
# backend. The only stand-in is the model server (tests/trainers/*.py say why). The pythons come
# from tests/trainers/venvs.sh, which .ci/run calls: eval "$(sh tests/trainers/venvs.sh)" sets
# LEAP_TRAINERS_PYTHON and LEAP_VERIFIERS_PYTHON.
load helpers

setup() {
	py=${LEAP_TRAINERS_PYTHON:-}
	[ -n "$py" ] || skip "LEAP_TRAINERS_PYTHON is not set: eval \"\$(sh tests/trainers/venvs.sh)\" builds the trainers' environment (once per machine, ~8 GB)"
	export PYTHONPATH="$ROOT/python" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
	export LEAP_CACHE="$BATS_TEST_TMPDIR/cache"
	cd "$ROOT"
}

# unittest FILE: runs one test module with the trainers' python, shows its report when it fails.
unittest() {
	run "$py" "$1"
	echo "$output" | grep -v -i -e warning -e '^ *warnings.warn' | tail -n 60
	[ "$status" -eq 0 ]
}

@test "trainers: TRL's GRPOTrainer learns from leap's rank scores (one step, tiny model)" {
	unittest tests/trainers/test_trl.py
}

@test "trainers: verl's AgentLoopWorker runs leap's agent loop; its reward manager scores single turns" {
	unittest tests/trainers/test_verl.py
}

@test "trainers: verl 0.6.1's ToolAgentLoop drives LeapInteraction; a cut turn does not hang its group" {
	[ -n "${LEAP_VERL061_PATH:-}" ] || skip "LEAP_VERL061_PATH is not set (tests/trainers/venvs.sh prints it)"
	PYTHONPATH="$LEAP_VERL061_PATH:$PYTHONPATH" unittest tests/trainers/test_verl061.py
}

@test "trainers: OpenRLHF's MultiTurnAgentExecutor runs leap's agent with DCP" {
	unittest tests/trainers/test_openrlhf.py
}

@test "trainers: a verifiers environment scores a correct kernel above a wrong one (MultiTurnEnv, Rubric)" {
	# verifiers has an environment of its own (tests/trainers/requirements-verifiers.txt says why)
	[ -n "${LEAP_VERIFIERS_PYTHON:-}" ] || skip "LEAP_VERIFIERS_PYTHON is not set (tests/trainers/venvs.sh prints it)"
	py=$LEAP_VERIFIERS_PYTHON unittest tests/trainers/test_verifiers.py
}

@test "trainers: examples/trainers.md names the versions the tests pin" {
	for pkg in trl verl openrlhf torch transformers; do
		v=$(sed -n "s/^$pkg==//p" tests/trainers/requirements.txt)
		[ -n "$v" ]
		grep -q "$pkg $v" examples/trainers.md || { echo "examples/trainers.md does not name $pkg $v"; return 1; }
	done
	v=$(sed -n 's/^verifiers==//p' tests/trainers/requirements-verifiers.txt)
	[ -n "$v" ]
	grep -q "verifiers $v" examples/trainers.md || { echo "examples/trainers.md does not name verifiers $v"; return 1; }
}

@test "trainers: the torch environment has what KernelBench's modules import, at the pinned versions" {
	# tests/trainers/requirements-modules.txt: installed into the environment by venvs.sh, keyed
	# on its own (level 3's Mamba2 modules import einops)
	[ -n "${LEAP_TORCH_PYTHON:-}" ] || skip "LEAP_TORCH_PYTHON is not set (tests/trainers/venvs.sh prints it)"
	local pkg v
	run -0 grep -cE '^[A-Za-z0-9_.-]+==' tests/trainers/requirements-modules.txt
	[ "$output" -ge 1 ]
	while IFS='=' read -r pkg _ v; do
		run -0 "$LEAP_TORCH_PYTHON" -c "import importlib.metadata as m; print(m.version('$pkg'))"
		assert_output "$v"
	done < <(grep -E '^[A-Za-z0-9_.-]+==' tests/trainers/requirements-modules.txt)
}
