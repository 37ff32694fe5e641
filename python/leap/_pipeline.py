"""Running leap's filters as a subprocess pipeline.

Why a real pipeline and not one call per record: leap's programs are streaming filters that
write each record as soon as it is ready, so `sampler | leap-compile | leap-verify | leap-bench`
overlaps sampling, compiling and running; a trainer that waits for the whole batch before it
starts compiling throws that away. `stream()` therefore feeds records from a writer thread while
the caller reads results: compiling starts with the first record the model finishes. `run()` is
the same pipeline for a batch that is already complete.

Contracts kept from the programs (leap-record(5)): records are strict JSON (NaN and infinity are
refused before they reach a filter), fields leap does not own pass through, a bad input becomes
an error record in its place. Exit status 1 only says that some record carries an error, which
the records themselves show; status 2 or a signal is a failed stage and raises PipelineError.

A deadline (`timeout`, seconds from the start) bounds the whole pipeline: a trainer waits on it
inside a step that has a bound of its own, and a pipeline that outlives the step's bound only
turns the trainer's timeout into a silent zero. At the deadline every stage is stopped (SIGTERM,
leap's programs clean up on it, then SIGKILL) and leap.Timeout is raised, carrying the records
written so far.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from typing import IO, Iterator, Optional, Sequence

from ._errors import LeapError, PipelineError, RecordError, Timeout
from ._programs import find_program
from ._types import Env, PathLike, Record, RecordIn, Records, Stage

# How much of each stage's standard error is kept for the exception (the end of it).
STDERR_KEEP = 64 * 1024


def encode(record: RecordIn) -> bytes:
    """One record as a JSON Lines line (bytes, with the newline); strings pass as they are."""
    if isinstance(record, bytes):
        line = record
    elif isinstance(record, str):
        line = record.encode("utf-8")
    else:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if b"\n" in line.rstrip(b"\n"):
        raise ValueError("a record given as text holds a newline: one record per line")
    return line.rstrip(b"\n") + b"\n"


class _Stderr(threading.Thread):
    """Drains one stage's standard error (so it never blocks), keeps its end, echoes it if asked."""

    def __init__(self, pipe, echo):
        super().__init__(daemon=True)
        self.pipe, self.echo, self.kept = pipe, echo, bytearray()

    def run(self):
        for chunk in iter(lambda: self.pipe.read1(65536), b""):
            self.kept += chunk
            del self.kept[:-STDERR_KEEP]
            if self.echo is not None:
                try:
                    self.echo.write(chunk.decode("utf-8", "replace"))
                    self.echo.flush()
                except (OSError, ValueError):
                    self.echo = None
        self.pipe.close()

    def text(self):
        return bytes(self.kept).decode("utf-8", "replace")


class _Writer(threading.Thread):
    """Writes the input records to the first stage, one flushed line each, then closes it."""

    def __init__(self, pipe, records):
        super().__init__(daemon=True)
        self.pipe, self.records, self.failure, self.stop = pipe, records, None, False

    def run(self):
        try:
            for record in self.records:
                if self.stop:
                    break
                self.pipe.write(encode(record))
                self.pipe.flush()
        except BrokenPipeError:
            pass  # the first stage is gone: its exit status says why
        except BaseException as exc:  # the caller's iterable failed, or a record is not JSON
            self.failure = exc
        finally:
            try:
                self.pipe.close()
            except BrokenPipeError:
                pass


def _start(stages, prefix, env, cwd):
    argvs = []
    for stage in stages:
        argv = [os.fspath(a) for a in ([stage] if isinstance(stage, str) else stage)]
        if not argv:
            raise ValueError("an empty stage")
        argv[0] = find_program(argv[0], prefix)
        argvs.append(argv)
    if not argvs:
        raise ValueError("no stage to run")
    procs, prev = [], subprocess.PIPE
    try:
        for argv in argvs:
            p = subprocess.Popen(argv, stdin=prev, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env, cwd=cwd, close_fds=True)
            if prev is not subprocess.PIPE:
                prev.close()  # the next stage holds it now: EOF and SIGPIPE travel as in a shell
            prev = p.stdout
            procs.append(p)
    except BaseException:
        _stop(procs)
        raise
    return argvs, procs


