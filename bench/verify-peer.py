#!/usr/bin/env python3
"""verify-peer.py - the KernelBench pattern for one candidate: a fresh Python process loads it, makes inputs, runs, compares.

usage: verify-peer.py CANDIDATE.so REFERENCE.so [--floor]
The peer of leap-verify in bench/verify-overhead.sh, for the vector_add task on the cpu backend,
standard library only (numpy is not installed here): both shared objects export leap_entry (the
artifact ABI, lib/compile/abi.h). The same work as leap-verify: the task's 3 cases (n = 1, 1000, 65537),
3 trials each with rotating input patterns (normal, uniform, small), outputs poisoned with NaN
before each call, the reference's result, then every output element finite and within atol +
rtol * |want|, inputs unchanged. Prints one line: {"status", "run_ms"} (run_ms: the candidate's
own calls). --floor: only start, load, one call with n = 1000 (the least such a harness costs)."""
import ctypes
import json
import math
import random
import sys
import time

ATOL = RTOL = 1e-6
CASES = [1, 1000, 65537]
PATTERNS = ["normal", "uniform", "small"]


def inputs(rng, pattern, n):
    if pattern == "normal":
        return [rng.gauss(0.0, 1.0) for _ in range(n)]
    if pattern == "uniform":
        return [rng.uniform(-1.0, 1.0) for _ in range(n)]
    return [rng.uniform(-1e-3, 1e-3) for _ in range(n)]


def call(lib, a, b, c, n):
    args = (ctypes.c_void_p * 4)(ctypes.addressof(a), ctypes.addressof(b), ctypes.addressof(c),
                                 ctypes.addressof(n))
    if lib.leap_entry(args) != 0:
        raise RuntimeError("leap_entry failed")


def main():
    cand = ctypes.CDLL(sys.argv[1])
    ref = ctypes.CDLL(sys.argv[2])
    if cand.leap_abi_version() != 1:
        print(json.dumps({"status": "runtime_error", "message": "ABI"}))
        return
    run = 0.0
    if len(sys.argv) > 3 and sys.argv[3] == "--floor":
        n = 1000
        A = ctypes.c_float * n
        a, b, c = A(*range(n)), A(*range(n)), A()
        t0 = time.perf_counter()
        call(cand, a, b, c, ctypes.c_int(n))
        run = time.perf_counter() - t0
        print(json.dumps({"status": "pass" if c[n - 1] == 2 * (n - 1) else "mismatch", "run_ms": run * 1e3}))
        return
    rng = random.Random(1)
    nan = float("nan")
    for n in CASES:
        A = ctypes.c_float * n
        for trial in range(3):
            pat = PATTERNS[trial % len(PATTERNS)]
            a, b = A(*inputs(rng, pat, n)), A(*inputs(rng, pat, n))
            a0, b0 = bytes(a), bytes(b)
            want = A(*([nan] * n))
            call(ref, a, b, want, ctypes.c_int(n))
            got = A(*([nan] * n))
            t0 = time.perf_counter()
            call(cand, a, b, got, ctypes.c_int(n))
            run += time.perf_counter() - t0
            if bytes(a) != a0 or bytes(b) != b0:
                print(json.dumps({"status": "mismatch", "message": "an input changed"}))
                return
            for i, (g, w) in enumerate(zip(got, want)):
                if not math.isfinite(g) or abs(g - w) > ATOL + RTOL * abs(w):
                    print(json.dumps({"status": "mismatch", "message": "case n=%d element %d" % (n, i)}))
                    return
    print(json.dumps({"status": "pass", "run_ms": run * 1e3}))


if __name__ == "__main__":
    main()
