"""leap inside verl: reward functions and a multi-turn interaction that keeps DCP.

Written against verl 0.6.1 (read from its wheel): custom_reward_function.path/name,
reward_model.reward_manager (naive: compute_score per response; batch: compute_score_batch
over the whole batch), actor_rollout_ref.rollout.multi_turn.interaction_config_path with a
verl.interactions.base.BaseInteraction. verl 0.7 keeps the interaction but moves the reward
settings under reward.* and keeps only per-response managers (compute_score still works, the
batch form does not); verl 0.8 removed verl.interactions. See examples/verl/README.md.

Why the interaction waits for its group: Difficulty-Conditioned Pruning decides a GRPO group
after each turn from all its samples (easy: every trajectory ends; hopeless: likewise; else the
failed ones get feedback). verl runs the rollout.n trajectories of a prompt as separate
coroutines of one agent-loop worker, each calling generate_response on its own; LeapInteraction
holds each caller until every live trajectory of its group has answered the turn, runs
compile | verify | bench | leap-prune on the group, and answers each one: terminate, or go on
with leap's feedback. When the last trajectory of the group has ended, leap-rank ranks the
group, and every trajectory's final generate_response returns its rank score as that turn's
score; verl hands the turn scores to compute_score (extra_info["turn_scores"]), which returns
it. A trajectory that verl ends on its own (response length, max_assistant_turns) never
answers: after `wait_s` seconds the group is decided without it.
"""

import asyncio
import os
import sys
import uuid

try:
    import leap
except ImportError:  # run from a checkout without `pip install ./python`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import leap
from leap.groups import ROW, in_batch_order, number_samples

try:
    from verl.interactions.base import BaseInteraction
except ImportError:  # verl >= 0.8 or not installed: the class still runs under any caller
    BaseInteraction = object


def _leap(config):
    """A leap.Leap from an interaction's or reward function's settings (a dict)."""
    c = dict(config or {})
    return leap.Leap(c.get("prefix") or os.environ.get("LEAP_PREFIX"), backend=c.get("backend"), tasks=c.get("tasks"),
                     cache=c.get("cache"), jobs=c.get("jobs"), seed=c.get("seed"), bench=c.get("bench", True),
                     prune_args=c.get("prune_args", ()), rank_args=c.get("rank_args", ()))


# -- reward functions ---------------------------------------------------------------------------

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function (reward_model.reward_manager=naive), one response at a time.

    With LeapInteraction (multi-turn: extra_info holds interaction_kwargs) the score is
    leap-rank's, computed by the interaction when the response's group ended and found in
    extra_info["turn_scores"]; the response is not evaluated again (a trajectory verl cut before
    leap decided its turn has no score: 0.0, with leap_cut set). Single-turn, the response is compiled and checked here and the score is 1.0
    when it passes, else 0.0 (verl's GRPO normalises it over the group; leap-rank needs the group:
    use compute_score_batch). `ground_truth` is the task id; extra_info may name "task" and
    "backend"; reward_kwargs (custom_reward_function.reward_kwargs) may carry leap settings under
    "leap" (prefix, backend, cache, tasks, bench, ...).
    """
    info = extra_info or {}
    if info.get("interaction_kwargs"):  # multi-turn: the interaction scored the trajectory
        turns = info.get("turn_scores")
        if turns is None or len(turns) == 0:  # verl ended it before leap decided its turn
            return {"score": 0.0, "leap_cut": True}
        return {"score": float(turns[-1]), "leap_cut": False}
    lp = _leap(kwargs.get("leap"))
    rec = {"task": info.get("task") or ground_truth, "group": str(info.get("group") or ground_truth), "sample": 0,
           "turn": 1, "backend": info.get("backend") or lp.backend or "cuda", "completion": solution_str}
    out = lp.evaluate([rec])[0]
    return {"score": 1.0 if out.get("status") == "pass" else 0.0, "status": out.get("status"),
            "speedup": float((out.get("bench") or {}).get("speedup") or 0.0)}


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """verl's batch reward function (reward_model.reward_manager=batch): leap-rank's score of
    each response within its group, over the whole batch at once.

    verl repeats each prompt rollout.n times in place, with the prompt's extra_info; the group
    of a response is extra_info["group"] (unique per prompt: make_dataset.py writes it), else its
    ground truth (the task id). Samples are numbered in batch order within a group.
    """
    lp = _leap(kwargs.get("leap"))
    infos = [e or {} for e in extra_infos]
    keys = [str(e.get("group") or g) for e, g in zip(infos, ground_truths)]
    records = []
    for i, ((key, sample), text, info, truth) in enumerate(zip(number_samples(keys), solution_strs, infos, ground_truths)):
        records.append({"task": info.get("task") or truth, "group": key, "sample": sample, "turn": 1,
                        "backend": info.get("backend") or lp.backend or "cuda", "completion": text, ROW: i})
    stages = lp.evaluate_stages() + [["leap-rank", "--no-progress", *lp.rank_args]]
    out = in_batch_order(lp.run(stages, records), len(records))
    return [float(r["rank"]["score"]) for r in out]


# -- the interaction ----------------------------------------------------------------------------

class _Group:
    """The trajectories of one prompt's GRPO group inside one worker process."""

    def __init__(self, key, size):
        self.key, self.size = key, size
        self.samples = {}          # instance id -> sample index
        self.alive = set(range(size))  # samples expected at the current turn
        self.arrived = {}          # turn -> {sample: (record, future)}
        self.decided = set()       # turns decided
        self.records = []          # every decided record (the group's done file)
        self.next = {}             # sample -> its next-turn record from leap-prune (carries `dcp`)
        self.scores = {}           # sample -> leap-rank score, once the group has ended
        self.ended = None          # asyncio.Event set once ranked


