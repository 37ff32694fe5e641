"""leap as a Prime Intellect `verifiers` environment: load_environment() returns a MultiTurnEnv
whose env_response is leap's next turn and whose rubric is leap-rank's score.

    import verifiers as vf
    env = vf.load_environment("leap.verifiers_env", tasks=["softmax", "gelu"], backend="cuda",
                              group_size=8, max_turns=3)
    results = env.evaluate_sync(vf.ClientConfig(api_base_url="http://localhost:8000/v1"), "model",
                                rollouts_per_example=8)

Why it is shaped so (checked against verifiers 0.3.1's legacy stack, the `import verifiers as
vf` surface that environment hubs load: envs/multiturn_env.py, envs/environment.py,
rubrics/rubric.py):

- The dataset is leap-prompt's: one row per task, its chat messages as `prompt`, the task,
  group key and backend in `info`. verifiers adds `example_id`.
- run_group() starts the rollouts_per_example rollouts of a row as coroutines of one event loop
  (asyncio.gather) and each reaches setup_state() in the same pass of the loop, so they form one
  leap group (leap.dcp, as in verl and OpenRLHF): DCP decides each turn from the whole group.
- After each model answer MultiTurnEnv calls env_response(); here it submits the answer to the
  group and waits for the group's turn: leap compiles, verifies (and times) it, leap-prune
  decides, and the answer is leap's feedback as the next user message, or, when leap ends the
  trajectory (solved, hopeless, out of turns), the last message in `final_env_response`, which
  stops the rollout. leap-prune's --max-turns bounds the turns, so the environment's own
  max_turns is off: at verifiers' limit the last answer would never reach env_response, and its
  group would wait `wait_s` for it.
- The rubric's reward `leap_rank` awaits the group's end and returns the rollout's leap-rank
  score (in [-1, 1], summing to 0 over the group; see examples/trainers.md for what a trainer's
  normalisation does to it); `leap_solved` (weight 0) is a metric: 1.0 when the last decided turn
  passed. Both are per-rollout functions, so score_rollout (independent scoring) takes them too:
  a rollout alone is a group of one and scores 1.0 when it solved the task, else 0.0.
- A rollout verifiers ends itself (a model error, its timeout_seconds) answers no more turns: a
  cleanup handler takes it out of its group, which goes on without it.

Bounds, as in the other glue: each leap pipeline runs under `timeout_s` (past it, every rollout
of the group scores 0.0: no advantage rather than a verdict leap did not reach); a turn waits
`wait_s` for the group's slowest member.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import verifiers as vf
from datasets import Dataset
from verifiers.types import UserMessage

from . import dcp
from ._leap import Leap


def completion_text(messages) -> str:
    """The model's last answer as text: the content of the last assistant message."""
    if isinstance(messages, str):
        return messages
    for m in reversed(list(messages)):
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", None)
        if role == "assistant":
            content = m.get("content") if isinstance(m, dict) else getattr(m, "content", None)
            if isinstance(content, list):  # content parts: keep the text ones
                return "".join(p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "") or ""
                               for p in content)
            return content or ""
    return ""


def leap_dataset(lp: Leap, tasks: Optional[Sequence[str]], prompt_args: Sequence[str] = ()) -> Dataset:
    """leap-prompt's turn-1 records as verifiers rows (tasks None: every task of the suite)."""
    if tasks is None:
        argv = ["leap-prompt", "--no-progress", "--all", *prompt_args]
        if lp.backend:
            argv += ["--backend", lp.backend]
        records = lp.run([argv], [])
    else:
        records = lp.prompts(tasks, group_size=1, args=prompt_args)
    return Dataset.from_list([{"prompt": [dict(m) for m in r["messages"]], "answer": "",
                               "info": {"leap_task": r["task"], "group": r["group"], "backend": r["backend"]}}
                              for r in records])


async def leap_rank(state) -> float:
    """The rollout's leap-rank score within its group (0.0 when leap reached no verdict)."""
    return await state["leap_group"].score(state["leap_sample"])


