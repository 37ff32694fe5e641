"""examples/openrlhf/leap_openrlhf.py inside OpenRLHF's own agent classes (the version
tests/trainers/requirements.txt pins, installed without its dependencies).

Real: the file loaded as OpenRLHF loads it (vllm_engine._load_agent_executor: a module from a
path, its AgentExecutor checked against AgentExecutorBase), MultiTurnAgentExecutor.execute with
its tokenizing, budget and reward bookkeeping, AgentInstanceBase, the n samples of a prompt run
as concurrent execute() calls (RolloutRayActor.generate_responses), and leap's programs.
What is not real: the vLLM engine (RolloutRayActor imports vllm, which needs a GPU build):
ScriptedEngine answers generate(prompt_token_ids, sampling_params) with recorded kernels, in the
shape vLLM's RequestOutput has, and SamplingParams is a plain object with the two fields
execute() reads and writes (max_tokens, logprobs).

Run by tests/trainers.bats with the python of tests/trainers/venvs.sh.
"""

import asyncio
import importlib.util
import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import leap  # noqa: E402  (tests/trainers.bats puts python/ on PYTHONPATH)
import tiny  # noqa: E402

AGENT = os.path.join(ROOT, "examples", "openrlhf", "leap_openrlhf.py")
HANG_S = 300


def load_agent_executor(path):
    """What openrlhf.trainer.ray.vllm_engine._load_agent_executor does (that module imports vllm)."""
    from openrlhf.utils.agent import AgentExecutorBase

    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.AgentExecutor, AgentExecutorBase)
    return module.AgentExecutor()


class ScriptedEngine:
    """vLLM's place: the k-th sample of a prompt to ask plays recorded sample plan[k]."""

    def __init__(self, tok, plan):
        self.tok, self.plan = tok, plan
        self.answers, _ = tiny.answers()
        self.calls = {}  # prompt text (the first observation) -> samples started

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        text = self.tok.decode(prompt_token_ids)
        task = next(t for t in self.plan if f"TASK={t}\n" in text)
        turn = text.count("Assistant: ")  # the prompt and each feedback turn end so
        if turn == 1:
            k = self.calls[task] = self.calls.get(task, -1) + 1
            sample = self.plan[task][k]
        else:
            sample = int(text.split("SAMPLE=", 1)[1].split("\n", 1)[0]) if "SAMPLE=" in text else None
        answer = self.answers.get((task, sample, turn), self.answers[(task, sample, 1)])
        # the sample's identity rides in its own answer, so later turns find it in the conversation
        answer = f"SAMPLE={sample}\n" + answer
        ids = self.tok.encode(answer, add_special_tokens=False)
        await asyncio.sleep(0)
        out = types.SimpleNamespace(token_ids=ids, text=answer, finish_reason="stop", logprobs=None)
        return types.SimpleNamespace(outputs=[out])


class TestAgent(unittest.TestCase):
    def setUp(self):
        self.base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp(dir=os.path.join(ROOT, "tests", ".tmp"))
        self.env = {"LEAP_PREFIX": ROOT, "LEAP_BACKEND": "cpu", "LEAP_BENCH": "0", "LEAP_SEED": "1",
                    "LEAP_TASKS": os.path.join(ROOT, "tasks"), "LEAP_CACHE": os.path.join(self.base, "cache"),
                    "LEAP_MAX_TURNS": "3", "LEAP_GROUP_SIZE": "4", "LEAP_WAIT_S": "600"}
        self.old = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        self.tok = tiny.tokenizer(tiny.corpus())
        self.lp = leap.Leap(ROOT, backend="cpu", bench=False, seed=1, tasks=self.env["LEAP_TASKS"],
                            cache=self.env["LEAP_CACHE"])

    def tearDown(self):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def rollout(self, plan, n):
        """As RolloutRayActor.generate_responses: n concurrent execute() per prompt."""
        executor = load_agent_executor(AGENT)
        engine = ScriptedEngine(self.tok, plan)
        params = types.SimpleNamespace(max_tokens=None, logprobs=None)

        async def main():
            jobs = []
            for task in plan:
                prompt = f"TASK={task}\nWrite the kernel.\n\nAssistant: "
                jobs.append(asyncio.gather(*[executor.execute(prompt=prompt, label=task, sampling_params=params,
                                                              max_length=100000, hf_tokenizer=self.tok,
                                                              llm_engine=engine) for _ in range(n)]))
            return await asyncio.wait_for(asyncio.gather(*jobs), HANG_S)

        return asyncio.run(main())

    def expected(self, task, samples):
        answers, _ = tiny.answers()
        recs = [{"task": task, "group": task, "sample": i, "turn": 1, "backend": "cpu",
                 "completion": answers[(task, s, 1)]} for i, s in enumerate(samples)]
        done = []
        for t in (1, 2, 3):
            turn = self.lp.turn(recs, ["--group-size", str(len(samples)), "--max-turns", "3"])
            done += turn.done
            recs = [dict(r, completion=answers.get((task, samples[r["sample"]], t + 1),
                                                   answers[(task, samples[r["sample"]], 1)])) for r in turn.next]
            if not recs:
                break
        turns = {samples[s]: max(r["turn"] for r in done if r["sample"] == s) for s in range(len(samples))}
        return {samples[r["sample"]]: r["rank"]["score"] for r in self.lp.rank(done)}, turns

    def test_the_agent_ranks_each_prompts_samples_with_dcp(self):
        plan = {"softmax": [0, 1, 3, 7], "gelu": [0, 1, 2, 3]}
        results = self.rollout(plan, 4)
        for task, outs in zip(plan, results):
            want, turns = self.expected(task, plan[task])
            got = {}
            for o in outs:
                sample = int(self.tok.decode(o["observation_tokens"]).split("SAMPLE=", 1)[1].split("\n", 1)[0])
                got[sample] = o
                self.assertAlmostEqual(float(o["reward"]), want[sample], places=5)  # the summed reward is the rank
                self.assertEqual(len(o["action_ranges"]), turns[sample])  # DCP's turns, as leap decides them
            self.assertEqual(set(got), set(plan[task]))
            self.assertGreater(len({round(float(o["reward"]), 6) for o in outs}), 1)  # rewards vary
            self.assertAlmostEqual(sum(float(o["reward"]) for o in outs), 0.0, places=5)
            fed = [o for o in outs if len(o["action_ranges"]) > 1]
            self.assertTrue(fed)
            for o in fed:  # leap's feedback is in the conversation, between the answers
                self.assertIn("User: ", self.tok.decode(o["observation_tokens"]))

    def test_one_sample_is_scored_without_waiting_for_the_group(self):
        os.environ["LEAP_WAIT_S"] = "3600"  # far beyond HANG_S: nothing may wait for absent samples
        results = self.rollout({"softmax": [0]}, 1)
        self.assertEqual(float(results[0][0]["reward"]), 1.0)  # a group of one: solved scores 1.0


if __name__ == "__main__":
    unittest.main()
