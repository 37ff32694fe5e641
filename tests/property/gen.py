#!/usr/bin/env python3
"""gen.py - writes the hostile, mixed JSON Lines input of the "no record lost" property test.

usage: gen.py N SEED OUT.jsonl META.jsonl

Writes N input lines to OUT.jsonl (bytes, deterministic for a SEED) and one JSON line per
input line to META.jsonl describing it: {"k": "rec", "id": ID, "expect": STATUS} for a JSON
object record (STATUS: the status it must have after leap-verify, alternatives separated by '|',
or null when it must become an error record), {"k": "bad"} for a line that is not a JSON object leap accepts (it
must come out as an error record carrying the line as raw), {"k": "blank"} for a blank line
(skipped by every reader). Records come in GRPO groups of GROUP_SIZE (4) adjacent records of
one task, with stray lines (malformed, records without a task or with an unknown one) between
groups and sometimes inside them. Below 10 000 lines there are no huge completions and no
hostile candidates (small runs are for testing the checker). Only the Python standard library is used.
"""
import json
import os
import random
import sys

GROUP_SIZE = 4
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VFIX = os.path.join(ROOT, "tests", "fixtures", "leap-verify")


def fixture(name):
    """Returns the text of a leap-verify fixture (a vector_add candidate)."""
    with open(os.path.join(VFIX, name), encoding="utf-8") as f:
        return f.read()


def task_file(task, name):
    """Returns the text of a file of a bundled task."""
    with open(os.path.join(ROOT, "tasks", task, name), encoding="utf-8") as f:
        return f.read()


SOFTMAX_REF = task_file("softmax", "reference.c")
# Candidates that compile, with the status leap-verify must give them.
GOOD = {
    "vector_add": [
        (fixture("correct.c"), "pass"),
        (fixture("wrong.c"), "mismatch"),
        (fixture("nan.c"), "mismatch"),
        (fixture("zeros.c"), "mismatch"),
    ],
    "softmax": [
        (SOFTMAX_REF, "pass"),
        # Copies the input: wrong values.
        ("void softmax(const float *x, float *y, int rows, int cols)\n{\n"
         "\tfor (long i = 0; i < (long)rows * cols; i++)\n\t\ty[i] = x[i];\n}\n", "mismatch"),
        # 0/0 everywhere: NaN outputs, which must be reported as valid JSON.
        ("void softmax(const float *x, float *y, int rows, int cols)\n{\n\tvolatile float z = 0;\n"
         "\tfor (long i = 0; i < (long)rows * cols; i++)\n\t\ty[i] = x[i] * 0 + z / z;\n}\n",
         "mismatch"),
        # +Inf everywhere.
        ("void softmax(const float *x, float *y, int rows, int cols)\n{\n\tvolatile float z = 0;\n"
         "\tfor (long i = 0; i < (long)rows * cols; i++)\n\t\ty[i] = (x[i] * 0 + 1) / z;\n}\n",
         "mismatch"),
    ],
}
# Candidates that do not compile (each distinct source is compiled once, then cached).
BAD = {
    "vector_add": [
        fixture("correct.c").replace("b[i];", "b[j];"),
        "void vector_add(int n) { (void)n; }\n",
        "int helper(void);\nvoid vector_add(const float *a, const float *b, float *c, int n)\n"
        "{ (void)a; (void)b; (void)n; c[0] = helper(); }\n",
        "/* no entry point at all */\nint x = 1;\n",
    ],
    "softmax": [
        "void softmax(const float *x, float *y, int rows, int cols)\n{\n\ty[0] = x[0] +;\n}\n",
    ],
}
# Hostile candidates (vector_add) and the verdict each must get.
HOSTILE = [
    ("spin.c", "timeout"),
    ("segv.c", "runtime_error"),
    ("abort.c", "runtime_error"),
    ("hugefile.c", "runtime_error"),
    ("forkbomb.c", "timeout|runtime_error"),  # whichever limit strikes first
    ("stdout.c", "pass"),
]
UNI = ["é", "ü", "ß", "中文", "日本語", "한국어", "😀", "🚀🔥", "\u0000", "\u2028", "\ufeff",
       "\U0010ffff", "\\", "\"", "\t", "\n", "\r\n", "\u001f", "</script>", "\u200d"]


