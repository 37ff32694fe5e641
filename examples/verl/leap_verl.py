"""leap inside verl: an agent loop that runs leap's turns, reward functions, and the verl 0.6
interaction, all on the `leap` package (`pip install ./python`) and leap's installed programs.

- LeapAgentLoop (verl >= 0.9; tested with the version examples/trainers.md names): an
  AgentLoopBase registered as "leap_agent". Each trajectory asks the model server for a kernel,
  leap compiles, checks and times it, and leap-prune decides the trajectory's group after every
  turn (DCP, leap.dcp); feedback goes back as the next user message. When the group has ended,
  leap-rank's score of the trajectory is its `reward_score`, which verl puts at the last token
  (rm_scores) without calling a reward function. agent_loop_config.yaml is the config to copy.
- compute_score / compute_score_batch: verl's custom reward function (naive / batch reward
  manager). A response with turn scores (extra_info["turn_scores"], written by LeapInteraction)
  gets its last one; any other response is compiled and checked here: 1.0 when it passes, else
  0.0 (single-turn; compute_score_batch gives leap-rank's score within the group instead).
- LeapInteraction (verl 0.6; verl removed verl.interactions later): the same DCP turns through
  ToolAgentLoop's interaction hook; interaction_config.yaml is its config.

Deadlines (what happens at each bound is in examples/verl/README.md): every leap pipeline runs
under `timeout_s` (default 240 s, below verl's per-sample reward timeout of 300 s), every turn
is decided at the latest `wait_s` after it opened (default 600 s).
"""

import asyncio
import logging
import os
from uuid import uuid4

import leap
from leap import dcp
from leap.groups import ROW, in_batch_order, number_samples

log = logging.getLogger("leap")

# Below verl's own per-sample bound on a reward (reward.timeout, 300 s by default), so that leap
# answers, and says why, before verl gives up on the call.
TIMEOUT_S = 240.0

try:  # verl 0.6
    from verl.interactions.base import BaseInteraction
except ImportError:  # verl >= 0.9, or verl not installed: the class still runs under any caller
    BaseInteraction = object

try:  # verl >= 0.9
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
except ImportError:
    AgentLoopBase = None


def _plain(config):
    """A config (dict, or omegaconf's DictConfig as hydra hands it) as a plain dict."""
    if config is None:
        return {}
    try:
        from omegaconf import DictConfig, OmegaConf
        if isinstance(config, DictConfig):
            return OmegaConf.to_container(config, resolve=True)
    except ImportError:
        pass
    return dict(config)


def _leap(config):
    """A leap.Leap from an agent loop's, interaction's or reward function's settings (a dict)."""
    c = _plain(config)
    return leap.Leap(c.get("prefix") or os.environ.get("LEAP_PREFIX"), backend=c.get("backend"), tasks=c.get("tasks"),
                     cache=c.get("cache"), jobs=c.get("jobs"), seed=c.get("seed"), bench=c.get("bench", True),
                     prune_args=c.get("prune_args", ()), rank_args=c.get("rank_args", ()),
                     timeout=float(c.get("timeout_s", TIMEOUT_S)))


# -- reward functions ---------------------------------------------------------------------------

