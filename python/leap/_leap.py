"""The leap stages a trainer calls, configured once.

Why a class: a trainer calls leap thousands of times with the same prefix, cache, task suite and
stage options; `Leap` holds them and turns each step of a rollout (evaluate a batch, decide a
turn, rank, compute advantages) into one pipeline of the real programs. It adds no policy of its
own: thresholds, keys, discounts and estimators are the programs' options, passed through as
argument lists (`prune_args`, `rank_args`, `advantage_args`), so a default changed in a program
is the default here too.
"""

import json
import os
import tempfile

from ._errors import RecordError
from ._pipeline import run, stream


class Turn:
    """What one turn produced: `done` holds every record of the turn with its `prune` decision
    (what leap-prune appended to its --done file), `next` the next-turn records (feedback added)
    for the trajectories DCP expanded."""

    def __init__(self, done, next_records):
        self.done = done
        self.next = next_records

    def __repr__(self):
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

    def __init__(self, prefix=None, *, backend=None, tasks=None, cache=None, jobs=None, seed=None,
                 bench=True, compile_args=(), verify_args=(), bench_args=(), prune_args=(),
                 rank_args=(), advantage_args=(), env=None, stderr=None, timeout=None):
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
    def run(self, stages, records, errors="raise", timeout=None):
        """A batch through `stages` (see leap.run); returns the output records."""
        return run(stages, records, prefix=self.prefix, env=self.env, errors=errors, stderr=self.stderr,
                   timeout=self.timeout if timeout is None else timeout)

    def stream(self, stages, records, errors="raise", timeout=None):
        """Records through `stages` as they come (see leap.stream); yields output records."""
        return stream(stages, records, prefix=self.prefix, env=self.env, errors=errors, stderr=self.stderr,
                      timeout=self.timeout if timeout is None else timeout)

    # -- the stages ----------------------------------------------------------------------------
    def evaluate_stages(self):
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

    def prompts(self, tasks, group_size=1, args=(), errors="raise"):
        """Turn-1 records of `tasks` (leap-prompt); the backend is this object's backend."""
        argv = ["leap-prompt", "--no-progress", "--group-size", str(group_size), *args]
        if self.backend:
            argv += ["--backend", self.backend]
        return self.run([argv + ["--file", "-"]], list(tasks), errors=errors)

    def evaluate(self, records, errors="raise", timeout=None):
        """Compile, verify (and time) sampled records; returns them with compile, verify, bench
        and status added, in input order."""
        return self.run(self.evaluate_stages(), records, errors=errors, timeout=timeout)

    def evaluate_stream(self, records, errors="raise", timeout=None):
        """evaluate() as a stream: compiling starts with the first record `records` yields."""
        return self.stream(self.evaluate_stages(), records, errors=errors, timeout=timeout)

    def turn(self, records, prune_args=None, done=None, evaluate=True, errors="raise", timeout=None):
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

    def rank(self, records, rank_args=None, errors="raise", timeout=None):
        """leap-rank over finished trajectories (every record of every turn); adds `rank`."""
        args = self.rank_args if rank_args is None else list(rank_args)
        return self.run([["leap-rank", "--no-progress", *args]], records, errors=errors, timeout=timeout)

    def advantage(self, records, advantage_args=None, errors="raise"):
        """leap-advantage (after leap-rank for the default rank estimator); adds `advantage`."""
        args = self.advantage_args if advantage_args is None else list(advantage_args)
        return self.run([["leap-advantage", "--no-progress", *args]], records, errors=errors)

    def rank_advantage(self, records, rank_args=None, advantage_args=None, errors="raise"):
        """leap-rank | leap-advantage in one pipeline: the end of a rollout step."""
        ra = self.rank_args if rank_args is None else list(rank_args)
        aa = self.advantage_args if advantage_args is None else list(advantage_args)
        return self.run([["leap-rank", "--no-progress", *ra], ["leap-advantage", "--no-progress", *aa]],
                        records, errors=errors)
