"""Tiny models for the trainer tests: random weights from a config, a byte-level BPE tokenizer
trained here on leap's own prompts and recorded answers (nothing is downloaded), and the
recorded answers the scripted model servers play back.

Byte-level BPE decodes every text it encoded exactly, so a recorded kernel played back as
tokens reaches leap byte for byte.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REPLAY = os.path.join(ROOT, "examples", "replay", "cpu.jsonl")

# role markers as special tokens; a minimal chat template (no tool calling) over them
SPECIALS = ["<pad>", "<eos>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def answers():
    """The recorded cpu answers: {(task, sample, turn): completion}, and each record."""
    by, rows = {}, []
    with open(REPLAY) as f:
        for line in f:
            r = json.loads(line)
            by[(r["task"], r["sample"], r["turn"])] = r["completion"]
            rows.append(r)
    return by, rows


def tokenizer(texts, extra_specials=(), chat_template=CHAT_TEMPLATE, vocab=600, eos="<eos>"):
    """A PreTrainedTokenizerFast: byte-level BPE trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = SPECIALS + list(extra_specials)
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    t = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token=eos,
                                additional_special_tokens=[x for x in specials[1:] if x != eos])
    t.chat_template = chat_template
    return t


def corpus():
    by, rows = answers()
    texts = [r["completion"] for r in rows]
    tasks = os.path.join(ROOT, "tasks")
    for name in sorted(os.listdir(tasks))[:40]:
        p = os.path.join(tasks, name)
        if os.path.isfile(p):
            with open(p, errors="replace") as f:
                texts.append(f.read())
    return texts


def llama(tok, hidden=16, layers=1):
    """A random LlamaForCausalLM sized for `tok`."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=8192, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)
    return LlamaForCausalLM(config)


def model_dir(path, texts=None):
    """A model directory (config.json, tokenizer files, random weights) verl can load by path."""
    tok = tokenizer(texts or corpus())
    model = llama(tok)
    os.makedirs(path, exist_ok=True)
    tok.save_pretrained(path)
    model.save_pretrained(path)
    return path, tok
