#!/usr/bin/env python3
"""load.py - many concurrent clients against leap-serve, a SIGTERM in the middle, nothing lost.

usage: load.py START_CMD URL_FILE REQUESTS CONCURRENCY [--sigterm-after N] [--json OUT]

START_CMD starts a leap-serve (a shell command; it writes its URL to URL_FILE). REQUESTS
requests of 1 to 4 records (each with a unique `rid`; some lines malformed) are sent by
CONCURRENCY threads to /v1/evaluate. After N answered requests the server gets SIGTERM: it must
answer every request it admitted in full, refuse the rest cleanly (503, or no connection once
it is gone) and end by the signal with no child left. Refused requests are sent again to a
second server. At the end every record must have been answered exactly once, with the
verdict of its candidate, and every malformed line with an error record. Exit 0 when all of
that holds; otherwise each failure is printed.

Standard library only (http.client), so it runs wherever the tests run. It asserts counts and
exactness, never times; the times it prints are for bench/serve.sh.
"""

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "leap-serve")


def candidate(name):
    with open(os.path.join(FIX, name + ".c")) as f:
        return "```c\n" + f.read() + "```"


def make_requests(n, seed):
    rnd = random.Random(seed)
    good, wrong = candidate("correct"), candidate("wrong")
    reqs = []
    for i in range(n):
        lines, want = [], {}
        group = f"g{i % 37}"
        for j in range(rnd.randint(1, 4)):
            rid = f"r{i}-{j}"
            if rnd.random() < 0.05:
                lines.append("{not json " + rid)  # an error record in its place
                want[None] = want.get(None, 0) + 1
                continue
            ok = rnd.random() < 0.7
            rec = {"rid": rid, "task": "vector_add", "group": f"{group}-{i}", "sample": j, "turn": 1,
                   "backend": "cpu", "completion": good if ok else wrong}
            lines.append(json.dumps(rec))
            want[rid] = "pass" if ok else "mismatch"
        reqs.append((("\n".join(lines) + "\n").encode(), want))
    return reqs


class Server:
    def __init__(self, cmd, url_file):
        if os.path.exists(url_file):
            os.unlink(url_file)
        self.proc = subprocess.Popen(cmd, shell=True, start_new_session=True)
        for _ in range(600):
            if os.path.exists(url_file):
                break
            if self.proc.poll() is not None:
                raise SystemExit(f"load: the server ended with status {self.proc.returncode} before listening")
            time.sleep(0.05)
        else:
            raise SystemExit("load: the server did not listen within 30 s")
        with open(url_file) as f:
            u = urllib.parse.urlparse(f.read().strip())
        self.host, self.port = u.hostname, u.port

    def pid(self):
        # the shell may exec leap-serve or keep itself as its parent
        try:
            out = subprocess.run(["pgrep", "-s", str(self.proc.pid), "-x", "leap-serve"], capture_output=True,
                                 text=True).stdout.split()
        except OSError:
            out = []
        return int(out[0]) if out else self.proc.pid


