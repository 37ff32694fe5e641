#!/usr/bin/env python3
"""ref-rank.py - leap-rank's default key (turn, speed 2%, tokens) in plain Python (stdlib only), for comparison.

Reads JSON Lines on stdin, holds them all, writes each with "rank" spliced in (input order)."""
import json
import sys
from collections import OrderedDict

groups = OrderedDict()
lines = []
for line in sys.stdin:
    line = line.rstrip("\n")
    r = json.loads(line)
    g = r.get("group", r.get("task"))
    tr = groups.setdefault(g, OrderedDict()).setdefault(r.get("sample"), {"solved": 0, "sp": 0.0, "tok": 0, "hastok": True, "turns": 0})
    st = r.get("status"); t = r.get("turn", 1)
    if st == "pass" and (tr["solved"] == 0 or t < tr["solved"]):
        tr["solved"] = t; tr["sp"] = (r.get("bench") or {}).get("speedup", 0) or 0
    if isinstance(r.get("tokens"), int): tr["tok"] += r["tokens"]
    else: tr["hastok"] = False
    tr["turns"] = max(tr["turns"], t)
    lines.append((g, r.get("sample"), line))
def cmp(a, b, m=0.02):
    if a["solved"] != b["solved"]:
        if not a["solved"]: return -1
        if not b["solved"]: return 1
        return 1 if a["solved"] < b["solved"] else -1
    if a["solved"] and b["solved"]:
        if a["sp"] > 0 and b["sp"] > 0:
            if a["sp"] > (1 + m) * b["sp"]: return 1
            if b["sp"] > (1 + m) * a["sp"]: return -1
        if a["hastok"] and b["hastok"] and a["tok"] != b["tok"]:
            return 1 if a["tok"] < b["tok"] else -1
    return 0
for g, ts in groups.items():
    v = list(ts.values()); n = len(v)
    for x in v: x["w"] = x["l"] = x["t"] = 0
    for i in range(n):
        for j in range(i + 1, n):
            c = cmp(v[i], v[j])
            if c > 0: v[i]["w"] += 1; v[j]["l"] += 1
            elif c < 0: v[j]["w"] += 1; v[i]["l"] += 1
            else: v[i]["t"] += 1; v[j]["t"] += 1
    for x in v: x["score"] = (x["w"] - x["l"]) / (n - 1) if n > 1 else 0.0
out = sys.stdout
for g, s, line in lines:
    x = groups[g][s]
    out.write(line[:-1] + ',"rank":' + json.dumps({"wins": x["w"], "losses": x["l"], "ties": x["t"], "score": x["score"], "group_size": len(groups[g]), "turns": x["turns"], "complete": True}, separators=(",", ":")) + "}\n")