async def leap_solved(state) -> float:
    """1.0 when the rollout's last decided turn passed leap-verify."""
    await state["leap_group"].score(state["leap_sample"])  # decided once the group has ended
    return 1.0 if state["leap_group"].outcome.get(state["leap_sample"]) == "pass" else 0.0


class LeapEnv(vf.MultiTurnEnv):
    """The rollouts of a row form a leap group; each answer is a turn leap decides."""

    def __init__(self, settings: dcp.Settings, group_size: int = 8, **kwargs):
        rubric = vf.Rubric(funcs=[leap_rank, leap_solved], weights=[1.0, 0.0])
        super().__init__(max_turns=-1, rubric=rubric, **kwargs)  # leap-prune ends the turns
        self.settings, self.group_size = settings, int(group_size)

    async def setup_state(self, state):
        info = state["info"]
        fields = {"task": info["leap_task"], "backend": info.get("backend") or self.settings.lp.backend}
        key = f"{info.get('group') or info['leap_task']}:{state['example_id']}"
        # no await before join: the rollouts of a row join in one pass of the event loop
        state["leap_group"], state["leap_sample"] = dcp.table().join(key, self.group_size, self.settings, fields)
        return state

    async def env_response(self, messages, state, **kwargs):
        go_on, text = await state["leap_group"].submit(state["leap_sample"], completion_text(messages))
        reply = [UserMessage(content=text)]  # verifiers' own type: no re-validation per turn
        if not go_on:
            state["final_env_response"] = reply  # stops the rollout; the text ends its completion
        return reply

    @vf.cleanup
    async def leave_group(self, state):
        """A rollout that ends without leap's word (model error, timeout) leaves its group."""
        if "leap_group" in state:
            state["leap_group"].leave(state["leap_sample"])


def load_environment(tasks: Union[Sequence[str], str, None] = None, backend: str = "cuda",
                     prefix: Optional[str] = None, group_size: int = 8, max_turns: int = 3,
                     bench: bool = True, prune_args: Sequence[str] = (), rank_args: Optional[Sequence[str]] = None,
                     prompt_args: Sequence[str] = (), wait_s: float = 600.0, timeout_s: float = 240.0,
                     task_dir: Optional[str] = None, cache: Optional[str] = None, seed: Optional[int] = None,
                     **kwargs) -> vf.Environment:
    """The leap environment (verifiers' entry point: vf.load_environment passes env_args here).

    tasks        task names (a list, or one string separated by commas); None: the whole suite
    backend      cuda or cpu; prefix: where leap's programs are (else $LEAP_PREFIX, PATH)
    group_size   the rollouts per example (verifiers' rollouts_per_example): the most a group holds
    max_turns    leap-prune's --max-turns; prune_args, rank_args, prompt_args: the programs' options
    bench        False leaves leap-bench out (ranking by correctness and turn only)
    wait_s       how long a turn waits for the group's slowest rollout
    timeout_s    the bound of each leap pipeline
    task_dir, cache, seed: LEAP_TASKS, LEAP_CACHE, leap-verify's and leap-bench's --seed
    Other keyword arguments go to vf.MultiTurnEnv (system_prompt, timeout_seconds, ...).
    """
    if isinstance(tasks, str):
        tasks = [t for t in tasks.split(",") if t]
    lp = Leap(prefix, backend=backend, tasks=task_dir, cache=cache, bench=bench, seed=seed, timeout=timeout_s)
    settings = dcp.Settings(lp, max_turns=max_turns, prune_args=prune_args, rank_args=rank_args,
                            wait_s=wait_s, timeout_s=timeout_s)
    return LeapEnv(settings, group_size=group_size, dataset=leap_dataset(lp, tasks, prompt_args), **kwargs)


__all__ = ["LeapEnv", "completion_text", "leap_dataset", "leap_rank", "leap_solved", "load_environment"]
