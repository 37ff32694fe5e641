"""LeapRankReward inside TRL's real GRPOTrainer (the version tests/trainers/requirements.txt
pins), on the CPU, with a tiny random model built from a config.

The one stand-in is sampling: a random model writes no kernel, so ScriptedLlama (a real
LlamaForCausalLM whose generate() plays a script) answers the first completion of each prompt
with a recorded passing kernel and the others with junk. Everything after generation is TRL's:
the reward call, its group normalisation, the loss through the model's own forward pass, the
optimizer step. The test asserts signal, not only the call: the kernel scores above the junk,
rewards vary within each group, grad_norm > 0, and leap wrote its records.

Run by tests/trainers.bats with the python of tests/trainers/venvs.sh.
"""

import functools
import json
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "trl"))

import leap  # noqa: E402  (tests/trainers.bats puts python/ on PYTHONPATH)
import tiny  # noqa: E402
from leap_trl import LeapKernelEnv, LeapRankReward, leap_dataset  # noqa: E402

TASKS = ["softmax", "gelu"]
G = 4  # num_generations
JUNK = "I am not sure how to write this kernel."


def scripted_llama(tok, prompts, kernels):
    """A LlamaForCausalLM whose generate() returns, for each row, the recorded kernel of its task
    when it is the first row of that task in the batch, else junk; then EOS and padding."""
    import torch
    from transformers import LlamaForCausalLM

    base = tiny.llama(tok)

    class ScriptedLlama(LlamaForCausalLM):
        def generate(self, input_ids=None, attention_mask=None, **kwargs):
            seen, rows = set(), []
            for ids in input_ids:
                text = tok.decode(ids, skip_special_tokens=True)
                task = next(t for t, p in prompts.items() if p in text)
                rows.append(kernels[task] if task not in seen else JUNK)
                seen.add(task)
            outs = [tok.encode(r, add_special_tokens=False) + [tok.eos_token_id] for r in rows]
            width = max(len(o) for o in outs)
            pad = [o + [tok.pad_token_id] * (width - len(o)) for o in outs]
            return torch.cat([input_ids, torch.tensor(pad, dtype=input_ids.dtype, device=input_ids.device)], dim=1)

    model = ScriptedLlama(base.config)
    model.load_state_dict(base.state_dict())
    return model


class TestGRPOTrainer(unittest.TestCase):
    def test_one_step_learns_from_leaps_ranks(self):
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer

        base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp(dir=os.path.join(ROOT, "tests", ".tmp"))
        cache = os.path.join(base, "cache")
        lp = leap.Leap(ROOT, backend="cpu", bench=False, cache=cache, tasks=os.path.join(ROOT, "tasks"))
        rows = leap_dataset(lp, TASKS)
        prompts = {r["task"]: r["prompt"][-1]["content"].split("\n", 1)[0] for r in rows}  # "# Task: ..."
        answers, recorded = tiny.answers()
        kernels = {t: next(r["completion"] for r in recorded if r["task"] == t and r["turn"] == 1
                           and r["expect"] == "pass") for t in TASKS}
        tok = tiny.tokenizer(tiny.corpus() + [r["prompt"][-1]["content"] for r in rows])
        model = scripted_llama(tok, prompts, kernels)
        calls, logs = [], []
        rank = LeapRankReward(lp)

        def leap_rank(prompts, completions, completion_ids, **kwargs):
            scores = rank(prompts, completions, completion_ids, **kwargs)
            calls.append((list(kwargs["task"]), [c if isinstance(c, str) else c[0]["content"] for c in completions],
                          scores))
            return scores

        args = GRPOConfig(output_dir=os.path.join(base, "out"), num_generations=G, per_device_train_batch_size=2 * G,
                          max_completion_length=1024, max_steps=1, learning_rate=1e-3, report_to=[], use_cpu=True,
                          logging_steps=1, save_strategy="no", scale_rewards="none", seed=1)
        trainer = GRPOTrainer(model=model, reward_funcs=[leap_rank], args=args, processing_class=tok,
                              train_dataset=Dataset.from_list(rows))
        trainer.add_callback(type("Log", (__import__("transformers").TrainerCallback,), {
            "on_log": lambda self, a, s, c, logs=None, **k: logs and calls.append(("log", logs))})())
        trainer.train()
        rewards = [c for c in calls if c[0] != "log"]
        logged = [c[1] for c in calls if c[0] == "log"]
        self.assertTrue(rewards)
        for tasks, texts, scores in rewards:
            self.assertEqual(len(scores), 2 * G)
            for t in set(tasks):
                mine = [(x, s) for x, s, tt in zip(texts, scores, tasks) if tt == t]
                self.assertEqual(len(mine), G)
                good = [s for x, s in mine if x.strip() == kernels[t].strip()]
                junk = [s for x, s in mine if x.strip() == JUNK]
                self.assertEqual(len(good), 1, t)
                self.assertTrue(all(good[0] > j for j in junk), (t, mine))  # the kernel beats the junk
                self.assertGreater(len({s for _, s in mine}), 1)  # rewards vary within the group
                self.assertAlmostEqual(sum(s for _, s in mine), 0.0, places=9)
        grads = [entry["grad_norm"] for entry in logged if "grad_norm" in entry]
        self.assertTrue(grads, logged)
        self.assertGreater(max(float(g) for g in grads), 0.0)  # the step learned something
        # leap's own records: the compile cache holds the kernels leap compiled
        self.assertTrue(os.path.isdir(cache) and any(files for _, _, files in os.walk(cache)), cache)


