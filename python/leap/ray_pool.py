"""A Ray actor pool of leap-serve servers: one per GPU or per host, every group to one of them.

Why: one machine's GPUs time one batch at a time; a trainer with several GPU machines wants
the batch spread over all of them, with the same calls as the local pipeline. Each actor
starts a leap-serve on its own node (loopback only: the actor is the way in) and forwards
batches to it; the pool sends every group (`group`, else `task`) to one actor, chosen by a
stable hash of the key, so leap-prune decides a whole group and its samples are timed on one
machine, and gathers the answers in input order.

    import ray, leap.ray_pool
    ray.init()
    pool = leap.ray_pool.LeapPool(per="gpu", server_args=["--no-bench"])   # one server per GPU
    out = pool.evaluate(records)                      # input order, like leap.Leap.evaluate
    for r in pool.evaluate_stream(records): ...       # each server's answers as they come
    turn = pool.turn(out, group_size=8)               # leap-prune per group, on its server

Needs `ray` (pip install ray); leap-serve must be installed on every node (found as leap's
programs are: prefix, $LEAP_PREFIX, PATH).
"""

from __future__ import annotations

import zlib
from typing import Iterable, Iterator, Optional, Sequence

import ray

from ._errors import RecordError
from ._leap import Turn
from .groups import ROW, in_batch_order
from .serve import start
from ._types import Env, PathLike, Record


def group_of(record: Record) -> str:
    """The key leap groups a record by: `group`, else `task` (leap-prune's rule)."""
    g = record.get("group")
    return str(g if g is not None else record.get("task", ""))


@ray.remote
class LeapServeActor:
    """One leap-serve on the actor's node, on the GPUs Ray gave the actor (CUDA_VISIBLE_DEVICES
    narrows them: the server's --devices count from 0)."""

    def __init__(self, args=(), prefix=None, env=None):
        import os
        ndev = len([d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()])
        args = list(args)
        if ndev > 1 and "--devices" not in args:
            args += ["--devices", f"0-{ndev - 1}"]
        self.server = start(args, prefix=prefix, env=env)

    def url(self):
        return self.server.url

    def evaluate(self, records):
        return list(self.server.evaluate_stream(records, errors="keep"))

    def turn(self, records, group_size=None):
        t = self.server.turn(records, group_size, errors="keep")
        return t.done, t.next

    def metrics(self):
        return self.server.metrics()

    def stop(self):
        self.server.stop()
        return True


class LeapPool:
    """leap-serve actors: `num_servers` of them (each with `num_gpus_per_server` GPUs and
    `num_cpus_per_server` CPUs), or with per="gpu" one per GPU of the cluster, with per="host"
    one per alive node. `server_args` are leap-serve's options (e.g. ["--backend", "cpu"])."""

    def __init__(self, num_servers: Optional[int] = None, per: Optional[str] = None, server_args: Sequence[str] = (),
                 prefix: Optional[PathLike] = None, env: Optional[Env] = None, num_gpus_per_server: float = 0,
                 num_cpus_per_server: float = 1):
        opts = {"num_cpus": num_cpus_per_server}
        if per == "gpu":
            num_servers = int(ray.cluster_resources().get("GPU", 0))
            if not num_servers:
                raise ValueError("per='gpu': the Ray cluster has no GPU")
            opts["num_gpus"] = 1
            self.actors = [LeapServeActor.options(**opts).remote(server_args, prefix, env) for _ in range(num_servers)]
        elif per == "host":
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
            nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
            self.actors = [LeapServeActor.options(**opts, num_gpus=num_gpus_per_server, scheduling_strategy=
                                                  NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                server_args, prefix, env) for node in nodes]
        else:
            if not num_servers or num_servers < 1:
                raise ValueError("give num_servers, or per='gpu' or per='host'")
            opts["num_gpus"] = num_gpus_per_server
            self.actors = [LeapServeActor.options(**opts).remote(server_args, prefix, env) for _ in range(num_servers)]
        self.urls = ray.get([a.url.remote() for a in self.actors])

    def route(self, record: Record) -> int:
        """The actor index of record's group: the same for every record of the group."""
        return zlib.crc32(group_of(record).encode()) % len(self.actors)

    def _split(self, records):
        parts = [[] for _ in self.actors]
        rows = [dict(r, **{ROW: i}) for i, r in enumerate(records)]
        for r in rows:
            parts[self.route(r)].append(r)
        return rows, parts

    def evaluate_stream(self, records: Iterable[Record], errors: str = "raise") -> Iterator[Record]:
        """compile | verify | bench of every group on its server; yields each server's records as
        soon as that server has answered its share."""
        rows, parts = self._split(records)
        pending = {self.actors[i].evaluate.remote(p): i for i, p in enumerate(parts) if p}
        seen = []
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                del pending[ref]
                for rec in ray.get(ref):
                    rec.pop(ROW, None)
                    if errors == "raise" and "error" in rec:
                        raise RecordError(rec, seen + [rec])
                    seen.append(rec)
                    yield rec

    def evaluate(self, records: Iterable[Record], errors: str = "raise") -> list[Record]:
        """The records evaluated, in input order (as leap.Leap.evaluate)."""
        rows, parts = self._split(records)
        refs = [self.actors[i].evaluate.remote(p) for i, p in enumerate(parts) if p]
        out = in_batch_order([r for part in ray.get(refs) for r in part], len(rows))
        if errors == "raise":
            for rec in out:
                if "error" in rec:
                    raise RecordError(rec, out)
        return out

    def turn(self, records: Iterable[Record], group_size: Optional[int] = None, errors: str = "raise") -> Turn:
        """One turn: every group evaluated and decided by leap-prune on its server."""
        rows, parts = self._split(records)
        for p in parts:
            for r in p:
                r.pop(ROW)
        refs = [self.actors[i].turn.remote(p, group_size) for i, p in enumerate(parts) if p]
        done, nxt = [], []
        for d, n in ray.get(refs):
            done += d
            nxt += n
        if errors == "raise":
            for rec in done:
                if "error" in rec:
                    raise RecordError(rec, done + nxt)
        return Turn(done, nxt)

    def metrics(self) -> list[str]:
        """Each server's /metrics text, in actor order."""
        return ray.get([a.metrics.remote() for a in self.actors])

    def close(self) -> None:
        """Drains and stops every server, then the actors."""
        ray.get([a.stop.remote() for a in self.actors])
        for a in self.actors:
            ray.kill(a)
        self.actors = []
