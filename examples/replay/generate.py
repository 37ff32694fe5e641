#!/usr/bin/env python3
"""generate.py - write the recorded completions that sampler-replay plays back (examples/replay/cpu.jsonl).

These completions are synthetic: they were written for leap's demo and tests, not sampled from
a model. Each one is built from the task's fixture solution (tests/fixtures/tasks/ID/solution.c)
and, for the failing ones, one realistic bug per task (BUGS below: the kind of mistake models
make on these kernels: a tanh GELU where erf was asked, a forgotten bias, a missing tail, a
transposed index) or one of two compile errors (a prototype that drops `const`, a C++ header).
Every sample of a group follows a trajectory over up to three turns, and its later turns answer
the feedback the way a model does ("The compiler says ... Fixed:").

Every record carries `expect` (pass, mismatch, compile_error or no_code): what the completion
must produce on the cpu backend. tests/sampler-replay.bats checks each one with the fairness
checker, so the labels are true. Run from the repository root:

    python3 examples/replay/generate.py > examples/replay/cpu.jsonl
"""
import os
import json
import re
import sys

ROOT = "."

# Per task: (text in solution.c, replacement, what the model says when it fixes it).
BUGS = {
    "vector_add": ("c[i - 4] = a[i - 4] + b[i - 4];", "c[i - 4] = a[i - 4] + b[i - 3];",
                   "one line of the unrolled body read b at the wrong offset (b[i - 3] instead of b[i - 4])"),
    "softmax": ("y[(long)r * cols + j] = expf(xr[j] - m) / s;", "y[(long)r * cols + j] = expf(xr[j]) / s;",
                "the final pass forgot to subtract the running maximum, so it divided exp(x) by a sum of exp(x - m)"),
    "matmul": ("float a = A[(long)i * n + k];", "float a = A[(long)k * n + i];",
               "I indexed A as if it were column-major (A[k][i] instead of A[i][k])"),
    "gelu": ("0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f))",
             "0.5f * x[i] * (1.0f + tanhf(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])))",
             "I used the tanh approximation of GELU; the task asks for the exact erf form, which differs by up to ~1e-3"),
    "silu": ("float s = 1.0f / (1.0f + expf(-x[i]));", "float s = 1.0f / (1.0f + expf(x[i]));",
             "the sigmoid had the wrong sign in the exponent (exp(x) instead of exp(-x))"),
    "leaky_relu": ("slope * fminf(x[i], 0.0f)", "slope * fmaxf(x[i], 0.0f)",
                   "the slope was applied to the positive part instead of the negative part"),
    "log_softmax": ("float lse = m + logf(s);", "float lse = logf(s);",
                    "I forgot to add the row maximum back into the log-sum-exp"),
    "layernorm": ("block_sum(xr, cols, mean, 1) / (float)cols", "block_sum(xr, cols, mean, 1) / (float)(cols - 1)",
                  "I used the unbiased variance (divide by cols - 1); layer norm uses the biased one (divide by cols)"),
    "rmsnorm": ("(s[0] + s[1] + s[2] + s[3]) / (float)cols + eps", "(s[0] + s[1] + s[2] + s[3]) + eps",
                "I normalized by the root of the sum of squares instead of the root of their mean"),
    "row_sum": ("for (int j = 0; j < cols; j++)", "for (int j = 1; j < cols; j++)",
                "the loop started at j = 1 and skipped the first element of every row"),
    "col_max": ("y[j] = x[j];", "y[j] = 0.0f;",
                "I started the running maximum at 0, which is wrong for columns whose values are all negative"),
    "matmul_rect": ("\t\tfor (int j = 0; j < N; j++)\n\t\t\tc[j] = 0.0f;\n", "",
                    "I accumulated into C without clearing it first; the output buffer is not zero on entry"),
    "matmul_nt": ("\t\t\tif (k < K)\n\t\t\t\ts0 += a[k] * b[k];\n", "",
                  "the two-way unrolled loop dropped the last element when K is odd"),
    "matmul_batched": ("const float *row = B + (b * K + k) * N;", "const float *row = B + (b * M + k) * N;",
                       "the batch stride of B used M rows instead of K rows"),
    "matvec": ("y[i] += A[(long)i * K + k] * x[k];", "y[i] += A[(long)k * M + i] * x[k];",
               "I read A as if it were stored column-major"),
    "transpose": ("B[(long)j * rows + i] = A[(long)i * cols + j];", "B[(long)j * rows + i] = A[(long)j * rows + i];",
                  "the source index used the output's layout, so it copied A instead of transposing it"),
    "conv1d": ("const float *xc = x + ((long)b * cin + c) * len + i;", "const float *xc = x + ((long)b * cin + c) * len;",
               "the input pointer ignored the tap offset i, so every tap read the same window"),
    "conv2d": ("float wv = wt[(((long)o * cin + c) * k + p) * k + q];", "float wv = wt[(((long)o * cin + c) * k + q) * k + p];",
               "the filter was read transposed (wt[o][c][q][p] instead of wt[o][c][p][q])"),
    "cumsum": ("y[(long)r * cols + j] = s += x[(long)r * cols + j];",
               "{\n\t\t\ty[(long)r * cols + j] = s;\n\t\t\ts += x[(long)r * cols + j];\n\t\t}",
               "I wrote an exclusive scan (the sum before element j); the task wants the inclusive one"),
    "histogram": ("sub[0][v] + sub[1][v] + sub[2][v] + sub[3][v]", "sub[0][v] + sub[1][v] + sub[2][v]",
                  "the final merge forgot the fourth sub-histogram"),
    "argmax": ("for (int j = cols - 2; j >= 0; j--)", "for (int j = cols - 2; j > 0; j--)",
               "the backward scan stopped before index 0, so a maximum in the first column was never found"),
    "linear_gelu": ("\t\t\ts += b[j];\n", "", "I forgot to add the bias before the activation"),
    "conv2d_silu": ("float v = yo[n] + bias[o];\n\t\t\t\tyo[n] = v / (1.0f + expf(-v));",
                    "float v = yo[n];\n\t\t\t\tyo[n] = v / (1.0f + expf(-v)) + bias[o];",
                    "the bias was added after the SiLU instead of before it"),
    "add_layernorm": ("float mean = block_sum(h + o, cols, 0.0f, 0) / (float)cols;",
                      "float mean = block_sum(x + o, cols, 0.0f, 0) / (float)cols;",
                      "the mean was taken over x instead of over the sum h = x + res"),
    "add_rmsnorm": ("ss += rr[j] * rr[j];", "ss += xr[j] * xr[j];",
                    "the RMS was computed from x instead of from the updated residual"),
    "geglu": ("const float *g = x + (long)r * 2 * d, *v = g + d;", "const float *v = x + (long)r * 2 * d, *g = v + d;",
              "I swapped the halves: the gate is the first d columns, the value the last d"),
    "swiglu": ("(up[i] * gate[i]) / (1.0f + expf(-gate[i]))", "(up[i] * gate[i]) / (1.0f + expf(-up[i]))",
               "the sigmoid was taken of up instead of gate"),
    "softmax_cross_entropy": ("loss[r] = m + logf(s);", "loss[r] = logf(s);",
                              "I dropped the running maximum from the log-sum-exp"),
    "attention": ("float scale = 1.0f / sqrtf((float)dim);", "float scale = 1.0f / (float)dim;",
                  "I scaled the scores by 1/dim; the task says 1/sqrt(dim)"),
    "causal_attention": ("int n = i + 1;", "int n = seq;", "I forgot the causal mask: every query attended to all keys"),
    "mlp_block": ("\t\t\ts += b1[j];\n", "", "the first layer's bias b1 was never added"),
    "swiglu_mlp": ("h[j] = u * (g / (1.0f + expf(-g)));", "h[j] = g * (u / (1.0f + expf(-u)));",
                   "I gated the wrong projection: silu applies to x Wg^T, not to x Wu^T"),
    "rmsnorm_linear": ("s += xi[k] * g[k] * w[(long)j * D + k];", "s += xi[k] * w[(long)j * D + k];",
                       "the RMSNorm weight g was left out of the projection"),
}

