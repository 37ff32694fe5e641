#!/usr/bin/env python3
"""ref-advantage.py - leap-advantage's estimators rank, grpo and kevin in plain Python (stdlib only), for comparison.

usage: ref-advantage.py [-e rank|grpo|kevin] [-r field|binary|kevin] [-g G] [FILE]
  rank: record by record. grpo, kevin: group by group with -g G, else two passes over FILE
  (the first keeps the reward of each record), every record in input order.
Every record gets "advantage" spliced onto its raw line."""
import argparse
import json
import math
import sys

from peers_common import is_final, group_key, sample_of, speedup_of, splice, stream_groups, turn_of

EPS = 1e-6  # verl's epsilon for a group's std


def reward(kind, r):
    if kind == "field":
        return float(r["reward"])
    p = 1.0 if r.get("status") == "pass" else 0.0
    if kind == "binary":
        return p
    return 0.3 * p + p * speedup_of(r)  # kevin (a speedup counts only when bench.status is ok)


def centre(x, scale):
    """leap_centre (mean baseline; a single value has none) and, for scale, division by
    std (n - 1) + 1e-6 (the std of a single value taken as 1, as verl)."""
    n = len(x)
    if n == 1:
        return [x[0] / (1 + EPS)] if scale else [x[0]]
    if all(v == x[0] for v in x):
        return [0.0] * n
    s = sum(x)
    y = [v - s / n for v in x]
    if scale:
        mean = s / n
        sd = math.sqrt(sum((v - mean) * (v - mean) for v in x) / (n - 1))
        y = [v / (sd + EPS) for v in y]
    return y


def group_adv(est, gamma, members):
    """members: [(sample or None, turn, reward)] in arrival order; returns an advantage per member."""
    n = len(members)
    tid = {}
    traj = []
    for i, (s, t, _) in enumerate(members):
        k = s if s is not None else -1 - i
        traj.append(tid.setdefault(k, len(tid)))
    order = sorted(range(n), key=lambda i: (traj[i], members[i][1], i))
    out = [0.0] * n
    if est == "grpo":
        last = {}
        for i in order:
            last[traj[i]] = members[i][2]
        x = [last[k] for k in range(len(tid))]
        y = centre(x, True)
        for i in range(n):
            out[i] = y[traj[i]]
        return out
    # kevin: discounted returns along each trajectory, normalised over all of them
    G = {}
    j = len(order)
    nxt = 0.0
    while j > 0:
        j -= 1
        i = order[j]
        if j + 1 == len(order) or traj[order[j + 1]] != traj[i]:
            nxt = 0.0
        G[i] = members[i][2] + gamma * nxt
        nxt = G[i]
    y = centre([G[i] for i in order], True)
    for i, v in zip(order, y):
        out[i] = v
    return out


def put(w, line, a):
    w(splice(line, "advantage", a if a != 0 else 0.0))
    w("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-e", "--estimator", choices=["rank", "grpo", "kevin"], default="rank")
    ap.add_argument("-r", "--reward", choices=["field", "binary", "kevin"], default="field")
    ap.add_argument("--gamma", type=float)
    ap.add_argument("-g", "--group-size", type=int, default=0)
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    gamma = a.gamma if a.gamma is not None else 0.4
    w = sys.stdout.write
    src = open(a.file, encoding="utf-8") if a.file else sys.stdin
    if a.estimator == "rank":
        for line in src:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            r = json.loads(line)
            rk = r["rank"]
            s, t = rk["score"], turn_of(r)
            k = (rk.get("turns") or t) - t
            put(w, line, s * gamma ** k if s > 0 and k > 0 else s)
        return
    if a.group_size:
        for recs, _ in stream_groups(src, lambda r: 1 if is_final(r) else 0, lambda r: 0, a.group_size):
            adv = group_adv(a.estimator, gamma,
                            [(sample_of(r), turn_of(r), reward(a.reward, r)) for _, r in recs])
            for (line, _), x in zip(recs, adv):
                put(w, line, x)
        return
    # two passes: the rewards, then every record in input order
    groups = {}
    where = []
    for line in src:
        if not line.strip():
            continue
        r = json.loads(line)
        g = groups.setdefault(group_key(r), [])
        where.append((group_key(r), len(g)))
        g.append((sample_of(r), turn_of(r), reward(a.reward, r)))
    adv = {g: group_adv(a.estimator, gamma, m) for g, m in groups.items()}
    src.seek(0)
    lines = (line.rstrip("\n") for line in src if line.strip())
    for line, (g, i) in zip(lines, where):
        put(w, line, adv[g][i])


if __name__ == "__main__":
    main()
