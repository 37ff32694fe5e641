#!/usr/bin/env python3
"""agree.py - checks that KernelBench's modules, imported as module tasks, agree with the C tasks.

usage: PYTHON tasks/kernelbench/agree.py --modules DIR... [--only ID_PREFIX]... [--tasks ROOT]
  (PYTHON: a python3 with torch; DIR: a suite `leap-task --import DIR KernelBench/levelN` made;
  --modules may be given once per level)

tasks/kernelbench-l1 and -l2 were written by hand from KernelBench's files (gen.py); an import
derives its task from the same file by torch alone. Two readings of one problem should compute
one thing: for every C task whose KernelBench file (its third tag) was imported into DIR, and
every listed case of the C task, this draws the C task's inputs (oracle.py's patterns), runs
reference.c (cc, ctypes) and the module as leap's reference process does (runner/torchref.py's
`answer`, float64, rounded once) on the same values, and requires every output element within
the C task's tolerance, |c - m| <= atol + rtol |m|.

The C case's sizes become the module's by name (batch_size is batch_size), else by the value
both take at the file's sizes; a module size the C task fixes keeps the file's value. Where the
buffers then differ in number or element count (the C task takes a weight transposed, or a
size the module keeps), the task is "not comparable", said with why, and counted apart.
Prints a line per task and a last line "agree: N tasks, A agree, D disagree, C not comparable,
M not imported"; exit 0 when none disagrees, 1 when one does, 77 when torch cannot be imported.
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

import oracle  # noqa: E402  (exits 77 without torch)
import torchref  # noqa: E402

torch = oracle.torch
torchref.load_torch()


def size_map(ct, mt):
    """C size name -> module size name, by name, else by the value at the file's sizes."""
    mods = list(mt["bench"])
    got = {}
    for p in ct["params"]:
        s = p["name"]
        if "role" in p or p["type"] not in ("int", "int64"):
            continue
        free = [m for m in mods if m not in got.values()]
        names = [m for m in free if m == s or m == s + "_size" or m.replace("_", "") == s.replace("_", "")]
        vals = [m for m in free if mt["bench"][m] == ct["bench"].get(s)]
        if names or vals:
            got[s] = (names or vals)[0]
    return got


def module_values(ct, mt, smap, case):
    v = dict(mt["bench"])
    for s, m in smap.items():
        v[m] = case[s]
    return v


def counts(params, values):
    return [oracle.evaluate(p["size"], values) for p in params if "role" in p]


def draw_inputs(ct, case, k):
    g = torch.Generator().manual_seed(1000 * k + 29)
    ins = []
    for i, p in enumerate(p for p in ct["params"] if p.get("role") == "in"):
        n = oracle.evaluate(p["size"], case)
        if p["type"] == "float":
            dists = p.get("dist", ["normal"])
            ins.append(oracle.draw(dists[(k + i) % len(dists)], n, g))
        else:
            lo, hi = p.get("range", [0, 1])
            ins.append(torch.randint(lo, hi + 1, (n,), generator=g).to(oracle.TDTYPE[p["type"]]))
    return ins


def run_c(lib, ct, case, ins):
    outs, args, it = [], [], iter(ins)
    for p in ct["params"]:
        if p.get("role") == "out":
            n = oracle.evaluate(p["size"], case)
            outs.append(torch.full((n,), float("nan")) if p["type"] == "float" else torch.full((n,), -7, dtype=torch.int64))
            args.append(ctypes.cast(outs[-1].data_ptr(), ctypes.c_void_p))
        elif "role" in p:
            args.append(ctypes.cast(next(it).data_ptr(), ctypes.c_void_p))
        else:
            args.append(oracle.CTYPES[p["type"]](case[p["name"]]))
    getattr(lib, ct["entry"])(*args)
    return outs


