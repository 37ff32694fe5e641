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

The C case's sizes become the module's: the one that takes the same value at the file's sizes
(by name among several), else the one of the same name; an element of a tuple of sizes the C
task does not name (bias_shape = (out_channels, 1, 1)) takes the value of a size it equals at
the file's sizes; any other size keeps the file's value. The C inputs go to the module's inputs
and state entries of the same element count, each such matching tried (a C task may call the
conv's bias `bias` and the module's own `bias2`); a training-mode BatchNorm's running buffers,
which change no output, take their initial values. Where no matching exists, or the module
fails at the sizes (a LayerNorm over a size the C task ties to another), the task is "not
comparable", said with why, and counted apart.
Level 1's 13-15 differ by design (BY_DESIGN: the C tasks read one triangle) and are counted
apart. Prints a line per task and a last line "agree: N tasks, A agree, D disagree, B differ by
design, C not comparable, M not imported"; exit 0 when none disagrees, 1 when one does, 77 when
torch cannot be imported.
"""

import argparse
import ctypes
import itertools
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


# Where a C task differs from its problem by design (tasks/kernelbench/README.md): counted
# apart, with the reason, when they disagree.
BY_DESIGN = {
    "kb1_013_symmetric_matmul": "takes A and B by their lower triangles (the module multiplies what it is given)",
    "kb1_014_upper_triangular_matmul": "leaves the other triangle unread (the module multiplies what it is given)",
    "kb1_015_lower_triangular_matmul": "leaves the other triangle unread (the module multiplies what it is given)",
}


def alike(a, b):
    return a == b or a == b + "_size" or b == a + "_size" or a.replace("_", "") == b.replace("_", "")


def size_map(ct, mt):
    """C size name -> module size name: one that takes the same value at the file's sizes
    (by name among those, else the first), else one of the same name."""
    mods = list(mt["bench"])
    got = {}
    for p in ct["params"]:
        s = p["name"]
        if "role" in p or p["type"] not in ("int", "int64"):
            continue
        free = [m for m in mods if m not in got.values()]
        vals = [m for m in free if mt["bench"][m] == ct["bench"].get(s)]
        pick = [m for m in vals if alike(m, s)] or vals or [m for m in free if alike(m, s)]
        if pick:
            got[s] = pick[0]
    return got


def module_values(ct, mt, smap, case, elems):
    """The module's sizes at a C case, each way to give an element of a tuple of sizes
    (`elems`) that no C size names the value of a size that has its value at the file's sizes
    (bias_shape = (out_channels, 1, 1): out_channels or another 128), then none: at most 32
    ways."""
    v = dict(mt["bench"])
    for s, m in smap.items():
        v[m] = case[s]
    named = set(smap.values())
    free = [m for m in v if m in elems and m not in named and any(mt["bench"][n] == mt["bench"][m] for n in named)]
    twins = [[n for n in smap.values() if mt["bench"][n] == mt["bench"][m]] for m in free]
    out = []
    for pick in itertools.islice(itertools.product(*twins), 32):
        w = dict(v)
        for m, n in zip(free, pick):
            w[m] = v[n]
        out.append(w)
    return out + [v] if free else [v]


# A training-mode BatchNorm's buffers, which no C task takes: they change no output.
UNREAD = {"running_mean": 0.0, "running_var": 1.0, "num_batches_tracked": 0}


def matchings(cin, mrows):
    """Each way of giving every C input a module input or state entry of the same element
    count (C's order kept where it is the module's; at most 120 ways), as lists of (C index or
    None, module row): a C task may name the conv's bias `bias` and the module's own `bias2`."""
    groups = {}
    for j, r in enumerate(mrows):
        groups.setdefault(r[1], []).append(j)
    cgroups = {}
    for i, c in enumerate(cin):
        cgroups.setdefault(c, []).append(i)
    options = []
    for n, cis in cgroups.items():
        mjs = groups.get(n, [])
        if len(mjs) < len(cis):
            return []
        options.append([(cis, perm) for perm in itertools.permutations(mjs, len(cis))])
    ways = []
    for combo in itertools.product(*options):
        if len(ways) == 120:
            break
        m = {}
        for cis, perm in combo:
            m.update(zip(perm, cis))
        if all(j in m or any(mrows[j][0].endswith(u) for u in UNREAD) for j in range(len(mrows))):
            ways.append(m)
    ways.sort(key=lambda m: sum(1 for j, i in m.items() if j != i))
    return ways


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


def module_rows(mod, consts, v):
    """(name, elements, is_out) of every buffer of the module at sizes v (its real shapes, not
    the task's expressions: a size the import never drew, such as in_channels = 3, is a literal
    there)."""
    v = {k: v[k] for k in consts}  # a float the forward takes is no size
    try:
        model, inputs, outs = torchref.shapes(mod, v, "meta")
    except torchref.Refused:
        raise
    except Exception:  # an operator without a meta kernel
        model, inputs, outs = torchref.shapes(mod, v)
    return [(r[0], r[3].numel(), r[1] == "out") for r in torchref.layout(mod, model, inputs, outs, consts)
            if r[1] not in ("size", "scalar")]


def check_case(lib, ct, mt, mod, consts, smap, case, k, models):
    """None when the C reference and the module agree at this case (under some matching of
    their buffers), else why (with a 'not comparable: ' prefix where the two do not take the
    same buffers)."""
    cin = [p for p in ct["params"] if p.get("role") == "in"]
    cout = [p for p in ct["params"] if p.get("role") == "out"]
    cc, co = counts(cin, case), counts(cout, case)
    tries = module_values(ct, mt, smap, case, {k for k in consts if not hasattr(mod, k)})
    for t, v in enumerate(tries):
        try:
            rows = module_rows(mod, consts, v)
        except torchref.Refused:
            raise
        except Exception:
            if t + 1 < len(tries):
                continue
            raise
        mins, mouts = [r for r in rows if not r[2]], [r for r in rows if r[2]]
        ways = matchings(cc, mins)
        if ways and co == [r[1] for r in mouts]:
            break
    if not ways or co != [r[1] for r in mouts]:
        return "not comparable: C buffers %s, module buffers %s (elements at this case)" % (
            list(zip([p["name"] for p in cin + cout], cc + co)), [r[:2] for r in rows])
    mparams = {p["name"]: p for p in mt["params"]}
    ins = draw_inputs(ct, case, k)
    got = run_c(lib, ct, case, ins)
    why = None
    for way in ways:
        blobs = []
        for j, r in enumerate(mins):
            ty = torchref.DTYPES[mparams[r[0]]["type"]]
            if j in way:
                blobs.append(ins[way[j]].to(ty).clone())  # forward may change its inputs
            else:
                fill = next(x for u, x in UNREAD.items() if r[0].endswith(u))
                blobs.append(torch.full((r[1],), fill, dtype=ty))
        res = torchref.answer(mod, consts, mt, v, [r[1] for r in rows], blobs + [None] * len(mouts), models)
        why = compare(ct, cout, got, res)
        if not why:
            return None
    return why


def compare(ct, cout, got, res):
    for p, c, r in zip(cout, got, res):
        m = r.reshape(-1).to(torch.float64)
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
            why = check_case(lib, ct, mt, mod, consts, smap, case, k, models)
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
    n = {"agree": 0, "disagree": 0, "by design": 0, "not comparable": 0, "not imported": 0}
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
                kind = "agree" if not why else "not comparable" if "not comparable" in why else \
                    "by design" if tid in BY_DESIGN else "disagree"
                if kind == "by design":
                    why = "%s (by design: the C task %s)" % (why, BY_DESIGN[tid])
                n[kind] += 1
                print("%s %s%s" % ({"agree": "ok  ", "disagree": "FAIL", "by design": "diff", "not comparable": "n/c "}[kind],
                                   tid, ": " + why if why else ""))
                sys.stdout.flush()
    print("agree: %d tasks, %d agree, %d disagree, %d differ by design, %d not comparable, %d not imported" % (
        sum(n.values()), n["agree"], n["disagree"], n["by design"], n["not comparable"], n["not imported"]))
    return 1 if n["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
