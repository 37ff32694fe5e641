#!/usr/bin/env python3
"""ref-prune.py - leap-prune --annotate (DCP with the default thresholds) in plain Python (stdlib only), for comparison.

The paper's gate: easy when n_fail < 50% of the group, hopeless when n_fail > G - 1, taken once:
a record carrying `dcp` (leap-prune's next-turn records) follows that verdict.

usage: ref-prune.py -g G [FILE]   every record written with its prune decision, group by group."""
import argparse
import sys

from peers_common import splice, stream_groups, turn_of

VERDICTS = ("easy", "hopeless", "expand")


def carried(recs):
    """The dcp gate of the first record carrying one: (verdict, turn, n_fail, group_size), the
    numbers 0 where absent or out of range, or None."""
    def num(d, k, lo):
        v = d.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= 0x7fffffff else 0
    for _, r in recs:
        d = r.get("dcp")
        if isinstance(d, dict) and d.get("verdict") in VERDICTS:
            return d["verdict"], num(d, "turn", 1), num(d, "n_fail", 0), num(d, "group_size", 0)
    return None


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
        gate = carried(recs)
        if gate:
            verdict, gate_turn, gate_fail, gate_n = gate
        else:
            gate_turn, gate_fail, gate_n = turn_of(recs[0][1]), n_fail, n
            if n_fail < a.easy_below * n:
                verdict = "easy"
            elif n_fail > n - 1:
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
            w(splice(line, "prune", {"decision": decision, "reason": reason, "verdict": verdict, "n_fail": gate_fail,
                                     "group_size": gate_n, "turn": t, "complete": complete, "gate_turn": gate_turn,
                                     "turn_fail": n_fail, "turn_records": n}))
            w("\n")


if __name__ == "__main__":
    main()