QWEN_SPECIALS = ["<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
                 "<think>", "</think>"]
WRONG = "int leap_wrong;"  # compiles, defines no kernel: a failed submission


def scripted_tool_llama(tok, prompts, kernels):
    """A LlamaForCausalLM whose generate() calls the submit tool: the first row of each task
    submits the task's passing kernel, the others a wrong one; after the tool's answer, each
    says it is done."""
    import torch
    from transformers import LlamaForCausalLM

    base = tiny.llama(tok)

    class ScriptedToolLlama(LlamaForCausalLM):
        def generate(self, input_ids=None, attention_mask=None, **kwargs):
            seen, rows = set(), []
            for ids in input_ids:
                text = tok.decode(ids, skip_special_tokens=False)
                task = next(t for t, p in prompts.items() if p in text)
                if "<tool_response>" in text:
                    rows.append("Done.")
                else:
                    code = kernels[task] if task not in seen else WRONG
                    call = json.dumps({"name": "submit", "arguments": {"code": code}})
                    rows.append(f"<tool_call>\n{call}\n</tool_call>")
                seen.add(task)
            outs = [tok.encode(r, add_special_tokens=False) + [tok.eos_token_id] for r in rows]
            width = max(len(o) for o in outs)
            pad = [o + [tok.pad_token_id] * (width - len(o)) for o in outs]
            return torch.cat([input_ids, torch.tensor(pad, dtype=input_ids.dtype, device=input_ids.device)], dim=1)

    model = ScriptedToolLlama(base.config)
    model.load_state_dict(base.state_dict())
    return model


class TestEnvironmentFactory(unittest.TestCase):
    def test_tool_calls_reach_leap_and_the_trajectories_are_ranked(self):
        import trl
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer

        base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp(dir=os.path.join(ROOT, "tests", ".tmp"))
        lp = leap.Leap(ROOT, backend="cpu", bench=False, cache=os.path.join(base, "cache"),
                       tasks=os.path.join(ROOT, "tasks"))
        rows = leap_dataset(lp, TASKS, tools=True)
        self.assertIn("`submit` tool", rows[0]["prompt"][0]["content"])
        prompts = {r["task"]: r["prompt"][-1]["content"].split("\n", 1)[0] for r in rows}
        _, recorded = tiny.answers()
        kernels = {}
        for t in TASKS:
            c = next(r["completion"] for r in recorded if r["task"] == t and r["turn"] == 1 and r["expect"] == "pass")
            kernels[t] = re.search(r"```[a-z]*\n(.*?)```", c, re.S).group(1)
        with open(os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen3.jinja")) as f:
            template = f.read()  # a template TRL knows how to parse tool calls from
        tok = tiny.tokenizer(tiny.corpus() + [r["prompt"][-1]["content"] for r in rows],
                             extra_specials=QWEN_SPECIALS, chat_template=template, eos="<|im_end|>")
        model = scripted_tool_llama(tok, prompts, kernels)
        envs, calls = [], []

        def factory():
            env = LeapKernelEnv(lp, max_turns=3)
            envs.append(env)
            return env

        rank = LeapRankReward(lp)

        def leap_rank(prompts, completions, completion_ids=None, **kwargs):
            scores = rank(prompts, completions, completion_ids, **kwargs)
            calls.append((list(kwargs["task"]), [list(e.records) for e in kwargs["environments"]], scores))
            return scores

        logs = []
        args = GRPOConfig(output_dir=os.path.join(base, "out"), num_generations=G, per_device_train_batch_size=2 * G,
                          max_completion_length=2048, max_steps=1, learning_rate=1e-3, report_to=[], use_cpu=True,
                          logging_steps=1, save_strategy="no", scale_rewards="none", seed=1)
        trainer = GRPOTrainer(model=model, reward_funcs=[leap_rank], args=args, processing_class=tok,
                              train_dataset=Dataset.from_list(rows), environment_factory=factory)
        trainer.add_callback(type("Log", (__import__("transformers").TrainerCallback,), {
            "on_log": lambda self, a, s, c, logs=None, **k: logs and logs_.append(logs)})())
        logs_ = logs
        trainer.train()
        self.assertTrue(calls)
        for tasks, records, scores in calls:
            for t in set(tasks):
                mine = [(r, s) for r, s, tt in zip(records, scores, tasks) if tt == t]
                self.assertEqual(len(mine), G)
                for r, _ in mine:
                    self.assertEqual(len(r), 1)  # one submission each, through the tool, checked by leap
                solved = [s for r, s in mine if r[0]["status"] == "pass"]
                failed = [s for r, s in mine if r[0]["status"] != "pass"]
                self.assertEqual(len(solved), 1, [r[0]["status"] for r, _ in mine])
                self.assertTrue(all(solved[0] > f for f in failed))
                self.assertAlmostEqual(sum(s for _, s in mine), 0.0, places=9)
        grads = [float(e["grad_norm"]) for e in logs if "grad_norm" in e]
        self.assertTrue(grads)
        self.assertGreater(max(grads), 0.0)


if __name__ == "__main__":
    unittest.main()