def text(rng, n):
    """Returns n characters of prose with multi-byte UTF-8, emoji and NUL characters."""
    words = ["kernel", "the", "fast", "softmax", "block", "warp", "Grüße", "naïve", "😀",
             "∑", "\u0000", "null", "NaN", "Infinity", "{\"a\":", "]", "\\u0000"]
    out = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def extras(rng, i):
    """Returns unknown fields of every JSON type, some values unusual, for record number i."""
    e = {}
    kinds = rng.sample(range(14), rng.randint(1, 6))
    for k in kinds:
        if k == 0:
            e["x_null"] = None
        elif k == 1:
            e["x_bool"] = rng.choice([True, False])
        elif k == 2:
            e["x_int"] = rng.choice([0, -1, 2**53 + 1, -(2**63), 2**63 - 1, rng.randint(-10**18, 10**18)])
        elif k == 3:
            e["x_real"] = rng.choice([0.1, -0.0, 1e-300, 1.7976931348623157e308, 5e-324, 3.141592653589793,
                                      -2.5e10, 1.0])
        elif k == 4:
            e["x_str"] = "".join(rng.choice(UNI) for _ in range(rng.randint(0, 8)))
        elif k == 5:
            e["x_arr"] = [1, "two", None, [3.5, {"four": [True]}], -(2**62)]
        elif k == 6:
            e["x_obj"] = {"nested": {"deeper": {"id": i, "s": "😀\u0000é"}}, "list": []}
        elif k == 7:
            e["x_empty"] = rng.choice([{}, [], ""])
        elif k == 8:
            e["ключ😀"] = "значение"
        elif k == 9:
            e["a\"b\\c\td/é"] = i
        elif k == 10:
            e["reward_model"] = {"name": "rm-7b", "score": rng.random()}
        elif k == 11:
            e["x_nul"] = "\u0000" * rng.randint(1, 3)
        elif k == 12:
            e["x_deep"] = json.loads("[" * 60 + "1" + "]" * 60)
        elif rng.random() < 0.05:
            e["x_big_str"] = "x" * rng.randint(1000, 20000)
    return e


def wrap(rng, code, lang):
    """Returns a completion holding code the way a model might answer."""
    style = rng.randrange(5)
    if style == 0:
        return "```%s\n%s```" % (lang, code)
    if style == 1:
        return "Here is my kernel 😀 (naïve):\n\n```%s\n%s```\nIt should be fast." % (lang, code)
    if style == 2:
        return "<think>first ```python\nprint(1)\n``` no</think>\n```c\n%s\n```" % code
    if style == 3:
        return "~~~cpp\n%s~~~\n" % code
    return "```\n%s```" % code


NO_CODE = [
    lambda rng: "I cannot help with that.",
    lambda rng: text(rng, rng.randint(10, 300)),
    lambda rng: "```python\nimport torch\nprint(torch.__version__)\n```",
    lambda rng: "",
    lambda rng: "<think>" + text(rng, 100) + "</think>",
    lambda rng: "\u0000\u0000 😀 \u2028 ñ",
]


