#!/usr/bin/env python3
"""blocktable.py - issue 41's table of calls, sets, blocks and intervals (bench/README.md section 10),
derived from measured costs: for calls of 5 us, 50 us, 0.5 ms and 5 ms and sets of 1 MiB, 256 MiB,
4 GiB and 16 GiB on one H100 (80 GB), the calls a block holds under today's rule (lib/referee/inpool.c,
pool_size; lib/referee/referee.c, next_k), leap's own cost per block, the interval expected at the default
budget and the device memory used; and what one fresh set per call would need instead.

    python3 bench/blocktable.py [OVH_US SPREAD_US MAKE_GBS CMP_GBS]

The four numbers are bench/referee.sh blockcost's (cpu, measured): the median empty block right
after a set was staged, as real blocks come (thaw, go, reply, freeze), its robust spread, the
rate at which the host makes a set's inputs and the rate at which it compares outputs. The rest are estimates, named below: what runner/cuda.cu's
block adds to the shared part (its CUDA calls), the PCIe rate of the owner's copies, the
device's. A set is S bytes of inputs and S of outputs (an elementwise task, as kb1_039_l2_norm:
the most memory).
"""
import math
import os
import sys

# measured on cpu (bench/referee.sh blockcost; defaults: the run quoted in bench/README.md 10)
OVH_US, SPREAD_US, MAKE_GBS, CMP_GBS = (float(a) for a in sys.argv[1:5]) if len(sys.argv) >= 5 else (194.8, 17.7, 2.46, 9.61)
# estimated: runner/cuda.cu's block beyond the shared part, per block: rb_block_begin's
# cudaDeviceSynchronize on an idle device and cudaEventRecord, rb_block_end's context walk
# (cuCtxGetCurrent), cudaEventRecord, cudaDeviceSynchronize (the wake-up after the last kernel),
# cudaGetLastError and cudaEventElapsedTime: about 2 + 2 + 0.2 + 2 + 8 + 0.1 + 1 us, give or take 5;
# per call the context walk (0.2 us) and the table's row (0.01 us, measured)
CUDA_BLOCK_US, CUDA_SPREAD_US, CUDA_CALL_US = 15.0, 5.0, 0.2
PCIE_GBS = 20.0          # the owner's host<->device copies from pageable memfd memory (estimate)
DEV_GIB, DEV_GBS = 79.6, 3350.0  # H100 SXM: 81559 MiB, 3.35 TB/s
HOST_GIB = 128.0                 # the lent device machine's host memory
# leap-bench's defaults (lib/referee/verdict.h)
BLOCK_MS, MAX_TIME, MIN_RUNS, MAX_RUNS, TARGET, POOL_MIB, MAX_CALLS = 20.0, 2.0, 10, 1000, 0.02, 512, 4096
MAX_TIME = float(os.environ.get("MAX_TIME", MAX_TIME))  # --max-time: MAX_TIME=20 python3 bench/blocktable.py
# --pool-memory not given, on cuda: a quarter of the device's, at most a sixteenth of the host's,
# at least POOL_MIB (inpool.c, ref_pool_budget)
POOL_BYTES = max(POOL_MIB << 20, int(min(DEV_GIB * (1 << 30) / 4, HOST_GIB * (1 << 30) / 16)))
NBASE = 2
MIB, GIB = 1 << 20, 1 << 30


def kmax_today(s):
    """pool_size's bound on a block's calls for a set of s bytes of inputs and s of outputs (cuda)."""
    per = 2 * s + 1
    region = int(DEV_GIB * GIB / 8)
    kmax = region // per // 2
    ring = POOL_BYTES // per
    ring = ring - 2 * NBASE if ring > 2 * NBASE + 1 else 1
    return max(1, min(kmax, ring, MAX_CALLS // 2))


def device_bytes(s, k):
    """The owner's pool (its base sets and the ring: 2 + k sets of inputs) and two device regions
    (the owner's and the client's) of 2k slots of inputs and outputs each."""
    return (NBASE + k) * s + 2 * (2 * k) * (2 * s)


def row(t_ms, s):
    need = math.ceil(BLOCK_MS / t_ms)
    # the host's part of a pair, per call: its set made, uploaded once, both blocks' outputs
    # fetched, compared; next_k (referee.c) keeps a pair's calls, both blocks' and the host's
    # part, within a pair's share of --max-time
    host_call_s = s / (MAKE_GBS * 1e9) + s / (PCIE_GBS * 1e9) + 2 * s / (PCIE_GBS * 1e9) + s / (CMP_GBS * 1e9)
    k_host = max(1, int(MAX_TIME / MIN_RUNS / (2 * t_ms / 1e3 + host_call_s)))
    k = min(need, kmax_today(s), k_host)
    ovh_ms = (OVH_US + CUDA_BLOCK_US + k * CUDA_CALL_US) / 1e3
    sigma_ms = math.hypot(SPREAD_US, CUDA_SPREAD_US) / 1e3
    host_s = k * host_call_s
    pair_s = 2 * (k * t_ms + ovh_ms) / 1e3 + host_s
    n = max(MIN_RUNS, min(MAX_RUNS, int(MAX_TIME / pair_s)))
    rel = math.sqrt(2) * sigma_ms / (k * t_ms)          # one pair's ratio, from the blocks' own jitter
    half = 1.96 * 1.2533 * rel / math.sqrt(n)          # the median's 95% half-width
    mem = device_bytes(s, k)
    mem_need = device_bytes(s, need)
    return need, k, ovh_ms, ovh_ms / (k * t_ms + ovh_ms), n, pair_s * n, half, mem, mem_need


def pct(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.2g}"


def size(b):
    if b >= 1024 * GIB:
        return f"{b / (1024 * GIB):.3g} TiB"
    return f"{b / GIB:.3g} GiB" if b >= GIB else f"{b / MIB:.3g} MiB"


print(f"inputs: an empty block {OVH_US} us (spread {SPREAD_US}) on cpu, + {CUDA_BLOCK_US} us (spread {CUDA_SPREAD_US}) "
      f"of CUDA calls; sets made at {MAKE_GBS} GB/s, compared at {CMP_GBS} GB/s, PCIe {PCIE_GBS} GB/s")
print("| call | set | calls needed | calls a block holds | leap's cost per block | of the block | pairs | record | "
      "expected interval (target ±2%) | device memory | one set per call would need |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for t in (0.005, 0.05, 0.5, 5.0):
    for s in (MIB, 256 * MIB, 4 * GIB, 16 * GIB):
        need, k, ovh, frac, n, rec, half, mem, mem_need = row(t, s)
        dense = s / (DEV_GBS * 1e6)  # ms to read the set's inputs once
        note = "" if t >= dense else " (reads < the set)"
        fits = "fits" if mem_need <= DEV_GIB * GIB else "does not fit"
        print(f"| {t * 1e3:g} us{note} | {size(s)} | {need} | {k} | {ovh * 1e3:.0f} us | {frac * 100:.2g}% | {n} | "
              f"{rec:.3g} s | ±{pct(half * 100)}%{' noisy' if half > TARGET else ''} | {size(mem)}"
              f"{' (does not fit)' if mem > DEV_GIB * GIB else ''} | {size(mem_need)}, {fits} |")