# Trajectories: one string per sample, one letter per turn.
# P pass, F pass and fast (cpu: the outer loop parallelized with OpenMP where its iterations
# are independent), S pass and slow (cpu: the plain double-precision reference), W wrong
# (mismatch), X compile error (prototype without const), H compile error (C++ header; cuda: a
# launch without <<<>>>), N no code block. The last letter repeats if a later turn is asked for.
PROFILES = {
    "easy": ["P", "F", "P", "WP", "S", "P", "F", "P"],
    "medium": ["F", "WP", "XP", "WWP", "S", "HWP", "WF", "NP"],
    "hard": ["XWF", "WWW", "HXW", "WS", "XP", "WWP", "XWW", "NHW"],
    "hopeless": ["X", "H", "X", "N", "X", "H", "XH", "HX"],
}
PROFILE_OF = {
    "easy": ["vector_add", "leaky_relu", "silu", "swiglu", "transpose", "col_max", "row_sum", "histogram"],
    "hard": ["matmul_batched", "conv2d", "conv2d_silu", "add_layernorm", "attention", "causal_attention",
             "mlp_block", "swiglu_mlp"],
    "hopeless": ["rmsnorm_linear"],
}

OPENERS = [
    "Here is a straightforward implementation.",
    "This version keeps the loops simple so the compiler can vectorize the inner one.",
    "Below is a complete implementation of the requested function.",
    "I'll walk the data in row-major order and keep the accumulation in registers.",
]
CLOSERS = [
    "Every output element is written exactly once and the inputs are only read.",
    "The function follows the given prototype exactly.",
    "",
    "This handles sizes that are not multiples of any vector width.",
]


