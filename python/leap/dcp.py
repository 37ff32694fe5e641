"""leap.dcp: a GRPO group's turns decided together inside one trainer process, with deadlines.

Why this module: verl runs the rollout.n trajectories of a prompt as coroutines of one event
loop (an agent-loop worker), and OpenRLHF runs the n samples of a prompt as coroutines of one
vLLM actor. Difficulty-Conditioned Pruning decides a group after each turn from all its samples
(easy or hopeless: every trajectory ends; else the failed ones get leap-prune's feedback), so a
trajectory that has answered a turn waits here until its group has answered it, then gets its
answer: go on with this feedback, or stop. When no trajectory of the group goes on, leap-rank
ranks the group and every trajectory gets its rank score. The trainer glue (leap_verl.py,
leap_openrlhf.py) only maps its trainer's calls onto join / submit / leave / score.

Who is in a group (the roll call): the members that join under the same key in one pass of the
event loop. Both trainers create the coroutines of a prompt's samples together and each reaches
join() before its first await, so the roll closes, one loop pass after the first member joined,
on exactly the samples this process holds; `cap` (rollout.n) bounds it. Nothing waits for a
member the process does not hold: a validation prompt with n = 1 is a group of one, decided as
soon as it answers, and scored 1.0 when it solved the task, else 0.0 (leap-rank has nobody to
compare it with and would give 0 either way).

No wait without a deadline: each turn is decided when every live member has answered it or
`wait_s` seconds after the turn opened, whichever comes first; a member that has not answered by
then (the trainer cut it: response length, its own turn limit) is out, its earlier records stand
(failed turns) and a member with none is a failure (an empty answer, leap's no_code). Every leap
pipeline is bounded by `timeout_s` (leap.Timeout); when leap cannot judge a turn in time, or
fails, every trajectory of the group ends with score 0.0: the same number for the whole group,
so a group-normalising trainer gives it no advantage rather than a verdict leap did not reach.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from ._errors import LeapError  # noqa: F401  (what the pipelines raise)

if TYPE_CHECKING:
    from ._leap import Leap

log = logging.getLogger("leap")

# Seconds over the sum of the bounds that a member's own wait is allowed (a safety margin for
# the event loop and the executor thread; the group's deadlines are what end the waits).
SLACK_S = 30.0


class Settings:
    """What a group needs: the leap object, DCP's options and the bounds."""

    def __init__(self, lp: Leap, max_turns: int = 3, prune_args: Sequence[str] = (),
                 rank_args: Optional[Sequence[str]] = None, wait_s: float = 600.0, timeout_s: Optional[float] = None):
        self.lp = lp
        self.max_turns = int(max_turns)
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.prune_args = list(prune_args)
        self.rank_args = rank_args
        self.wait_s = float(wait_s)
        self.timeout_s = float(timeout_s if timeout_s is not None else (lp.timeout or 300.0))

    def bound(self, turns: int) -> float:
        """The longest a member may wait for `turns` more decisions and the ranking."""
        return turns * (self.wait_s + self.timeout_s) + self.timeout_s + SLACK_S


