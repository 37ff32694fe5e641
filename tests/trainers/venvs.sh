#!/bin/sh
# tests/trainers/venvs.sh - the trainers' virtual environment: built once per machine, reused.
#
#   eval "$(sh tests/trainers/venvs.sh)"     # sets LEAP_TRAINERS_PYTHON, LEAP_TORCH_PYTHON,
#                                            # LEAP_VERL061_PATH and LEAP_VERIFIERS_PYTHON
#
# Why a cache outside the clone: the environment is ~7.5 GB (torch with its CUDA libraries, trl,
# verl, ray) and takes ~8 minutes to install the first time; CI clones the repository afresh for
# every run, so the environment lives in $LEAP_CI_CACHE (default /var/cache/leap-ci) under a name
# made of the tested versions and a hash of tests/trainers/requirements.txt: a changed pin builds
# a new environment, an unchanged one is reused as it is (a few milliseconds). verl 0.6.1 (tested
# too: its interaction API is gone from later versions) needs transformers 4: a small overlay
# directory (requirements-verl061.txt, ~150 MB) holds it and what it drags along, to be put first
# on PYTHONPATH over the same environment ($LEAP_VERL061_PATH), keyed by both files. Prime
# Intellect's verifiers cannot share the environment (it needs huggingface-hub 2 and openai 3;
# requirements-verifiers.txt says why) and needs no torch: a venv of its own (~720 MB, 1 to 8
# minutes), keyed by its version and a hash of requirements-verifiers.txt ($LEAP_VERIFIERS_PYTHON).
#
# What KernelBench's modules import beside torch (einops: level 3's Mamba2) is pinned in
# requirements-modules.txt and installed into the trainers' environment once it is built, marked
# by .leap-modules-HASH (a hash of that file): a few kilobytes, keyed on their own, so that a new
# pin there never rebuilds the environment (a 9-minute, 7.5 GB build keyed by requirements.txt).
#
# The environment is marked ready (.leap-ready) only when every package installed and the
# trainers import, so a run killed halfway leaves an environment the next run builds again; a
# lock keeps two runs from building it at once. Packages come from PyPI through pip (`pip install
# --no-deps -r requirements.txt`: the file pins every package, nothing is resolved).
#
# Prints shell assignments on standard output (nothing else); progress and errors go to standard
# error. Exit status 0 with the environment ready, 1 when it could not be built.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements.txt
cache=${LEAP_CI_CACHE:-/var/cache/leap-ci}
py=${LEAP_VENV_PYTHON:-python3}

version() { sed -n "s/^$1==//p" "$req"; }
hash=$(sha256sum "$req" | cut -c1-12)
name=venv-trl-$(version trl)-verl-$(version verl)-$hash
venv=$cache/$name
req061=$here/requirements-verl061.txt
overlay=$cache/overlay-verl-0.6.1-$(cat "$req" "$req061" | sha256sum | cut -c1-12)
reqvf=$here/requirements-verifiers.txt
vfenv=$cache/venv-verifiers-$(sed -n 's/^verifiers==//p' "$reqvf")-$(sha256sum "$reqvf" | cut -c1-12)
reqmod=$here/requirements-modules.txt
modmark=$venv/.leap-modules-$(sha256sum "$reqmod" | cut -c1-12)

ready() { [ -x "$venv/bin/python" ] && [ -f "$venv/.leap-ready" ] && [ -f "$overlay/.leap-ready" ] &&
	[ -f "$vfenv/.leap-ready" ] && [ -f "$modmark" ]; }

if ! ready; then
	mkdir -p "$cache"
	exec 9>"$cache/.$name.lock"
	flock 9
	if [ ! -f "$venv/.leap-ready" ]; then
		echo "venvs.sh: building $venv (once per machine: several minutes, ~8 GB)" >&2
		start=$(date +%s)
		rm -rf "$venv"
		"$py" -m venv "$venv" >&2
		"$venv/bin/pip" install -q --no-input --no-deps -r "$req" >&2
		"$venv/bin/python" -c 'import torch, trl, verl, openrlhf.utils.agent
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker' >&2
		du -sh "$venv" | cut -f1 >"$venv/.leap-size"
		echo "$(($(date +%s) - start))" >"$venv/.leap-seconds"
		touch "$venv/.leap-ready"
		echo "venvs.sh: built $venv in $(cat "$venv/.leap-seconds") s, $(cat "$venv/.leap-size")" >&2
	fi
	if [ ! -f "$modmark" ]; then
		echo "venvs.sh: installing $reqmod into $venv" >&2
		"$venv/bin/pip" install -q --no-input --no-deps -r "$reqmod" >&2
		"$venv/bin/python" -c 'import einops' >&2
		rm -f "$venv"/.leap-modules-*
		touch "$modmark"
	fi
	if [ ! -f "$overlay/.leap-ready" ]; then
		echo "venvs.sh: building $overlay (verl 0.6.1 over the environment)" >&2
		rm -rf "$overlay"
		"$venv/bin/pip" install -q --no-input --no-deps --target "$overlay" -r "$req061" >&2
		PYTHONPATH=$overlay "$venv/bin/python" -c 'import verl, transformers
assert verl.__version__ == "0.6.1", verl.__version__
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop' >&2
		touch "$overlay/.leap-ready"
	fi
	if [ ! -f "$vfenv/.leap-ready" ]; then
		echo "venvs.sh: building $vfenv (verifiers)" >&2
		start=$(date +%s)
		rm -rf "$vfenv"
		"$py" -m venv "$vfenv" >&2
		"$vfenv/bin/pip" install -q --no-input --no-deps -r "$reqvf" >&2
		"$vfenv/bin/python" -c 'import verifiers as vf, datasets, httpx, openai
from verifiers.clients import OpenAIChatCompletionsClient
assert vf.MultiTurnEnv and vf.Rubric and vf.load_environment' >&2
		echo "$(($(date +%s) - start))" >"$vfenv/.leap-seconds"
		touch "$vfenv/.leap-ready"
		echo "venvs.sh: built $vfenv in $(cat "$vfenv/.leap-seconds") s, $(du -sh "$vfenv" | cut -f1)" >&2
	fi
	exec 9>&-
fi
echo "LEAP_TRAINERS_PYTHON=$venv/bin/python; export LEAP_TRAINERS_PYTHON"
echo "LEAP_TORCH_PYTHON=$venv/bin/python; export LEAP_TORCH_PYTHON"
echo "LEAP_VERL061_PATH=$overlay; export LEAP_VERL061_PATH"
echo "LEAP_VERIFIERS_PYTHON=$vfenv/bin/python; export LEAP_VERIFIERS_PYTHON"
