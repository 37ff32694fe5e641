"""LeapRankReward inside TRL's real GRPOTrainer: one training step on the CPU with a tiny model
built from a config (random weights, a word-level tokenizer made here: nothing is downloaded).

Needs trl (which pulls torch, transformers, datasets, accelerate). tests/python.bats runs it
with $LEAP_TRL_PYTHON and skips, saying why, when no python with trl is given. A random model
writes no code, so every completion is no_code and every score 0: this test checks the call
(signature, columns, group layout, one float per completion), test_trl.py checks the numbers.
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "trl"))

import leap  # noqa: E402
from leap_trl import LeapRankReward, leap_dataset  # noqa: E402


def tiny_model_and_tokenizer(texts):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]",
                                        eos_token="[EOS]", padding_side="left")
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }} [EOS] {% endfor %}"
                               "{% if add_generation_prompt %}assistant: {% endif %}")
    config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                         pad_token_id=0, eos_token_id=2, bos_token_id=2)
    return LlamaForCausalLM(config), tokenizer


class TestGRPOTrainer(unittest.TestCase):
    def test_one_step_calls_the_reward_with_whole_groups(self):
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer

        base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp()
        lp = leap.Leap(ROOT, backend="cpu", bench=False, cache=os.path.join(base, "cache"),
                       tasks=os.path.join(ROOT, "tasks"))
        rows = leap_dataset(lp, ["softmax", "gelu", "silu"])
        for r in rows:  # short prompts keep the step fast; the reward needs only the columns
            r["prompt"] = [{"role": "user", "content": r["prompt"][1]["content"][:200]}]
        model, tokenizer = tiny_model_and_tokenizer([r["prompt"][0]["content"] for r in rows] + ["```c void f() {} ```"])
        calls = []
        rank = LeapRankReward(lp)

        def leap_rank(prompts, completions, completion_ids, **kwargs):
            scores = rank(prompts, completions, completion_ids, **kwargs)
            calls.append((list(kwargs["group"]), [len(c) for c in completion_ids], scores, sorted(kwargs)))
            return scores

        args = GRPOConfig(output_dir=os.path.join(base, "out"), num_generations=4, per_device_train_batch_size=8,
                          max_completion_length=8, max_steps=2, learning_rate=1e-4, report_to=[], use_cpu=True,
                          logging_steps=1, save_strategy="no", scale_rewards="none", seed=1)
        trainer = GRPOTrainer(model=model, reward_funcs=[leap_rank], args=args, processing_class=tokenizer,
                              train_dataset=Dataset.from_list(rows))
        trainer.train()
        self.assertTrue(calls)
        for groups, lengths, scores, keys in calls:
            self.assertEqual(len(scores), len(groups))
            self.assertTrue(all(isinstance(s, float) for s in scores))
            # each prompt's num_generations completions come together in one call
            self.assertEqual(len(groups), 8)
            for g in set(groups):
                self.assertEqual(groups.count(g), 4, groups)
                first = groups.index(g)
                self.assertEqual(groups[first:first + 4], [g] * 4, groups)
            self.assertIn("task", keys)
            self.assertIn("backend", keys)
            self.assertIn("trainer_state", keys)
        print(f"reward calls: {[(c[0], c[2]) for c in calls]}")


if __name__ == "__main__":
    unittest.main()
