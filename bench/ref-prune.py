#!/usr/bin/env python3
"""ref-prune.py - leap-prune --annotate (DCP with the default thresholds) in plain Python (stdlib only), for comparison.

usage: ref-prune.py -g G [FILE]   every record written with its prune decision, group by group."""
import argparse
import sys

from peers_common import splice, stream_groups, turn_of

CATASTROPHIC = ("no_code", "compile_error")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-g", "--group-size", type=int, default=0)
    ap.add_argument("--easy-below", type=float, default=0.5, help="a fraction of the group")
    ap.add_argument("--max-turns", type=int, default=3)
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    src = open(a.file, encoding="utf-8") if a.file else sys.stdin
    w = sys.stdout.write
    want = lambda r: r["group_size"] if isinstance(r.get("group_size"), int) and r["group_size"] > 0 else 0
    for recs, complete in stream_groups(src, lambda r: 1, want, a.group_size):
        n = len(recs)
        n_fail = sum(1 for _, r in recs if r.get("status") != "pass")
        n_cat = sum(1 for _, r in recs if r.get("status") in CATASTROPHIC)
        if n_fail < a.easy_below * n:
            verdict = "easy"
        elif n_fail > n or (n > 0 and n_cat == n):
            verdict = "hopeless"
        else:
            verdict = "expand"
        for line, r in recs:
            t = turn_of(r)
            if verdict != "expand":
                reason, decision = verdict, "final"
            elif r.get("status") == "pass":
                reason, decision = "solved", "final"
            elif t >= a.max_turns:
                reason, decision = "max_turns", "final"
            else:
                reason, decision = "failed", "expand"
            w(splice(line, "prune", {"decision": decision, "reason": reason, "verdict": verdict, "n_fail": n_fail,
                                     "group_size": n, "turn": t, "complete": complete}))
            w("\n")


if __name__ == "__main__":
    main()
