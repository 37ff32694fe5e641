#!/usr/bin/env python3
"""dcp-sim.py - the DCP economy: compile and verify work against learning signal, with the real leap-prune.

A rollout simulator. Each of --tasks tasks gets a difficulty (the chance a sample passes at turn
1, drawn U-shaped: Beta(0.6, 0.6), as kernel suites mix trivial and very hard tasks), a per-turn
fix probability (the chance a failed sample passes at its next turn, given feedback, U(0.05,
0.5)) and a share of catastrophic failures (compile errors, U(0, 1)). Every step draws --groups
tasks; each gets a group of G samples. A sample's outcome at each turn is drawn from a seeded
generator keyed by (step, group, sample, turn), so every setting sees the same outcomes and
differs only in which samples it runs.

Per setting and step: the turn-1 records (real leap records: status, compile, verify, bench,
tokens, reward) go through bin/leap-prune --group-size G --done DONE with the setting's
options (the paper's method, its ablations as leap-prune presets, and leap's variants); the
next-turn records it writes (carrying the turn-1 verdict in `dcp`) get their outcome and go
through leap-prune again, up to --turns turns. Counted: compiler runs (every record with code), verify runs (every record
that compiled). At the end bin/leap-rank ranks the done file and bin/leap-advantage --stats
counts the groups whose advantages are all zero (no learning signal), for LEAP's rank estimator
and for GRPO with a binary reward.

usage: dcp-sim.py [--steps N] [--groups K] [--group-size G] [--turns T] [--seed S] [--tasks N]
Prints a table (markdown-friendly); exit 1 when a leap program fails."""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "bin")

# (name, leap-prune options, uses --adaptive). The first row is the baseline the others are
# measured against: no pruning, every failure debugs until it passes or runs out of turns.
SETTINGS = [
    ("debug-all (no pruning)", ["--preset", "debug-all"], False),
    ("LEAP (the default)", [], False),
    ("debug-below-half (easy rule only)", ["--preset", "debug-below-half"], False),
    ("single-turn (no feedback turn)", ["--preset", "single-turn"], False),
    ("LEAP, easy < 75%", ["--easy-below", "75%"], False),
    ("LEAP, gate re-taken every turn", ["--regate"], False),
    ("before issue 15 (re-gated, failure type)", ["--regate", "--hopeless-above", "100%", "--catastrophic",
                                                  "no_code,compile_error"], False),
    ("LEAP, adaptive easy (target 0.5)", [], True),
]

FAILS = ["runtime_error", "timeout", "mismatch"]


def outcome(seed, step, group, sample, turn, task):
    """The status of this sample at this turn (deterministic)."""
    rng = random.Random("%d/%d/%d/%d/%d" % (seed, step, group, sample, turn))
    p = task["p1"] if turn == 1 else task["fix"]
    if rng.random() < p:
        return "pass", rng
    if rng.random() < 0.02:
        return "no_code", rng
    if rng.random() < task["cat"]:
        return "compile_error", rng
    return rng.choice(FAILS), rng


def fill(rec, status, rng):
    """Sets the result fields of a record, as leap-compile, leap-verify and leap-bench would."""
    rec["status"] = status
    rec["completion"] = "```cuda\n// sample %d turn %d\n__global__ void k() {}\n```" % (rec["sample"], rec["turn"])
    rec["tokens"] = rng.randint(300, 1500)
    if status == "no_code":
        rec["compile"] = {"status": "no_code", "log": "no fenced code block found"}
    elif status == "compile_error":
        rec["compile"] = {"status": "error", "diagnostics": [
            {"line": rng.randint(1, 40), "col": 5, "severity": "error", "message": "identifier \"x\" is undefined"}]}
    else:
        rec["compile"] = {"status": "ok", "cached": False}
        rec["verify"] = {"status": status, "cases": 4}
        if status != "pass":
            rec["verify"]["message"] = "case 2: element 17: got 0.5, want 0.25"
    if status == "pass":
        sp = round(rng.lognormvariate(0, 0.5), 4)
        rec["bench"] = {"status": "ok", "speedup": sp}
    rec["reward"] = 1.0 if status == "pass" else 0.0


def run(args, stdin_path=None, capture_err=False):
    with open(stdin_path or os.devnull, "rb") as fin:
        p = subprocess.run(args, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0,):
        sys.stderr.write(p.stderr.decode())
        sys.exit("dcp-sim: %s exited with %d" % (" ".join(args), p.returncode))
    return p.stdout, p.stderr.decode()


