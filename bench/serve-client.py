#!/usr/bin/env python3
"""serve-client.py - sends each line of FILE to leap-serve's /v1/evaluate as a request of its own,
CONCURRENCY at a time (or the whole FILE as one request with --batch); prints the wall seconds
and checks that every record came back once with status pass. Used by bench/serve.sh."""
import http.client
import json
import sys
import threading
import time
import urllib.parse


def post(host, port, body):
    c = http.client.HTTPConnection(host, port, timeout=3600)
    c.request("POST", "/v1/evaluate", body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status != 200:
        raise SystemExit(f"serve-client: status {r.status}: {data[:200]!r}")
    return [json.loads(l) for l in data.splitlines() if l.strip()]


def main():
    url, path, conc = sys.argv[1], sys.argv[2], int(sys.argv[3])
    batch = "--batch" in sys.argv
    u = urllib.parse.urlparse(url)
    lines = [l for l in open(path, "rb").read().split(b"\n") if l.strip()]
    out, lock, nxt = [], threading.Lock(), [0]
    t0 = time.monotonic()
    if batch:
        out = post(u.hostname, u.port, b"\n".join(lines) + b"\n")
    else:
        def worker():
            while True:
                with lock:
                    i = nxt[0]
                    nxt[0] += 1
                if i >= len(lines):
                    return
                recs = post(u.hostname, u.port, lines[i] + b"\n")
                with lock:
                    out.extend(recs)
        ts = [threading.Thread(target=worker) for _ in range(conc)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    wall = time.monotonic() - t0
    bad = [r for r in out if r.get("status") != "pass"]
    if len(out) != len(lines) or bad:
        raise SystemExit(f"serve-client: {len(out)} answers for {len(lines)} records, {len(bad)} not pass")
    print(f"{wall:.3f}")


main()
