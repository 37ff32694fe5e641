#!/bin/sh
# venv.sh - create (or reuse) the Python environment of leap-serve's client tests, outside the
# checkout, and print its path.
#
# usage: sh tests/serve/venv.sh [DIR]
#
# tests/serve.bats talks to leap-serve through real clients: OpenEnv's own (openenv-core),
# `requests` shaped as OpenRLHF's remote reward posts, and the Ray actor pool of
# python/leap/ray_pool.py (ray). They come from PyPI at pinned versions, into
# DIR (default /var/cache/leap-ci/venv-serve-PINS, where PINS names the versions, so a change
# of pins makes a new one and an old one is never half-upgraded). The environment is reused
# when its stamp file says it is complete; an install that fails leaves no stamp and is
# tried again next time. Point the tests at it with LEAP_SERVE_VENV=DIR (the path printed
# last). About 720 MB installed (ray, gradio and their dependencies): not part of `make check`'s
# own downloads, so a machine without it skips those tests with the reason.
set -eu
openenv=0.3.0
ray=2.60.0
pins="openenv-core-$openenv-ray-$ray"
dir=${1:-/var/cache/leap-ci/venv-serve-$pins}
py=${PYTHON:-python3}
if [ -f "$dir/.leap-complete" ] && [ "$(cat "$dir/.leap-complete")" = "$pins" ]; then
	echo "$dir"
	exit 0
fi
echo "leap: creating $dir (openenv-core $openenv, ray $ray)" >&2
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
"$py" -m venv "$dir" >&2
"$dir/bin/python" -m pip install -q --disable-pip-version-check "openenv-core==$openenv" "ray==$ray" \
	requests websockets >&2
"$dir/bin/python" -c 'import openenv.core, ray, requests, websockets' >&2
echo "$pins" >"$dir/.leap-complete"
echo "$dir"
