"""LeapInteraction inside verl 0.6.1's own ToolAgentLoop (its multi-turn interaction hook).

Real: verl 0.6.1's hydra config (its ppo_trainer.yaml), its interaction registry reading
examples/verl/interaction_config.yaml, ToolAgentLoop (instantiated through the agent loop
registry as verl 0.6.1's AgentLoopWorker does, one per trajectory, the rollout.n trajectories of
a prompt run as concurrent coroutines of one event loop), its BaseInteraction, the tokenizer,
and leap's programs. Stand-ins: the model server (ScriptedServer, as in test_verl.py), and the
AgentLoopWorker around the loops (verl 0.6.1's starts a Ray actor for its reward manager; the
loop it runs is reproduced here: instantiate, then run with the row's fields).

verl 0.6.1 needs transformers 4, the environment holds verl 0.9.1's transformers 5:
tests/trainers/venvs.sh adds an overlay (verl 0.6.1, transformers 4.57.1 and what they need)
that tests/trainers.bats puts first on PYTHONPATH ($LEAP_VERL061_PATH).
"""

import asyncio
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "verl"))

import leap  # noqa: E402
import tiny  # noqa: E402
from test_verl import ScriptedServer  # noqa: E402

N = 8
HANG_S = 240  # a rollout still running then is a hang: the deadlines under test are 2 s


class TestToolAgentLoop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import verl

        assert verl.__version__ == "0.6.1", verl.__version__
        import make_dataset

        cls.base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp(dir=os.path.join(ROOT, "tests", ".tmp"))
        cls.lp = leap.Leap(ROOT, backend="cpu", bench=False, seed=1, tasks=os.path.join(ROOT, "tasks"),
                           cache=os.path.join(cls.base, "cache"))
        cls.model, cls.tok = tiny.model_dir(os.path.join(cls.base, "model"))
        cls.rows = make_dataset.rows(cls.lp, ["softmax"])
        cls.prompts = {r["extra_info"]["task"]: r["prompt"][-1]["content"] for r in cls.rows}

    def config(self, interaction, max_assistant_turns):
        import yaml
        from hydra import compose, initialize_config_dir

        import verl

        with open(os.path.join(ROOT, "examples", "verl", "interaction_config.yaml")) as f:
            conf = yaml.safe_load(f)
        conf["interaction"][0]["config"].update(interaction)
        path = os.path.join(self.base, f"interaction-{len(os.listdir(self.base))}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(conf, f)
        cfgdir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
        with initialize_config_dir(config_dir=cfgdir, version_base=None):
            return compose(config_name="ppo_trainer", overrides=[
                f"actor_rollout_ref.model.path={self.model}", "actor_rollout_ref.rollout.name=vllm",
                f"actor_rollout_ref.rollout.n={N}", "actor_rollout_ref.rollout.prompt_length=4096",
                "actor_rollout_ref.rollout.response_length=8192",
                "actor_rollout_ref.rollout.multi_turn.enable=True",
                f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={max_assistant_turns}",
                f"actor_rollout_ref.rollout.multi_turn.interaction_config_path={path}",
            ])

    def rollout(self, interaction, max_assistant_turns, plan=range(N)):
        """verl 0.6.1's AgentLoopWorker._run_agent_loop for each of a prompt's trajectories."""
        import hydra
        from verl.experimental.agent_loop.agent_loop import _agent_loop_registry, _DummyConfig
        from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

        settings = {"prefix": ROOT, "backend": "cpu", "bench": False, "seed": 1, "tasks": os.path.join(ROOT, "tasks"),
                    "cache": os.path.join(self.base, "cache"), "group_size": N, **interaction}
        config = self.config(settings, max_assistant_turns)
        ToolAgentLoop._class_initialized = False  # each test its own interaction config
        server = ScriptedServer(self.tok, self.prompts, {"softmax": list(plan)})
        row = self.rows[0]

        async def one():
            loop = hydra.utils.instantiate(config=_agent_loop_registry["tool_agent"],
                                           trainer_config=_DummyConfig(config=config), server_manager=server,
                                           tokenizer=self.tok, processor=None)
            return await loop.run({"temperature": 1.0}, raw_prompt=list(row["prompt"]),
                                  extra_info=dict(row["extra_info"]))

        async def main():
            return await asyncio.wait_for(asyncio.gather(*[one() for _ in plan]), HANG_S)

        outs = asyncio.run(main())
        return outs, server

    def expected(self, samples, max_turns):
        answers, _ = tiny.answers()
        recs = [{"task": "softmax", "group": "softmax", "sample": s, "turn": 1, "backend": "cpu",
                 "completion": answers[("softmax", s, 1)]} for s in samples]
        done = []
        for t in range(1, max_turns + 1):
            turn = self.lp.turn(recs, ["--group-size", str(len(samples)), "--max-turns", str(max_turns)])
            done += turn.done
            recs = [dict(r, completion=answers.get(("softmax", r["sample"], t + 1), answers[("softmax", r["sample"], 1)]))
                    for r in turn.next]
            if not recs:
                break
        return {r["sample"]: r["rank"]["score"] for r in self.lp.rank(done)}

    def scores(self, outs, server):
        """{recorded sample: turn scores} of each trajectory."""
        order = [s for _, s in server.who.values()]  # the k-th trajectory to ask played plan[k]
        by_rid = {rid: s for rid, (_, s) in server.who.items()}
        got = {}
        for out in outs:
            # ToolAgentLoop's request id is not in its output: match by the first answer's tokens
            text = self.tok.decode(out.response_ids)
            answers, _ = tiny.answers()
            s = next(s for s in order if answers[("softmax", s, 1)].strip()[:200] in text)
            got[s] = out.extra_fields["turn_scores"]
        self.assertEqual(set(got), set(by_rid.values()))
        return got

    def test_told_max_assistant_turns_the_group_is_ranked_at_once(self):
        outs, server = self.rollout({"max_turns": 3, "max_assistant_turns": 3, "wait_s": 3600}, 3)
        want = self.expected(list(range(N)), max_turns=2)
        got = self.scores(outs, server)
        for s in range(N):
            self.assertEqual(len(got[s]), 1, s)  # the final turn's score: the rank score
            self.assertAlmostEqual(got[s][0], want[s], places=9)
        self.assertGreater(len({round(v[0], 9) for v in got.values()}), 1)

    def test_max_assistant_turns_equal_to_max_turns_does_not_hang(self):
        # the configuration examples/verl/README.md allowed: verl ends the trajectories at
        # assistant turn 3 before the interaction sees it; the group is ranked at the deadline
        outs, server = self.rollout({"max_turns": 3, "wait_s": 2}, 3)
        got = self.scores(outs, server)
        scored = {s: v for s, v in got.items() if v}
        self.assertTrue(scored)
        self.assertTrue(all(len(v) == 1 for v in scored.values()))
        self.assertTrue([s for s, v in got.items() if not v])  # verl cut those: their turn 3 never arrived
        _, recorded = tiny.answers()
        first = [r["sample"] for r in recorded if r["task"] == "softmax" and r["turn"] == 1 and r["expect"] == "pass"]
        for s in first:  # solved at turn 1: above the rest, cut ones included
            self.assertGreater(scored[s][0], 0.0, s)


if __name__ == "__main__":
    unittest.main()