class LeapInteraction(BaseInteraction):
    """verl interaction: each assistant turn is compiled, checked and timed by leap, and DCP
    decides the group after every turn (see the module's comment).

    config (interaction_config.yaml): group_size (= actor_rollout_ref.rollout.n), max_turns
    (leap-prune --max-turns; keep multi_turn.max_assistant_turns >= it), wait_s (how long a
    group waits for a trajectory that verl ended on its own; default 600), and the leap settings
    (prefix, backend, tasks, cache, jobs, seed, bench, prune_args, rank_args).
    interaction_kwargs of each row (extra_info): name, task, group (unique per prompt), backend.
    """

    _groups = {}  # key -> open _Group, shared by the instances of a worker process

    def __init__(self, config):
        if BaseInteraction is not object:
            super().__init__(config)
        self.config, self.name = config, config.get("name", "leap")
        self.lp = _leap(config)
        self.group_size = int(config["group_size"])
        self.max_turns = int(config.get("max_turns", 3))
        self.wait_s = float(config.get("wait_s", 600))
        self._instances = {}  # instance id -> (group, sample, task, backend)

    async def start_interaction(self, instance_id=None, **kwargs):
        instance_id = instance_id or str(uuid.uuid4())
        key = str(kwargs.get("group") or kwargs["task"])
        grp = self._groups.get(key)
        if grp is None or len(grp.samples) >= grp.size:  # verl starts rollout.n per prompt and step
            grp = self._groups[key] = _Group(key, self.group_size)
            grp.ended = asyncio.Event()
        sample = len(grp.samples)
        grp.samples[instance_id] = sample
        self._instances[instance_id] = (grp, sample, kwargs.get("task") or key,
                                        kwargs.get("backend") or self.lp.backend or "cuda")
        return instance_id

    async def generate_response(self, instance_id, messages, **kwargs):
        grp, sample, task, backend = self._instances[instance_id]
        turn = 1 + sum(1 for r in grp.records if r.get("sample") == sample)
        completion = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")
        rec = {"task": task, "group": grp.key, "sample": sample, "turn": turn, "backend": backend}
        if sample in grp.next:  # leap-prune's next-turn record: it carries the group's DCP decision
            rec = {k: v for k, v in grp.next.pop(sample).items() if k not in ("messages", "feedback")}
        rec["completion"] = completion
        if turn in grp.decided:  # too late: the group went on without this turn
            await grp.ended.wait()
            return True, "No more turns.", grp.scores.get(sample, 0.0), {"leap_turn": turn}
        fut = asyncio.get_running_loop().create_future()
        grp.arrived.setdefault(turn, {})[sample] = (rec, fut)
        if set(grp.arrived[turn]) >= grp.alive:
            await self._decide(grp, turn)
        else:
            asyncio.get_running_loop().call_later(self.wait_s, lambda: asyncio.ensure_future(self._decide(grp, turn)))
        final, text = await fut
        if not final:
            return False, text, None, {"leap_turn": turn}
        await grp.ended.wait()
        return True, text, grp.scores.get(sample, 0.0), {"leap_turn": turn}

    async def _decide(self, grp, turn):
        """DCP on the records of `turn` that arrived; rank the group once nothing goes on."""
        if turn in grp.decided:
            return
        grp.decided.add(turn)
        arrived = grp.arrived.pop(turn)
        loop = asyncio.get_running_loop()
        args = ["--group-size", str(len(arrived)), "--max-turns", str(self.max_turns), *self.lp.prune_args]
        try:
            result = await loop.run_in_executor(None, lambda: self.lp.turn([r for r, _ in arrived.values()], args))
        except Exception as exc:  # leap failed: end the group's trajectories, the trainer sees the error
            for _, fut in arrived.values():
                if not fut.done():
                    fut.set_exception(exc)
            grp.ended.set()
            raise
        feedback = {r["sample"]: r["feedback"] for r in result.next}
        grp.next = {r["sample"]: r for r in result.next}
        grp.records += result.done
        grp.alive = set(feedback)
        for sample, (_, fut) in arrived.items():
            if sample in feedback:
                fut.set_result((False, feedback[sample]))
            else:
                status = next((r.get("status") for r in result.done if r.get("sample") == sample), None)
                fut.set_result((True, "Correct." if status == "pass" else "No more turns."))
        if not grp.alive:
            ranked = await loop.run_in_executor(None, lambda: self.lp.rank(grp.records))
            grp.scores = {r["sample"]: float(r["rank"]["score"]) for r in ranked}
            if self._groups.get(grp.key) is grp:
                del self._groups[grp.key]
            grp.ended.set()

    async def calculate_score(self, instance_id=None, **kwargs):
        """The trajectory's leap-rank score once its group has ended, else 0.0."""
        grp, sample, _, _ = self._instances[instance_id]
        return grp.scores.get(sample, 0.0)

    async def finalize_interaction(self, instance_id=None, **kwargs):
        self._instances.pop(instance_id, None)