def post(server, body, timeout):
    """(status, lines, Retry-After) of one POST /v1/evaluate. Status None: no answer began (no
    connection, or it was reset before the status line): the request was not admitted and may
    be sent again. Status "broken": the answer began and was cut short, which a drain must
    never do."""
    try:
        c = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
        c.request("POST", "/v1/evaluate", body=body, headers={"Content-Type": "application/x-ndjson"})
        r = c.getresponse()
    except (ConnectionError, OSError, http.client.HTTPException):
        return None, [], None
    try:
        data = r.read()
    except (ConnectionError, OSError, http.client.HTTPException) as exc:
        return "broken", [repr(exc)], None
    retry = r.getheader("Retry-After")
    c.close()
    return r.status, [l for l in data.decode().split("\n") if l], retry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("start")
    ap.add_argument("url_file")
    ap.add_argument("requests", type=int)
    ap.add_argument("concurrency", type=int)
    ap.add_argument("--sigterm-after", type=int, default=-1)
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()

    reqs = make_requests(a.requests, a.seed)
    server = Server(a.start, a.url_file)
    lock = threading.Lock()
    answered = {}        # rid -> [statuses] (every answer, to count duplicates)
    errors_seen = [0]
    refused = []         # requests to send again
    failures = []
    done_count = [0]
    n429 = [0]
    termed = threading.Event()
    next_i = [0]
    t0 = time.monotonic()
    latencies = []

    def take(i, lines):
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                failures.append(f"request {i}: a line that is not JSON: {line[:120]}")
                continue
            rid = rec.get("rid")
            if rid is None:
                if "error" in rec:
                    errors_seen[0] += 1
                else:
                    failures.append(f"request {i}: a record without rid: {line[:120]}")
                continue
            answered.setdefault(rid, []).append(rec.get("status") if "error" not in rec else "error")

    def worker(srv):
        while True:
            with lock:
                if next_i[0] >= len(reqs):
                    return
                i = next_i[0]
                next_i[0] += 1
            body, want = reqs[i]
            while True:
                t = time.monotonic()
                status, lines, retry = post(srv, body, 120)
                if status == 429:
                    with lock:
                        n429[0] += 1
                    time.sleep(min(float(retry or 1), 1.0))
                    continue
                break
            with lock:
                if status == 200:
                    latencies.append(time.monotonic() - t)
                    take(i, lines)
                    done_count[0] += 1
                    if done_count[0] == a.sigterm_after and not termed.is_set():
                        termed.set()
                        os.kill(srv.pid(), signal.SIGTERM)
                elif status in (503, None) and termed.is_set():
                    refused.append(i)
                else:
                    failures.append(f"request {i}: status {status}: {' '.join(lines)[:200]}")

    threads = [threading.Thread(target=worker, args=(server,)) for _ in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first_pid = server.pid()
    try:
        rc = server.proc.wait(120)
    except subprocess.TimeoutExpired:
        failures.append("the server did not end within 120 s of the last request")
        server.proc.kill()
        rc = server.proc.wait()
    if a.sigterm_after >= 0:
        if not termed.is_set():
            failures.append("the SIGTERM was never sent (fewer requests answered than --sigterm-after)")
        elif rc not in (-signal.SIGTERM, 128 + signal.SIGTERM):
            failures.append(f"the drained server ended with status {rc}, not by SIGTERM")
        left = subprocess.run(["pgrep", "-P", str(first_pid)], capture_output=True, text=True).stdout.split()
        if left:
            failures.append(f"processes left behind by the server: {left}")
    n_refused = len(refused)
    if refused:
        second = Server(a.start, a.url_file)
        for i in refused:
            status, lines, _ = post(second, reqs[i][0], 120)
            if status != 200:
                failures.append(f"request {i} (sent again): status {status}")
            take(i, lines)
        os.kill(second.pid(), signal.SIGTERM)
        second.proc.wait(120)
    elapsed = time.monotonic() - t0

    want_all = {}
    want_errors = 0
    for _, want in reqs:
        for k, v in want.items():
            if k is None:
                want_errors += v
            else:
                want_all[k] = v
    for rid, st in want_all.items():
        got = answered.get(rid, [])
        if len(got) != 1:
            failures.append(f"record {rid}: answered {len(got)} times")
        elif got[0] != st:
            failures.append(f"record {rid}: status {got[0]}, want {st}")
    for rid in answered:
        if rid not in want_all:
            failures.append(f"record {rid}: answered but never sent")
    if errors_seen[0] != want_errors:
        failures.append(f"{errors_seen[0]} error records for {want_errors} malformed lines")
    records = len(want_all) + want_errors
    summary = {"requests": len(reqs), "records": records, "concurrency": a.concurrency,
               "refused_at_sigterm": n_refused, "answered_429": n429[0], "seconds": round(elapsed, 2),
               "records_per_s": round(records / elapsed, 1),
               "median_request_s": round(sorted(latencies)[len(latencies) // 2], 3) if latencies else None}
    print("load: " + json.dumps(summary))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f)
    for f in failures[:30]:
        print("load: FAIL: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
