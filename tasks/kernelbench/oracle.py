#!/usr/bin/env python3
"""oracle.py - checks every KernelBench task's reference.c against PyTorch's own CPU operators.

usage: PYTHON tasks/kernelbench/oracle.py [--only ID_PREFIX]... [--tasks ROOT]
  (PYTHON: a python3 with torch; the tests take it from $LEAP_TORCH_PYTHON)

The references were written here, from the problems' files; the oracle is code no one here
wrote. For every task of tests/fixtures/kernelbench/torch.jsonl (the torch expression of each
task's operator sequence, written by tasks/kernelbench/gen.py beside the C) and every listed case of
its task.json, it draws the inputs (float32, each buffer with one of the patterns its task
allows, turn by turn), runs reference.c (built with cc, called through ctypes) and the torch
code in float64 on the same values, and requires

    |reference - torch| <= 2e-6 * |torch| + 1e-9 * max|torch|   for every output element

(the reference computes in double and rounds once to float, 6e-8 relative; the rest is room
for the summation order of two double computations), and integer outputs (indices) equal.
--tasks: the task root holding the suites (default tasks/). Prints one line per task and a last
line "oracle: N tasks, N passed, N failed"; exit 0 when all
passed, 1 when one failed, 2 on a usage or build error, 77 when torch cannot be imported.
"""

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile

import warnings

warnings.filterwarnings("ignore", message=".*NumPy.*")  # torch without numpy: nothing here needs it
try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # the caller skips, with this reason
    print("oracle: torch cannot be imported (%s)" % e, file=sys.stderr)
    sys.exit(77)

torch.set_num_threads(1)

TABLE = "tests/fixtures/kernelbench/torch.jsonl"
RTOL, ATOL_SCALE = 2e-6, 1e-9
CTYPES = {"float": ctypes.c_float, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "int": ctypes.c_int}
TDTYPE = {"float": torch.float32, "int64": torch.int64, "uint8": torch.uint8}


def draw(dist, n, g):
    """n float32 values of leap's input pattern `dist` (task.h), from generator g."""
    if dist == "uniform":
        v = torch.rand(n, generator=g, dtype=torch.float64) * 2 - 1
    elif dist == "small":
        v = torch.randn(n, generator=g, dtype=torch.float64) * 1e-3
    elif dist == "large":
        v = torch.randn(n, generator=g, dtype=torch.float64) * 1e3
    elif dist == "sparse":
        v = torch.randn(n, generator=g, dtype=torch.float64)
        v[torch.rand(n, generator=g, dtype=torch.float64) < 0.9] = 0
    elif dist == "positive":
        v = 0.1 + 9.9 * torch.rand(n, generator=g, dtype=torch.float64)
    elif dist == "logits":
        v = torch.randn(n, generator=g, dtype=torch.float64) * 3
    elif dist == "near_one":
        v = 1 + torch.randn(n, generator=g, dtype=torch.float64) * 1e-2
    else:
        v = torch.randn(n, generator=g, dtype=torch.float64)
    return v.to(torch.float32)


def evaluate(expr, case):
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, dict(case)))


def build(task_dir, work):
    so = os.path.join(work, os.path.basename(task_dir) + ".so")
    subprocess.run(["cc", "-std=c11", "-O2", "-shared", "-fPIC", "-o", so, os.path.join(task_dir, "reference.c"), "-lm"],
                   check=True)
    return ctypes.CDLL(so)


def check_case(ent, tj, lib, case, k):
    g = torch.Generator().manual_seed(1000 * k + 17)
    ins, args, ns = {}, [], {"torch": torch, "F": F, "math": math}
    ns.update(case)
    params = {p["name"]: p for p in tj["params"]}
    for i, spec in enumerate(ent["inputs"]):
        shape = [evaluate(d, case) for d in spec["shape"]]
        n = 1
        for s in shape:
            n *= s
        p = params[spec["name"]]
        if spec["dtype"] == "float":
            dists = p.get("dist", ["normal", "uniform", "small", "large", "sparse"])
            v = draw(dists[(k + i) % len(dists)], n, g)
        else:
            lo, hi = p.get("range", [-1000, 1000] if spec["dtype"] != "uint8" else [0, 255])
            v = torch.randint(lo, hi + 1, (n,), generator=g).to(TDTYPE[spec["dtype"]])
        ins[spec["name"]] = v
        ns[spec["name"]] = (v.to(torch.float64) if spec["dtype"] == "float" else v).reshape(shape)
    out = ent["out"]
    on = 1
    oshape = [evaluate(d, case) for d in out["shape"]]
    for s in oshape:
        on *= s
    y = torch.full((on,), float("nan")) if out["dtype"] == "float" else torch.full((on,), -7, dtype=torch.int64)
    for p in tj["params"]:
        if "role" in p:
            t = y if p["role"] == "out" else ins[p["name"]]
            args.append(ctypes.cast(t.data_ptr(), ctypes.c_void_p))
        else:
            args.append(CTYPES[p["type"]](case[p["name"]]))
    getattr(lib, tj["entry"])(*args)
    exec("\n".join(ent["torch"]), ns)
    want = ns[out["name"]]
    if tuple(want.shape) != tuple(oshape) and want.numel() != on:
        return "torch's output has shape %s, the task says %s" % (list(want.shape), oshape)
    want = want.reshape(-1)
    if out["dtype"] != "float":
        bad = (want.to(torch.int64) != y).nonzero()
        return "index %d: reference %d, torch %d" % (bad[0], y[bad[0]], want[bad[0]]) if len(bad) else None
    want = want.to(torch.float64)
    got = y.to(torch.float64)
    if not torch.isfinite(want).all():
        return "torch's output is not finite"
    scale = want.abs().max().item()
    err = (got - want).abs()
    tol = RTOL * want.abs() + ATOL_SCALE * max(scale, 1e-30)
    bad = (~(err <= tol)).nonzero()
    if len(bad):
        j = bad[0].item()
        return "element %d: reference %.9g, torch %.9g (|diff| %.3g > %.3g)" % (j, got[j], want[j], err[j], tol[j])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--tasks", default="tasks")
    a = ap.parse_args()
    ents = [json.loads(l) for l in open(TABLE)]
    if a.only:
        ents = [e for e in ents if any(e["id"].startswith(p) for p in a.only)]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        for ent in ents:
            tdir = os.path.join(a.tasks, ent["suite"], ent["id"])
            tj = json.load(open(os.path.join(tdir, "task.json")))
            try:
                lib = build(tdir, work)
            except subprocess.CalledProcessError:
                print("oracle: %s: reference.c does not build" % ent["id"], file=sys.stderr)
                return 2
            why = None
            for k, case in enumerate(tj["cases"]):
                try:
                    why = check_case(ent, tj, lib, case, k)
                except Exception as e:  # torch rejected the expression or the shapes
                    why = "torch raised %s: %s" % (type(e).__name__, e)
                if why:
                    why = "case %d %s: %s" % (k, json.dumps(case, separators=(",", ":")), why)
                    break
            if why:
                failed += 1
                print("FAIL %s: %s" % (ent["id"], why))
            else:
                passed += 1
                print("ok   %s (%d cases)" % (ent["id"], len(tj["cases"])))
    print("oracle: %d tasks, %d passed, %d failed" % (passed + failed, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