# CUDA runtime bugs: (regex, replacement, explanation), the first that matches the baseline.
CUDA_BUGS = [
    (r"\((\w+) \+ TILE - 1\) / TILE", r"\1 / TILE",
     "the grid was sized with a truncating division, so the last partial tile was never computed (and no "
     "block at all was launched for sizes below the tile); it must round up"),
    (r"\((\w+) \+ (\d+)\) / (\d+)", r"\1 / \3",
     "the grid was sized with a truncating division, so the tail of the data was never processed (and no "
     "block at all was launched for small sizes); it must round up"),
    (r"[ \t]*__syncthreads\(\);\n", "",
     "a __syncthreads() was missing between writing the shared array and reading other threads' entries, "
     "a race that gives different results from run to run"),
]


def strip_header(code):
    """The first-line comment names the file a fixture or a baseline; a model would not write that."""
    lines = code.split("\n")
    if lines and ((lines[0].startswith("/*") and lines[0].endswith("*/")) or lines[0].startswith("//")):
        lines = lines[1:]
    return "\n".join(lines).strip("\n") + "\n"


def cuda_bug(code):
    """(mutated code, explanation) of the first CUDA bug that applies to `code`. The grid bugs
    are looked for in the host function (the launch), the missing sync anywhere."""
    host = code.find('extern "C" void ')
    for rx, repl, why in CUDA_BUGS:
        base = 0 if "sync" in rx else host
        m = re.compile(rx).search(code, base)
        if m:
            return code[:m.start()] + m.expand(repl) + code[m.end():], why
    raise ValueError("no CUDA bug applies")


def parallel(code):
    """The code with its first top-level loop parallelized, or None when the function does not
    start with a loop (its iterations may share scratch memory)."""
    body = code.find("\n{\n", code.find("void "))
    m = re.compile(r"\n\t([^\t\n][^\n]*)").search(code, body + 2)
    if not m or not m.group(1).startswith("for ("):
        return None
    return code[:m.start()] + "\n\t#pragma omp parallel for" + code[m.start():]


def variant(task, kind, code, backend="cpu"):
    """The source of one kind of answer (P, F, S, W, X, H)."""
    if kind == "F" and backend == "cpu":
        return parallel(code) or code
    if kind == "S" and backend == "cpu":
        with open("%s/tasks/%s/reference.c" % (ROOT, task)) as f:
            return strip_header(f.read())
    if kind in "PFS":
        return code
    if backend == "cuda":
        if kind == "W":
            return cuda_bug(code)[0]
        if kind == "X":
            sig = re.search(r'^extern "C" void %s\(.*?\)$' % re.escape(task), code, re.M | re.S)
            assert sig and "const " in sig.group(0), task
            return code[:sig.start()] + sig.group(0).replace("const ", "", 1) + code[sig.end():]
        if kind == "H":
            m = re.search(r"<<<.*?>>>", code)
            assert m, task
            return code[:m.start()] + code[m.end():]
    if kind == "W":
        find, repl, _ = BUGS[task]
        assert code.count(find) == 1, (task, find)
        return code.replace(find, repl)
    if kind == "X":
        sig = re.search(r"^void %s\(.*?\)$" % re.escape(task), code, re.M | re.S)
        assert sig and "const " in sig.group(0), task
        return code[:sig.start()] + sig.group(0).replace("const ", "", 1) + code[sig.end():]
    if kind == "H":
        return "#include <algorithm>\n" + code
    raise ValueError(kind)


def tokens(text):
    return len(re.findall(r"\w+|[^\w\s]", text))


CUDA_OPENERS = [
    "Here is a straightforward CUDA implementation.",
    "This kernel maps one thread to each output element and keeps the memory accesses coalesced.",
    "Below is a complete CUDA implementation with the requested signature.",
    "I'll launch enough blocks to cover the whole problem and guard the out-of-range threads.",
]


