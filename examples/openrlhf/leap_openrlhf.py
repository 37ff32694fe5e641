"""leap inside OpenRLHF: an agent (--train.agent_func_path) whose turns leap compiles, checks and
times, with DCP across the samples of a prompt and leap-rank's score as the reward.

    python3 -m openrlhf.cli.train_ppo_ray --train.agent_func_path examples/openrlhf/leap_openrlhf.py \
        --rollout.n_samples_per_prompt 8 ...     (dataset: the prompt, and the task id as label)

Why it is shaped so (checked against OpenRLHF 0.11.2's openrlhf/utils/agent.py and
openrlhf/trainer/ray/vllm_engine.py): OpenRLHF loads this file, builds AgentExecutor() with no
arguments, and for each prompt runs the n samples as n concurrent execute() calls in one vLLM
actor; each call makes its own AgentInstance, awaits reset({"observation", "label"}) and then,
after every generation, step({"observation_text", "action_text", "label", ...}), which returns
rewards, scores, environment_feedback (text appended to the conversation) and done. The n
instances of a prompt reset together, so they form one leap group (leap.dcp: the instances that
reset with the same prompt and label in one pass of the event loop): each step waits for the
group's turn, leap-prune decides it, the failed samples get leap's feedback and the group is
ranked when none goes on; the last step's reward is the sample's rank score (the earlier ones
are 0, so OpenRLHF's summed reward is the rank score).

Settings come from the environment (OpenRLHF passes the agent nothing): LEAP_PREFIX,
LEAP_BACKEND (default cuda), LEAP_GROUP_SIZE (= n_samples_per_prompt; default 8), LEAP_MAX_TURNS
(default 3), LEAP_BENCH (0 leaves leap-bench out), LEAP_WAIT_S (default 600), LEAP_TIMEOUT_S
(default 170: below the 180 s OpenRLHF gives a remote reward), LEAP_PRUNE_ARGS and
LEAP_RANK_ARGS (split on spaces), and LEAP_FEEDBACK_FORMAT, the text that wraps leap's feedback
into the conversation ({feedback} is replaced; default a plain user turn; give your chat
template's user-turn markup). At the bounds: a turn is decided wait_s after it opened with the
samples that answered (one OpenRLHF stopped for lack of tokens never answers: it ends there, a
failure); a leap pipeline past timeout_s ends the group's samples with reward 0.0 each.
"""

import os

import torch
from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

import leap
from leap import dcp

FEEDBACK_FORMAT = "\n\nUser: {feedback}\n\nAssistant: "


def settings(env=None):
    """leap's settings for the agent from the environment (see the module's comment)."""
    e = os.environ if env is None else env
    split = lambda name: (e.get(name) or "").split()  # noqa: E731
    lp = leap.Leap(e.get("LEAP_PREFIX") or None, backend=e.get("LEAP_BACKEND") or "cuda", tasks=e.get("LEAP_TASKS"),
                   cache=e.get("LEAP_CACHE"), bench=e.get("LEAP_BENCH", "1") != "0",
                   seed=int(e["LEAP_SEED"]) if e.get("LEAP_SEED") else None,
                   timeout=float(e.get("LEAP_TIMEOUT_S") or 170))
    s = dcp.Settings(lp, max_turns=int(e.get("LEAP_MAX_TURNS") or 3), prune_args=split("LEAP_PRUNE_ARGS"),
                     rank_args=split("LEAP_RANK_ARGS") or None, wait_s=float(e.get("LEAP_WAIT_S") or 600))
    return s, int(e.get("LEAP_GROUP_SIZE") or 8), e.get("LEAP_FEEDBACK_FORMAT") or FEEDBACK_FORMAT


class AgentInstance(AgentInstanceBase):
    """One sample's conversation; its group is the prompt's n samples in this actor."""

    def __init__(self, *args, **kwargs):
        self.settings, self.group_size, self.format = settings()
        self.group = self.sample = None

    async def reset(self, states, **kwargs):
        prompt, label = states["observation"], states.get("label")
        task = str(label)
        fields = {"task": task, "backend": self.settings.lp.backend}
        key = f"{task}:{hash(prompt) & 0xffffffffffff:x}"
        self.group, self.sample = dcp.table().join(key, self.group_size, self.settings, fields)  # before any await
        return {"observation": prompt}

    async def step(self, states, **kwargs):
        go_on, text = await self.group.submit(self.sample, states["action_text"])
        if go_on:
            return {"rewards": torch.tensor(0.0), "scores": torch.tensor(0.0),
                    "environment_feedback": self.format.format(feedback=text), "done": False,
                    "sampling_params": states.get("sampling_params"), "extra_logs": {}}
        score = await self.group.score(self.sample)
        status = self.group.outcome.get(self.sample)
        return {"rewards": torch.tensor(score), "scores": torch.tensor(score), "environment_feedback": "",
                "done": True, "sampling_params": states.get("sampling_params"),
                "extra_logs": {"leap_solved": torch.tensor(1.0 if status == "pass" else 0.0)}}


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self):
        super().__init__(AgentInstance)
