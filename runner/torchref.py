"""torchref.py - the trusted torch side of a module task (leap-task(5), MODULE TASKS).

A module task is a PyTorch module file in KernelBench's form: `class Model(nn.Module)`,
`get_inputs()`, `get_init_inputs()` and module-level int sizes. leap runs this file with the
Python of $LEAP_TORCH_PYTHON, never inside a candidate's sandbox, for two jobs:

  derive FILE...   one JSON line per file: the task.json fields leap derives from it (the C
                   entry's parameters, cases with shrunk sizes, bench, bench_cpu, tolerance),
                   or {"refused": why} when the file cannot be a fair task.
  serve TASK_DIR   a long-lived reference for leap-verify: each request is a JSON line
                   {"values": {scalar: n}, "counts": [elements per buffer], "offsets": [byte
                   offset of each buffer], "bytes": n}, every buffer (roles in and out, in
                   parameter order) at its offset in leap's shared memory, descriptor 3 (the
                   inputs written there before the line); the answer is a JSON line {"ok":
                   true, "forward_s": the forward's own seconds}, every output written at its
                   offset first, or {"error": why}.

The parameters of the C entry are, in order: the forward's tensor inputs, the module's
parameters and buffers in state_dict order (dots become underscores), the outputs, then the
size constants as int scalars. Both jobs compute that list by the same function (`layout`),
so serve checks that task.json still names what the module file makes.

The reference runs in float64 in train mode (KernelBench never calls eval()), with leap's own
drawn values for every input, parameter and buffer; outputs are rounded once to their dtype.
"""
import importlib.util
import inspect
import json
import math
import mmap
import os
import random
import sys
import time

torch = None  # imported by load_torch: a file refused by its text alone costs no torch import

SEED = 42
# The most parameters a C entry takes (runproto.h's LEAP_RUN_MAX_PARAMS).
MAX_PARAMS = 64
# Constants below this are structure (a dim, a kernel size, a stride), never shrunk.
SHRINK_MIN = 8
SHRINK_CAP = 16
DRAWS = 3
# The most a verification case's tensors may take (leap-verify keeps 3 trials of each case).
CASE_BYTES = 1 << 30
HUB = ("from_pretrained", "transformers", "huggingface", "hf_hub", "torch.hub")
C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
              "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
              "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
              "volatile", "while", "bool", "true", "false"}


class Refused(Exception):
    pass


def load_torch():
    """Imports torch (seconds) and the tables of leap's types in torch's terms."""
    global torch, TYPES, DTYPES
    import torch as t
    torch = t
    TYPES = {t.float32: "float", t.float64: "double", t.int32: "int", t.int64: "int64",
             t.float16: "half", t.bfloat16: "bf16", t.uint8: "uint8", t.bool: "uint8"}
    DTYPES = {"float": t.float32, "double": t.float64, "int": t.int32, "int64": t.int64,
              "half": t.float16, "bf16": t.bfloat16, "uint8": t.uint8}
    grouped_in_float64()


