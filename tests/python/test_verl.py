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
import make_dataset  # noqa: E402
from test_leap import LeapCase, replay  # noqa: E402

ANSWERS = {}
with open(os.path.join(ROOT, "examples", "replay", "cpu.jsonl")) as f:
    for line in f:
        r = json.loads(line)
        ANSWERS[(r["task"], r["sample"], r["turn"])] = r["completion"]


def settings(lp):
    return {"prefix": ROOT, "backend": "cpu", "bench": False, "seed": 1, "cache": lp.env["LEAP_CACHE"],
            "tasks": lp.env["LEAP_TASKS"]}


async def trajectory(inter, task, sample, kwargs, stop_after=None, max_assistant_turns=None):
    """One trajectory as ToolAgentLoop runs it; returns (turns, turn_scores, last reply).

    stop_after: verl ends the trajectory after that many assistant turns without calling the
    interaction again (response length); max_assistant_turns: verl's multi_turn setting, which
    ends it at that assistant turn before the interaction sees it."""
    rid = await inter.start_interaction(f"req-{task}-{sample}", **kwargs)
    messages = [{"role": "user", "content": "write the kernel"}]
    scores, turn = [], 0
    while True:
        turn += 1
        if stop_after is not None and turn > stop_after:
            return turn - 1, scores, None  # verl ended it (response length): no more calls
        messages.append({"role": "assistant", "content": ANSWERS.get((task, sample, turn), ANSWERS[(task, sample, 1)])})
        if max_assistant_turns is not None and turn >= max_assistant_turns:
            return turn, scores, None  # ToolAgentLoop terminates before the interaction
        done, reply, score, _ = await inter.generate_response(rid, messages, **kwargs)
        messages.append({"role": "user", "content": reply})
        if score is not None:
            scores.append(score)
        if done:
            return turn, scores, reply


# A rollout that does not end within this many seconds is a hang: the test fails instead of
# waiting forever (the deadlines under test are 2 s).
HANG_S = 300


