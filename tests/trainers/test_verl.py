"""leap inside verl's own classes (the version tests/trainers/requirements.txt pins), on the CPU.

Real: verl's config (hydra, ppo_trainer.yaml), RLHFDataset over make_dataset.py's parquet, its
collate_fn, DataProto (uid, repeat), AgentLoopWorker with LeapAgentLoop and SingleTurnAgentLoop,
the tokenizer path (Continuous Token), the reward loop's NaiveRewardManager.run_single, and leap's
programs. The one stand-in is the model server: verl's AgentLoopWorker calls
`llm_client.generate(request_id, prompt_ids=..., sampling_params=...)` and gets a TokenOutput;
ScriptedServer answers with recorded kernels (examples/replay/cpu.jsonl) tokenized by the tiny
model's tokenizer, because serving a model needs a GPU.

Run by tests/trainers.bats with the python of tests/trainers/venvs.sh.
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

import leap  # noqa: E402  (the package: tests/trainers.bats puts python/ on PYTHONPATH)
import tiny  # noqa: E402

TASKS = ["softmax", "gelu"]
N = 4  # rollout.n


def settings(base):
    return {"prefix": ROOT, "backend": "cpu", "bench": False, "seed": 1, "cache": os.path.join(base, "cache"),
            "tasks": os.path.join(ROOT, "tasks"), "max_turns": 3, "wait_s": 600, "timeout_s": 240}


class ScriptedServer:
    """The model server verl's AgentLoopWorker talks to, answering from a script: the k-th
    trajectory of a task to ask plays the recorded sample k (its turn t answer at turn t)."""

    def __init__(self, tokenizer, prompts, plan=None):
        from verl.workers.rollout.replica import TokenOutput

        self.TokenOutput, self.tok = TokenOutput, tokenizer
        self.prompts = prompts  # task -> the user message leap-prompt wrote
        self.answers, _ = tiny.answers()
        self.plan = plan or {}  # task -> recorded samples, in the order trajectories ask
        self.who, self.turns, self.count = {}, {}, {}

    def task_of(self, text):
        return next(t for t, p in self.prompts.items() if p.split("\n", 1)[0] in text)  # "# Task: ..." line

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        if request_id not in self.who:
            task = self.task_of(self.tok.decode(prompt_ids))
            k = self.count.get(task, 0)
            self.count[task] = k + 1
            self.who[request_id] = (task, self.plan.get(task, list(range(8)))[k % 8])
        task, sample = self.who[request_id]
        turn = self.turns[request_id] = self.turns.get(request_id, 0) + 1
        text = self.answers.get((task, sample, turn), self.answers[(task, sample, 1)])
        ids = self.tok.encode(text, add_special_tokens=False) + [self.tok.eos_token_id]
        await asyncio.sleep(0)
        return self.TokenOutput(token_ids=ids, log_probs=None, stop_reason="completed")


class VerlCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from hydra import compose, initialize_config_dir

        import make_dataset
        import verl

        base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp(dir=os.path.join(ROOT, "tests", ".tmp"))
        cls.base = base
        cls.lp = leap.Leap(ROOT, backend="cpu", bench=False, seed=1, tasks=os.path.join(ROOT, "tasks"),
                           cache=os.path.join(base, "cache"))
        cls.model, cls.tok = tiny.model_dir(os.path.join(base, "model"))
        import pandas as pd

        cls.rows = make_dataset.rows(cls.lp, TASKS)
        cls.parquet = os.path.join(base, "train.parquet")
        pd.DataFrame(cls.rows).to_parquet(cls.parquet)
        cls.prompts = {r["extra_info"]["task"]: r["prompt"][-1]["content"] for r in cls.rows}
        loop_config = os.path.join(base, "agent_loop_config.yaml")
        import yaml

        with open(os.path.join(ROOT, "examples", "verl", "agent_loop_config.yaml")) as f:
            entries = yaml.safe_load(f)
        entries[0]["leap"] = settings(base)
        with open(loop_config, "w") as f:
            yaml.safe_dump(entries, f)
        cfgdir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
        with initialize_config_dir(config_dir=cfgdir, version_base=None):
            cls.config = compose(config_name="ppo_trainer", overrides=[
                f"actor_rollout_ref.model.path={cls.model}", "actor_rollout_ref.rollout.name=vllm",
                f"actor_rollout_ref.rollout.n={N}", "actor_rollout_ref.rollout.prompt_length=4096",
                "actor_rollout_ref.rollout.response_length=8192",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_config}",
                f"data.train_files={cls.parquet}", f"data.val_files={cls.parquet}",
                "data.max_prompt_length=4096", "data.filter_overlong_prompts=False",
            ])

    def batch(self, n, agent=None):
        """What RayPPOTrainer hands the rollout: the dataset's rows collated, a uid per prompt,
        repeated n times in place."""
        import uuid

        import numpy as np
        from verl import DataProto
        from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

        ds = RLHFDataset(self.parquet, self.tok, self.config.data)
        batch = DataProto.from_single_dict(collate_fn([ds[i] for i in range(len(ds))]))
        batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch))], dtype=object)
        if agent is not None:
            batch.non_tensor_batch["agent_name"] = np.array([agent] * len(batch), dtype=object)
        return batch.repeat(repeat_times=n, interleave=True)

    def worker(self, server):
        from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

        import leap_verl  # noqa: F401  (the worker's hydra imports it by the config's _target_)
        return AgentLoopWorker(self.config, llm_client=server)

    def expected(self, task, samples, max_turns=3):
        """leap's own pipeline on the same recorded answers: DCP turns, then leap-rank."""
        answers, _ = tiny.answers()
        recs = [{"task": task, "group": task, "sample": i, "turn": 1, "backend": "cpu",
                 "completion": answers[(task, s, 1)]} for i, s in enumerate(samples)]
        done = []
        for t in range(1, max_turns + 1):
            turn = self.lp.turn(recs, ["--group-size", str(len(samples)), "--max-turns", str(max_turns)])
            done += turn.done
            recs = [dict(r, completion=answers.get((task, samples[r["sample"]], t + 1),
                                                   answers[(task, samples[r["sample"]], 1)])) for r in turn.next]
            if not recs:
                break
        ranked = self.lp.rank(done)
        return {samples[r["sample"]]: r["rank"]["score"] for r in ranked}, done