def simulate(a, tasks, plan, opts, adaptive, work):
    done = os.path.join(work, "done.jsonl")
    state = os.path.join(work, "state.json")
    for f in (done, state):
        if os.path.exists(f):
            os.unlink(f)
    compiles = verifies = records = 0
    for step, groups in enumerate(plan):
        recs = []
        for gi, ti in enumerate(groups):
            for s in range(a.group_size):
                rec = {"step": step, "task": "task%03d" % ti, "group": "s%d/g%d" % (step, gi), "sample": s, "turn": 1,
                       "messages": [{"role": "user", "content": "write the kernel"}]}
                recs.append(rec)
        for turn in range(1, a.turns + 1):
            if not recs:
                break
            path = os.path.join(work, "turn.jsonl")
            with open(path, "w") as f:
                for rec in recs:
                    gi = int(rec["group"].split("/g")[1])
                    st, rng = outcome(a.seed, step, gi, rec["sample"], rec["turn"], tasks[groups[gi]])
                    fill(rec, st, rng)
                    records += 1
                    compiles += st != "no_code"
                    verifies += st not in ("no_code", "compile_error")
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            # the turn budget, unless the setting is the single-turn ablation (its preset's one turn)
            turns = [] if "single-turn" in opts else ["--max-turns", str(a.turns)]
            cmd = [os.path.join(BIN, "leap-prune"), "--no-progress", "--group-size", str(a.group_size),
                   "--done", done] + turns + opts
            if adaptive:
                cmd += ["--adaptive", state]
            out, _ = run(cmd + [path])
            recs = [json.loads(l) for l in out.decode().splitlines() if l.strip()]
    ranked = os.path.join(work, "ranked.jsonl")
    out, _ = run([os.path.join(BIN, "leap-rank"), "--no-progress", done])
    with open(ranked, "wb") as f:
        f.write(out)
    signal = {}
    for name, cmd in (("rank", [os.path.join(BIN, "leap-advantage"), "--stats", "--no-progress", ranked]),
                      ("grpo", [os.path.join(BIN, "leap-advantage"), "--stats", "--no-progress", "-e", "grpo", "-r",
                                "binary", done])):
        _, err = run(cmd)
        m = re.search(r"(\d+) groups, (\d+) with every advantage zero", err)
        if not m:
            sys.exit("dcp-sim: no --stats line from leap-advantage: " + err)
        signal[name] = (int(m.group(1)), int(m.group(1)) - int(m.group(2)))
    # recovered: trajectories that failed at turn 1 and passed after feedback (the debugging
    # examples multi-turn training is for)
    recovered = 0
    with open(done) as f:
        for line in f:
            r = json.loads(line)
            recovered += r.get("turn", 1) > 1 and r.get("status") == "pass"
    return {"records": records, "compiles": compiles, "verifies": verifies, "signal": signal,
            "recovered": recovered}


def header(command):
    """The header every bench table carries (bench/lib.sh): date, machine, load, command."""
    model = mem = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = "%.0f GiB" % (int(line.split()[1]) / 1048576)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("## DCP economy: compile and verify work against learning signal (the real leap-prune)")
    print()
    print("    date:    " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print("    machine: %d cores (%s), %s" % (os.cpu_count(), model, mem))
    print("    load:    %s (1, 5, 15 min) at the end" % load)
    print("    command: " + command)
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--groups", type=int, default=32, help="groups per step")
    ap.add_argument("--group-size", type=int, default=16)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=200, help="tasks in the suite")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tasks = [{"p1": rng.betavariate(0.6, 0.6), "fix": rng.uniform(0.05, 0.5), "cat": rng.random()}
             for _ in range(a.tasks)]
    plan = [[rng.randrange(a.tasks) for _ in range(a.groups)] for _ in range(a.steps)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="leap-dcp-sim.") as work:
        for name, opts, adaptive in SETTINGS:
            rows.append((name, simulate(a, tasks, plan, opts, adaptive, work)))
    base = rows[0][1]
    ngroups = a.steps * a.groups
    header(" ".join(["bench/dcp-sim.py"] + sys.argv[1:]))
    print("%d steps x %d groups of %d samples, up to %d turns; %d tasks, turn-1 pass rate Beta(0.6, 0.6), "
          "fix rate per turn U(0.05, 0.5), compile-error share of failures U(0, 1); seed %d"
          % (a.steps, a.groups, a.group_size, a.turns, a.tasks, a.seed))
    print()
    hdr = ("setting", "compiles", "verifies", "signal (rank)", "signal (grpo)", "recovered", "compiles/signal",
           "work saved", "signal kept")
    print("    %-42s %9s %9s %14s %14s %9s %16s %11s %11s" % hdr)
    for name, r in rows:
        sr = r["signal"]["rank"][1]
        sg = r["signal"]["grpo"][1]
        per = r["compiles"] / sr if sr else float("inf")
        base_per = base["compiles"] / base["signal"]["rank"][1]
        print("    %-42s %9d %9d %8d %4.0f%% %8d %4.0f%% %9d %16.1f %10.0f%% %10.0f%%" % (
            name, r["compiles"], r["verifies"], sr, 100.0 * sr / ngroups, sg, 100.0 * sg / ngroups, r["recovered"], per,
            100.0 * (1 - per / base_per), 100.0 * sr / base["signal"]["rank"][1]))
    print()
    print("compiles, verifies: compiler and verify runs over all steps and turns. signal: groups (of %d)"
          % ngroups)
    print("whose advantages are not all zero after leap-rank + leap-advantage (rank: LEAP's estimator;")
    print("grpo: binary reward). work saved: compiler runs per signal-carrying group, against no pruning")
    print("(equal signal: what it costs to get the same number of useful groups). signal kept: useful groups")
    print("against no pruning (debug-all). recovered: trajectories that failed at turn 1 and passed at a")
    print("later turn, the debugging examples multi-turn training learns from.")


if __name__ == "__main__":
    main()
