"""examples/verl/leap_verl.py called exactly as verl 0.6.1 calls it, on recorded cpu answers.

The interaction is driven like ToolAgentLoop drives it: start_interaction(request_id,
**interaction_kwargs), then after each assistant turn generate_response(request_id, messages,
**interaction_kwargs) with the assistant message appended, until it says terminate; the
rollout.n trajectories of a prompt run as concurrent coroutines of one event loop, as in an
agent-loop worker. The rewards are called as NaiveRewardManager (keywords) and
BatchRewardManager (lists) call them. When $LEAP_VERL_BASE names verl's own
verl/interactions/base.py (tests/python.bats takes it from the verl 0.6.1 wheel), it is loaded
as verl.interactions.base, so LeapInteraction subclasses the real BaseInteraction.
"""

import asyncio
import importlib.util
import json
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "verl"))
sys.path.insert(0, HERE)

if os.environ.get("LEAP_VERL_BASE"):  # verl's own BaseInteraction, without verl's heavy __init__
    spec = importlib.util.spec_from_file_location("verl.interactions.base", os.environ["LEAP_VERL_BASE"])
    base = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(base)
    for name in ("verl", "verl.interactions"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["verl.interactions.base"] = base

import leap_verl  # noqa: E402
from test_leap import LeapCase, replay  # noqa: E402

ANSWERS = {}
with open(os.path.join(ROOT, "examples", "replay", "cpu.jsonl")) as f:
    for line in f:
        r = json.loads(line)
        ANSWERS[(r["task"], r["sample"], r["turn"])] = r["completion"]


def settings(lp):
    return {"prefix": ROOT, "backend": "cpu", "bench": False, "seed": 1, "cache": lp.env["LEAP_CACHE"],
            "tasks": lp.env["LEAP_TASKS"]}


async def trajectory(inter, task, sample, kwargs, stop_after=None):
    """One trajectory as ToolAgentLoop runs it; returns (turns, turn_scores, last reply)."""
    rid = await inter.start_interaction(f"req-{task}-{sample}", **kwargs)
    messages = [{"role": "user", "content": "write the kernel"}]
    scores, turn = [], 0
    while True:
        turn += 1
        if stop_after is not None and turn > stop_after:
            return turn - 1, scores, None  # verl ended it (response length): no more calls
        messages.append({"role": "assistant", "content": ANSWERS.get((task, sample, turn), ANSWERS[(task, sample, 1)])})
        done, reply, score, _ = await inter.generate_response(rid, messages, **kwargs)
        messages.append({"role": "user", "content": reply})
        if score is not None:
            scores.append(score)
        if done:
            return turn, scores, reply


class TestInteraction(LeapCase):
    def rollout(self, tasks, n=8, cut=None, wait_s=600):
        config = dict(settings(self.lp), name="leap", group_size=n, max_turns=3, wait_s=wait_s)
        inter = leap_verl.LeapInteraction(config)

        async def main():
            jobs = []
            for t in tasks:
                kw = {"name": "leap", "task": t, "group": t, "backend": "cpu"}
                for s in range(n):
                    jobs.append(trajectory(inter, t, s, kw, stop_after=(cut or {}).get((t, s))))
            return await asyncio.gather(*jobs)

        return inter, asyncio.run(main())

    def pipeline(self, task, n=8):
        """The same rollout through the programs: three turns of lp.turn, then leap-rank."""
        recs = [{k: v for k, v in r.items() if k != "tokens"} for r in replay(task)][:n]  # verl: no counts
        done = []
        for t in (1, 2, 3):
            turn = self.lp.turn(recs, ["--group-size", str(len(recs)), "--max-turns", "3"])
            done += turn.done
            recs = [dict(r, completion=ANSWERS.get((task, r["sample"], t + 1), ANSWERS[(task, r["sample"], 1)]))
                    for r in turn.next]
            if not recs:
                break
        return done, {r["sample"]: r["rank"]["score"] for r in self.lp.rank(done)}

    def test_dcp_and_rank_scores_are_the_pipelines(self):
        if leap_verl.BaseInteraction is not object:
            self.assertEqual(leap_verl.BaseInteraction.__module__, "verl.interactions.base")
            self.assertTrue(issubclass(leap_verl.LeapInteraction, leap_verl.BaseInteraction))
        inter, results = self.rollout(["softmax", "gelu"])
        for k, task in enumerate(["softmax", "gelu"]):
            done, want = self.pipeline(task)
            turns = {s: max(r["turn"] for r in done if r["sample"] == s) for s in range(8)}
            for s in range(8):
                nturns, scores, _ = results[8 * k + s]
                self.assertEqual(nturns, turns[s], (task, s))
                self.assertEqual(len(scores), 1)  # only the final turn carries a score
                self.assertAlmostEqual(scores[0], want[s], places=12)
        self.assertEqual(leap_verl.LeapInteraction._groups, {})  # ended groups are dropped

    def test_a_trajectory_verl_cut_does_not_hold_its_group_forever(self):
        inter, results = self.rollout(["softmax"], cut={("softmax", 3): 1}, wait_s=2)
        nturns, scores, _ = results[3]
        self.assertEqual((nturns, scores), (1, []))
        for s in (0, 1, 2, 4, 5, 6, 7):
            self.assertEqual(len(results[s][1]), 1, s)

    def test_calculate_and_finalize(self):
        inter, _ = self.rollout(["softmax"])
        rid = "req-softmax-0"
        self.assertGreater(asyncio.run(inter.calculate_score(rid)), 0)
        asyncio.run(inter.finalize_interaction(rid))
        self.assertNotIn(rid, inter._instances)


class TestRewards(LeapCase):
    def test_compute_score_as_naive_reward_manager_calls_it(self):
        recs = replay("softmax")
        kw = {"leap": settings(self.lp)}
        got = [leap_verl.compute_score(data_source="leap", solution_str=r["completion"], ground_truth="softmax",
                                       extra_info={"task": "softmax", "backend": "cpu", "index": 0}, **kw)
               for r in recs]
        self.assertEqual([g["score"] for g in got], [1.0 if r["expect"] == "pass" else 0.0 for r in recs])
        self.assertEqual([g["status"] for g in got], [r["expect"] for r in recs])
        # multi-turn: the interaction's score, not a new evaluation
        multi = {"interaction_kwargs": {"name": "leap", "task": "softmax"}, "turn_scores": [0.25]}
        self.assertEqual(leap_verl.compute_score("leap", "no code here", "softmax", multi, **kw)["score"], 0.25)
        cut = {"interaction_kwargs": {"name": "leap", "task": "softmax"}, "turn_scores": []}
        self.assertEqual(leap_verl.compute_score("leap", "", "softmax", cut, **kw), {"score": 0.0, "leap_cut": True})

    def test_compute_score_batch_as_batch_reward_manager_calls_it(self):
        recs = replay("softmax") + replay("gelu")
        # verl repeats each prompt's row rollout.n times in place: the same extra_info object
        info = {"softmax": {"task": "softmax", "group": "softmax", "backend": "cpu"},
                "gelu": {"task": "gelu", "group": "gelu", "backend": "cpu"}}
        got = leap_verl.compute_score_batch(data_sources=["leap"] * len(recs),
                                            solution_strs=[r["completion"] for r in recs],
                                            ground_truths=[r["task"] for r in recs],
                                            extra_infos=[info[r["task"]] for r in recs], leap=settings(self.lp))
        # verl hands the reward strings only: no token counts, so no token tie-break
        plain = [{k: v for k, v in r.items() if k != "tokens"} for r in recs]
        want = {(r["group"], r["sample"]): r["rank"]["score"] for r in self.lp.rank(self.lp.evaluate(plain))}
        self.assertEqual(got, [want[(r["task"], r["sample"])] for r in recs])


if __name__ == "__main__":
    unittest.main()
