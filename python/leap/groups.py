"""Trainer batches as leap groups.

Why this module: trainers hand a reward function a flat batch (TRL: G completions of each prompt
one after another; verl: rollout.n responses per prompt, repeated in place), while leap-rank and
leap-prune compare the records of a group. Here a batch row becomes a record with `group` and
`sample`, and the programs' answers come back in the batch's order. The group key is the caller's
(a dataset column that is unique per prompt, such as the task id plus the prompt's index); the
sample index is the row's place among the rows of its group, in batch order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable, Iterable, Optional, Sequence

from ._types import Record

if TYPE_CHECKING:
    from ._leap import Leap

ROW = "leap_row"  # the field that carries a record's place in the batch through the programs


def number_samples(keys: Iterable[Hashable]) -> list[tuple[Hashable, int]]:
    """For each group key in batch order, (key, sample index within its group)."""
    seen = {}
    out = []
    for k in keys:
        i = seen.get(k, 0)
        seen[k] = i + 1
        out.append((k, i))
    return out


def in_batch_order(records: Iterable[Record], n: int, field: str = ROW) -> list[Record]:
    """The records back in batch order by their `field`, which is removed; exactly n expected.

    Records without the field (an error record of a line that was not JSON cannot carry it) or a
    count other than n raise ValueError: a reward silently given to the wrong row is the one
    failure a trainer cannot see."""
    out = [None] * n
    for r in records:
        i = r.pop(field, None)
        if not isinstance(i, int) or not 0 <= i < n or out[i] is not None:
            raise ValueError(f"leap returned a record that matches no batch row: {str(r)[:200]}")
        out[i] = r
    if any(r is None for r in out):
        raise ValueError("leap returned fewer records than the batch holds")
    return out


def rank_batch(lp: Leap, records: Iterable[Record], rank_args: Optional[Sequence[str]] = None,
               evaluate: bool = True) -> list[Record]:
    """Evaluate (unless evaluate=False) and rank a batch of records that carry `group` and
    `sample`; returns them in batch order with `rank` (and compile, verify, bench, status).

    Every record is one trajectory of one turn (single-turn training); for trajectories of
    several turns rank the done file's records with lp.rank() instead."""
    rows = [dict(r, **{ROW: i}) for i, r in enumerate(records)]
    args = lp.rank_args if rank_args is None else list(rank_args)
    stages = (lp.evaluate_stages() if evaluate else []) + [["leap-rank", "--no-progress", *args]]
    return in_batch_order(lp.run(stages, rows), len(rows))