def check_case(lib, ct, mt, mdir, mod, consts, smap, case, k, models):
    """None when the C reference and the module agree at this case, else why (with a
    'not comparable: ' prefix where the two do not take the same buffers)."""
    v = module_values(ct, mt, smap, case)
    cin = [p for p in ct["params"] if p.get("role") == "in"]
    cout = [p for p in ct["params"] if p.get("role") == "out"]
    min_ = [p for p in mt["params"] if p.get("role") == "in"]
    mout = [p for p in mt["params"] if p.get("role") == "out"]
    cc, mc = counts(cin + cout, case), counts(min_ + mout, v)
    if len(cin) != len(min_) or len(cout) != len(mout) or cc != mc:
        return "not comparable: C buffers %s, module buffers %s (elements at this case)" % (
            list(zip([p["name"] for p in cin + cout], cc)), list(zip([p["name"] for p in min_ + mout], mc)))
    if any(a["type"] != b["type"] for a, b in zip(cin + cout, min_ + mout)):
        return "not comparable: the buffers' types differ"
    ins = draw_inputs(ct, case, k)
    got = run_c(lib, ct, case, ins)
    blobs = [x.numpy().tobytes() for x in ins] + [None] * len(mout)
    res = torchref.answer(mod, consts, mt, {m: v[m] for m in v}, counts(mt["params"], v), blobs, models)
    for p, c, r in zip(cout, got, res):
        m = torch.frombuffer(bytearray(r), dtype=torchref.DTYPES[p["type"]]).to(torch.float64)
        c = c.to(torch.float64)
        both_nan = torch.isnan(c) & torch.isnan(m)
        bad = (~((c - m).abs() <= ct["atol"] + ct["rtol"] * m.abs()) & ~both_nan).nonzero()
        if len(bad):
            j = bad[0].item()
            return "%s[%d]: C %.9g, module %.9g (%d of %d elements off)" % (p["name"], j, c[j], m[j], len(bad), c.numel())
    return None


def check_task(tdir, mdir, work):
    ct = json.load(open(os.path.join(tdir, "task.json")))
    mt = json.load(open(os.path.join(mdir, "task.json")))
    mod = torchref.load(os.path.join(mdir, mt["module"]), "kb_" + os.path.basename(mdir).replace(".", "_"))
    consts = torchref.constants(mod)
    lib = oracle.build(tdir, work)
    smap, models = size_map(ct, mt), {}
    for k, case in enumerate(ct["cases"]):
        try:
            why = check_case(lib, ct, mt, mdir, mod, consts, smap, case, k, models)
        except Exception as e:  # the module at the C case's sizes
            why = "not comparable: the module fails at the C case's sizes: %s: %s" % (type(e).__name__, e)
        if why:
            return "case %d %s: %s" % (k, json.dumps(case, separators=(",", ":")), why)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", action="append", required=True)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--tasks", default="tasks")
    a = ap.parse_args()
    torch.set_num_threads(1)
    n = {"agree": 0, "disagree": 0, "not comparable": 0, "not imported": 0}
    with tempfile.TemporaryDirectory() as work:
        for suite in ("kernelbench-l1", "kernelbench-l2"):
            for tid in sorted(os.listdir(os.path.join(a.tasks, suite))):
                if a.only and not any(tid.startswith(p) for p in a.only):
                    continue
                tdir = os.path.join(a.tasks, suite, tid)
                kb = json.load(open(os.path.join(tdir, "task.json")))["tags"][2]
                mdir = next((os.path.join(m, kb) for m in a.modules if os.path.exists(os.path.join(m, kb, "task.json"))),
                            None)
                if not mdir:
                    n["not imported"] += 1
                    print("skip %s: %s not imported" % (tid, kb))
                    continue
                why = check_task(tdir, mdir, work)
                kind = "agree" if not why else "not comparable" if "not comparable" in why else "disagree"
                n[kind] += 1
                print("%s %s%s" % ({"agree": "ok  ", "disagree": "FAIL", "not comparable": "n/c "}[kind], tid,
                                   ": " + why if why else ""))
                sys.stdout.flush()
    print("agree: %d tasks, %d agree, %d disagree, %d not comparable, %d not imported" % (
        sum(n.values()), n["agree"], n["disagree"], n["not comparable"], n["not imported"]))
    return 1 if n["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