class TestInteraction(LeapCase):
    def rollout(self, tasks, n=8, cut=None, wait_s=600, max_assistant_turns=None, config=None):
        conf = dict(settings(self.lp), name="leap", group_size=8, max_turns=3, wait_s=wait_s, **(config or {}))
        inter = leap_verl.LeapInteraction(conf)

        async def main():
            jobs = []
            for t in tasks:
                kw = {"name": "leap", "task": t, "group": t, "backend": "cpu"}
                for s in range(n):
                    jobs.append(trajectory(inter, t, s, kw, stop_after=(cut or {}).get((t, s)),
                                           max_assistant_turns=max_assistant_turns))
            return await asyncio.wait_for(asyncio.gather(*jobs), HANG_S)

        return inter, asyncio.run(main())

    def pipeline(self, task, n=8, max_turns=3):
        """The same rollout through the programs: the turns of lp.turn, then leap-rank."""
        recs = [{k: v for k, v in r.items() if k != "tokens"} for r in replay(task)][:n]  # verl: no counts
        done = []
        for t in range(1, max_turns + 1):
            turn = self.lp.turn(recs, ["--group-size", str(len(recs)), "--max-turns", str(max_turns)])
            done += turn.done
            recs = [dict(r, completion=ANSWERS.get((task, r["sample"], t + 1), ANSWERS[(task, r["sample"], 1)]))
                    for r in turn.next]
            if not recs:
                break
        return done, {r["sample"]: r["rank"]["score"] for r in self.lp.rank(done)}

    def check_scores(self, results, task, k=0, max_turns=3):
        done, want = self.pipeline(task, max_turns=max_turns)
        turns = {s: max(r["turn"] for r in done if r["sample"] == s) for s in range(8)}
        for s in range(8):
            nturns, scores, _ = results[8 * k + s]
            self.assertEqual(nturns, turns[s], (task, s))
            self.assertEqual(len(scores), 1)  # only the final turn carries a score
            self.assertAlmostEqual(scores[0], want[s], places=12)
        self.assertGreater(len(set(want.values())), 1)  # the scores carry a signal

    def test_dcp_and_rank_scores_are_the_pipelines(self):
        if leap_verl.BaseInteraction is not object:
            self.assertEqual(leap_verl.BaseInteraction.__module__, "verl.interactions.base")
            self.assertTrue(issubclass(leap_verl.LeapInteraction, leap_verl.BaseInteraction))
        inter, results = self.rollout(["softmax", "gelu"])
        for k, task in enumerate(["softmax", "gelu"]):
            self.check_scores(results, task, k)
        self.assertEqual(inter._instances, {})  # every trajectory's instance freed at its end

    def test_max_assistant_turns_equal_to_max_turns_does_not_hang(self):
        # verl ends every trajectory at assistant turn 3 before the interaction sees it: the
        # turn-3 answers never come. Told verl's setting, leap's last turn is 2: no wait at all.
        inter, results = self.rollout(["softmax"], max_assistant_turns=3, config={"max_assistant_turns": 3})
        self.check_scores(results, "softmax", max_turns=2)
        # not told: the turn that never comes is decided at its deadline, the group ranked
        inter, results = self.rollout(["softmax"], max_assistant_turns=3, wait_s=2)
        finished = [r for r in results if r[1]]
        self.assertGreater(len(finished), 0)
        self.assertEqual(inter._instances, {})  # those verl cut too

    def test_a_group_whose_live_members_were_all_cut_is_ranked_with_what_it_has(self):
        # every trajectory that turn 1 expanded is cut by verl before turn 2 (response length)
        done, _ = self.pipeline("softmax")
        expanded = {r["sample"] for r in done if r["turn"] == 2}
        self.assertTrue(expanded)
        inter, results = self.rollout(["softmax"], cut={("softmax", s): 1 for s in expanded}, wait_s=2)
        for s in range(8):
            nturns, scores, _ = results[s]
            if s in expanded:
                self.assertEqual((nturns, scores), (1, []))  # verl cut it: no score of its own
            else:
                self.assertEqual(len(scores), 1, s)
                self.assertGreater(scores[0], 0, s)  # solved at turn 1: above the cut failures

    def test_a_trajectory_verl_cut_does_not_hold_its_group_forever(self):
        inter, results = self.rollout(["softmax"], cut={("softmax", 3): 1}, wait_s=2)
        nturns, scores, _ = results[3]
        self.assertEqual((nturns, scores), (1, []))
        for s in (0, 1, 2, 4, 5, 6, 7):
            self.assertEqual(len(results[s][1]), 1, s)

    def test_past_leaps_deadline_the_group_ends_with_zero_scores(self):
        # every leap pipeline is stopped at timeout_s: no verdict, so the same 0.0 for the whole
        # group (no advantage), and nobody waits for it
        inter, results = self.rollout(["softmax"], config={"timeout_s": 0.001})
        self.assertEqual([r[1] for r in results], [[0.0]] * 8)
        self.assertEqual([r[0] for r in results], [1] * 8)
        self.assertEqual(inter._instances, {})

    def test_validation_with_one_sample_is_scored_without_waiting(self):
        # val_kwargs.n = 1 while group_size is rollout.n = 8; wait_s far beyond HANG_S
        passing = [r["sample"] for r in replay("softmax") if r["expect"] == "pass"][0]
        inter = leap_verl.LeapInteraction(dict(settings(self.lp), name="leap", group_size=8, max_turns=3,
                                               wait_s=3600))
        kw = {"name": "leap", "task": "softmax", "group": "softmax", "backend": "cpu"}

        async def main():
            return await asyncio.wait_for(trajectory(inter, "softmax", passing, kw), HANG_S)

        nturns, scores, reply = asyncio.run(main())
        self.assertEqual((nturns, scores), (1, [1.0]))  # a group of one: solved scores 1.0
        self.assertEqual(inter._instances, {})


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
        self.assertEqual(len({frozenset(g) for g in got}), 1)  # the same keys for every response (verl stacks them)

    def test_compute_score_of_make_dataset_rows_is_leaps_verdict_not_zero(self):
        # make_dataset.py writes interaction_kwargs into every row; a single-turn rollout has no
        # turn scores (verl's single-turn agent loop writes turn_scores = [])
        rows = make_dataset.rows(self.lp, ["softmax"])
        info = dict(rows[0]["extra_info"], turn_scores=[], num_turns=2)
        self.assertIn("interaction_kwargs", info)
        recs = replay("softmax")
        got = [leap_verl.compute_score("leap", r["completion"], "softmax", dict(info), leap=settings(self.lp))["score"]
               for r in recs]
        self.assertEqual(got, [1.0 if r["expect"] == "pass" else 0.0 for r in recs])
        self.assertIn(1.0, got)

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