def _stop(procs, grace=5.0):
    """Ends every stage still running: SIGTERM (leap's programs clean up on it), then SIGKILL."""
    for p in procs:
        for f in (p.stdin, p.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _environ(env):
    if env is None:
        return None
    merged = dict(os.environ)
    for k, v in env.items():
        if v is None:
            merged.pop(k, None)
        else:
            merged[k] = os.fspath(v) if not isinstance(v, str) else v
    return merged


def stream(stages: Sequence[Stage], records: Records, *, prefix: Optional[PathLike] = None, env: Optional[Env] = None,
           cwd: Optional[PathLike] = None, errors: str = "raise", stderr: Optional[IO[str]] = None,
           timeout: Optional[float] = None) -> Iterator[Record]:
    """Run `records` through the pipeline `stages` and yield the output records as they come.

    stages:  a list of command lines, e.g. [["leap-compile", "--backend", "cpu"], ["leap-verify"]];
             a `leap-*` program is found under `prefix`/bin, else $LEAP_PREFIX/bin, else on PATH.
    records: any iterable of dicts (or JSON text lines); it is read from a thread while results
             are yielded, so a generator that yields as the model finishes each sample starts the
             compiles at once.
    errors:  "raise" (default): an error record raises RecordError carrying it (the pipeline is
             then stopped); "keep": error records are yielded like the others.
    env:     variables to set (None removes one) on top of this process's environment.
    stderr:  a file object that receives the stages' standard error as it comes (default: kept,
             and the end of it attached to a PipelineError).
    timeout: seconds from the start after which the pipeline is stopped and leap.Timeout raised
             (None: no bound).
    """
    if errors not in ("raise", "keep"):
        raise ValueError("errors must be 'raise' or 'keep'")
    if timeout is not None and not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds (or None)")
    argvs, procs = _start(stages, prefix, _environ(env), cwd)
    expired = threading.Event()

    def expire():  # runs in the timer's thread: the reader sees EOF once the last stage is gone
        expired.set()
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                p.kill()

    timer = threading.Timer(timeout, expire) if timeout is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    readers = [_Stderr(p.stderr, stderr) for p in procs]
    for r in readers:
        r.start()
    writer = _Writer(procs[0].stdin, records)
    writer.start()
    finished, seen = False, []
    try:
        for line in procs[-1].stdout:
            if expired.is_set():
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise LeapError(f"{argvs[-1][0]} wrote a line that is not JSON: {exc}: {line[:200]!r}") from None
            if errors == "raise" and isinstance(record, dict) and "error" in record:
                raise RecordError(record, seen + [record])
            seen.append(record)
            yield record
        if expired.is_set():
            raise Timeout(argvs[0], timeout, seen)
        procs[-1].stdout.close()
        writer.join()
        for p in procs:
            p.wait()
        for r in readers:
            r.join()
        finished = True
        if writer.failure is not None:
            raise writer.failure
        for argv, p, r in zip(argvs, procs, readers):
            if p.returncode not in (0, 1):
                raise PipelineError(argv, p.returncode, r.text(), seen)
    finally:
        if timer is not None:
            timer.cancel()
        if not finished:
            writer.stop = True
            _stop(procs)
            writer.join(5.0)
            for r in readers:
                r.join(5.0)


def run(stages: Sequence[Stage], records: Records, *, prefix: Optional[PathLike] = None, env: Optional[Env] = None,
        cwd: Optional[PathLike] = None, errors: str = "raise", stderr: Optional[IO[str]] = None,
        timeout: Optional[float] = None) -> list[Record]:
    """Run a complete batch through the pipeline and return the output records (a list).

    The same arguments as stream(). With errors="raise" the whole batch is still processed:
    the RecordError raised at the end carries the first error record and, in `records`, every
    record the pipeline wrote, so nothing is lost to the exception.
    """
    out = list(stream(stages, records, prefix=prefix, env=env, cwd=cwd, errors="keep", stderr=stderr,
                      timeout=timeout))
    if errors == "raise":
        for record in out:
            if isinstance(record, dict) and "error" in record:
                raise RecordError(record, out)
    elif errors != "keep":
        raise ValueError("errors must be 'raise' or 'keep'")
    return out