class Group:
    """The trajectories of one prompt's group in this process (see the module's comment)."""

    def __init__(self, table, key, cap, settings, fields):
        self.table, self.key, self.cap, self.s = table, key, cap, settings
        self.fields = dict(fields)     # task, backend (and what else each record carries)
        self.size = 0                  # members at the roll call
        self.open = True               # the roll call is open
        self.alive = set()             # samples that still answer turns
        self.turn = 1                  # the turn being collected
        self.arrived = {}              # sample -> (record, future) for self.turn
        self.busy = False              # a decision is running
        self.records = []              # every decided record (the group's done file)
        self.next = {}                 # sample -> leap-prune's next-turn record
        self.scores = None             # sample -> leap-rank score, once ranked
        self.outcome = {}              # sample -> the status of its last decided turn
        self.ended = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.timer = None
        self.on_end = []               # callables run once the group has ended (free what it held)

    # -- the roll call -------------------------------------------------------------------
    def _join(self):
        sample = self.size
        self.size += 1
        if self.size == 1:
            self.loop.call_soon(self.close_roll)
        if self.size >= self.cap:
            self.close_roll()
        return sample

    def close_roll(self):
        if not self.open:
            return
        self.open = False
        self.table.closed(self)
        self.alive = set(range(self.size))
        self._arm()
        self._check()  # members may have answered before the roll closed

    def _arm(self):
        if self.timer is not None:
            self.timer.cancel()
        turn = self.turn
        self.timer = self.loop.call_later(self.s.wait_s, lambda: self._spawn(turn))

    def _spawn(self, turn):
        if turn == self.turn and not self.busy and not self.ended.is_set():
            self.loop.create_task(self._decide(turn))

    # -- the members' calls ------------------------------------------------------------------
    async def submit(self, sample: int, completion: str,
                     extra: Optional[Mapping[str, Any]] = None) -> tuple[bool, str]:
        """This member's answer to the current turn; returns (go_on, text). go_on False ends
        the trajectory (text: why); True carries leap-prune's feedback for the next turn."""
        if not self.open and (sample not in self.alive or self.ended.is_set()):
            return False, "No more turns."
        rec = dict(self.fields, group=self.key, sample=sample, turn=self.turn)
        if sample in self.next:  # leap-prune's next-turn record: it carries the group's DCP state
            rec = {k: v for k, v in self.next.pop(sample).items() if k not in ("messages", "feedback")}
        rec.update(extra or {})
        rec["completion"] = completion
        fut = self.loop.create_future()
        self.arrived[sample] = (rec, fut)
        self._check()
        try:
            return await asyncio.wait_for(asyncio.shield(fut), self.s.bound(1))
        except asyncio.TimeoutError:
            log.warning("leap: group %s: no decision on turn %d within %.0f s", self.key, rec["turn"],
                        self.s.bound(1))
            self.leave(sample)
            return False, "No more turns."

    def leave(self, sample: int) -> None:
        """The member answers no more turns (the trainer ended it, or it failed)."""
        if sample in self.alive and sample not in self.arrived:
            self.alive.discard(sample)
            self._check()

    async def score(self, sample: int) -> float:
        """The member's leap-rank score once the group has ended (0.0 past the bound)."""
        try:
            await asyncio.wait_for(self.ended.wait(), self.s.bound(self.s.max_turns))
        except asyncio.TimeoutError:
            log.warning("leap: group %s was not ranked in time; score 0.0", self.key)
            return 0.0
        return (self.scores or {}).get(sample, 0.0)

    # -- the decisions ---------------------------------------------------------------------------
    def _check(self):
        if self.open or self.busy or self.ended.is_set():
            return
        if self.alive and not set(self.alive) <= set(self.arrived):
            return
        self.loop.create_task(self._decide(self.turn))

    async def _decide(self, turn):
        if turn != self.turn or self.busy or self.ended.is_set():
            return
        self.busy = True
        if self.timer is not None:
            self.timer.cancel()
        arrived, self.arrived = self.arrived, {}
        for sample in self.alive - set(arrived):  # past the deadline: out, failed as it stands
            log.warning("leap: group %s: sample %d did not answer turn %d; it ends there", self.key, sample, turn)
        self.alive &= set(arrived)
        try:
            if arrived:
                await self._prune(arrived)
            if not self.alive:
                await self._rank()
            else:
                self.turn += 1
                self._arm()
        except Exception as exc:  # leap failed or ran out of time: no verdict for this group
            log.warning("leap: group %s: %s; every trajectory of the group scores 0.0", self.key, exc)
            for _, fut in arrived.values():
                if not fut.done():
                    fut.set_result((False, "No more turns."))
            self.alive = set()
            self.scores = {}
            self._end()
        finally:
            self.busy = False
        self._check()

    async def _prune(self, arrived):
        s = self.s
        args = ["--group-size", str(len(arrived)), "--max-turns", str(s.max_turns), *s.prune_args]
        recs = [r for r, _ in arrived.values()]
        result = await self.loop.run_in_executor(None, lambda: s.lp.turn(recs, args, timeout=s.timeout_s))
        self.records += result.done
        self.next = {r["sample"]: r for r in result.next}
        self.alive = set(self.next)
        for r in result.done:
            self.outcome[r["sample"]] = r.get("status")
        for sample, (_, fut) in arrived.items():
            if fut.done():
                continue
            if sample in self.next:
                fut.set_result((True, self.next[sample]["feedback"]))
            else:
                fut.set_result((False, "Correct." if self.outcome.get(sample) == "pass" else "No more turns."))

    async def _rank(self):
        s = self.s
        answered = {r["sample"] for r in self.records}
        silent = [dict(self.fields, group=self.key, sample=i, turn=1, completion="")
                  for i in range(self.size) if i not in answered]
        records = list(self.records)
        if silent:  # never answered a turn: leap's verdict on an empty answer (no_code)
            records += await self.loop.run_in_executor(None, lambda: s.lp.evaluate(silent, timeout=s.timeout_s))
        ranked = await self.loop.run_in_executor(None, lambda: s.lp.rank(records, s.rank_args, timeout=s.timeout_s))
        if self.size == 1:  # nobody to rank against (validation, n = 1): solved or not
            self.scores = {0: 1.0 if any(r.get("status") == "pass" for r in records) else 0.0}
        else:
            self.scores = {r["sample"]: float(r["rank"]["score"]) for r in ranked}
        self._end()

    def _end(self):
        if self.timer is not None:
            self.timer.cancel()
        self.ended.set()
        for fn in self.on_end:
            fn(self)
        self.on_end = []


class Table:
    """The open groups of one process, by key; a group leaves it when its roll call closes."""

    def __init__(self):
        self.open = {}

    def join(self, key: str, cap: int, settings: Settings, fields: Mapping[str, Any]) -> tuple[Group, int]:
        """Join the group of `key` whose roll call is open (else a new one); returns
        (group, sample). Call it before the trajectory's first await."""
        grp = self.open.get(key)
        if grp is None or not grp.open:
            grp = self.open[key] = Group(self, key, max(1, int(cap)), settings, fields)
        return grp, grp._join()

    def closed(self, grp):
        if self.open.get(grp.key) is grp:
            del self.open[grp.key]


# One table per event loop: groups live in the loop that runs their members.
_tables = {}


def table() -> Table:
    loop = asyncio.get_running_loop()
    t = _tables.get(id(loop))
    if t is None or t[0] is not loop:
        t = _tables[id(loop)] = (loop, Table())
    return t[1]


def settings_from(config: Optional[Mapping[str, Any]], lp: Leap) -> Settings:
    """Settings from a glue's config dict (max_turns, prune_args, rank_args, wait_s, timeout_s)."""
    c = dict(config or {})
    return Settings(lp, max_turns=c.get("max_turns", 3), prune_args=c.get("prune_args", ()),
                    rank_args=c.get("rank_args"), wait_s=c.get("wait_s", 600.0), timeout_s=c.get("timeout_s"))


__all__ = ["Group", "Settings", "Table", "table", "settings_from"]
