"""The leap stages a trainer calls, configured once.

Why a class: a trainer calls leap thousands of times with the same prefix, cache, task suite and
stage options; `Leap` holds them and turns each step of a rollout (evaluate a batch, decide a
turn, rank, compute advantages) into one pipeline of the real programs. It adds no policy of its
own: thresholds, keys, discounts and estimators are the programs' options, passed through as
argument lists (`prune_args`, `rank_args`, `advantage_args`), so a default changed in a program
is the default here too.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import IO, Iterable, Iterator, Optional, Sequence

from ._errors import RecordError
from ._pipeline import run, stream
from ._types import Env, PathLike, Record, Records, Stage


class Turn:
    """What one turn produced: `done` holds every record of the turn with its `prune` decision
    (what leap-prune appended to its --done file), `next` the next-turn records (feedback added)
    for the trajectories DCP expanded."""

    def __init__(self, done: list[Record], next_records: list[Record]):
        self.done = done
        self.next = next_records

    def __repr__(self) -> str:
        return f"Turn(done={len(self.done)} records, next={len(self.next)} records)"


class Leap:
    """leap's programs, found under `prefix` (or $LEAP_PREFIX, or PATH), with shared settings.

    prefix        an install prefix or the build tree (programs in PREFIX/bin)
    backend       default backend of records that name none (leap-compile --backend)
    tasks, cache  the task suite and the cache directory (LEAP_TASKS, LEAP_CACHE)
    jobs          parallel compiles and verifications (-j of leap-compile and leap-verify)
    seed          input seed of leap-verify and leap-bench (default: random per run)
    bench         False leaves leap-bench out (no timing: correctness and ranking by turn only)
    *_args        extra arguments of each program, as lists of strings
    env           further environment variables; stderr: where the stages' diagnostics go
    timeout       seconds each pipeline may run before it is stopped and leap.Timeout raised
                  (None: no bound); every method also takes timeout= for one call
    """

    def __init__(self, prefix: Optional[PathLike] = None, *, backend: Optional[str] = None,
                 tasks: Optional[PathLike] = None, cache: Optional[PathLike] = None, jobs: Optional[int] = None,
                 seed: Optional[int] = None, bench: bool = True, compile_args: Sequence[str] = (),
                 verify_args: Sequence[str] = (), bench_args: Sequence[str] = (), prune_args: Sequence[str] = (),
                 rank_args: Sequence[str] = (), advantage_args: Sequence[str] = (), env: Optional[Env] = None,
                 stderr: Optional[IO[str]] = None, timeout: Optional[float] = None):
        self.prefix = prefix
        self.backend, self.jobs, self.seed, self.bench = backend, jobs, seed, bench
        self.compile_args, self.verify_args, self.bench_args = list(compile_args), list(verify_args), list(bench_args)
        self.prune_args, self.rank_args, self.advantage_args = list(prune_args), list(rank_args), list(advantage_args)
        self.env = dict(env or {})
        if tasks is not None:
            self.env["LEAP_TASKS"] = os.fspath(tasks)
        if cache is not None:
            self.env["LEAP_CACHE"] = os.fspath(cache)
        self.stderr = stderr
        self.timeout = timeout

    # -- the pipeline ------------------------------------------------------------------------
    def run(self, stages: Sequence[Stage], records: Records, errors: str = "raise",
            timeout: Optional[float] = None) -> list[Record]:
        """A batch through `stages` (see leap.run); returns the output records."""
        return run(stages, records, prefix=self.prefix, env=self.env, errors=errors, stderr=self.stderr,
                   timeout=self.timeout if timeout is None else timeout)

    def stream(self, stages: Sequence[Stage], records: Records, errors: str = "raise",
               timeout: Optional[float] = None) -> Iterator[Record]:
        """Records through `stages` as they come (see leap.stream); yields output records."""
        return stream(stages, records, prefix=self.prefix, env=self.env, errors=errors, stderr=self.stderr,
                      timeout=self.timeout if timeout is None else timeout)

    # -- the stages ----------------------------------------------------------------------------
    def evaluate_stages(self) -> list[list[str]]:
        """leap-compile | leap-verify [| leap-bench] as command lines."""
        quiet = ["--no-progress"]
        compile_ = ["leap-compile", *quiet]
        if self.backend:
            compile_ += ["--backend", self.backend]
        verify = ["leap-verify", *quiet]
        bench = ["leap-bench", *quiet]
        if self.jobs:
            compile_ += ["--jobs", str(self.jobs)]
            verify += ["--jobs", str(self.jobs)]
        if self.seed is not None:
            verify += ["--seed", str(self.seed)]
            bench += ["--seed", str(self.seed)]
        stages = [compile_ + self.compile_args, verify + self.verify_args]
        if self.bench:
            stages.append(bench + self.bench_args)
        return stages

    def prompts(self, tasks: Iterable[str], group_size: int = 1, args: Sequence[str] = (),
                errors: str = "raise") -> list[Record]:
        """Turn-1 records of `tasks` (leap-prompt); the backend is this object's backend."""
        argv = ["leap-prompt", "--no-progress", "--group-size", str(group_size), *args]
        if self.backend:
            argv += ["--backend", self.backend]
        return self.run([argv + ["--file", "-"]], list(tasks), errors=errors)

    def evaluate(self, records: Records, errors: str = "raise", timeout: Optional[float] = None) -> list[Record]:
        """Compile, verify (and time) sampled records; returns them with compile, verify, bench
        and status added, in input order."""
        return self.run(self.evaluate_stages(), records, errors=errors, timeout=timeout)

    def evaluate_stream(self, records: Records, errors: str = "raise",
                        timeout: Optional[float] = None) -> Iterator[Record]:
        """evaluate() as a stream: compiling starts with the first record `records` yields."""
        return self.stream(self.evaluate_stages(), records, errors=errors, timeout=timeout)

    def turn(self, records: Records, prune_args: Optional[Sequence[str]] = None, done: Optional[PathLike] = None,
             evaluate: bool = True, errors: str = "raise", timeout: Optional[float] = None) -> Turn:
        """One turn of a rollout: evaluate the sampled `records` (unless evaluate=False: they
        already carry their status) and let leap-prune decide their groups. Returns a Turn.
        `prune_args` replaces this object's prune_args (e.g. ["--group-size", "8",
        "--max-turns", "3"]); `done`, when given, is a file the decided records are appended to
        as leap-prune appends them (a rollout's turns accumulate there for leap-rank)."""
        args = self.prune_args if prune_args is None else list(prune_args)
        fd, tmp = tempfile.mkstemp(prefix="leap-done-", suffix=".jsonl")
        os.close(fd)
        try:
            stages = (self.evaluate_stages() if evaluate else []) + [
                ["leap-prune", "--no-progress", *args, "--done", tmp]]
            nxt = self.run(stages, records, errors="keep", timeout=timeout)
            with open(tmp, "rb") as f:
                raw = f.read()
        finally:
            os.unlink(tmp)
        if done is not None and raw:
            with open(done, "ab") as f:
                f.write(raw)
        decided = [json.loads(line) for line in raw.splitlines() if line.strip()]
        if errors == "raise":
            for record in decided + nxt:
                if "error" in record:
                    raise RecordError(record, decided + nxt)
        return Turn(decided, nxt)

    def rank(self, records: Records, rank_args: Optional[Sequence[str]] = None, errors: str = "raise",
             timeout: Optional[float] = None) -> list[Record]:
        """leap-rank over finished trajectories (every record of every turn); adds `rank`."""
        args = self.rank_args if rank_args is None else list(rank_args)
        return self.run([["leap-rank", "--no-progress", *args]], records, errors=errors, timeout=timeout)

    def advantage(self, records: Records, advantage_args: Optional[Sequence[str]] = None,
                  errors: str = "raise") -> list[Record]:
        """leap-advantage (after leap-rank for the default rank estimator); adds `advantage`."""
        args = self.advantage_args if advantage_args is None else list(advantage_args)
        return self.run([["leap-advantage", "--no-progress", *args]], records, errors=errors)

    def rank_advantage(self, records: Records, rank_args: Optional[Sequence[str]] = None,
                       advantage_args: Optional[Sequence[str]] = None, errors: str = "raise") -> list[Record]:
        """leap-rank | leap-advantage in one pipeline: the end of a rollout step."""
        ra = self.rank_args if rank_args is None else list(rank_args)
        aa = self.advantage_args if advantage_args is None else list(advantage_args)
        return self.run([["leap-rank", "--no-progress", *ra], ["leap-advantage", "--no-progress", *aa]],
                        records, errors=errors)