class Gen:
    """The generator state: the random source, the next id and the output files."""

    def __init__(self, seed, out, meta, full):
        self.rng = random.Random(seed)
        self.out = out
        self.meta = meta
        self.lines = 0
        self.next_id = 0
        self.group = 0
        # MB of the huge completions still to write, and hostile candidates (only when full).
        self.huge_left = [1, 2, 3, 5] if full else []
        self.hostile_left = [h for h in HOSTILE for _ in range(2)] if full else []

    def new_id(self):
        """Returns a unique 64-bit id, often beyond 2^53 and negative, never a double's."""
        self.next_id += 1
        r = self.rng.randrange(4)
        if r == 0:
            return self.next_id
        if r == 1:
            return 2**53 + 2 * self.next_id + 1  # odd, above 2^53: not representable as a double
        if r == 2:
            return 2**63 - 1 - 2 * self.next_id
        return -(2**63) + 2 * self.next_id + 1

    def emit(self, raw, meta, crlf=False):
        """Writes one input line (bytes, without its end) and its description."""
        self.out.write(raw + (b"\r\n" if crlf else b"\n"))
        self.meta.write(json.dumps(meta) + "\n")
        self.lines += 1

    def record(self, rec, expect):
        """Writes one JSON object record."""
        rec.update(extras(self.rng, rec["id"]))
        raw = json.dumps(rec, ensure_ascii=self.rng.random() < 0.5).encode("utf-8")
        self.emit(raw, {"k": "rec", "id": rec["id"], "expect": expect}, crlf=self.rng.random() < 0.02)

    def bad(self):
        """Writes one line that must become an error record."""
        n = self.lines
        r = self.rng.randrange(12)
        if r == 0:
            raw = b"{bad line %d" % n
        elif r == 1:
            raw = b"[1, 2, %d]" % n  # JSON, but not an object
        elif r == 2:
            raw = b'"a string %d \\u0000 \xf0\x9f\x98\x80"' % n
        elif r == 3:
            raw = b"%d" % n
        elif r == 4:
            raw = b'{"id": %d, "task": "vector_add",}' % n  # trailing comma
        elif r == 5:
            # A record cut in the middle of a string, as a killed writer leaves it.
            whole = json.dumps({"id": n, "task": "softmax", "completion": text(self.rng, 200)})
            raw = whole[: len(whole) // 2].encode("utf-8")
        elif r == 6:
            raw = b"\xff\xfe not utf-8 %d \xc3 \xff" % n  # invalid UTF-8: raw gets U+FFFD
        elif r == 7:
            raw = b'{"id": 99999999999999999999%d}' % n  # integer beyond 64 bits
        elif r == 8:
            raw = b"[" * 3000 + b"%d" % n + b"]" * 3000  # deeper than any parser allows
        elif r == 9:
            raw = b'{"id": %d, "x": NaN}' % n  # not JSON
        elif r == 10:
            # An object whose field name holds NUL: the JSON library keeps names as C strings,
            # so such a record is refused (leap-record(5)) and must come out as an error record.
            raw = b'{"id": %d, "a\\u0000b": 1}' % n
        else:
            raw = b'{"id": %d} {"id": 2}' % n  # two values on one line
        self.emit(raw, {"k": "bad"}, crlf=self.rng.random() < 0.05)

    def stray(self):
        """Writes a line between groups: malformed, blank, or a record without a known task."""
        r = self.rng.random()
        if r < 0.80:
            self.bad()
        elif r < 0.85:
            self.emit(self.rng.choice([b"", b"   ", b"\t"]), {"k": "blank"})
        elif r < 0.93:
            self.record({"id": self.new_id(), "group": "stray", "sample": 0, "turn": 1, "backend": "cpu",
                         "completion": "```c\nint x;\n```"}, None)
        else:
            self.record({"id": self.new_id(), "task": "no_such_task_%d" % self.lines, "group": "stray",
                         "sample": 0, "turn": 1, "backend": "cpu", "completion": "x"}, None)

    def candidate(self, task, kind):
        """Returns (fields, expect) of one candidate of a kind: good, bad, nocode, hostile, huge."""
        rng = self.rng
        if kind == "good":
            # Passing candidates are few: each is timed by leap-bench (about 0.5 s).
            code, expect = GOOD[task][0] if rng.random() < 0.02 else rng.choice(GOOD[task][1:])
        elif kind == "bad":
            code, expect = rng.choice(BAD[task]), "compile_error"
        elif kind == "hostile" and self.hostile_left:
            name, expect = self.hostile_left.pop()
            code = fixture(name)
        elif kind == "huge" and self.huge_left:
            mb = self.huge_left.pop()
            code, expect = GOOD["vector_add"][0]
            if mb == 3:
                # The bulk inside the code: a comment of 3 MB, compiled once.
                return {"code": "/* " + text(rng, 3 << 20).replace("*/", "") + " */\n" + code}, expect
            return {"completion": text(rng, mb << 20) + "\n```c\n" + code + "```\n" + text(rng, 1000)}, expect
        else:
            return {"completion": rng.choice(NO_CODE)(rng)}, "no_code"
        if rng.random() < 0.1:
            return {"code": code}, expect
        return {"completion": wrap(rng, code, rng.choice(["c", "cpp", "cuda", "cu"]))}, expect

    def group_of(self, kind):
        """Writes one GRPO group of GROUP_SIZE records of one kind, with strays inside now and then."""
        rng = self.rng
        task = "vector_add" if kind in ("hostile", "huge") else rng.choice(["vector_add", "softmax"])
        self.group += 1
        gname = rng.choice(["g%d", "grüppe-%d-😀", "step7/%d"]) % self.group
        for s in range(GROUP_SIZE):
            if kind == "mixed":
                k = rng.choice(["good", "good", "good", "nocode", "bad"])
            else:
                k = kind
            fields, expect = self.candidate(task, k)
            rec = {"id": self.new_id(), "task": task, "group": gname, "sample": s, "turn": 1}
            if rng.random() < 0.9:
                rec["backend"] = "cpu"
            if rng.random() < 0.3:
                rec["tokens"] = rng.randint(1, 4000)
            rec.update(fields)
            self.record(rec, expect)
            if s < GROUP_SIZE - 1 and rng.random() < 0.02:
                self.bad()

    def run(self, n):
        """Writes groups and strays until n lines are written."""
        rng = self.rng
        while self.lines < n - 2 * GROUP_SIZE:
            r = rng.random()
            if self.huge_left and r < 0.001:
                self.group_of("huge")
            elif self.hostile_left and r < 0.002:
                self.group_of("hostile")
            elif r < 0.55:
                self.stray()
            elif r < 0.76:
                self.group_of("nocode")
            elif r < 0.988:
                self.group_of("bad")
            else:
                self.group_of("mixed")
        while self.huge_left:
            self.group_of("huge")
        while self.hostile_left:
            self.group_of("hostile")
        while self.lines < n:
            self.bad()


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: gen.py N SEED OUT.jsonl META.jsonl")
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    with open(sys.argv[3], "wb") as out, open(sys.argv[4], "w", encoding="utf-8") as meta:
        Gen(seed, out, meta, n >= 10000).run(n)


if __name__ == "__main__":
    main()
