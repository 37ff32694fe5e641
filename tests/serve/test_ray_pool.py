"""test_ray_pool.py - leap.ray_pool on a local Ray cluster (ray.init(num_cpus=2)): two actors,
each with its own leap-serve; every group to one server, answers in input order, turns decided
per group. Run by tests/serve.bats with the environment of tests/serve/venv.sh."""

import os
import re
import sys

import ray

import leap
from leap.ray_pool import LeapPool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures", "leap-serve")


def code(name):
    with open(os.path.join(FIX, name + ".c")) as f:
        return "```c\n" + f.read() + "```"


def main():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.path.join(ROOT, "python"), "LEAP_PREFIX": ROOT,
                                       "LEAP_TASKS": os.path.join(ROOT, "tasks"),
                                       "LEAP_CACHE": os.environ.get("LEAP_CACHE", "")}})
    pool = LeapPool(num_servers=2, server_args=["--backend", "cpu", "--no-bench"], prefix=ROOT)
    try:
        assert len(set(pool.urls)) == 2, pool.urls
        records = []
        for g in range(6):
            for s in range(3):
                records.append({"task": "vector_add", "group": f"grp{g}", "sample": s, "turn": 1, "backend": "cpu",
                                "completion": code("correct" if s == 0 else "wrong"), "mine": [g, s]})
        out = pool.evaluate(records, errors="keep")
        assert [r["mine"] for r in out] == [r["mine"] for r in records], "not in input order"
        assert [r["status"] for r in out] == ["pass" if r["sample"] == 0 else "mismatch" for r in records]
        # every group went whole to the server its key routes to: each server counted exactly
        # the records of its groups
        want = [0, 0]
        for r in records:
            want[pool.route(r)] += 1
        assert 0 not in want, f"the six groups all went to one server: {want}"
        got = []
        for text in pool.metrics():
            n = sum(int(v) for v in re.findall(r'^leap_serve_records_total\{status="[a-z_]+"\} (\d+)$', text, re.M))
            got.append(n)
        assert got == want, (got, want)
        streamed = list(pool.evaluate_stream(records, errors="keep"))
        assert sorted(r["mine"] for r in streamed) == sorted(r["mine"] for r in records)
        turn = pool.turn(out, group_size=3, errors="keep")
        assert len(turn.done) == 18, turn
        decisions = {(r["group"], r["sample"]): r["prune"]["decision"] for r in turn.done}
        assert all(decisions[(f"grp{g}", 0)] == "final" for g in range(6)), decisions
        assert all(decisions[(f"grp{g}", s)] == "expand" for g in range(6) for s in (1, 2)), decisions
        assert sorted((r["group"], r["sample"], r["turn"]) for r in turn.next) == \
            sorted((f"grp{g}", s, 2) for g in range(6) for s in (1, 2))
        # the same calls as the local pipeline give the same verdicts
        local = leap.Leap(ROOT, backend="cpu", bench=False).evaluate(records, errors="keep")
        assert [r["status"] for r in local] == [r["status"] for r in out]
    finally:
        pool.close()
        ray.shutdown()
    print("ok")


if __name__ == "__main__":
    sys.exit(main())
