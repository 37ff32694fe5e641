"""leap from Python: run leap's filters (leap-compile, leap-verify, leap-bench, leap-prune,
leap-rank, leap-advantage) as a subprocess pipeline, for trainers and scripts.

    import leap
    lp = leap.Leap(backend="cpu")                       # programs on PATH (or Leap(prefix=...))
    out = lp.evaluate(records)                          # compile | verify | bench, in order
    turn = lp.turn(out, ["--group-size", "8"], evaluate=False)   # DCP: turn.done, turn.next
    train = lp.rank_advantage(turn.done)                # rank | advantage

    for r in leap.stream([["leap-compile"], ["leap-verify"]], sampler()):   # as they come
        ...

Standard library only. An error record raises leap.RecordError (its `record` attribute holds
it); a stage that fails (exit status 2, a signal) raises leap.PipelineError; a program that is
not found raises leap.ProgramNotFound; a pipeline that runs past its `timeout` is stopped and
raises leap.Timeout.
"""

from ._errors import LeapError, PipelineError, ProgramNotFound, RecordError, Timeout
from ._leap import Leap, Turn
from ._pipeline import run, stream
from ._programs import find_program
from .serve import Server, ServerError  # a remote leap-serve (leap.ray_pool: a pool of them)

__version__ = "0.1.0"
__all__ = ["Leap", "Turn", "run", "stream", "find_program", "LeapError", "PipelineError",
           "ProgramNotFound", "RecordError", "Server", "ServerError", "Timeout", "__version__"]
