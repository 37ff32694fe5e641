"""leap's verifiers environment (python/leap/verifiers_env.py) through the real verifiers package
(the version tests/trainers/requirements-verifiers.txt pins), on the cpu backend.

What is real: vf.load_environment (the hubs' entry point), the Environment's dataset handling,
evaluate -> generate -> run_group, MultiTurnEnv's rollout loop and stop conditions, the Rubric's
group scoring, and verifiers' OpenAI chat-completions client with the openai package's own
AsyncOpenAI. The one stand-in is the model server (serving a model needs a GPU): an
httpx.MockTransport under AsyncOpenAI answers chat completions with recorded kernels from
examples/replay/cpu.jsonl, so every byte between the model and leap goes through verifiers'
client and the openai package as it would against vLLM.

The assertions are leap's verdicts, not the calls: the rollout that answers with a correct
kernel scores above the one that answers wrong twice, the wrong one got leap's feedback as its
next user message (and answered it), and a rollout alone scores 1.0 or 0.0 by whether it solved.

Run by tests/trainers.bats with the python of tests/trainers/venvs.sh (LEAP_VERIFIERS_PYTHON).
"""

import asyncio
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import httpx  # noqa: E402
import verifiers as vf  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from verifiers.clients import OpenAIChatCompletionsClient  # noqa: E402

import tiny  # noqa: E402
from leap import verifiers_env  # noqa: E402  (tests/trainers.bats puts python/ on PYTHONPATH)

TASK = "softmax"


def recorded(task, sample, turn, expect):
    answers, rows = tiny.answers()
    row = next(r for r in rows if (r["task"], r["sample"], r["turn"]) == (task, sample, turn))
    assert row["expect"] == expect, row["expect"]  # the recording is what this test relies on
    return answers[(task, sample, turn)]


class ScriptedServer:
    """A chat-completions endpoint that plays a script: the n-th first-turn request gets the n-th
    first answer; a later turn gets the answer that follows the conversation's last assistant
    message. Every request's messages are kept."""

    def __init__(self, first, follow):
        self.first, self.follow, self.requests = list(first), dict(follow), []

    def handle(self, request):
        body = json.loads(request.content)
        self.requests.append(body["messages"])
        said = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
        text = self.follow[said[-1]] if said else self.first.pop(0)
        return httpx.Response(200, json={
            "id": f"scripted-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def client(self):
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return OpenAIChatCompletionsClient(AsyncOpenAI(base_url="http://model.invalid/v1", api_key="none",
                                                       http_client=http))


class TestVerifiersEnv(unittest.TestCase):
    def setUp(self):
        base = os.environ.get("BATS_TEST_TMPDIR") or tempfile.mkdtemp()
        self.args = dict(tasks=TASK, backend="cpu", prefix=ROOT, bench=False, seed=1, group_size=2, max_turns=2,
                         prune_args=["--preset", "debug-all"], task_dir=os.path.join(ROOT, "tasks"),
                         cache=os.path.join(base, "cache"), timeout_s=240)
        self.good = recorded(TASK, 0, 1, "pass")
        self.wrong = [recorded(TASK, 3, 1, "mismatch"), recorded(TASK, 3, 2, "mismatch")]

    def evaluate(self, env, server, n, **kw):
        out = asyncio.run(env.evaluate(server.client(), "scripted", num_examples=1, rollouts_per_example=n,
                                       on_progress=lambda *a: None, **kw))
        return out["outputs"]

    def test_a_group_scores_the_correct_kernel_above_the_wrong_one(self):
        env = vf.load_environment("leap.verifiers_env", **self.args)  # as the hubs load it
        self.assertIsInstance(env, vf.MultiTurnEnv)
        row = env.get_dataset()[0]
        self.assertEqual(row["info"]["leap_task"], TASK)
        self.assertIn("softmax", row["prompt"][-1]["content"])  # leap-prompt's user message
        server = ScriptedServer([self.good, self.wrong[0]], {self.wrong[0]: self.wrong[1]})
        outs = self.evaluate(env, server, 2)
        self.assertEqual(len(outs), 2)
        by = {o["completion"][0]["content"]: o for o in outs}
        good, bad = by[self.good], by[self.wrong[0]]
        for o in outs:
            self.assertIsNone(o["error"])
            self.assertEqual(o["stop_condition"], "has_final_env_response")
        # leap's verdicts: solved at turn 1 beats never solved; rank scores sum to 0 in a group
        self.assertGreater(good["reward"], bad["reward"])
        self.assertAlmostEqual(good["reward"] + bad["reward"], 0.0, places=6)
        self.assertEqual((good["metrics"]["leap_solved"], bad["metrics"]["leap_solved"]), (1.0, 0.0))
        # the correct one ended at once; the wrong one got leap's feedback as the next user
        # message (env_response), answered it, and ended at leap-prune's --max-turns
        self.assertEqual([m["role"] for m in good["completion"]], ["assistant", "user"])
        self.assertEqual(good["completion"][-1]["content"], "Correct.")
        self.assertEqual([m["role"] for m in bad["completion"]], ["assistant", "user", "assistant", "user"])
        feedback = bad["completion"][1]["content"]
        self.assertNotIn(feedback, ("Correct.", "No more turns."))
        self.assertIn(feedback, [m["content"] for r in server.requests for m in r if m["role"] == "user"])
        self.assertEqual(bad["completion"][2]["content"], self.wrong[1])
        self.assertEqual(len(server.requests), 3)

    def test_a_rollout_alone_scores_whether_it_solved(self):
        # independent scoring: Rubric.score_rollout, which refuses group reward functions
        env = verifiers_env.load_environment(**self.args)
        outs = self.evaluate(env, ScriptedServer([self.good], {}), 1, independent_scoring=True)
        self.assertEqual([o["reward"] for o in outs], [1.0])
        outs = self.evaluate(env, ScriptedServer([self.wrong[0]], {self.wrong[0]: self.wrong[1]}), 1,
                             independent_scoring=True)
        self.assertEqual([o["reward"] for o in outs], [0.0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
