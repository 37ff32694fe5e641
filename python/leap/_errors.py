"""Exceptions of the leap package.

Why three kinds: a trainer must tell "leap is missing or broken" (fix the install, nothing to
retry), "leap met input it could not process" (a record in the batch became an error record:
leap's own contract, exit status 1) and "a stage died" (exit status 2 or a signal: nothing after
it can be trusted) apart, because each asks for a different reaction in a week-long run.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from ._types import Record


class LeapError(Exception):
    """Base class of every error raised by this package."""


class ProgramNotFound(LeapError, FileNotFoundError):
    """A leap program is neither under the given prefix nor on PATH."""

    def __init__(self, name: str, searched: Iterable[str]):
        self.name = name
        self.searched = list(searched)
        super().__init__(f"{name}: not found (looked in {', '.join(self.searched) or 'nothing'})")


class RecordError(LeapError):
    """A record came out of the pipeline as an error record.

    `record` is the error record itself ({"error": {program, file, line, message}, ...}: the
    fields the input record had are kept where the program could read them, "raw" holds a line
    that was not JSON); `records` is every record the pipeline wrote, in order, when the whole
    output is known (batch runs), else the records written up to this one.
    """

    def __init__(self, record: Record, records: Optional[list[Record]] = None):
        self.record = record
        self.records = records if records is not None else [record]
        err = record.get("error")
        if isinstance(err, dict):
            where = err.get("program") or "leap"
            msg = err.get("message") or "error record"
        else:
            where, msg = "leap", str(err)
        super().__init__(f"{where}: {msg}")


class Timeout(LeapError, TimeoutError):
    """The pipeline ran past its deadline and was stopped (SIGTERM, then SIGKILL).

    `stage` is the first command line, `timeout` the bound in seconds, `records` what the
    pipeline wrote before it was stopped. A trainer's step has a bound of its own (OpenRLHF's
    reward request, verl's per-sample reward timeout); leap's is set below it, so that the glue
    answers (and says why) before the trainer gives up on the call.
    """

    def __init__(self, stage: Sequence[str], timeout: float, records: Iterable[Record] = ()):
        self.stage = list(stage)
        self.timeout = timeout
        self.records = list(records)
        super().__init__(f"{self.stage[0]}: stopped after {timeout:g} s (the pipeline's deadline)")


class PipelineError(LeapError):
    """A stage of the pipeline failed: exit status 2 (usage or fatal error) or killed by a signal.

    `stage` is its command line, `returncode` its status (negative: the signal), `stderr` the
    end of what it wrote on standard error, `records` what the pipeline wrote before the end.
    """

    def __init__(self, stage: Sequence[str], returncode: int, stderr: str, records: Iterable[Record] = ()):
        self.stage = list(stage)
        self.returncode = returncode
        self.stderr = stderr
        self.records = list(records)
        how = f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
        tail = stderr.strip().splitlines()[-3:] if stderr else []
        detail = ("\n  " + "\n  ".join(tail)) if tail else ""
        super().__init__(f"{self.stage[0]}: {how}{detail}")
