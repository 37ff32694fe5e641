"""leap inside TRL's GRPOTrainer: a group-aware reward (leap-rank's score) and a feedback tool.

Why it is shaped this way (checked against trl 1.16's grpo_trainer.py):

- GRPOTrainer calls a reward function once per generation batch and process as
  reward_func(prompts=..., completions=..., completion_ids=..., **columns, trainer_state=...,
  log_extra=..., log_metric=...[, environments=...]) and wants one float (or None) per
  completion. The batch holds the num_generations completions of each prompt (RepeatSampler),
  but with several processes a group can straddle them, so LeapRankReward evaluates its own rows
  (compile, verify, bench: the expensive part, spread over the processes), gathers the
  evaluated records of every process, ranks whole groups with leap-rank, and returns its rows'
  scores. Rows are grouped by a dataset column that is unique per prompt (`group`, from
  leap-prompt), never by position.
- TRL then normalises the rewards per group: (r - mean) / (std + 1e-4) with scale_rewards="group"
  (the default), r - mean with scale_rewards="none". leap-rank's scores sum to 0 in a group, so
  with "none" TRL's advantage is leap's rank advantage exactly (one turn: gamma plays no part).
  See examples/trainers.md.
- Feedback turns: TRL runs tools inside its generation loop, one rollout at a time, so leap's
  per-group decision (DCP) cannot be taken between turns there. LeapKernelEnv gives every
  rollout a `submit` tool whose answer is leap-prune's lean feedback for that one record
  (`--preset debug-all` so a failed sample always gets another try up to --max-turns); the
  reward function then ranks each rollout's whole trajectory (solved at turn 1 beats turn 2...).

Use (examples/trl/README.md has the whole script):

    from leap_trl import LeapRankReward, leap_dataset
    rows = leap_dataset(lp, ["softmax", "gelu"])          # prompt, task, group, backend
    trainer = GRPOTrainer(model, reward_funcs=[LeapRankReward(lp)],
                          args=GRPOConfig(num_generations=8, scale_rewards="none"),
                          train_dataset=Dataset.from_list(rows))
"""

import logging

import leap
from leap.groups import ROW, in_batch_order, number_samples

log = logging.getLogger("leap")

# What the system message adds when the rollouts have LeapKernelEnv's tool: a model told to
# answer with a fenced block, and never told the tool exists, has no reason to call it.
SUBMIT_NOTE = ("Submit each complete kernel with the `submit` tool (argument `code`: the whole source file); "
               "its answer says whether it compiled and matched the reference, and what to fix. "
               "You may submit again after a failed check.")


def leap_dataset(lp, tasks, args=(), tools=False):
    """Dataset rows for GRPOTrainer from leap-prompt: one row per task, conversational `prompt`
    (leap's system and user messages), `task`, `group` (the grouping key) and `backend`.
    tools=True (rollouts with LeapKernelEnv) adds SUBMIT_NOTE to the system message."""
    rows = []
    for r in lp.prompts(tasks, group_size=1, args=args):
        messages = [dict(m) for m in r["messages"]]
        if tools:
            system = next((m for m in messages if m.get("role") == "system"), None)
            if system is None:
                messages.insert(0, {"role": "system", "content": SUBMIT_NOTE})
            else:
                system["content"] = system["content"].rstrip() + "\n\n" + SUBMIT_NOTE
        rows.append({"prompt": messages, "task": r["task"], "group": r["group"], "backend": r["backend"]})
    return rows


