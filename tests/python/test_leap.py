"""Tests of the leap Python package against the real programs of the build tree (cpu backend).

Run by tests/python.bats (`make check`); alone: PYTHONPATH=python python3 -m unittest
tests/python/test_leap.py from the repository root after `make`.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import leap  # noqa: E402
from leap.groups import number_samples, rank_batch  # noqa: E402

REPLAY = os.path.join(ROOT, "examples", "replay", "cpu.jsonl")


def replay(task, turn=1):
    """The recorded cpu answers of one task at one turn, as sampled records of one group."""
    with open(REPLAY) as f:
        rows = [json.loads(line) for line in f]
    return [{"task": r["task"], "group": r["task"], "sample": r["sample"], "turn": r["turn"], "backend": "cpu",
             "completion": r["completion"], "tokens": r["tokens"], "expect": r.get("expect")}
            for r in rows if r["task"] == task and r["turn"] == turn]


def tmpdir():
    base = os.environ.get("BATS_TEST_TMPDIR") or os.path.join(ROOT, "tests", ".tmp")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(dir=base)


class LeapCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tmpdir()
        self.lp = leap.Leap(ROOT, backend="cpu", bench=False, seed=1, tasks=os.path.join(ROOT, "tasks"),
                            cache=os.environ.get("LEAP_CACHE") or os.path.join(self.tmp, "cache"))


class TestPrograms(LeapCase):
    def test_prefix_path_and_env(self):
        self.assertEqual(leap.find_program("leap-rank", ROOT), os.path.join(ROOT, "bin", "leap-rank"))
        old = os.environ.get("LEAP_PREFIX")
        os.environ["LEAP_PREFIX"] = ROOT
        try:
            self.assertEqual(leap.find_program("leap-rank"), os.path.join(ROOT, "bin", "leap-rank"))
        finally:
            if old is None:
                del os.environ["LEAP_PREFIX"]
            else:
                os.environ["LEAP_PREFIX"] = old
        # not leap's: PATH only
        self.assertEqual(leap.find_program("cat"), shutil.which("cat"))

    def test_a_prefix_without_the_program_does_not_fall_back_to_path(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(os.path.join(empty, "bin"))
        path = os.environ["PATH"]
        os.environ["PATH"] = os.path.join(ROOT, "bin") + os.pathsep + path
        try:
            with self.assertRaises(leap.ProgramNotFound) as cm:
                leap.find_program("leap-rank", empty)
            self.assertIn(os.path.join(empty, "bin"), str(cm.exception))
            self.assertIsInstance(cm.exception, FileNotFoundError)
        finally:
            os.environ["PATH"] = path
        with self.assertRaises(leap.ProgramNotFound):
            leap.run([["leap-rank"]], [], prefix=empty)


class TestRun(LeapCase):
    def test_evaluate_gives_the_recorded_verdicts_in_order_with_fields_kept(self):
        recs = replay("softmax")
        for i, r in enumerate(recs):
            r["trainer_id"] = 2**63 - 1 - i  # a 64-bit id must come back exactly
        out = self.lp.evaluate(recs)
        self.assertEqual([r["sample"] for r in out], [r["sample"] for r in recs])
        self.assertEqual([r["trainer_id"] for r in out], [2**63 - 1 - i for i in range(len(recs))])
        self.assertEqual([r["status"] for r in out], [r["expect"] for r in recs])
        for r in out:
            self.assertIn("compile", r)
            self.assertIn("verify", r)

    def test_error_records_raise_with_the_record_and_the_whole_batch(self):
        recs = replay("softmax")[:3]
        lines = [json.dumps(recs[0]), "{not json", json.dumps(recs[1]), recs[2]]
        with self.assertRaises(leap.RecordError) as cm:
            self.lp.evaluate(lines)
        err = cm.exception
        self.assertEqual(err.record["raw"], "{not json")
        self.assertEqual(err.record["error"]["program"], "leap-compile")
        self.assertEqual(len(err.records), 4)  # nothing lost to the exception
        self.assertEqual(err.records[2]["sample"], recs[1]["sample"])
        kept = self.lp.evaluate(lines, errors="keep")
        self.assertEqual(["error" in r for r in kept], [False, True, False, False])

    def test_stream_raises_at_the_error_record_after_the_ones_before(self):
        recs = replay("softmax")[:2]
        got = []
        with self.assertRaises(leap.RecordError) as cm:
            for r in self.lp.evaluate_stream([recs[0], "[1,2]", recs[1]]):
                got.append(r)
        self.assertEqual(len(got), 1)
        self.assertEqual(cm.exception.record["raw"], "[1,2]")

    def test_a_failed_stage_raises_pipeline_error_with_its_diagnostics(self):
        with self.assertRaises(leap.PipelineError) as cm:
            self.lp.run([["leap-compile", "--no-such-option"]], replay("softmax")[:1])
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("no-such-option", cm.exception.stderr)

    def test_a_pipeline_past_its_deadline_is_stopped_and_raises_timeout(self):
        # a stage that never answers (cat on a pipe the writer keeps open: an endless sampler)
        def endless():
            yield replay("softmax")[0]
            threading.Event().wait(120)
        start = time.monotonic()
        with self.assertRaises(leap.Timeout) as cm:
            list(self.lp.stream([["cat"]], endless(), timeout=1))
        self.assertLess(time.monotonic() - start, 60)  # stopped, not waited out (the bound is 1 s)
        self.assertEqual(cm.exception.timeout, 1)
        self.assertEqual([r["task"] for r in cm.exception.records], ["softmax"])
        self.assertIsInstance(cm.exception, TimeoutError)
        with self.assertRaises(ValueError):
            self.lp.run([["cat"]], [], timeout=0)

    def test_nan_is_refused_before_it_reaches_a_filter(self):
        rec = dict(replay("softmax")[0], reward=float("nan"))
        with self.assertRaises(ValueError):
            self.lp.run([["leap-record"]], [rec])

    def test_prompts(self):
        out = self.lp.prompts(["softmax", "gelu"], group_size=3)
        self.assertEqual([(r["task"], r["sample"], r["turn"], r["backend"]) for r in out],
                         [("softmax", 0, 1, "cpu"), ("softmax", 1, 1, "cpu"), ("softmax", 2, 1, "cpu"),
                          ("gelu", 0, 1, "cpu"), ("gelu", 1, 1, "cpu"), ("gelu", 2, 1, "cpu")])


class TestStream(LeapCase):
    def test_compiling_starts_before_the_batch_is_complete(self):
        recs = replay("softmax")
        first_out = threading.Event()

        def sampler():
            yield recs[0]
            # a model still sampling: the rest comes only once leap answered the first record
            if not first_out.wait(120):
                raise AssertionError("no record came out before the input was complete")
            yield from recs[1:]

        out = []
        for r in self.lp.evaluate_stream(sampler()):
            out.append(r)
            first_out.set()
        self.assertEqual([r["sample"] for r in out], [r["sample"] for r in recs])

    def test_an_abandoned_stream_ends_its_programs(self):
        recs = replay("softmax") * 4
        it = leap.stream([["leap-record"], ["cat"]], recs, prefix=ROOT)
        next(it)
        it.close()
        # the pipeline's processes are reaped: no child of ours is left
        out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())], capture_output=True, text=True)
        self.assertNotIn("leap-record", out.stdout)

    def test_the_callers_failing_iterable_raises_in_the_caller(self):
        def broken():
            yield replay("softmax")[0]
            raise RuntimeError("the sampler died")

        with self.assertRaisesRegex(RuntimeError, "the sampler died"):
            list(leap.stream([["leap-record"]], broken(), prefix=ROOT))


class TestRollout(LeapCase):
    def test_a_turn_gives_the_done_records_and_the_next_turn_with_feedback(self):
        recs = replay("softmax")
        done = os.path.join(self.tmp, "done.jsonl")
        turn = self.lp.turn(recs, ["--group-size", str(len(recs)), "--max-turns", "3"], done=done)
        self.assertEqual(len(turn.done), len(recs))
        with open(done) as f:
            self.assertEqual([json.loads(line)["sample"] for line in f], [r["sample"] for r in turn.done])
        failed = sorted(r["sample"] for r in turn.done if r["prune"]["decision"] == "expand")
        self.assertEqual(sorted(r["sample"] for r in turn.next), failed)
        for r in turn.next:
            self.assertEqual(r["turn"], 2)
            self.assertTrue(r["feedback"])
            self.assertEqual(r["messages"][-1], {"role": "user", "content": r["feedback"]})

    def test_rank_advantage_is_what_the_programs_give_in_a_shell(self):
        recs = self.lp.evaluate(replay("gelu") + replay("softmax"))
        got = self.lp.rank_advantage(recs)
        path = os.path.join(self.tmp, "in.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in recs)
        sh = subprocess.run(f"'{ROOT}/bin/leap-rank' < '{path}' | '{ROOT}/bin/leap-advantage'", shell=True,
                            capture_output=True, text=True, check=True)
        want = [json.loads(line) for line in sh.stdout.splitlines()]
        self.assertEqual([(r["group"], r["sample"], r["advantage"]) for r in got],
                         [(r["group"], r["sample"], r["advantage"]) for r in want])

    def test_rank_batch_answers_rows_in_batch_order(self):
        recs = replay("softmax")
        shuffled = recs[5:] + recs[:5]
        out = rank_batch(self.lp, shuffled)
        self.assertEqual([r["sample"] for r in out], [r["sample"] for r in shuffled])
        scores = {r["sample"]: r["rank"]["score"] for r in out}
        self.assertAlmostEqual(sum(scores.values()), 0.0, places=9)  # zero-sum in a group
        solved = {r["sample"] for r in out if r["status"] == "pass"}
        for s, v in scores.items():
            self.assertEqual(v > 0, s in solved)

    def test_number_samples(self):
        self.assertEqual(number_samples(["a", "a", "b", "a", "b"]),
                         [("a", 0), ("a", 1), ("b", 0), ("a", 2), ("b", 1)])


CAN_BUILD = ("import setuptools, sys\n"
             "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2])\n"
             "if v < (70, 1): import wheel  # bdist_wheel moved into setuptools in 70.1\n")


def builder_python():
    """A python that can build the package offline (setuptools, and wheel before setuptools 70.1)."""
    for py in dict.fromkeys([sys.executable, shutil.which("python3"), "/usr/bin/python3"]):
        if py and subprocess.run([py, "-c", CAN_BUILD], capture_output=True).returncode == 0:
            return py
    return None


class TestInstall(unittest.TestCase):
    def test_pip_install_from_the_checkout(self):
        py = builder_python()
        if py is None:
            self.skipTest("no python3 here has setuptools and wheel (python3-setuptools, python3-wheel): "
                          "pip cannot build the package offline")
        tmp = tmpdir()
        venv = os.path.join(tmp, "venv")
        made = subprocess.run([py, "-m", "venv", "--system-site-packages", venv], capture_output=True, text=True)
        if made.returncode != 0:
            self.skipTest(f"{py} -m venv failed (python3-venv missing?): {made.stderr[-200:]}")
        vpy = os.path.join(venv, "bin", "python")
        src = os.path.join(tmp, "python")  # a copy: an in-tree build would leave build/ in the checkout
        shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("build", "*.egg-info"))
        subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", "--no-deps", src],
                       check=True, capture_output=True, cwd=tmp)
        code = ("import leap, sys; print(leap.__file__); "
                "print(leap.run([['leap-record']], [{'task': 'x'}], prefix=sys.argv[1])[0]['task'])")
        out = subprocess.run([vpy, "-c", code, ROOT], check=True, capture_output=True, text=True, cwd=tmp)
        where, task = out.stdout.split()
        self.assertTrue(where.startswith(venv), where)
        self.assertEqual(task, "x")
        version = subprocess.run([vpy, "-c", "import importlib.metadata as m; print(m.version('leap-filters'))"],
                                 check=True, capture_output=True, text=True, cwd=tmp).stdout.strip()
        self.assertEqual(version, leap.__version__)  # one place holds the version: leap/__init__.py


if __name__ == "__main__":
    unittest.main()