def completion(task, title, sample, turn, kind, prev, code, backend="cpu"):
    """Text of the answer of `kind` at `turn`, following an answer of kind `prev` (or None)."""
    k = (sample + turn) % 4
    cuda = backend == "cuda"
    if kind == "N":
        if cuda:
            return ("For %s on the GPU I would assign one thread block per row (or per tile), stage the "
                    "data in shared memory, reduce with warp shuffles and write the results with "
                    "coalesced stores. Launch enough blocks to cover the whole problem and guard the "
                    "threads that fall outside it." % title.lower())
        return ("To compute %s efficiently on the CPU I would process the data in cache-sized blocks, "
                "keep running accumulators in registers, and parallelize the outer loop with OpenMP. "
                "The main subtlety is numerical: accumulate carefully and handle sizes that are not "
                "multiples of the block size with a scalar tail loop." % title.lower())
    fence = ("```cuda\n" if cuda else "```c\n") + variant(task, kind, code, backend) + "```"
    if prev is None:
        opener = (CUDA_OPENERS if cuda else OPENERS)[k]
        if not cuda and kind == "F" and parallel(code):
            opener = "The iterations of the outer loop are independent, so I parallelize it with OpenMP."
        if not cuda and kind == "S":
            opener = "A direct implementation that accumulates in double precision, to be safe on accuracy."
        return ("%s\n\n%s\n\n%s" % (opener, fence, CLOSERS[k])).rstrip()
    if prev in "XH":
        if prev == "X":
            why = ("The compiler rejected my definition because its signature did not match the required "
                   "prototype: I had dropped a `const` from an input pointer.")
        elif cuda:
            why = ("nvcc said \"a __global__ function call must be configured\": I called the kernel like a "
                   "host function. The launch needs its <<<grid, block>>> configuration.")
        else:
            why = ("The build failed on `#include <algorithm>`: that is a C++ header and this is compiled "
                   "as C11. I removed it.")
        if kind in "XH":
            return "Let me fix the build error.\n\n" + fence
        return "%s Here is the corrected code:\n\n%s" % (why, fence)
    if prev == "N":
        return "You're right, I did not include any code. Here is the full implementation:\n\n" + fence
    if prev == "W":
        if kind == "W":
            return ("The results were outside the tolerance. I restructured the loops and checked the "
                    "indexing again:\n\n" + fence)
        reason = cuda_bug(code)[1] if cuda else BUGS[task][2]
        return "The %s was my fault: %s. Fixed version:\n\n%s" % ("failure" if cuda else "mismatch", reason, fence)
    return fence


def expect(kind, backend, code):
    """What the answer must produce. cuda: `fail` (a truncated grid: some output is never
    written, or no block is launched) or `race` (a missing __syncthreads(): wrong on most runs,
    not guaranteed on every one)."""
    wrong = "mismatch"
    if backend == "cuda":
        wrong = "race" if "__syncthreads" in cuda_bug(code)[1] else "fail"
    return {"P": "pass", "F": "pass", "S": "pass", "W": wrong, "X": "compile_error", "H": "compile_error", "N": "no_code"}[kind]


def cuda_source(task):
    """The hand-written kernel a cuda completion is made from: the task's baseline.cu, unless
    examples/replay/kernels/ keeps one for the task. It does where the baseline became a vendor
    library call (cuBLAS, cuDNN: not allowed to a candidate) or was rewritten after the replay
    was recorded; those files are the suite's earlier hand-written baselines, so that the
    recorded completions stay what this script writes."""
    kept = "examples/replay/kernels/%s.cu" % task
    return kept if os.path.exists("%s/%s" % (ROOT, kept)) else "tasks/%s/baseline.cu" % task


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    if backend not in ("cpu", "cuda"):
        sys.exit("usage: generate.py [cpu|cuda]")
    prof = {t: p for p, ts in PROFILE_OF.items() for t in ts}
    for task in sorted(BUGS):
        src = cuda_source(task) if backend == "cuda" else "tests/fixtures/tasks/%s/solution.c" % task
        with open("%s/%s" % (ROOT, src)) as f:
            code = strip_header(f.read())
        with open("%s/tasks/%s/task.json" % (ROOT, task)) as f:
            title = json.load(f)["title"]
        for sample, traj in enumerate(PROFILES[prof.get(task, "medium")]):
            prev = None
            for turn, kind in enumerate(traj, 1):
                text = completion(task, title, sample, turn, kind, prev, code, backend)
                print(json.dumps({"task": task, "backend": backend, "sample": sample, "turn": turn,
                                  "completion": text, "tokens": tokens(text), "expect": expect(kind, backend, code)}))
                prev = kind


if __name__ == "__main__":
    sys.exit(main())
