#!/usr/bin/env python3
"""gen.py - writes the KernelBench suites (tasks/kernelbench-l1, tasks/kernelbench-l2), their
fixture solutions (tests/fixtures/tasks/kernelbench-l*/) and the torch oracle's table
(tests/fixtures/kernelbench/torch.jsonl) from the problem specs of tasks/kernelbench/level1.py and
level2.py.

usage: python3 tasks/kernelbench/gen.py [--check] [--only ID_OR_PREFIX]...
  --check   write nothing; exit 1 naming every generated file that differs from the tree (or
            is missing, or is in a suite folder but no longer generated)
  --only    write (or check) only the tasks whose id starts with one of the prefixes
Run from the repository root. The generated files are committed: the suites are plain leap
tasks, read by the same loader as every other, and this script is how they are kept in step.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import level1  # noqa: E402
import level2  # noqa: E402

ORACLE = "tests/fixtures/kernelbench/torch.jsonl"


def all_tasks():
    ts = level1.tasks() + level2.tasks()
    ids = [t.id for t in ts]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit("gen.py: duplicate ids: %s" % ", ".join(sorted(dup)))
    return ts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", action="append", default=[])
    a = ap.parse_args()
    tasks = all_tasks()
    want = {}
    for t in tasks:
        if a.only and not any(t.id.startswith(p) for p in a.only):
            continue
        want.update(t.files())
    if not a.only:
        want[ORACLE] = "".join(json.dumps(t.oracle_entry(), sort_keys=True) + "\n" for t in tasks)
    bad = []
    for path, text in sorted(want.items()):
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if a.check:
            bad.append(path + (" (missing)" if old is None else " (differs)"))
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    if not a.only:
        # a task folder no spec makes any more
        made = {t.id for t in tasks}
        for suite in ("tasks/kernelbench-l1", "tasks/kernelbench-l2"):
            if os.path.isdir(suite):
                for d in sorted(os.listdir(suite)):
                    if d not in made:
                        bad.append("%s/%s (not generated)" % (suite, d))
    if bad:
        print("gen.py: %d generated file%s out of step (run python3 tasks/kernelbench/gen.py):" % (
            len(bad), "" if len(bad) == 1 else "s"), file=sys.stderr)
        for b in bad:
            print("  " + b, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
