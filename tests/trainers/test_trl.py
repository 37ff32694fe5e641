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

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "trl"))

import leap  # noqa: E402  (tests/trainers.bats puts python/ on PYTHONPATH)
import tiny  # noqa: E402
from leap_trl import LeapRankReward, leap_dataset  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