class TestAgentLoop(VerlCase):
    def test_leap_agent_loop_in_agent_loop_worker_returns_rank_scores(self):
        import torch

        plan = {"softmax": [0, 1, 3, 7], "gelu": [0, 1, 2, 3]}
        server = ScriptedServer(self.tok, self.prompts, plan)
        out = asyncio.run(asyncio.wait_for(self.worker(server).generate_sequences(self.batch(N, "leap_agent")), 600))
        self.assertEqual(len(out), N * len(TASKS))
        self.assertIn("rm_scores", out.batch.keys())  # the agent loop's reward_score, at the last token
        scores = out.batch["rm_scores"].sum(-1).tolist()
        uids = list(out.non_tensor_batch["uid"])
        by_sample = {}
        for rid, (task, sample) in server.who.items():
            by_sample.setdefault(task, []).append(sample)
        for task in TASKS:
            want, done = self.expected(task, plan[task])
            rows = [i for i, e in enumerate(out.non_tensor_batch["extra_info"]) if e["task"] == task]
            self.assertEqual(len(rows), N)
            self.assertEqual(len({uids[i] for i in rows}), 1)  # one group per prompt
            got = sorted(scores[i] for i in rows)
            self.assertEqual(got, sorted(pytest_round(want.values())), task)
            self.assertAlmostEqual(sum(got), 0.0, places=5)
            self.assertGreater(max(got), min(got))  # the rewards vary within the group
        # feedback turns happened: a trajectory answered again after leap's feedback
        self.assertGreater(max(server.turns.values()), 1)
        turns = [int(t) for t in out.non_tensor_batch["leap_turns"]]
        self.assertEqual(sorted(turns), sorted(server.turns.values()))
        # the feedback is in the response, masked out of the loss (response_mask 0)
        mask = out.batch["response_mask"]
        multi = [i for i, t in enumerate(turns) if t > 1]
        for i in multi:
            valid = out.batch["attention_mask"][i, out.batch["prompts"].shape[1]:].sum().item()
            self.assertLess(mask[i, :valid].sum().item(), valid)
        self.assertTrue(torch.isfinite(out.batch["rm_scores"]).all())

    def test_validation_with_one_sample_per_prompt_is_scored_without_waiting(self):
        plan = {"softmax": [0], "gelu": [5]}  # softmax 0 passes at turn 1
        server = ScriptedServer(self.tok, self.prompts, plan)
        # wait_s far beyond the test's bound: a group of one must not wait for the absent seven
        out = asyncio.run(asyncio.wait_for(self.worker(server).generate_sequences(self.batch(1, "leap_agent")), 300))
        scores = dict(zip([e["task"] for e in out.non_tensor_batch["extra_info"]],
                          out.batch["rm_scores"].sum(-1).tolist()))
        self.assertEqual(scores["softmax"], 1.0)


def pytest_round(values):
    import torch

    return [float(torch.tensor(v, dtype=torch.float32)) for v in values]  # rm_scores are float32


class TestSingleTurnReward(VerlCase):
    def test_make_dataset_rows_are_scored_by_leap_not_zero(self):
        """verl's single-turn agent loop, then the reward loop's NaiveRewardManager.run_single
        with leap_verl.compute_score, on make_dataset.py's rows (they carry interaction_kwargs)."""
        from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

        import leap_verl

        plan = {"softmax": [0, 1, 4, 5], "gelu": [0, 1, 2, 3]}
        server = ScriptedServer(self.tok, self.prompts, plan)
        out = asyncio.run(asyncio.wait_for(self.worker(server).generate_sequences(self.batch(N, "single_turn_agent")), 300))

        def score(**kw):
            return leap_verl.compute_score(leap=settings(self.base), **kw)

        got = {}

        async def all_scores():  # the manager takes the running loop, as in verl's reward loop worker
            manager = NaiveRewardManager(self.config, self.tok, score)
            for i in range(len(out)):
                r = await manager.run_single(out[i:i + 1])
                got.setdefault(out.non_tensor_batch["extra_info"][i]["task"], []).append(r["reward_score"])
        asyncio.run(all_scores())
        _, rows = tiny.answers()
        for task in TASKS:
            want = sorted(1.0 if r["expect"] == "pass" else 0.0 for r in rows
                          if r["task"] == task and r["turn"] == 1 and r["sample"] in plan[task])
            self.assertEqual(sorted(got[task]), want, task)
        self.assertIn(1.0, got["softmax"])  # a passing kernel scores 1.0, not the 0.0 of a cut trajectory


if __name__ == "__main__":
    unittest.main()