def completion_text(completion):
    """TRL's completion as text: a string (standard format) or a list of messages (conversational)."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content") or "" for m in completion if m.get("role", "assistant") == "assistant")


def accelerate_gather():
    """(gather, process_index) over the processes of an accelerate run, or None for one process."""
    try:
        from accelerate import PartialState
        from accelerate.utils import gather_object
    except ImportError:
        return None
    state = PartialState()
    if state.num_processes <= 1:
        return None
    return gather_object, state.process_index


class LeapRankReward:
    """GRPOTrainer reward function: leap-rank's score of each completion within its group.

    lp            a leap.Leap (programs, backend, cache, stage options)
    group_column  the dataset column that names a completion's group (unique per prompt)
    rank_args     leap-rank's options (default: lp.rank_args)
    gather        None: find out from accelerate; False: this process's rows are whole groups;
                  or a (gather_object, process_index) pair
    on_error      "raise" (default): a record leap could not process raises leap.RecordError;
                  "none": its reward is None, which TRL leaves out of the group's baseline
    The pipelines run under lp.timeout (TRL has no bound of its own on a reward call; set one):
    past it every reward of the call is None, which TRL leaves out of the baselines and the
    loss, and a warning says so.
    """

    __name__ = "leap_rank"

    def __init__(self, lp, group_column="group", rank_args=None, gather=None, on_error="raise"):
        self.lp, self.group_column, self.rank_args = lp, group_column, rank_args
        self.gather, self.on_error = gather, on_error

    def __call__(self, prompts, completions, completion_ids=None, **kwargs):
        keys = kwargs.get(self.group_column) or kwargs.get("task")
        if keys is None:
            raise ValueError(f"the dataset needs a '{self.group_column}' (or 'task') column to group completions")
        tasks = kwargs.get("task") or keys
        backends = kwargs.get("backend") or [self.lp.backend or "cuda"] * len(keys)
        envs = kwargs.get("environments")
        try:
            local = self._evaluate(completions, completion_ids, keys, tasks, backends, envs)
        except leap.Timeout as exc:
            log.warning("leap: %s; the rewards of these %d completions are None", exc, len(completions))
            local = None
        every, offset = self._gather(local)
        if any(t is None for t in every):  # some process got no verdict: nobody ranks partial groups
            return [None] * len(completions)
        try:
            ranked = self._rank(every)
        except leap.Timeout as exc:
            log.warning("leap: %s; the rewards of these %d completions are None", exc, len(completions))
            return [None] * len(completions)
        mine = ranked[offset:offset + len(completions)]
        return [self._score(r) for r in mine]

    def _evaluate(self, completions, completion_ids, keys, tasks, backends, envs):
        """This process's rows as evaluated trajectories: one list of turn records per row (the
        environment's submissions, else the completion itself evaluated as turn 1)."""
        trajs, todo = [], []
        for i, c in enumerate(completions):
            if envs is not None and getattr(envs[i], "records", None):
                trajs.append([dict(r) for r in envs[i].records])
                continue
            rec = {"task": tasks[i], "group": str(keys[i]), "turn": 1, "backend": backends[i],
                   "completion": completion_text(c), ROW: len(todo)}
            if completion_ids is not None:
                rec["tokens"] = len(completion_ids[i])
            todo.append(rec)
            trajs.append(None)
        if todo:
            done = iter(in_batch_order(self.lp.evaluate(todo, errors="keep"), len(todo)))
            trajs = [t if t is not None else [next(done)] for t in trajs]
        return trajs

    def _gather(self, local):
        """Every process's trajectories (None for a process that got no verdict) and where this
        process's rows start among them."""
        g = accelerate_gather() if self.gather is None else (self.gather or None)
        if g is None:
            return ([None] if local is None else local), 0
        gather_object, index = g
        n = len(local) if local is not None else 0
        counts = gather_object([n if local is not None else -1])
        if any(c < 0 for c in counts):
            gather_object([None])
            return [None], 0
        return gather_object(local), sum(counts[:index])

    def _rank(self, trajs):
        """leap-rank over every trajectory of the batch; returns one ranked record per row."""
        samples = number_samples([t[0]["group"] for t in trajs])
        records = []
        for i, (turns, (key, sample)) in enumerate(zip(trajs, samples)):
            for r in turns:
                r = {k: v for k, v in r.items() if k not in ("prune", "rank", "advantage", ROW)}
                r.update(group=key, sample=sample, **{ROW: i})
                records.append(r)
        out = self.lp.rank(records, self.rank_args, errors="keep")
        last = [None] * len(trajs)
        for r in out:  # a trajectory's records all carry its rank; keep the last turn's
            i = r.get(ROW)
            if not isinstance(i, int) or not 0 <= i < len(trajs):
                raise ValueError(f"leap-rank returned a record that matches no batch row: {str(r)[:200]}")
            if last[i] is None or r.get("turn", 0) >= last[i].get("turn", 0):
                last[i] = r
        return last

    def _score(self, r):
        if "error" in r or "rank" not in r:
            if self.on_error == "none":
                return None
            raise leap.RecordError(r)
        return float(r["rank"]["score"])


class LeapKernelEnv:
    """One rollout's environment for GRPOTrainer(environment_factory=...): a `submit` tool that
    compiles and checks the kernel and answers with leap's lean feedback.

    Build the factory with functools.partial(LeapKernelEnv, lp, max_turns=3); TRL calls
    reset(**row) with the dataset row before each rollout and exposes the public methods other
    than reset as tools. The turns' records stay in `records` for LeapRankReward.
    """

    def __init__(self, lp, max_turns=3, prune_args=()):
        self.lp, self.max_turns, self.prune_args = lp, max_turns, list(prune_args)
        self.records, self.row = [], {}

    def reset(self, **row):
        self.row, self.records = row, []
        return None

    def submit(self, code: str) -> str:
        """Compile the complete kernel source and check it against the task's reference.

        Args:
            code: The complete source file of the kernel, defining the task's entry point.

        Returns:
            The verdict, and for a failed kernel what to fix.
        """
        turn = len(self.records) + 1
        if turn > self.max_turns:
            return f"No submissions left: the limit is {self.max_turns}."
        rec = {"task": self.row.get("task"), "group": str(self.row.get("group", self.row.get("task"))),
               "sample": 0, "turn": turn, "backend": self.row.get("backend") or self.lp.backend or "cuda",
               "code": code}
        args = ["--group-size", "1", "--preset", "debug-all", "--max-turns", str(self.max_turns), *self.prune_args]
        try:
            result = self.lp.turn([rec], prune_args=args, errors="keep")
        except leap.Timeout as exc:  # the turn is not counted: the model may submit again
            log.warning("leap: submit: %s", exc)
            return f"leap could not check this submission within {exc.timeout:g} s; submit it again."
        decided = result.done[0]
        self.records.append(decided)
        if "error" in decided:
            return "leap could not check this submission: " + str(decided["error"].get("message"))
        if result.next:
            return result.next[0]["feedback"]
        if decided.get("status") == "pass":
            speed = (decided.get("bench") or {}).get("speedup")
            return "Correct." + (f" Speedup over the baseline: {speed:.2f}x." if speed else "")
        return "Still wrong, and no submissions are left."