def grouped_in_float64():
    """torch's float64 convolution of groups > 1 on the CPU runs a dense one per group: a
    depthwise 3x3 over 2 x 96 x 112 x 112 took 6.2 s against float32's 0.2 s (and 1.1 s for the
    dense float64 one of 96 times its work), so that MobileNetV2's float64 forwards, the
    reference's and the tolerance's, took minutes. F.conv1d and F.conv2d (nn.Conv1d's and
    nn.Conv2d's) in float64 with groups > 1 and zero padding given as numbers are computed
    instead as a sum over the kernel's taps of the input's shifted window times the tap's
    weights: the same products in float64, added in another order (each output differs from
    torch's by float64's rounding, 1e-16 of it). Anything else is torch's own."""
    F = torch.nn.functional
    conv1d, conv2d = F.conv1d, F.conv2d

    def pair(v):
        return (v, v) if isinstance(v, int) else (v[0], v[0]) if len(v) == 1 else tuple(v)

    def fast(x, w, groups, padding):
        return (groups > 1 and isinstance(x, torch.Tensor) and x.dtype == torch.float64 and x.device.type == "cpu"
                and x.dim() == 4 and w.dim() == 4 and w.dtype == torch.float64 and not isinstance(padding, str)
                and not torch.is_grad_enabled())

    def grouped2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        if not fast(x, w, groups, padding):
            return conv2d(x, w, b, stride, padding, dilation, groups)
        (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
        n, c, _, _ = x.shape
        co, cg, kh, kw = w.shape
        xp = F.pad(x, (pw, pw, ph, ph))
        ho, wo = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1, (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
        if ho < 1 or wo < 1 or c != groups * cg or co % groups:  # torch says what is wrong
            return conv2d(x, w, b, stride, padding, dilation, groups)
        wg = w.reshape(groups, co // groups, cg, kh, kw)
        out = x.new_zeros(n, co, ho, wo)
        for i in range(kh):
            for j in range(kw):
                win = xp[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
                if cg == 1 and co == c:  # depthwise: a weight per channel
                    out.addcmul_(win, w[:, 0, i, j].reshape(1, c, 1, 1))
                else:
                    out.add_(torch.einsum("ngchw,goc->ngohw", win.reshape(n, groups, cg, ho, wo),
                                          wg[:, :, :, i, j]).reshape(n, co, ho, wo))
        return out if b is None else out.add_(b.reshape(1, co, 1, 1))

    def grouped1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        if not (isinstance(x, torch.Tensor) and x.dim() == 3 and w.dim() == 3 and
                fast(x.unsqueeze(2), w.unsqueeze(2), groups, padding)):
            return conv1d(x, w, b, stride, padding, dilation, groups)
        one = (lambda v: v if isinstance(v, int) else v[0])
        return grouped2d(x.unsqueeze(2), w.unsqueeze(2), b, (1, one(stride)), (0, one(padding)),
                         (1, one(dilation)), groups).squeeze(2)
    F.conv1d, F.conv2d = grouped1d, grouped2d


def hub_refusal(path):
    """Why a module file is refused by its text alone (a model hub download), or None."""
    src = open(path, encoding="utf-8").read()
    for h in HUB:
        if h in src:
            return "it loads weights from a model hub (%s): leap runs no network access" % h
    return None


def load(path, name="leap_module"):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for need in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, need):
            raise Refused("no %s in the module file" % need)
    return mod


def slots(mod):
    """Each module-level int size: its name, and where it lives (the attribute, and the index
    in a tuple or list of ints such as input_shape = (4096,) or layer_sizes = [400, 800], else
    None), in the order the file defines them; element i of `shape` is named shape_i."""
    out = {}
    for k, v in vars(mod).items():
        if k.startswith("_") or not k.isidentifier():
            continue
        if type(v) is int:
            out[k] = (k, None)
        elif type(v) in (tuple, list) and 0 < len(v) <= 8 and all(type(x) is int for x in v):
            for i in range(len(v)):
                out.setdefault("%s_%d" % (k, i), (k, i))
    return out


def constants(mod):
    """The module-level int sizes (slots), with their values."""
    return {k: getattr(mod, a) if i is None else getattr(mod, a)[i] for k, (a, i) in slots(mod).items()}


def set_sizes(mod, values):
    where = slots(mod)
    for k, v in values.items():
        a, i = where[k]
        if i is None:
            setattr(mod, a, v)
        else:
            seq = list(getattr(mod, a))
            seq[i] = v
            setattr(mod, a, type(getattr(mod, a))(seq))


def instantiate(mod, values, device=None, seed=SEED):
    """(model, inputs) at sizes `values`, with the fixed seed; train mode, as KernelBench."""
    set_sizes(mod, values)
    torch.manual_seed(seed)
    if device:
        with torch.device(device):
            init = mod.get_init_inputs()
            model = mod.Model(*init)
            inputs = mod.get_inputs()
    else:
        init = mod.get_init_inputs()
        model = mod.Model(*init)
        inputs = mod.get_inputs()
    for i, x in enumerate(inputs):
        if not isinstance(x, (torch.Tensor, float)):
            raise Refused("get_inputs() item %d is a %s, not a tensor or a float" % (i, type(x).__name__))
    return model, list(inputs)


def attrs(model):
    """The tensors a module holds in plain attributes (an RNN's self.hidden; registered ones
    live in _parameters and _buffers), as [(key, submodule, attribute)], key "sub.attr": leap
    draws them as inputs and sets them before each call, since forward may change them."""
    out = []
    for path, m in model.named_modules():
        for k, v in vars(m).items():
            if isinstance(v, torch.Tensor):
                out.append(((path + "." if path else "") + k, m, k))
    return out


def to_dtype(model, dtype):
    """The model, its parameters, buffers and plain tensor attributes in dtype."""
    model = model.to(dtype)
    for _, m, k in attrs(model):
        if getattr(m, k).is_floating_point():
            setattr(m, k, getattr(m, k).to(dtype))
    return model


def outputs_of(out):
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise Refused("forward's output %d is a %s, not a tensor" % (i, type(o).__name__))
    return outs


def c_name(s, taken):
    n = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in s)
    if not n or n[0].isdigit() or n in C_KEYWORDS or n.startswith("leap_") or n.startswith("__"):
        n = "p_" + n
    base, k = n, 1
    while n in taken:
        n, k = "%s_%d" % (base, k), k + 1
    taken.add(n)
    return n


def layout(mod, model, inputs, outs, consts):
    """The C entry's parameters: (name, kind, key, tensor-or-None); kind in, state, out, size,
    or pack: where there would be more than MAX_PARAMS, the floating state_dict entries
    flattened and concatenated in state_dict order as one buffer (key: their names), the
    integer ones (a BatchNorm's num_batches_tracked) as another."""
    taken = set(consts)
    argn = [p for p in inspect.signature(mod.Model.forward).parameters][1:]
    rows, scalars = [], []
    for i, x in enumerate(inputs):
        name = c_name(argn[i] if i < len(argn) and not argn[i].startswith("*") else "in%d" % i, taken)
        if isinstance(x, float):  # a float the forward takes (level 1's 5: A * s): a scalar, last
            scalars.append((name, "scalar", i, x))
        else:
            rows.append((name, "in", i, x))
    sd = model.state_dict()
    if len(inputs) + len(sd) + len(attrs(model)) + len(outs) + len(consts) > MAX_PARAMS:
        # a deep network (level 3's ResNets: 632): its state in one buffer per kind of type
        for name, keys in (("state", [k for k, v in sd.items() if v.is_floating_point()]),
                           ("state_int", [k for k, v in sd.items() if not v.is_floating_point()])):
            if keys:
                flat = torch.cat([sd[k].reshape(-1).to(sd[keys[0]].dtype) for k in keys])
                rows.append((c_name(name, taken), "pack", tuple(keys), flat))
    else:
        for k, v in sd.items():
            rows.append((c_name(k, taken), "state", k, v))
    for key, m, k in attrs(model):
        rows.append((c_name(key, taken), "attr", key, getattr(m, k)))
    for i, o in enumerate(outs):
        rows.append((c_name("out" if len(outs) == 1 else "out%d" % i, taken), "out", i, o))
    for k in consts:
        rows.append((k, "size", k, None))
    return rows + scalars


def run(mod, values, dtype=None, device=None, seed=SEED):
    dtype = dtype or torch.float64
    model, inputs = instantiate(mod, values, device)
    model = to_dtype(model, dtype)
    inputs = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    torch.manual_seed(seed)
    # a tensor forward makes (an LSTM's torch.randn h0) in the run's dtype, as its parameters
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.no_grad():
            outs = outputs_of(model(*inputs))
    finally:
        torch.set_default_dtype(before)
    return model, inputs, outs


# ---- derive ----

def fit_dim(draws, consts, idx):
    """An expression over the constants for dim `idx` of one tensor across draws
    [(values, shape)], or None. Tried simplest first: a constant, a literal, a product."""
    dims = [shape[idx] for _, shape in draws]
    names = list(consts)

    def holds(f):
        try:
            return all(f(v) == d for (v, _), d in zip(draws, dims))
        except ZeroDivisionError:
            return False
    # a constant that keeps its value in every draw names nothing: 3 is a kernel's 3, not
    # in_channels = 3 (the literal is right wherever the constant keeps that value)
    names = [a for a in names if len({v[a] for v, _ in draws}) > 1]
    for a in names:
        if holds(lambda v: v[a]):
            return a
    if len(set(dims)) == 1:
        return str(dims[0])
    for a in names:
        for b in names:
            if a <= b and holds(lambda v: v[a] * v[b]):
                return "%s * %s" % (a, b)
    for a in names:
        d0, v0 = dims[0], draws[0][0][a]
        if holds(lambda v: v[a] + (d0 - v0)):
            return "%s %s %d" % (a, "+" if d0 >= v0 else "-", abs(d0 - v0))
        if v0 and d0 % v0 == 0 and holds(lambda v: v[a] * (d0 // v0)):
            return "%s * %d" % (a, d0 // v0)
        if d0 and v0 % d0 == 0 and holds(lambda v: v[a] // (v0 // d0)):
            return "%s / %d" % (a, v0 // d0)
    for a in names:
        for b in names:
            for c in names:
                if a <= b <= c and holds(lambda v: v[a] * v[b] * v[c]):
                    return "%s * %s * %s" % (a, b, c)
    # a strided, padded or dilated window's output, (x + 2p - d(k - 1) - 1) / s + 1, and a
    # transposed one's, (x - 1) s - 2p + d(k - 1) + op + 1: (m x + c) / k, numerator kept >= 0
    # so that C's truncating division is Python's floor
    for k in range(1, 9):
        for m in range(1, 9):
            for a in names:
                e = affine(draws, dims, a, m, k)
                if e:
                    return e
    # a window whose width is a drawn size too (a kernel of (5, 9), dilated by j): (x - j w + c) / k
    for k in range(1, 5):
        for j in range(1, 5):
            for a in names:
                for b in names:
                    if a != b:
                        e = window(draws, dims, a, b, j, k)
                        if e:
                            return e
    # an inception module's branches concatenated: a + b + c (+ d)
    import itertools
    for r in (3, 4):
        for combo in itertools.combinations(names, r):
            if holds(lambda v: sum(v[n] for n in combo)):
                return " + ".join(combo)
    # a pooling undone by a transposed convolution of its stride: x / k * k
    for k in range(2, 9):
        for a in names:
            if holds(lambda v: v[a] // k * k):
                return "%s / %d * %d" % (a, k, k)
    # a window as wide as its stride, both drawn: x / k
    for a in names:
        for b in names:
            if a != b and holds(lambda v: v[a] // v[b]):
                return "%s / %s" % (a, b)
    # channels that concatenate: a fire module's two expands, a dense block's i-th layer
    for a in names:
        for b in names:
            for k in range(1, 17):
                if a != b and holds(lambda v: v[a] + k * v[b]):
                    return "%s + %s" % (a, b) if k == 1 else "%s + %d * %s" % (a, k, b)
    return None


def affine(draws, dims, a, m, k):
    """The expression (m a + c) / k that gives dims across draws, for some integer c, or None."""
    x0, d0 = draws[0][0][a], dims[0]
    for c in range(k * d0 - m * x0, k * d0 - m * x0 + k):
        if all(m * v[a] + c >= 0 and (m * v[a] + c) // k == d for (v, _), d in zip(draws, dims)):
            num = a if m == 1 else "%d * %s" % (m, a)
            num += "" if c == 0 else " %s %d" % ("+" if c > 0 else "-", abs(c))
            if k == 1:
                return num
            return "(%s) / %d" % (num, k) if c else "%s / %d" % (num, k)
    return None


def window(draws, dims, a, b, j, k):
    """The expression (a - j b + c) / k that gives dims across draws, for some integer c, or None."""
    x0, d0 = draws[0][0][a] - j * draws[0][0][b], dims[0]
    for c in range(k * d0 - x0, k * d0 - x0 + k):
        if all(v[a] - j * v[b] + c >= 0 and (v[a] - j * v[b] + c) // k == d for (v, _), d in zip(draws, dims)):
            num = "%s - %s" % (a, b if j == 1 else "%d * %s" % (j, b))
            num += "" if c == 0 else " %s %d" % ("+" if c > 0 else "-", abs(c))
            return num if k == 1 else "(%s) / %d" % (num, k)
    return None


def size_expr(draws, consts):
    ndim = len(draws[0][1])
    if any(len(s) != ndim for _, s in draws):
        return None
    parts = []
    for i in range(ndim):
        e = fit_dim(draws, consts, i)
        if e is None:
            return None
        parts.append("(%s)" % e if any(op in e for op in (" + ", " - ", " / ")) else e)
    return " * ".join(parts) if parts else "1"


def shrunk(consts, names, rng, cap, tie=False):
    """Sizes `names` drawn smaller; with `tie`, sizes equal in the file stay equal (a hinge
    loss's (batch, n) predictions times its (batch,) targets broadcast only where n = batch)."""
    v, drawn = dict(consts), {}
    for k in names:
        x = consts[k]
        if tie and x in drawn:
            v[k] = drawn[x]
            continue
        halves = [x >> s for s in range(1, 12) if 2 <= (x >> s) <= cap and (x >> s) << s == x]
        v[k] = drawn[x] = rng.choice(halves) if halves and rng.random() < 0.5 else rng.randint(2, min(x, cap))
    return v


def shapes(mod, values, device=None):
    model, inputs, outs = run(mod, values, torch.float32, device)
    return model, inputs, outs


def case_bytes(mod, values, strict=False):
    """The bytes of a case's tensors (inputs, state, outputs), measured on the meta device
    (nothing allocated). Where the module fails there: raises with `strict`, else 0 (the real
    run will tell)."""
    try:
        model, inputs, outs = shapes(mod, values, "meta")
    except Refused:
        raise
    except Exception:
        if strict:
            raise
        return 0
    ts = [x for x in inputs if isinstance(x, torch.Tensor)] + list(model.state_dict().values()) + list(outs)
    return sum(t.numel() * t.element_size() for t in ts)


def try_draws(mod, consts, names, rng, tries, cap, meta, tie=False):
    """Up to DRAWS shrunk size sets that run, of `tries` drawn; with `meta`, a draw is tried
    on the meta device first, so that one that fails (a pooling down to nothing) costs no
    real run."""
    got = []
    for _ in range(tries):
        if len(got) == DRAWS:
            break
        v = shrunk(consts, names, rng, cap, tie)
        if v in [g[0] for g in got]:
            continue
        try:
            if meta and case_bytes(mod, v, strict=True) > CASE_BYTES:
                continue
            model, inputs, outs = shapes(mod, v)
        except Refused:
            raise
        except Exception:
            continue
        if all(torch.isfinite(o).all() for o in outs if o.is_floating_point()):
            got.append((v, model, inputs, outs))
    return got


def draw_cases(mod, consts, meta):
    """Several shrunk size sets that run: all constants >= SHRINK_MIN shrunk to at most
    SHRINK_CAP (untied, then with equal sizes kept equal), else to at most 4 * SHRINK_CAP (an
    image a network pools down), else only the batch, to at most 4 (a network at its full image
    size costs seconds a sample), else none (the task runs at the file's sizes only)."""
    rng = random.Random(SEED)
    big = [k for k, x in consts.items() if x >= SHRINK_MIN]
    batch = [k for k in big if "batch" in k.lower()]
    for names, tries, cap, tie in ((big, 12, SHRINK_CAP, False), (big, 12, SHRINK_CAP, True),
                                   (big, 12, 4 * SHRINK_CAP, False), (batch, 4, 4, False)):
        if names:
            got = try_draws(mod, consts, names, rng, tries, cap, meta, tie)
            if len(got) >= 2:
                return got
    return []


def elements(t):
    return max(1, t.numel())


# The input patterns leap draws a module task's inputs from (leap-task(5), dist: the default
# set, since an import names none), one pattern for every input of a set, as case_draw.c does.
PATTERNS = ("normal", "uniform", "small", "large", "sparse")
# Where none of them is: inputs a module takes the log of (level 1's KL divergence) are NaN on
# every one of them, and fine on leap's positive pattern.
POSITIVE = ("positive",)
# Seeds of the tolerance's measurement on each case (each with every pattern).
TOL_SEEDS = 3
# The margin an honest float kernel keeps below the tolerance: torch's float32 sums in blocks,
# a plain C loop in one running sum, whose rounding grows faster with the length.
TOL_MARGIN = 4


def pattern_like(t, pattern, g):
    """A float64 tensor shaped as t, drawn as case_draw.c draws pattern `pattern`."""
    def n():
        return torch.randn(t.shape, generator=g, dtype=torch.float64)
    if pattern == "uniform":
        return torch.rand(t.shape, generator=g, dtype=torch.float64) * 2 - 1
    if pattern == "small":
        return n() * 1e-3
    if pattern == "large":
        return n() * 1e3
    if pattern == "positive":
        return 0.1 + torch.rand(t.shape, generator=g, dtype=torch.float64) * 9.9
    if pattern == "sparse":
        keep = torch.rand(t.shape, generator=g, dtype=torch.float64) >= 0.9
        return torch.where(keep, n(), torch.zeros((), dtype=torch.float64))
    return n()


def expr_value(e, v):
    """A size expression of fit_dim's (C's integer arithmetic, numerators never negative) at v."""
    return int(eval(e.replace("/", "//"), {"__builtins__": {}}, dict(v)))


def leap_state(runs, sd, v, g, pattern):
    """The state_dict entries as leap draws them at sizes v, the floating ones in float32 as
    leap's buffers hold them: each uniform in its run's center +- spread / sqrt(fan), a causal
    mask (run "tril") or a table (run "values") as the module makes it, a buffer without a run
    from the pattern; an integer one the module's table, or within its values."""
    out = {}
    for k, t in sd.items():
        if not t.is_floating_point():
            # the module's own table, or drawn within the module's values as leap draws an
            # integer buffer with a range: a forward that fails on such draws is refused here,
            # not found failing on every case (an index drawn out of its table)
            r = runs.get(k)
            if (r and "values" in r) or not t.numel():
                out[k] = t
            else:
                x = torch.randint(int(t.min()), int(t.max()) + 1, t.shape, generator=g)
                out[k] = x.to(t.dtype)
            continue
        r = runs[k]
        if r is None:
            out[k] = pattern_like(t, pattern, g).float()
            continue
        if "tril" in r:  # the module's causal mask, as leap draws it: no draw
            n = expr_value(r["tril"], v)
            out[k] = torch.tril(torch.ones(n, n)).expand(t.shape).contiguous()
            continue
        if "values" in r:  # the module's own table
            out[k] = torch.tensor(r["values"], dtype=torch.float32).reshape(t.shape)
            continue
        w = r["spread"] / math.sqrt(max(1, expr_value(r["fan"], v))) if "fan" in r else r["spread"]
        x = torch.rand(t.shape, generator=g, dtype=torch.float32)  # in place: VGG's weights are 0.5 GB
        out[k] = x.mul_(2 * w).add_(r["center"] - w)
    return out


def seeded_outputs(m, held, args):
    """m's outputs for forward's arguments `args`, its plain tensor attributes set from `held`
    ([(key, tensor)]): in training mode with the fixed seed, as the reference runs it."""
    where = {key: (sub, k) for key, sub, k in attrs(m)}
    for key, t in held:
        setattr(*where[key], t)
    m.train()
    # the cpu's generator only: torch.manual_seed queues CUDA's too, recording a stack trace
    # (a third of a small case's answer)
    torch.default_generator.manual_seed(SEED)
    with torch.no_grad():
        return outputs_of(m(*args))


def forward(m, dt, state, held, xs):
    """m's outputs in dtype dt (m already in it) with its state_dict and held tensors set."""
    with torch.no_grad():  # copied entry by entry: no second copy of a network's weights at once
        for k, x in m.state_dict().items():
            x.copy_(state[k])
    return seeded_outputs(m, [(key, t.to(dt)) for key, t in held.items()],
                          [x.to(dt) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs])


def tolerance(mod, cases, runs, seeds=TOL_SEEDS, patterns=PATTERNS):
    """The task's tolerance and input patterns, measured on the values leap draws: at each case,
    for `seeds` seeds and each input pattern, the inputs (and tensor attributes, and buffers
    without a run) drawn from the pattern and the parameters at their initialisation's scale
    (`runs`), rounded to float32 as leap's buffers are; torch's float32 forward on them against
    its float64 forward. A pattern on which even that misses 1e-2 by TOL_MARGIN is dropped (an
    attention's scores over inputs of 1e3 are 1e6 apart: float32's rounding of them moves the
    softmax wholly); KernelBench's fp32 tolerance (1e-4) where the largest error of the others,
    times TOL_MARGIN, is within it; else the least of 1e-3, 1e-2 that is. Refused where no
    pattern is left, or where the output is the same for other inputs on every pattern kept (a
    constant output passes). Returns (tolerance, the error, where it was measured, the patterns
    kept, {pattern dropped: (its error, where)})."""
    need = {p: (0.0, "") for p in patterns}
    dep, seen = set(), set()  # the patterns on which the output depends on the inputs; those asked
    nofloat = False

    def draw_inputs(inputs, pat, g):
        return [pattern_like(x, pat, g).float().double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                else x for x in inputs]

    def draw(v, inputs, held, sd, pat, g):
        st = leap_state(runs, sd, v, g, pat)
        xs = draw_inputs(inputs, pat, g)
        hs = {key: pattern_like(t, pat, g).float().double() for key, t in held if t.is_floating_point()}
        return st, xs, hs

    def depends_on(v, inputs, held, sd, m64, pat, st, hs, r, g):
        """Whether other inputs of pattern pat change the float64 output r."""
        seen.add(pat)
        xs2 = draw_inputs(inputs, pat, g)
        return any(not torch.equal(x, y) for x, y in zip(r, forward(m64, torch.float64, st, hs, xs2)))

    def models(v):
        # made twice, not copied: a deep copy shares what a closure holds (level 3's 44 keeps
        # its MLP in a lambda over the original's layers)
        model, inputs = instantiate(mod, v)
        held = [(key, getattr(sub, k)) for key, sub, k in attrs(model)]
        sd = model.state_dict()
        return inputs, held, sd, to_dtype(instantiate(mod, v)[0], torch.float64), to_dtype(model, torch.float32)

    for v in cases:  # one case's models at a time: three of VGG16 in float64 and float32 are 5 GB
        inputs, held, sd, m64, m32 = models(v)
        # no float input (indices alone): nothing a constant output could ignore
        nofloat = nofloat or not any(isinstance(x, torch.Tensor) and x.is_floating_point() for x in inputs)
        for seed in range(seeds):
            for pat in patterns:
                if seed and TOL_MARGIN * need[pat][0] > 1e-2:
                    continue  # dropped already: more seeds would not keep it
                g = torch.Generator().manual_seed(SEED + 1000 * seed + patterns.index(pat))
                st, xs, hs = draw(v, inputs, held, sd, pat, g)
                r = forward(m64, torch.float64, st, hs, xs)
                o = forward(m32, torch.float32, st, hs, xs)
                for a, b in zip(r, o):
                    if not a.is_floating_point() or not a.numel():
                        continue
                    err = float(((b.double() - a).abs() / (1 + a.abs())).max())
                    if not err <= need[pat][0]:  # NaN included
                        need[pat] = (err, "%s, %s inputs, seed %d" % (
                            ", ".join("%s=%s" % kv for kv in v.items()), pat, seed))
                # one more forward, until one pattern shows the output depends on the inputs
                if not nofloat and not dep and pat not in seen and TOL_MARGIN * need[pat][0] <= 1e-2:
                    dep |= {pat} if depends_on(v, inputs, held, sd, m64, pat, st, hs, r, g) else set()
            if all(TOL_MARGIN * need[p][0] > 1e-2 for p in patterns):  # no pattern left: stop here
                break
        m64 = m32 = sd = st = r = o = None  # freed before the next case's are made
        if all(TOL_MARGIN * need[p][0] > 1e-2 for p in patterns):
            break
    kept = [p for p in patterns if TOL_MARGIN * need[p][0] <= 1e-2]
    worst = max(need.values(), key=lambda e: e[0] if e[0] == e[0] else math.inf)
    if not kept:
        e = Refused("torch's own float32 forward is %.3g away from float64 on leap's draws (%s), on every "
                    "input pattern: no tolerance admits it" % worst)
        e.need = need
        raise e
    for pat in kept:  # the pattern that showed it was dropped: ask those kept
        if nofloat or dep & set(kept):
            break
        if pat not in seen:
            v = cases[0]
            inputs, held, sd, m64, _ = models(v)
            g = torch.Generator().manual_seed(SEED - 1)
            st, xs, hs = draw(v, inputs, held, sd, pat, g)
            if depends_on(v, inputs, held, sd, m64, pat, st, hs, forward(m64, torch.float64, st, hs, xs), g):
                dep.add(pat)
    if not nofloat and not dep & set(kept):
        raise Refused("unfair: the output does not depend on the inputs drawn as leap draws them (parameters at "
                      "their initialisation's scale): a constant output passes")
    err, where = max((need[p] for p in kept), key=lambda e: e[0])
    for tol in (1e-4, 1e-3, 1e-2):
        if TOL_MARGIN * err <= tol:
            return tol, err, where, kept, {p: need[p] for p in patterns if p not in kept}


# ---- a parameter's initialisation ----

INIT_OPS = ("uniform_", "normal_", "fill_", "zero_")


def init_scales(mod, values, device=None):
    """The model at sizes `values` and each floating state_dict entry's initialisation there,
    {key: (center, spread, exact)}: a uniform interval of the same mean and mean square as the
    init (U(a, b) itself, U(+-b) times HE_GAIN; N(m, s) as m +- sqrt(3) s; a constant c as
    c +- max(|c|, 1) / 2, so
    that a BatchNorm's weight and running_var stay positive and its bias is no constant). torch's
    own inits are read from the call that made the tensor (uniform_, normal_, fill_, zero_, which
    nn.init's functions call), exact even on the meta device; any other (torch.randn in the
    file) is measured from the values, or None on the meta device."""
    seen = {}
    orig = {n: getattr(torch.Tensor, n) for n in INIT_OPS}

    def hook(n):
        f = orig[n]

        def g(self, *a, **k):
            seen[id(self)] = (n, a, k, self)  # the tensor kept: its id is never reused meanwhile
            return f(self, *a, **k)
        return g
    for n in INIT_OPS:
        setattr(torch.Tensor, n, hook(n))
    try:
        model, inputs = instantiate(mod, values, device)
    finally:
        for n, f in orig.items():
            setattr(torch.Tensor, n, f)
    params = dict(model.named_parameters(remove_duplicate=False))
    bufs = dict(model.named_buffers(remove_duplicate=False))
    out = {}
    for k, t in model.state_dict().items():
        real = t.device.type != "meta"
        if not t.is_floating_point():  # an index table, a BatchNorm's count: structure
            out[k] = (VALUES, t.detach().clone()) if real else None
            continue
        o = params.get(k, bufs.get(k))
        sc = scale_of(seen.get(id(o)) if o is not None else None, t)
        # a buffer no init made is no weight but the module's structure, as a statistic's (a
        # BatchNorm's) is not: a causal mask is the module's own at every size (drawn, its
        # zeros almost never come and the attention is no longer causal); any other table its
        # own values where they are the same at every size (init_runs)
        if k in bufs and sc and not sc[2]:
            n = causal_mask(t)
            sc = (TRIL, n) if n else (VALUES, t.detach().clone())
        out[k] = sc
    return model, inputs, out


# The gain on a symmetric uniform init U(+-b), torch's default for Linear, Conv and RNN layers
# (b = 1 / sqrt(fan)): it keeps a third of a layer's variance, so VGG16's 16 layers pass on a
# millionth of their input's signal and a first layer 1% off changes its output by 4e-8 (a
# wrong one passes at 1e-4); at He's scale, U(+-sqrt(6) / sqrt(fan)), a ReLU network keeps it.
HE_GAIN = math.sqrt(6)

# init_scales' mark of a causal mask, (TRIL, n): task.json's run {"tril": n}.
TRIL = "tril"
# init_scales' mark of a buffer of structure, (VALUES, tensor): the run {"values": [...]}
# where the tensor is the same at every size, else the input patterns (a range, integers).
VALUES = "values"
# The most elements of the module's own values a task.json holds (a window attention's masks
# and index tables at 224 x 224: 3 x 10^5).
MAX_VALUES = 1 << 21


def causal_mask(t):
    """n where t is a causal mask, torch.tril(torch.ones(n, n)) under any leading dims (the
    mask of GPT-style attention: `att.masked_fill(self.bias[..., :T, :T] == 0, -inf)`), else
    None."""
    if t.device.type == "meta" or t.dim() < 2 or t.shape[-1] != t.shape[-2] or not t.numel():
        return None
    n = t.shape[-1]
    return n if bool((t == torch.tril(torch.ones(n, n, dtype=t.dtype))).all()) else None


def constant_run(c):
    return (c, max(abs(c), 1.0) / 2, True)


def scale_of(call, t):
    real = t.device.type != "meta"
    x = t.detach().double() if real else None

    def rms(c):
        return float(((x - c) ** 2).mean().sqrt())
    if call:
        n, a, k, _ = call
        try:
            if n == "uniform_":
                lo = float(a[0] if len(a) > 0 else k.get("from", 0.0))
                hi = float(a[1] if len(a) > 1 else k.get("to", 1.0))
                c, s = (lo + hi) / 2, (hi - lo) / 2
                ok = s > 0 and (not real or (float(x.min()) >= lo and float(x.max()) <= hi and
                                             (x.numel() < 8 or 0.5 < rms(c) * math.sqrt(3) / s < 2)))
                if c == 0:
                    s *= HE_GAIN
            elif n == "normal_":
                c = float(a[0] if len(a) > 0 else k.get("mean", 0.0))
                sd = float(a[1] if len(a) > 1 else k.get("std", 1.0))
                s = math.sqrt(3) * sd
                ok = s > 0 and (not real or x.numel() < 8 or 0.5 < rms(c) / sd < 2)
            else:
                v0 = 0.0 if n == "zero_" else float(a[0] if a else k.get("value"))
                c, s, _ = constant_run(v0)
                ok = not real or bool((x == v0).all())
            if ok and math.isfinite(c) and math.isfinite(s):
                return (c, s, True)
        except (TypeError, ValueError, IndexError):
            pass
    if not real or not x.numel():
        return None
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return constant_run(lo)
    c = 0.0 if lo < 0 < hi else (lo + hi) / 2
    return (c, math.sqrt(3) * rms(c), False)


def init_run(pts, consts):
    """The run of one state_dict entry, {"center", "spread", "fan"?}, from its scale at several
    sizes, pts [(values, (center, spread, exact) or None)]: where the spread changes with the
    sizes, as torch's inits do (U(+-1 / sqrt(fan_in))), spread / sqrt(fan) for a size
    expression fan that fits every size, else its value at the largest case measured."""
    known = [(v, sp) for v, sp in pts if sp]
    big = max(known, key=lambda p: sum(x for x in p[0].values() if type(x) is int))[1]
    c = known[0][1][0] if all(sp[0] == known[0][1][0] for _, sp in known) else big[0]
    spreads = [sp[1] for _, sp in known]
    if max(spreads) <= min(spreads) * (1 + 1e-9):
        return {"center": c, "spread": spreads[0]}
    if all(sp[2] for _, sp in known):
        # 6 first: He's U(+-sqrt(6 / fan)) gives fan itself, never fan / 2, which a draw of even
        # sizes fits and an odd size truncates
        for m in (6, 3, 2, 1):
            r = [m / sp[1] ** 2 for _, sp in known]
            if all(abs(x - round(x)) <= 1e-6 * x and round(x) >= 1 for x in r):
                e = fit_dim([(v, (round(x),)) for (v, _), x in zip(known, r)], consts, 0)
                if e and not e.strip().isdigit() and "/" not in e:
                    return {"center": c, "spread": math.sqrt(m), "fan": e}
    return {"center": c, "spread": big[1]}


def init_runs(every_scales, consts):
    """{key: run} of every state_dict entry, from [(values, {key: scale})]; None for a buffer
    that keeps the input patterns (an integer one: the range of the module's values). A causal
    mask at every size measured is the run {"tril": n}, n its side as a size expression (the
    module's max_seqlen); a table the same at every size {"values": its elements}."""
    keys = every_scales[-1][1].keys()

    def run(k):
        pts = [(v, sc.get(k)) for v, sc in every_scales]
        known = [(v, s) for v, s in pts if s is not None]
        kinds = {s[0] if isinstance(s[0], str) else None for _, s in known}
        if kinds == {TRIL}:
            e = fit_dim([(v, (s[1],)) for v, s in known], consts, 0)
            return {"tril": e} if e else None
        if kinds == {VALUES}:
            t = known[0][1][1]
            same = all(s[1].shape == t.shape and torch.equal(s[1], t) for _, s in known)
            return {"values": t.reshape(-1).tolist()} if same and t.numel() <= MAX_VALUES else None
        if kinds != {None}:
            return None
        return init_run(pts, consts)
    return {k: run(k) for k in keys}


def drop_random(mod, runs, v):
    """runs without the values that another seed changes (a buffer of torch.randn is no
    structure: it keeps the input patterns, as any weight): the module made again at sizes v."""
    keys = [k for k, r in runs.items() if r and "values" in r]
    if not keys:
        return runs
    sd = instantiate(mod, v, seed=SEED + 7)[0].state_dict()
    for k in keys:
        if sd[k].reshape(-1).tolist() != runs[k]["values"]:
            runs[k] = None
    return runs


def fairness(mod, values):
    _, _, a = run(mod, values, torch.float64, seed=1)
    _, _, b = run(mod, values, torch.float64, seed=2)
    if any(not torch.equal(x, y) for x, y in zip(a, b)):
        raise Refused("unfair: forward draws random numbers (dropout in training mode, a torch.randn state?): no reference "
                      "reproduces it")
    model, inputs = instantiate(mod, values)
    model = to_dtype(model, torch.float64)
    with torch.no_grad():
        # parameters drawn as leap draws them, not the module's initialisation: small initial
        # weights make level 2's 9 (linear, - 2, ReLU) zero, which leap's N(0, 1) weights do not
        torch.manual_seed(SEED + 2)
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.copy_(torch.randn_like(t))
        held = [(m, k, torch.randn_like(getattr(m, k))) for _, m, k in attrs(model) if getattr(m, k).is_floating_point()]
        for m, k, t in held:
            setattr(m, k, t)
        xs = [x for x in inputs if isinstance(x, torch.Tensor)]
        o1 = outputs_of(model(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                                for x in inputs]))
        # fresh values, not a transform of the first: an argmax ignores a positive scale; the held
        # tensors as before the first call, which may have changed them
        for m, k, t in held:
            setattr(m, k, t)
        torch.manual_seed(SEED + 1)
        o2 = outputs_of(model(*[torch.randn_like(x.double()) if isinstance(x, torch.Tensor) and x.is_floating_point()
                                else x for x in inputs]))
    if all(torch.equal(x, y) for x, y in zip(o1, o2)) and any(x.is_floating_point() for x in xs):
        raise Refused("unfair: the output does not depend on the inputs (a constant output passes)")


def smallest(cases):
    return min(cases, key=lambda v: sum(v.values()))


def depends(mod, cases):
    """Nothing when the output depends on the inputs at one of `cases` (then a constant output
    fails there), else raises the refusal of the last."""
    for v in sorted(cases, key=lambda v: sum(v.values())):
        try:
            fairness(mod, v)
            return
        except Refused as e:
            if "does not depend" not in str(e):
                raise
            why = e
    raise why


def fair_draws(mod, consts, meta):
    """The draws of draw_cases, where the output depends on the inputs at one of them; else
    tiny draws (every size at most 4) where it does: a min over 128 channels summed over 128
    rows is so negative that GELU gives 0, over 3 channels and 2 rows it is not."""
    draws = draw_cases(mod, consts, meta)
    try:
        depends(mod, [d[0] for d in draws] or [consts])
        return draws
    except Refused as e:
        if "does not depend" not in str(e):
            raise
        big = [k for k, x in consts.items() if x >= SHRINK_MIN]
        tiny = try_draws(mod, consts, big, random.Random(SEED + 3), 12, 4, meta) if big else []
        if len(tiny) < 2:
            raise
        depends(mod, [d[0] for d in tiny])
        return tiny


# Where derive's time went, for the progress line: [(phase, seconds)].
PHASES = []


def phase(name, t0):
    """Adds the time since t0 to phase `name`; returns now."""
    now = time.time()
    PHASES.append((name, now - t0))
    return now


def derive(path, task_id):
    t0 = time.time()
    src = open(path, encoding="utf-8").read()
    mod = load(path)
    consts = constants(mod)
    meta = True
    try:
        model, inputs, outs = shapes(mod, consts, "meta")
    except Refused:
        raise
    except Exception:  # an operator without a meta kernel: every draw runs for real
        meta = False
        model, inputs, outs = shapes(mod, consts)
    full = layout(mod, model, inputs, outs, consts)
    if len(full) > MAX_PARAMS:  # before any draw: a deep network's draws take minutes
        raise Refused("%d parameters (inputs, state packed, outputs, sizes): leap's entry takes at most %d"
                      % (len(full), MAX_PARAMS))
    draws = fair_draws(mod, consts, meta)
    if not draws and case_bytes(mod, consts) > CASE_BYTES:
        raise Refused("it runs at no size smaller than the file's, whose tensors take %d MiB: too large for "
                      "verification cases (at most %d MiB)" % (case_bytes(mod, consts) >> 20, CASE_BYTES >> 20))
    small = [(v, layout(mod, m, i, o, consts)) for v, m, i, o in draws]
    if any([r[:3] for r in rows] != [r[:3] for r in full] for _, rows in small):
        small = []
    every = [(consts, full)] + small
    sds = [model.state_dict()] + [m.state_dict() for _, m, _, _ in draws] if small else [model.state_dict()]
    t0 = phase("cases", t0)
    # each floating state_dict entry's initialisation, at every size set (the file's on the
    # meta device, where it ran there: torch's own inits are read from their calls)
    scales = ([(consts, init_scales(mod, consts, "meta")[2])] if meta else []) + \
        [(v, init_scales(mod, v)[2]) for v, _ in small]
    if not small:
        scales.append((consts, init_scales(mod, consts)[2]))
    runs = drop_random(mod, init_runs(scales, consts), smallest([v for v, _ in scales]))
    params = []
    for k, (name, kind, key, t) in enumerate(full):
        if kind == "size":
            params.append({"name": name, "type": "int"})
            continue
        if kind == "scalar":
            params.append({"name": name, "type": "float", "doc": "forward input %d, a float" % key})
            continue
        if t.dtype not in TYPES:
            raise Refused("%s has dtype %s, which leap has no type for" % (name, t.dtype))
        if kind == "pack":
            params.append(pack_param(name, key, t, every, sds, consts, runs))
            continue
        e = size_expr([(v, tuple(rows[k][3].shape)) for v, rows in every], consts)
        if e is None:
            raise Refused("the size of %s (%s) is no expression over the constants leap can find" %
                          (name, "x".join(map(str, t.shape))))
        p = {"name": name, "type": TYPES[t.dtype], "role": "out" if kind == "out" else "in", "size": e,
             "doc": "%s %s, shape [%s]" % ("output" if kind == "out" else "forward input" if kind == "in" else
                                           "state_dict entry" if kind == "state" else
                                           "tensor attribute (set before each call)", key,
                                           ", ".join(str(fit_dim([(v, tuple(rows[k][3].shape))
                                                                  for v, rows in every], consts, i))
                                                     for i in range(t.dim())))}
        if kind == "state" and runs.get(key):
            p["init"] = [runs[key]]
        elif kind == "state" and not t.is_floating_point():  # drawn within the module's values
            p["range"] = int_range([rows[k][3] for _, rows in every])
        if kind == "in" and not t.is_floating_point():
            p["range"] = int_range([rows[k][3] for _, rows in every])
        params.append(p)
    cases = [v for v, _ in small] or [consts]
    seeds = TOL_SEEDS
    t0 = phase("inits", t0)
    try:
        try:
            tol, need, at, kept, dropped = tolerance(mod, cases, runs)
        except Refused as e:
            if "every input pattern" not in str(e):
                raise
            tol, need, at, kept, dropped = tolerance(mod, cases, runs, patterns=POSITIVE)
            dropped = dict(e.need, **dropped)
    except Refused:
        # a deep network's BatchNorms over a shrunk image (level 3's ResNet18: 1 x 1 by its last
        # stage, two values a channel) amplify float32's rounding past any tolerance; at the
        # file's sizes they do not: the task runs there alone (one seed: a forward there costs
        # seconds)
        if cases == [consts] or case_bytes(mod, consts) > CASE_BYTES:
            raise
        # measured there, on one seed (a float64 ResNet101 at the file's sizes takes a minute a
        # forward on a loaded machine), at the file's batch: a BatchNorm in train mode sums over
        # the batch, and a smaller one measured a smaller error (a ResNet101 measured at batch 2
        # got 1e-3 where float32 itself is 3.4e-4 off at its batch of 10: 4 times that misses)
        seeds = 1
        tol, need, at, kept, dropped = tolerance(mod, [consts], runs, seeds)
        cases = [consts]
    t0 = phase("tolerance", t0)
    # the float scalars' values, as get_inputs() gives them at each case
    scal = {tuple(v.items()): {r[0]: r[3] for r in rows if r[1] == "scalar"} for v, rows in every}
    cases = [dict(v, **scal[tuple(v.items())]) for v in cases]
    consts = dict(consts, **scal[tuple(consts.items())])
    if dropped:  # every float input drawn from the patterns kept
        for p in params:
            if p.get("role") == "in" and p["type"] in ("float", "double", "half", "bf16") and "init" not in p:
                p["dist"] = kept
    notes = ("tolerance: torch's float32 forward against its float64 forward on leap's draws (inputs from each "
             "pattern, parameters at their initialisation's scale, %d seed%s) at %s: at most %.3g (at %s), times %d "
             "within %g" % (seeds, "s" if seeds > 1 else "", "every case" if len(cases) > 1 else "its case", need, at,
                            TOL_MARGIN, tol))
    if dropped:
        notes += "; inputs not drawn %s, where float32's error is %s" % (
            " or ".join(dropped), ", ".join("%.3g (at %s)" % e for e in dropped.values()))
    return {
        "id": task_id, "level": 1, "title": task_id, "module": "module.py",
        "prompt": prompt_of(src, full),
        "entry": "module_forward", "params": params,
        "cases": cases, "ranges": {},
        "bench": consts, "bench_cpu": max(cases, key=lambda v: sum(x for x in v.values() if type(x) is int)),
        "atol": tol, "rtol": tol,
        "notes": notes,
    }


def int_range(ts):
    """[lo, hi] of integer tensors' values where they are known (not on the meta device), the
    least max of them: a bound at every size; [0, 1] where none is known."""
    vals = [x for x in ts if x.device.type != "meta" and x.numel()]
    if not vals:
        return [0, 1]
    lo, hi = int(min(int(x.min()) for x in vals)), int(min(int(x.max()) for x in vals))
    return [lo, hi] if lo < hi else [lo, lo + 1]


def pack_param(name, keys, t, every, sds, consts, runs):
    """The parameter of a packed state: its size the sum of its entries' (added up where they
    are numbers), its doc every entry's name and shape in order; a floating pack's init one run
    per entry (runs alike in a row merged, but for values), sized as the entry is; an integer
    pack's the entries' values where each is the same at every size, else the range of them."""
    terms, lit, doc, init = [], 0, [], []
    fixed = all(runs.get(k) for k in keys)
    for k in keys:
        e = size_expr([(v, tuple(sd[k].shape)) for (v, _), sd in zip(every, sds)], consts)
        if e is None:
            raise Refused("the size of state_dict entry %s (%s) is no expression over the constants leap can find"
                          % (k, "x".join(map(str, sds[0][k].shape))))
        if t.is_floating_point():
            # a packed buffer is drawn one way: a structural one in it takes its values' scale
            run = runs[k] = runs[k] or init_run([(consts, scale_of(None, sds[-1][k]) or (0.0, 1.0, False))], consts)
            r = dict(run, size=e)
            if init and "values" not in run and {a: b for a, b in init[-1].items() if a != "size"} == run:
                init[-1]["size"] = "%s + %s" % (init[-1]["size"], e)
            else:
                init.append(r)
        elif fixed:
            init.append(dict(runs[k], size=e))
        if all(f.strip().isdigit() for f in e.split("*")):
            lit += math.prod(int(f) for f in e.split("*"))
        else:
            terms.append(e)
        doc.append("%s [%s]" % (k, ", ".join(str(fit_dim([(v, tuple(sd[k].shape)) for (v, _), sd in zip(every, sds)],
                                                             consts, i)) for i in range(sds[0][k].dim()))))
    if lit or not terms:
        terms.append(str(lit))
    p = {"name": name, "type": TYPES[t.dtype], "role": "in", "size": " + ".join(terms),
         "doc": "the module's %s state_dict entries, each flattened, one after another in state_dict order: %s"
                % ("floating" if t.is_floating_point() else "integer", ", ".join(doc))}
    if init:
        del init[-1]["size"]  # the last run takes the rest
        p["init"] = init
    elif not t.is_floating_point():
        p["range"] = int_range([sd[k] for sd in sds for k in keys])
    return p


def prompt_of(src, rows):
    ins = [r[0] for r in rows if r[1] == "in"]
    st = [r[0] for r in rows if r[1] == "state"]
    packs = [r[0] for r in rows if r[1] == "pack"]
    held = [r[0] for r in rows if r[1] == "attr"]
    outs = [r[0] for r in rows if r[1] == "out"]
    sz = [r[0] for r in rows if r[1] == "size"]
    sc = [r[0] for r in rows if r[1] == "scalar"]
    s = ("Write the forward pass of this PyTorch module (training mode, as written: a BatchNorm "
         "normalises with the batch's statistics) as the entry point below.\n\n```python\n%s\n```\n\n" % src.rstrip("\n"))
    s += "The entry point takes the forward's inputs (%s)" % (", ".join(ins) or "none")
    if st:
        s += ", then the module's parameters and buffers in state_dict order (%s), dots written as underscores" % ", ".join(st)
    if packs:
        s += (", then the module's parameters and buffers packed (%s: too many for one parameter each), every "
              "entry flattened, one after another in state_dict order (each parameter's doc lists them)"
              % ", ".join(packs))
    if held:
        s += (", then the tensors the module holds in plain attributes (%s), drawn by the harness like a parameter "
              "and set before each call" % ", ".join(held))
    s += ", then the outputs (%s)" % ", ".join(outs)
    if sz:
        s += ", then the module-level sizes as ints (%s)" % ", ".join(sz)
        if any(k not in src for k in sz):
            s += " (NAME_i is element i of a tuple or list of sizes NAME)"
    if sc:
        s += ", then the floats the forward takes (%s)" % ", ".join(sc)
    s += (". Every tensor is contiguous in row-major order. Your code is checked at other sizes than the "
          "file's, with parameter values drawn by the harness (not the module's initialisation).\n")
    return s


def cmd_derive(args):
    hub = [hub_refusal(p) for p in args]
    if not all(hub):
        load_torch()
    for path, why in zip(args, hub):
        tid = args_id(path)
        t0 = time.time()
        PHASES.clear()
        try:
            if why:
                raise Refused(why)
            out = derive(path, tid)
        except Refused as e:
            out = {"id": tid, "refused": str(e)}
        except Exception as e:  # the module itself failed: say where
            if isinstance(e, ModuleNotFoundError):
                why = ("it imports %s, which this Python (LEAP_TORCH_PYTHON) cannot import: install it beside torch"
                       % e.name)
            elif "can't allocate memory" in str(e):
                why = "it needs more memory than leap gives torch (RLIMIT_DATA) at the sizes it runs at"
            else:
                why = "the module fails: %s: %s" % (type(e).__name__, e)
            out = {"id": tid, "refused": why}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        # progress: an import of many modules takes minutes (bench/import.sh reads these lines)
        sys.stderr.write("leap-torchref: %s: %s (%.1f s%s)\n" % (
            tid, "refused: " + out["refused"] if "refused" in out else "task", time.time() - t0,
            "".join(", %s %.1f s" % p for p in PHASES)))


def args_id(path):
    base = path.rsplit("/", 1)[-1]
    if base == "module.py":
        return path.rsplit("/", 2)[-2]
    return base[:-3] if base.endswith(".py") else base


# ---- serve ----

def serve(task_dir, shm_fd=3):
    """Answers requests until stdin ends. The buffers travel in shared memory: descriptor
    shm_fd, a memfd of leap's (lib/referee/torchref.c), holds each input at the offset the
    request names, and each output is written at its offset before the answer; the pipes carry
    the lines only."""
    task = json.load(open(task_dir + "/task.json"))
    mod = load(task_dir + "/" + task["module"])
    consts = constants(mod)
    os.set_inheritable(shm_fd, False)  # a child torch may start (a compiler) never gets it
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    models, shm = {}, None
    bufs = [p for p in task["params"] if "role" in p]
    while True:
        line = inp.readline()
        if not line:
            return
        try:
            req = json.loads(line)
            values, counts, offsets, need = req["values"], req["counts"], req["offsets"], req["bytes"]
            if len(counts) != len(bufs) or len(offsets) != len(bufs):
                raise Refused("the request names %d buffers, task.json %d" % (len(counts), len(bufs)))
            if shm is None or len(shm) < need:
                # leap grows the memfd before such a request and never shrinks it; the old map
                # lives on while a tensor still views it
                shm = mmap.mmap(shm_fd, need)
            for n, at, p in zip(counts, offsets, bufs):
                if n < 0 or at < 0 or at + n * size_of(p["type"]) > need:
                    raise Refused("%s's %d elements at %d are outside the shared %d bytes" % (p["name"], n, at, need))
            # views of leap's bytes, no copy: answer converts or copies each before it returns
            blobs = [shared(shm, p["type"], n, at) if p["role"] == "in" else None
                     for p, n, at in zip(bufs, counts, offsets)]
            timing = {}
            res = answer(mod, consts, task, values, counts, blobs, models, timing)
            outs = [(p, n, at) for p, n, at in zip(bufs, counts, offsets) if p["role"] == "out"]
            for o, (p, n, at) in zip(res, outs):
                if o.numel() != n:  # leap must never read what was there before
                    raise Refused("output %s has %d elements at these sizes, task.json says %d" % (p["name"], o.numel(), n))
                shared(shm, p["type"], n, at).copy_(o.reshape(-1))
            del blobs, res
            out.write(b'{"ok": true, "forward_s": %.9f}\n' % timing["forward_s"])
        except Exception as e:
            out.write((json.dumps({"error": "%s: %s" % (type(e).__name__, e)}) + "\n").encode())
        out.flush()


def shared(shm, ty, n, at):
    """The n elements of type ty at byte `at` of the shared map, as a tensor viewing it."""
    if n == 0:
        return torch.empty(0, dtype=DTYPES[ty])
    return torch.frombuffer(shm, dtype=DTYPES[ty], count=n, offset=at)


SIZES = {"float": 4, "double": 8, "int": 4, "int64": 8, "half": 2, "bf16": 2, "uint8": 1}


def size_of(ty):
    return SIZES[ty]


def answer(mod, consts, task, values, counts, blobs, models, timing=None):
    """The outputs for the request's values; timing, a dict, gets "forward_s": the seconds the
    forward alone took (bench/torchref.sh sets the whole answer against it)."""
    v = {k: int(values[k]) if k in values else consts[k] for k in consts}
    key = tuple(v.items())
    if key not in models:
        model, inputs = instantiate(mod, v)
        models.clear()  # one size at a time: a task's cases come in order
        # the layout once per size: a packed state's is a concatenation of every entry (ResNet18's
        # 12M floats: a sixth of an answer when made for each)
        models[key] = (model, inputs, layout(mod, model, inputs, [torch.empty(0)] * sum(
            1 for p in task["params"] if p.get("role") == "out"), consts))
    model, inputs, rows = models[key]
    bufs = [p for p in task["params"] if "role" in p]
    if [r[0] for r in rows if r[1] not in ("size", "scalar")] != [p["name"] for p in bufs]:
        raise Refused("task.json's parameters are not what the module file makes: import it again")
    xs = {r[2]: float(values[r[0]]) for r in rows if r[1] == "scalar"}  # by position in forward's
    state, held = {}, []
    for (name, kind, key2, t), p, n, b in zip(rows, bufs, counts, blobs):
        if kind == "out":
            continue
        if t.numel() != n:
            raise Refused("%s has %d elements at these sizes, task.json says %d" % (name, t.numel(), n))
        # a view of leap's shared bytes: what forward gets or the module keeps is a copy (inputs,
        # tensor attributes), the state is copied into the module by load_state_dict
        x = b.reshape(t.shape)
        if kind in ("in", "attr"):
            x = x.to(torch.float64 if x.is_floating_point() else t.dtype, copy=True)
        elif t.dtype != x.dtype:
            # not float64 first: load_state_dict converts the state as it copies it (ResNet18's
            # 12M floats made float64 first, then copied, took an eighth of an answer)
            x = x.to(t.dtype)
        if kind == "in":
            xs[key2] = x
        elif kind == "attr":
            held.append((key2, x))
        elif kind == "pack":
            sd, at = model.state_dict(), 0
            for k in key2:
                state[k] = x[at:at + sd[k].numel()].reshape(sd[k].shape).to(sd[k].dtype if not
                                                                          sd[k].is_floating_point() else x.dtype)
                at += sd[k].numel()
        else:
            state[key2] = x
    m = to_dtype(model, torch.float64)
    m.load_state_dict(state, strict=True)
    t0 = time.perf_counter()
    outs = seeded_outputs(m, held, [xs[i] for i in sorted(xs)])
    if timing is not None:
        timing["forward_s"] = time.perf_counter() - t0
    res = []
    for p, o in zip([p for p in bufs if p["role"] == "out"], outs):
        res.append(o.detach().to(DTYPES[p["type"]]).contiguous())
    return res


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "derive":
        cmd_derive(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "serve":
        load_torch()
        # one thread: a case is small and leap-verify's runners share the cores; torch's
        # intra-op threads spin-wait when the machine is busy (a 16x16 BatchNorm took 45 ms on
        # two threads of a loaded machine, 3 ms on one)
        torch.set_num_threads(1)
        serve(sys.argv[2])
    else:
        sys.stderr.write("usage: torchref.py derive FILE... | serve TASK_DIR\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
