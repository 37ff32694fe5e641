"""Finding leap's programs.

One rule for every caller: a program named `leap-*` is taken from PREFIX/bin when a prefix is
given (an installed tree, or the build tree: both keep the programs in bin/), else from
$LEAP_PREFIX/bin, else from PATH. Other names (a sampler, `cat`) are looked up on PATH only, and
a name with a slash is used as it is. The lookup never falls through from a given prefix to PATH:
a prefix that lacks a program is an install to fix, and silently running another version would
mix two leaps in one pipeline.
"""

from __future__ import annotations

import os
import shutil
from typing import Optional

from ._errors import ProgramNotFound
from ._types import PathLike


def find_program(name: str, prefix: Optional[PathLike] = None) -> str:
    """Return the path of program `name` (see the module's rule), or raise ProgramNotFound."""
    if os.sep in name:
        if os.access(name, os.X_OK) and not os.path.isdir(name):
            return name
        raise ProgramNotFound(name, [name])
    if name.startswith("leap-"):
        prefix = prefix if prefix is not None else os.environ.get("LEAP_PREFIX") or None
        if prefix is not None:
            path = os.path.join(os.fspath(prefix), "bin", name)
            if os.access(path, os.X_OK) and not os.path.isdir(path):
                return path
            raise ProgramNotFound(name, [os.path.dirname(path)])
    found = shutil.which(name)
    if found is None:
        raise ProgramNotFound(name, os.environ.get("PATH", "").split(os.pathsep))
    return found