def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function (reward manager naive), one response at a time.

    A trajectory that LeapInteraction scored carries its turn scores (extra_info["turn_scores"],
    the rank score last): that score is returned and nothing is evaluated again. Any other
    response (single turn; or a trajectory verl cut before the interaction scored it) is compiled
    and checked here: 1.0 when it passes, else 0.0. `ground_truth` is the task id; extra_info may
    name "task" and "backend"; reward_kwargs may carry leap settings under "leap". Every answer
    has the same keys (verl stacks them per key over the batch). At leap's deadline (timeout_s)
    the score is 0.0 with leap_timeout set.
    """
    info = extra_info or {}
    turns = info.get("turn_scores")
    if turns is not None and len(turns) > 0:
        return {"score": float(turns[-1]), "status": "ranked", "speedup": 0.0, "leap_timeout": False}
    lp = _leap(kwargs.get("leap"))
    rec = {"task": info.get("task") or ground_truth, "group": str(info.get("group") or ground_truth), "sample": 0,
           "turn": 1, "backend": info.get("backend") or lp.backend or "cuda", "completion": solution_str}
    try:
        out = lp.evaluate([rec], errors="keep")[0]
    except leap.Timeout:
        log.warning("leap: compute_score: no verdict within %.0f s; score 0.0", lp.timeout)
        return {"score": 0.0, "status": "timeout", "speedup": 0.0, "leap_timeout": True}
    if "error" in out:
        raise leap.RecordError(out)
    return {"score": 1.0 if out.get("status") == "pass" else 0.0, "status": out.get("status"),
            "speedup": float((out.get("bench") or {}).get("speedup") or 0.0), "leap_timeout": False}


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """verl's batch reward function (reward manager batch, verl 0.6): leap-rank's score of each
    response within its group, over the whole batch at once. The group of a response is
    extra_info["group"] (unique per prompt: make_dataset.py writes it), else its ground truth;
    samples are numbered in batch order within a group. At leap's deadline every score is 0.0
    (no advantage for a batch leap did not judge)."""
    lp = _leap(kwargs.get("leap"))
    infos = [e or {} for e in extra_infos]
    keys = [str(e.get("group") or g) for e, g in zip(infos, ground_truths)]
    records = []
    for i, ((key, sample), text, info, truth) in enumerate(zip(number_samples(keys), solution_strs, infos, ground_truths)):
        records.append({"task": info.get("task") or truth, "group": key, "sample": sample, "turn": 1,
                        "backend": info.get("backend") or lp.backend or "cuda", "completion": text, ROW: i})
    stages = lp.evaluate_stages() + [["leap-rank", "--no-progress", *lp.rank_args]]
    try:
        out = in_batch_order(lp.run(stages, records), len(records))
    except leap.Timeout:
        log.warning("leap: compute_score_batch: no verdict within %.0f s; every score 0.0", lp.timeout)
        return [0.0] * len(records)
    return [float(r["rank"]["score"]) for r in out]


# -- the agent loop (verl >= 0.9) -----------------------------------------------------------------

if AgentLoopBase is not None:

    @register("leap_agent")
    class LeapAgentLoop(AgentLoopBase):
        """verl agent loop: leap's turns with DCP, the trajectory's leap-rank score as its reward.

        Settings come from the agent loop config entry (agent_loop_config.yaml, key `leap`):
        the leap settings of _leap (prefix, backend, tasks, cache, jobs, seed, bench, prune_args,
        rank_args, timeout_s), max_turns (leap-prune --max-turns), wait_s, group_size (default
        actor_rollout_ref.rollout.n). Each dataset row names its task in extra_info["task"] (else
        reward_model.ground_truth) and may name its backend; its group is verl's `uid` (one per
        prompt and step).
        """

        def __init__(self, *args, leap=None, **kwargs):
            super().__init__(*args, **kwargs)
            c = _plain(leap)
            self.lp = _leap(c)
            self.settings = dcp.settings_from(c, self.lp)
            self.cap = int(c.get("group_size") or self.rollout_config.n)
            self.response_length = self.rollout_config.response_length

        async def run(self, sampling_params, **kwargs):
            info = _plain(kwargs.get("extra_info"))
            truth = (_plain(kwargs.get("reward_model")) or {}).get("ground_truth")
            task = info.get("task") or truth
            fields = {"task": task, "backend": info.get("backend") or self.lp.backend or "cuda"}
            key = str(kwargs.get("uid") or info.get("group") or task)
            grp, sample = dcp.table().join(key, self.cap, self.settings, fields)  # before any await
            try:
                out = await self._turns(grp, sample, list(kwargs["raw_prompt"]), sampling_params)
            except BaseException:
                grp.leave(sample)
                raise
            out.reward_score = await grp.score(sample)
            out.extra_fields.update({"turn_scores": [out.reward_score], "tool_rewards": [],
                                     "leap_turns": out.num_turns // 2, "leap_status": grp.outcome.get(sample)})
            return out

        async def _turns(self, grp, sample, messages, sampling_params):
            prompt_ids = await self.ct_build_initial_tokens(messages)
            mask, turns, request_id = [], 0, uuid4().hex
            while True:
                gen = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids,
                                                         sampling_params=sampling_params)
                turns += 1
                merged, mask, _ = await self.ct_merge_assistant_token(prompt_ids, gen.token_ids, mask)
                prompt_ids = merged.token_ids
                text = self.tokenizer.decode(gen.token_ids, skip_special_tokens=True)
                go_on, reply = await grp.submit(sample, text, {"tokens": len(gen.token_ids)})
                if go_on and len(mask) >= self.response_length:
                    grp.leave(sample)  # no room for another answer: the trajectory ends as it stands
                    go_on = False
                if not go_on:
                    break
                messages.append({"role": "assistant", "content": text})
                before = list(messages)
                messages.append({"role": "user", "content": reply})
                merged, mask2, _ = await self.ct_merge_context_msg(before, messages, prompt_ids, mask)
                if len(mask2) >= self.response_length:
                    grp.leave(sample)
                    break
                prompt_ids, mask = merged.token_ids, mask2
            prompt_len = len(prompt_ids) - len(mask)
            return AgentLoopOutput(prompt_ids=prompt_ids[:prompt_len], response_ids=prompt_ids[prompt_len:][:self.response_length],
                                   response_mask=mask[:self.response_length], num_turns=2 * turns,
                                   metrics={}, extra_fields={})


# -- the interaction (verl 0.6) ---------------------------------------------------------------------

class LeapInteraction(BaseInteraction):
    """verl 0.6 interaction: each assistant turn is compiled, checked and timed by leap, and DCP
    decides the group after every turn (leap.dcp).

    config (interaction_config.yaml): group_size (= actor_rollout_ref.rollout.n),
    max_turns (leap-prune --max-turns), max_assistant_turns (copy verl's
    multi_turn.max_assistant_turns: verl ends a trajectory at that assistant turn before the
    interaction sees it, so leap's last turn is one before it), wait_s, timeout_s and the leap
    settings. interaction_kwargs of each row (extra_info): name, task, group (unique per prompt),
    backend. A trajectory's final generate_response carries its rank score (verl's turn score,
    which compute_score returns). A group's instances are freed when it ends, those verl cut
    included (verl 0.6 never calls finalize_interaction).
    """

    def __init__(self, config):
        if BaseInteraction is not object:
            super().__init__(config)
        c = _plain(config)
        self.config, self.name = c, c.get("name", "leap")
        self.lp = _leap(c)
        turns = int(c.get("max_turns", 3))
        if c.get("max_assistant_turns"):
            turns = min(turns, int(c["max_assistant_turns"]) - 1)
        self.settings = dcp.settings_from(dict(c, max_turns=turns), self.lp)
        self.group_size = int(c["group_size"])
        self._instances = {}  # instance id -> (group, sample), until its trajectory has ended

    async def start_interaction(self, instance_id=None, **kwargs):
        instance_id = instance_id or str(uuid4())
        key = str(kwargs.get("group") or kwargs["task"])
        fields = {"task": kwargs.get("task") or key, "backend": kwargs.get("backend") or self.lp.backend or "cuda"}
        grp, sample = dcp.table().join(key, self.group_size, self.settings, fields)
        if sample == 0:  # free the group's instances when it ends, also those verl cut (never called again)
            grp.on_end.append(self._free)
        self._instances[instance_id] = (grp, sample)
        return instance_id

    def _free(self, grp):
        for iid in [i for i, (g, _) in self._instances.items() if g is grp]:
            del self._instances[iid]

    async def generate_response(self, instance_id, messages, **kwargs):
        grp, sample = self._instances[instance_id]
        completion = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")
        go_on, text = await grp.submit(sample, completion)
        if go_on:
            return False, text, None, {"leap_turn": grp.turn}
        score = await grp.score(sample)
        return True, text, score, {"leap_turn": grp.turn}

    async def calculate_score(self, instance_id=None, **kwargs):
        """The trajectory's leap-rank score while its group is held (ended: in its last turn's
        score), else 0.0."""
        held = self._instances.get(instance_id)
        if held is None or held[0].scores is None:
            return 0.0
        return held[0].scores.get(held[1], 0.0)

    async def finalize_interaction(self, instance_id=None, **kwargs):
        held = self._instances.pop(instance_id, None)
        if held is not None:
            held[0].leave(held[1])
