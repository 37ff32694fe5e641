"""A client of leap-serve, and a leap-serve started from Python.

Why: a trainer whose GPUs for timing are on other machines calls leap there instead of running
the filters as its own children. `Server` speaks leap-serve's batch endpoints with the calls of
the local pipeline (evaluate, evaluate_stream, turn), so code written against `leap.Leap` moves
to a remote server by changing one object; `start()` runs a leap-serve on this machine (the Ray
pool's actors start theirs so). Standard library only.

    import leap.serve
    srv = leap.serve.Server("http://gpu01:8750", token=open("token").read().strip())
    out = srv.evaluate(records)                 # in input order, compile/verify/bench added
    for r in srv.evaluate_stream(records): ...  # as each is answered (completion order)
    turn = srv.turn(out_records, group_size=8)  # leap-prune on the server: Turn(done, next)
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.parse
from typing import IO, Iterable, Iterator, Optional, Sequence

from ._errors import LeapError, RecordError
from ._leap import Turn
from ._pipeline import encode
from ._programs import find_program
from .groups import ROW, in_batch_order
from ._types import Env, PathLike, Record, RecordIn


class ServerError(LeapError):
    """leap-serve refused a request (4xx/5xx): `status`, its `message` and, for 429 and 503,
    `retry_after` (seconds)."""

    def __init__(self, status: int, message: str, retry_after: Optional[str] = None):
        super().__init__(f"leap-serve answered {status}: {message}")
        self.status, self.message, self.retry_after = status, message, retry_after


class Server:
    """A running leap-serve at `url` (http://HOST:PORT). `token`: its bearer token, if it needs one;
    `timeout`: seconds a request may take (the server's --deadline bounds it too); `retries`: how
    often a request refused with 429 or 503 is sent again after the Retry-After it names."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 600.0, retries: int = 20):
        u = urllib.parse.urlparse(url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"not an http:// URL: {url}")
        self.url, self.host, self.port = url.rstrip("/"), u.hostname, u.port or 80
        self.token, self.timeout, self.retries = token, timeout, retries

    def _headers(self, ctype):
        h = {"Content-Type": ctype}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    def _open(self, method, path, body=None, ctype="application/x-ndjson"):
        """The response of one request, sent again after 429/503 while retries last."""
        for attempt in range(self.retries + 1):
            c = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            c.request(method, path, body=body, headers=self._headers(ctype))
            r = c.getresponse()
            if r.status == 200:
                return c, r
            data = r.read()
            c.close()
            try:
                msg = json.loads(data)
                msg = msg.get("error", {}).get("message") or msg.get("detail") or data.decode()
            except ValueError:
                msg = data.decode("utf-8", "replace")
            retry = r.getheader("Retry-After")
            if r.status in (429, 503) and attempt < self.retries:
                time.sleep(float(retry or 1))
                continue
            raise ServerError(r.status, msg, retry)
        raise AssertionError("unreachable")

    def _lines(self, path, records):
        body = b"".join(encode(r) for r in records)
        c, r = self._open("POST", path, body)
        try:
            for line in r:
                if line.strip():
                    yield json.loads(line)
        finally:
            c.close()

    # -- the calls of the local pipeline ---------------------------------------------------
    def evaluate_stream(self, records: Iterable[RecordIn], errors: str = "raise") -> Iterator[Record]:
        """compile | verify | bench on the server; yields each record as it is answered
        (completion order; every record keeps the fields it was sent with)."""
        seen = []
        for rec in self._lines("/v1/evaluate", list(records)):
            if errors == "raise" and "error" in rec:
                raise RecordError(rec, seen + [rec])
            seen.append(rec)
            yield rec

    def evaluate(self, records: Iterable[Record], errors: str = "raise") -> list[Record]:
        """compile | verify | bench on the server; the records in input order."""
        rows = [dict(r, **{ROW: i}) for i, r in enumerate(records)]
        out = in_batch_order(list(self._lines("/v1/evaluate", rows)), len(rows))
        if errors == "raise":
            for rec in out:
                if "error" in rec:
                    raise RecordError(rec, out)
        return out

    def turn(self, records: Iterable[RecordIn], group_size: Optional[int] = None, errors: str = "raise") -> Turn:
        """Evaluate a turn's records and let leap-prune decide each group on the server:
        Turn(done, next), as leap.Leap.turn returns it."""
        path = "/v1/turn" + (f"?group_size={int(group_size)}" if group_size else "")
        out = list(self._lines(path, list(records)))
        done = [r for r in out if "prune" in r or "error" in r]
        nxt = [r for r in out if "prune" not in r and "error" not in r]
        if errors == "raise":
            for rec in done:
                if "error" in rec:
                    raise RecordError(rec, out)
        return Turn(done, nxt)

    def prompts(self, task: str = "all", group_size: int = 1) -> list[Record]:
        """Turn-1 records made by leap-prompt on the server's machine (its CPU or GPU facts)."""
        q = urllib.parse.urlencode({"task": task, "group_size": group_size})
        c, r = self._open("GET", f"/v1/prompts?{q}")
        try:
            return [json.loads(line) for line in r.read().splitlines() if line.strip()]
        finally:
            c.close()

    def metrics(self) -> str:
        """The text of /metrics."""
        c, r = self._open("GET", "/metrics")
        try:
            return r.read().decode()
        finally:
            c.close()


class LocalServer(Server):
    """A leap-serve this process started (see start()); stop() drains and ends it."""

    def __init__(self, proc, url, tmpdir, **kw):
        super().__init__(url, **kw)
        self.proc, self._tmpdir = proc, tmpdir

    def stop(self, timeout: float = 120.0) -> None:
        """SIGTERM: the server answers what it admitted, then ends."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._tmpdir.cleanup()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(args: Sequence[str] = (), prefix: Optional[PathLike] = None, env: Optional[Env] = None,
          token: Optional[str] = None, wait: float = 60.0, stderr: Optional[IO[str]] = None) -> LocalServer:
    """Starts leap-serve on a free loopback port (add "--listen", ADDR and a token for more) and
    returns a LocalServer once it listens. `args`: leap-serve's options (e.g. ["--devices",
    "0-7"]); the program is found as leap's programs are (prefix, $LEAP_PREFIX, PATH)."""
    tmpdir = tempfile.TemporaryDirectory(prefix="leap-serve-")
    url_file = os.path.join(tmpdir.name, "url")
    argv = [find_program("leap-serve", prefix), "--port", "0", "--url-file", url_file, *map(str, args)]
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.Popen(argv, env=full_env, stdin=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + wait
    while not os.path.exists(url_file):
        if proc.poll() is not None:
            tmpdir.cleanup()
            raise LeapError(f"leap-serve ended with status {proc.returncode} before it listened")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            tmpdir.cleanup()
            raise LeapError(f"leap-serve did not listen within {wait} s")
        time.sleep(0.05)
    with open(url_file) as f:
        url = f.read().strip()
    return LocalServer(proc, url, tmpdir, token=token)
