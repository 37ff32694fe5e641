#!/usr/bin/env python3
"""ref-rank.py - leap-rank's default key (turn: gold > silver > time-out) in plain Python (stdlib only), for comparison.

usage: ref-rank.py -g G [FILE]   group by group, as soon as G trajectories of a group have ended
       ref-rank.py FILE          two passes over the file: summaries first, then every record in
                                 input order (memory: a summary per trajectory, as leap-rank)
       ref-rank.py < FILE        (stdin, no -g) every record held, written in input order
Every record gets "rank" spliced onto its raw line."""
import argparse
import json
import sys

from peers_common import is_final, group_key, sample_of, speedup_of, splice, stream_groups, turn_of


class Traj:
    __slots__ = ("solved", "sp", "tok", "turns", "final", "w", "l", "t", "score")

    def __init__(self):
        self.solved = 0
        self.sp = 0.0
        self.tok = 0  # None once a record lacks tokens
        self.turns = 0
        self.final = False
        self.w = self.l = self.t = 0
        self.score = 0.0

    def add(self, r):
        t = turn_of(r)
        if r.get("status") == "pass" and (self.solved == 0 or t < self.solved):
            self.solved = t
            self.sp = speedup_of(r)
        tok = r.get("tokens")
        if self.tok is not None and isinstance(tok, int) and not isinstance(tok, bool) and tok >= 0:
            self.tok += tok
        else:
            self.tok = None
        self.turns = max(self.turns, t)
        self.final = self.final or is_final(r)


def cmp(a, b):
    """The default key, turn: solved earlier beats solved later beats unsolved."""
    if a.solved != b.solved:
        if not a.solved:
            return -1
        if not b.solved:
            return 1
        return 1 if a.solved < b.solved else -1
    return 0


def tournament(v):
    n = len(v)
    for i in range(n):
        for j in range(i + 1, n):
            c = cmp(v[i], v[j])
            if c > 0:
                v[i].w += 1
                v[j].l += 1
            elif c < 0:
                v[j].w += 1
                v[i].l += 1
            else:
                v[i].t += 1
                v[j].t += 1
    for x in v:
        x.score = (x.w - x.l) / (n - 1) if n > 1 else 0.0


def rank_obj(x, n, complete):
    return {"wins": x.w, "losses": x.l, "ties": x.t, "score": x.score, "group_size": n, "turns": x.turns,
            "complete": complete}


def traj_id(r, seq):
    s = sample_of(r)
    return s if s is not None else -1 - seq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-g", "--group-size", type=int, default=0)
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    w = sys.stdout.write
    if a.group_size:
        src = open(a.file, encoding="utf-8") if a.file else sys.stdin
        for recs, complete in stream_groups(src, lambda r: 1 if is_final(r) else 0, lambda r: 0, a.group_size):
            ts = {}
            ids = []
            for i, (line, r) in enumerate(recs):
                k = traj_id(r, i)
                ids.append(k)
                ts.setdefault(k, Traj()).add(r)
            v = list(ts.values())
            tournament(v)
            ok = complete and all(x.final for x in v)
            for (line, r), k in zip(recs, ids):
                w(splice(line, "rank", rank_obj(ts[k], len(v), ok)))
                w("\n")
        return
    # input order: two passes over a file, or stdin held
    if a.file:
        def read():
            with open(a.file, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        yield line.rstrip("\n"), None
    else:
        held = [line.rstrip("\n") for line in sys.stdin if line.strip()]
        def read():
            for line in held:
                yield line, None
    groups = {}
    keys = []  # per record: (group, trajectory id)
    for seq, (line, _) in enumerate(read()):
        r = json.loads(line)
        g = group_key(r)
        k = traj_id(r, seq)
        groups.setdefault(g, {}).setdefault(k, Traj()).add(r)
        keys.append((g, k))
    done = {}
    for g, ts in groups.items():
        v = list(ts.values())
        tournament(v)
        done[g] = (len(v), all(x.final for x in v))
    for (line, _), (g, k) in zip(read(), keys):
        n, ok = done[g]
        w(splice(line, "rank", rank_obj(groups[g][k], n, ok)))
        w("\n")


if __name__ == "__main__":
    main()
