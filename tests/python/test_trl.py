"""examples/trl/leap_trl.py called exactly as trl 1.16's GRPOTrainer calls it (its
_calculate_rewards and _tool_call_loop), on recorded cpu answers: no model, no GPU.

The same functions inside the real GRPOTrainer: tests/trainers/test_trl.py (needs trl).
"""

import functools
import json
import os
import re
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "trl"))
sys.path.insert(0, HERE)

import leap  # noqa: E402
from leap_trl import LeapKernelEnv, LeapRankReward, leap_dataset  # noqa: E402
from test_leap import LeapCase, replay  # noqa: E402


def trl_kwargs(rows):
    """The keyword arguments GRPOTrainer._calculate_rewards adds: every dataset column but
    prompt (one value per completion), then trainer_state, log_extra and log_metric."""
    keys = [k for k in rows[0] if k not in ("prompt", "completion", "completion_ids")]
    kw = {k: [r[k] for r in rows] for k in keys}
    kw.update(trainer_state=object(), log_extra=lambda *a, **k: None, log_metric=lambda *a, **k: None)
    return kw


def fenced(completion):
    m = re.search(r"```[a-z]*\n(.*?)```", completion, re.S)
    return m.group(1) if m else completion


class TestRankReward(LeapCase):
    def batch(self, tasks=("softmax", "gelu")):
        """A generation batch as RepeatSampler lays it out: each prompt's completions together."""
        rows, completions, ids = [], [], []
        for t in tasks:
            for r in replay(t):
                rows.append({"prompt": [{"role": "user", "content": "..."}], "task": t, "group": t, "backend": "cpu"})
                completions.append([{"role": "assistant", "content": r["completion"]}])
                ids.append(list(range(r["tokens"])))
        return rows, completions, ids

    def test_scores_are_leap_ranks_in_each_group(self):
        rows, completions, ids = self.batch()
        reward = LeapRankReward(self.lp)
        got = reward(prompts=[r["prompt"] for r in rows], completions=completions, completion_ids=ids, **trl_kwargs(rows))
        self.assertEqual(len(got), len(rows))
        self.assertTrue(all(isinstance(x, float) for x in got))
        # the same records through the programs by hand
        recs = []
        for i, (row, c) in enumerate(zip(rows, completions)):
            recs.append({"task": row["task"], "group": row["group"], "sample": sum(r["group"] == row["group"] for r in rows[:i]),
                         "turn": 1, "backend": "cpu", "completion": c[0]["content"], "tokens": len(ids[i])})
        want = {(r["group"], r["sample"]): r["rank"]["score"] for r in self.lp.rank(self.lp.evaluate(recs))}
        self.assertEqual(got, [want[(r["group"], r["sample"])] for r in recs])
        for t in ("softmax", "gelu"):
            self.assertAlmostEqual(sum(x for x, r in zip(got, rows) if r["group"] == t), 0.0, places=9)

    def test_standard_format_and_grouping_by_column_not_position(self):
        rows, completions, ids = self.batch()
        order = list(range(0, len(rows), 2)) + list(range(1, len(rows), 2))  # groups interleaved
        r2 = [rows[i] for i in order]
        c2 = [completions[i][0]["content"] for i in order]  # plain strings: TRL's standard format
        i2 = [ids[i] for i in order]
        reward = LeapRankReward(self.lp)
        got = reward(prompts=["..."] * len(r2), completions=c2, completion_ids=i2, **trl_kwargs(r2))
        base = reward(prompts=["..."] * len(rows), completions=completions, completion_ids=ids, **trl_kwargs(rows))
        # sample numbers follow batch order within a group, so the interleaved batch numbers the
        # same completions the same way: the same scores, moved with their rows
        self.assertEqual(got, [base[i] for i in order])

    def test_a_group_split_between_processes_is_ranked_whole(self):
        rows, completions, ids = self.batch()
        cut = 5  # softmax's 8 completions: 5 on process 0, 3 on process 1
        whole = LeapRankReward(self.lp, gather=False)(prompts=[None] * len(rows), completions=completions,
                                                      completion_ids=ids, **trl_kwargs(rows))
        barrier, box, results = threading.Barrier(2), {}, {}

        def gather_object(obj, index):  # accelerate.utils.gather_object over two threads
            box[index] = obj
            barrier.wait()
            out = box[0] + box[1]
            barrier.wait()
            return out

        def process(index, lo, hi):
            reward = LeapRankReward(self.lp, gather=(functools.partial(gather_object, index=index), index))
            results[index] = reward(prompts=[None] * (hi - lo), completions=completions[lo:hi],
                                    completion_ids=ids[lo:hi], **trl_kwargs(rows[lo:hi]))

        threads = [threading.Thread(target=process, args=(0, 0, cut)),
                   threading.Thread(target=process, args=(1, cut, len(rows)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        self.assertEqual(results[0] + results[1], whole)

    def test_on_error(self):
        rows, completions, ids = self.batch(("softmax",))
        rows[2] = dict(rows[2], task="no_such_task")
        reward = LeapRankReward(self.lp, on_error="none")
        got = reward(prompts=[None] * len(rows), completions=completions, completion_ids=ids, **trl_kwargs(rows))
        self.assertIsNone(got[2])
        with self.assertRaises(leap.RecordError) as cm:
            LeapRankReward(self.lp)(prompts=[None] * len(rows), completions=completions, completion_ids=ids,
                                    **trl_kwargs(rows))
        self.assertIn("no_such_task", json.dumps(cm.exception.record))

    def test_dataset_rows_from_leap_prompt(self):
        rows = leap_dataset(self.lp, ["softmax", "gelu"])
        self.assertEqual([(r["task"], r["group"], r["backend"]) for r in rows], [("softmax", "softmax", "cpu"), ("gelu", "gelu", "cpu")])
        self.assertEqual([m["role"] for m in rows[0]["prompt"]], ["system", "user"])
        self.assertNotIn("submit", rows[0]["prompt"][0]["content"])
        tooled = leap_dataset(self.lp, ["softmax"], tools=True)
        self.assertIn("`submit` tool", tooled[0]["prompt"][0]["content"])  # the model is told the tool exists
        self.assertTrue(tooled[0]["prompt"][0]["content"].startswith(rows[0]["prompt"][0]["content"].rstrip()))
        self.assertEqual(tooled[0]["prompt"][1], rows[0]["prompt"][1])

    def test_past_the_deadline_every_reward_is_none(self):
        rows, completions, ids = self.batch(("softmax",))
        slow = leap.Leap(self.lp.prefix, backend="cpu", bench=False, tasks=self.lp.env["LEAP_TASKS"],
                         cache=self.lp.env["LEAP_CACHE"], timeout=0.001)
        got = LeapRankReward(slow)(prompts=[None] * len(rows), completions=completions, completion_ids=ids,
                                   **trl_kwargs(rows))
        self.assertEqual(got, [None] * len(rows))  # TRL leaves None out of the baseline and the loss


class TestFeedbackTool(LeapCase):
    def test_submit_answers_with_leap_feedback_and_the_reward_ranks_trajectories(self):
        by = {}
        with open(os.path.join(ROOT, "examples", "replay", "cpu.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                if r["task"] == "softmax":
                    by[(r["sample"], r["turn"])] = fenced(r["completion"])
        row = {"prompt": [{"role": "user", "content": "..."}], "task": "softmax", "group": "softmax", "backend": "cpu"}
        factory = functools.partial(LeapKernelEnv, self.lp, max_turns=3)
        envs = [factory() for _ in range(4)]
        plan = {0: [(0, 1)], 1: [(1, 1), (1, 2)], 2: [(3, 1), (3, 2), (3, 3)], 3: [(3, 1), (3, 2)]}
        answers = {}
        for i, env in enumerate(envs):  # as _tool_call_loop: reset with the row, then the tool calls
            self.assertIsNone(env.reset(**row))
            answers[i] = [env.submit(code=by[k]) for k in plan[i]]
        self.assertTrue(answers[0][0].startswith("Correct."))
        self.assertIn("wrong results", answers[1][0])  # leap-prune's feedback for a mismatch
        self.assertTrue(answers[1][1].startswith("Correct."))
        self.assertTrue(answers[2][2].startswith("Correct."))
        self.assertEqual(envs[3].records[-1]["status"], "mismatch")
        self.assertEqual(envs[0].submit(code=by[(0, 1)]), "Correct.")  # a tool call after success is a turn too
        rows = [row] * 4
        got = LeapRankReward(self.lp)(prompts=[None] * 4, completions=[[{"role": "assistant", "content": ""}]] * 4,
                                      environments=envs, **trl_kwargs(rows))
        # solved at turn 1 > turn 2 > turn 3 > never (leap-rank's default key starts with turn)
        self.assertEqual(got, sorted(got, reverse=True))
        self.assertEqual(len(set(got)), 4)
        self.assertEqual(got, [1.0, 1 / 3, -1 / 3, -1.0])

    def test_the_last_submission_is_refused_past_max_turns(self):
        env = LeapKernelEnv(self.lp, max_turns=1)
        env.reset(task="softmax", group="softmax", backend="cpu")
        self.assertEqual(env.submit(code="int x;"), "Still wrong, and no submissions are left.")
        self.assertEqual(env.submit(code="int x;"), "No submissions left: the limit is 1.")
        self.assertEqual(len(env.records), 1)


if __name__ == "__main__":
    unittest.main()
