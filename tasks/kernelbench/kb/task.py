"""task.py - one KernelBench problem as a leap task: its graph, sizes, and the files it becomes.

Task.files() gives every generated file of the task: task.json, reference.c and baseline.cu in
the suite, the fixture solution beside the other tasks' under tests/fixtures/tasks/, and the
oracle's entry (the torch code of the same operator sequence).
"""

import json

from . import ops as O
from .core import Dim, Tensor, Code, cname, full, prod_full, prod_c
from .emit import CEm, CudaEm, CU_HELPERS, CU_ORDER

SOURCE = "ScalingIntelligence/KernelBench at 423217d"
BUDGET = 16 << 30  # bytes of one benchmark input set (inputs and outputs): see bench_note()


def _fmt_json_value(v):
    return json.dumps(v, separators=(", ", ": "))


# leap's default patterns of a float input (task.json without "dist": the first five).
DEFAULT_DISTS = ("normal", "uniform", "small", "large", "sparse")

# leap-task(5)'s families: the patterns of each one's hard region (lib/task/task.c's table), the
# pattern the generator adds to an input a family's operator reads directly, and why a task
# none of whose inputs reaches the region is not of the family.
FAMILY_NEED = {"exp": {"large", "large_int"}, "norm": {"near_one"}, "tie": {"ties"}}
FAMILY_PATTERN = {"norm": "near_one", "tie": "ties"}
FAMILY_WHY_NOT = {
    "exp": "its inputs are drawn without large magnitudes, on which its output saturates to constants",
    "norm": "the statistics are of an intermediate, which no input pattern makes near-constant",
    "tie": "the arg-max is of an intermediate, which no input pattern makes repeat its maximum",
}

# Level-2 tasks of exp that stay without large_int, each for what the fairness lint found on it:
# their output saturates to constants (a constant, zeros or another seed's mean passes), or a
# norm after the saturated activation sees near-constant groups, where a float computation
# misses the tolerance.
SATURATES = "on large_int inputs its output saturates to constants, which then pass the fairness lint"
NORM_AFTER = ("on large_int inputs the activation saturates and the norm after it sees near-constant "
              "groups, where a float computation misses the tolerance")
EXP_NO_LARGE_INT = {
    "kb2_003_convtranspose3d_sum_layernorm_avgpool_gelu": SATURATES,
    "kb2_004_conv2d_mish_mish": SATURATES,
    "kb2_005_convtranspose2d_subtract_tanh": SATURATES,
    "kb2_006_conv3d_softmax_maxpool_maxpool": SATURATES,
    "kb2_011_convtranspose2d_batchnorm_tanh_maxpool_groupnorm": NORM_AFTER,
    "kb2_016_convtranspose2d_mish_add_hardtanh_scale": SATURATES,
    "kb2_021_conv2d_add_scale_sigmoid_groupnorm": NORM_AFTER,
    "kb2_025_conv2d_min_tanh_tanh": SATURATES,
    "kb2_034_convtranspose3d_layernorm_gelu_scale": SATURATES,
    "kb2_035_conv2d_sub_hardswish_maxpool_mish": SATURATES,
    "kb2_038_avgpool_convtranspose3d_clamp_softmax_mul": SATURATES,
    "kb2_043_conv3d_maxpool_lse_relu": SATURATES,
    "kb2_047_conv3d_mish_tanh": SATURATES,
    "kb2_058_convtranspose3d_lse_hardswish_sub_clamp": SATURATES,
    "kb2_084_linear_batchnorm_scale_softmax": SATURATES,
    "kb2_087_conv2d_sub_sub_mish": SATURATES,
    "kb2_089_convtranspose3d_maxpool_softmax_sub_swish_max": SATURATES,
    "kb2_091_convtranspose2d_softmax_bias_scale_sigmoid": SATURATES,
    "kb2_093_convtranspose2d_add_min_gelu_mul": SATURATES,
    "kb2_097_linear_batchnorm_bias_div_swish": SATURATES,
}

# "residues" (leap-task(5)): the modulus, the widest vector a kernel could run along a size
RESIDUE_MOD = 64

EXP_UNARY = {"sigmoid", "tanh", "swish", "gelu", "gelu_tanh", "selu", "softplus", "elu", "mish", "exp"}


def _family_of(op):
    """The family of one operator of the graph, or None."""
    name = type(op).__name__
    kind = getattr(op, "kind", None)
    if name == "Softmax" or (name == "Unary" and kind in EXP_UNARY) or (name == "Reduce" and kind == "logsumexp"):
        return "exp"
    if name == "RowLoss" and kind == "ce":
        return "exp"
    if name in ("GroupStats", "StatScale"):
        return "norm"
    if name == "Reduce" and kind in ("argmax", "argmin"):
        return "tie"
    return None


class Task:
    def __init__(self, level, num, kb, short, title, suite=None):
        self.level, self.num, self.kb = level, num, kb
        self.short = short
        self.id = "kb%d_%03d_%s" % (level, num, short)
        self.suite = suite or "kernelbench-l%d" % level
        self.entry = "kb_" + short
        self.title = title
        self.ints = []  # int scalars (Dim), in prototype order
        self.floats = []  # (name, value) float scalars
        self.derived = []
        self.inputs = []
        self.nodes = []
        self.out = None
        self.stmt = None  # the prompt's statement of the math
        self.notes = []  # deviations from KernelBench, said in the prompt and task.json
        self.batch_stats = False  # a BatchNorm in training mode (the batch's statistics) is among the nodes
        self.kb_notes = []  # where KernelBench's code runs other than its file's name says: task.json's notes
        self.atol = self.rtol = 1e-4
        self.tol_why = None
        self.ntmp = 0
        self.scale = None

    # ---- building ----

    def int(self, *names):
        ds = [Dim(n) for n in names]
        self.ints.extend(ds)
        return ds if len(ds) > 1 else ds[0]

    def float(self, name, value):
        self.floats.append((name, value))
        return name

    def dim(self, name, expr):
        """A derived size: expr over the scalars' and other derived sizes' names."""
        from .core import sub_dims

        d = Dim(name, sub_dims(expr, self.derived))
        d.cexpr = expr
        self.derived.append(d)
        return d

    def input(self, name, shape, dist=None, dtype="float", rng=None, doc=None):
        t = Tensor(name, shape, dtype=dtype, kind="in", dist=dist, rng=rng, doc=doc)
        self.inputs.append(t)
        return t

    def tmp(self, shape, dtype="float"):
        self.ntmp += 1
        return Tensor("t%d" % self.ntmp, shape, dtype=dtype)

    def add(self, op):
        self.nodes.append(op)
        return op.out

    def output(self, t, name="y"):
        t.kind = "out"
        t.name = name
        self.out = t
        return t

    # ---- sizes ----

    def sizes(self, cases, bench, bench_cpu, ranges):
        self.cases, self.bench, self.bench_cpu, self.ranges = cases, bench, bench_cpu, ranges

    # ---- facts derived from the graph ----

    def tensors(self):
        seen, out = set(), []
        for t in self.inputs + [n.out for n in self.nodes]:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
        return out

    def libs(self):
        s = []
        for n in self.nodes:
            for lib in n.libs:
                if lib not in s:
                    s.append(lib)
        return s

    def eval(self, expr, case):
        env = dict(case)
        return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, env))

    def set_bytes(self, case):
        return sum(self.eval(t.numel_full(), case) * (8 if t.dtype == "int64" else 1 if t.dtype == "uint8" else 4)
                   for t in self.inputs + [self.out])

    def bytes_expr(self):
        terms = []
        for t in self.inputs + [self.out]:
            w = 8 if t.dtype == "int64" else 1 if t.dtype == "uint8" else 4
            terms.append("%d*%s" % (w, t.numel_full()) if w != 1 else t.numel_full())
        return "+".join(terms)

    def flops_expr(self):
        fs = [n.flops() for n in self.nodes if n.flops() != "0"]
        return "+".join("(%s)" % f if "+" in f else f for f in fs) or "0"

    # ---- the files ----

    def params(self):
        """(name, C type for cpu, for cuda) in prototype order."""
        ps = []
        for t in self.inputs:
            ct = {"float": "const float *", "int64": "const int64_t *", "uint8": "const uint8_t *"}[t.dtype]
            ps.append((t.name, ct))
        ps.append((self.out.name, "int64_t *" if self.out.dtype == "int64" else "float *"))
        for d in self.ints:
            ps.append((d.name, "int "))
        for n, _ in self.floats:
            ps.append((n, "float "))
        return ps

    def proto(self, cuda=False):
        return "%svoid %s(%s)" % ('extern "C" ' if cuda else "", self.entry, ", ".join(ct + n for n, ct in self.params()))

    def names(self):
        return {t: t.name for t in self.tensors()}

    def _decl_dims(self, code, body):
        """Declares the derived sizes the code `body` (or a declaration it needs) names."""
        import re

        need = set(re.findall(r"\b[A-Za-z_]\w*\b", body))
        for d in reversed(self.derived):
            if d.name in need:
                need |= set(re.findall(r"\b[A-Za-z_]\w*\b", d.cexpr))
        for d in self.derived:
            if d.name in need:
                code("const long %s = %s;" % (d.name, d.cexpr))

    def c_source(self, T):
        ts = self.tensors()
        E = CEm(T, self.names(), {t: t.kind for t in ts}, {t: t.dtype for t in ts})
        what = "reference" if T == "double" else "fixture solution"
        how = ("every sum, product and function in double, rounded to float once per output element"
               if T == "double" else "in float throughout, in the order a plain loop takes (no double anywhere)")
        code = Code()
        code("/* %s %s: KernelBench level %d problem %d (%s), %s. */" % (self.id, what, self.level, self.num, self.kb,
                                                                       how))
        code("#include <math.h>")
        code("#include <stdint.h>")
        code("#include <stdlib.h>")
        code("")
        code(self.proto())
        code("{")
        code.depth += 1
        head = len(code.lines)
        tmps = [t for t in ts if t.kind == "tmp"]
        if tmps:
            for t in tmps:
                tt = "int64_t" if t.dtype == "int64" else T
                code("%s *%s = malloc(sizeof(%s) * %s);" % (tt, t.name, tt, t.numel_c()))
            code.open("if (%s)" % " || ".join("!%s" % t.name for t in tmps))
            for t in tmps:
                code("free(%s);" % t.name)
            code("return; /* the output keeps the harness's poison: a failed allocation is a failed check */")
            code.close()
        for n in self.nodes:
            n.c(E, code)
        for t in tmps:
            code("free(%s);" % t.name)
        dims = Code(1)
        self._decl_dims(dims, "\n".join(code.lines[head:]))
        code.lines[head:head] = dims.lines
        code.close()
        return code.text()

    def cu_source(self):
        names = self.names()
        E = CudaEm(names, {t: t.dtype for t in self.tensors()})
        uses = set()
        defs = []
        keys = set()
        for u, n in enumerate(self.nodes):
            uses |= n.uses()
            for k, src in n.cu_defs(u):
                if k not in keys:
                    keys.add(k)
                    defs.append(src)
        tmps = [t for t in self.tensors() if t.kind == "tmp"]
        wss = self._ws()
        if tmps or wss:
            uses.add("scratch")
        libs = self.libs()
        code = Code()
        code("// %s baseline: %s" % (self.id, self.baseline_words()))
        code("#include <stdint.h>")
        code("#include <stdio.h>")
        code("#include <string.h>")
        if "cublas" in libs:
            code("#include <cublas_v2.h>")
        if "cudnn" in libs:
            code("#include <cudnn.h>")
        code("")
        for k in CU_ORDER:
            if k in uses:
                code(CU_HELPERS[k].rstrip("\n"))
                code("")
        for src in defs:
            code(src.rstrip("\n"))
            code("")
        code(self.proto(cuda=True))
        code("{")
        code.depth += 1
        head = len(code.lines)
        if tmps or wss:
            sizes = []
            for t in tmps:
                w = 8 if t.dtype == "int64" else 4
                sizes.append("((%d * %s + 255) & ~255L)" % (w, t.numel_c()))
            for u, b in wss:
                sizes.append("((%s + 255) & ~255L)" % b)
            code("char *work = (char *)scratch(%s);" % " + ".join(sizes))
            code.open("if (!work)")
            code("return;")
            code.close()
            off = "work"
            k = 0
            for t in tmps:
                tt = "int64_t" if t.dtype == "int64" else "float"
                code("%s *%s = (%s *)(%s);" % (tt, t.name, tt, off))
                off = "(char *)%s + %s" % (t.name, sizes[k])
                k += 1
            for u, b in wss:
                code("void *ws%d = %s;" % (u, off))
                off = "(char *)ws%d + %s" % (u, sizes[k])
                k += 1
        for u, n in enumerate(self.nodes):
            n.cu(E, code, u)
        dims = Code(1)
        self._decl_dims(dims, "\n".join(code.lines[head:]))
        code.lines[head:head] = dims.lines
        code.close()
        return code.text()

    def _ws(self):
        """(u, bytes C expression) of the nodes that need device workspace of their own."""
        return [(u, n.ws()) for u, n in enumerate(self.nodes) if hasattr(n, "ws") and n.ws()]

    def baseline_words(self):
        libs = self.libs()
        if "cudnn" in libs:
            return "cuDNN's convolution in fp32 (no TF32) as PyTorch eager runs it, one kernel per other operator."
        if "cublas" in libs:
            return "cuBLAS SGEMM in fp32 (no TF32) as PyTorch eager runs it, one kernel per other operator."
        if len(self.nodes) == 1:
            return "a hand-written kernel for the operator, as good as PyTorch eager's own."
        return "one hand-written kernel per torch operator, as PyTorch eager runs the sequence (no fusion)."

    def baseline_kind(self):
        return "vendor" if self.libs() else "kernel"

    def torch_code(self):
        if getattr(self, "torch_lines", None):
            return self.torch_lines
        nm = {t: t.name for t in self.tensors()}
        lines = []
        for n in self.nodes:
            lines.append("%s = %s" % (n.out.name, n.torch(nm)))
        return lines

    def oracle_entry(self):
        return {
            "id": self.id,
            "suite": self.suite,
            "entry": self.entry,
            "inputs": [{"name": t.name, "dtype": t.dtype, "shape": [full(d) for d in t.shape]} for t in self.inputs],
            "out": {"name": self.out.name, "dtype": self.out.dtype, "shape": [full(d) for d in self.out.shape]},
            "ints": [d.name for d in self.ints],
            "floats": [n for n, _ in self.floats],
            "torch": self.torch_code(),
        }

    def prompt(self):
        p = "KernelBench level %d, problem %d (%s). " % (self.level, self.num, self.kb)
        p += self.stmt
        ins = []
        for t in self.inputs:
            shape = " x ".join(cname(d) for d in t.shape) or "1"
            ins.append("%s is %s%s" % (t.name, shape, " (%s)" % t.doc if t.doc else ""))
        oshape = " x ".join(cname(d) for d in self.out.shape) or "1"
        p += " Shapes: %s; the output %s is %s." % (", ".join(ins), self.out.name, oshape)
        if self.derived:
            p += " Here " + ", ".join("%s = %s" % (d.name, d.cexpr) for d in self.derived) + "."
        p += " Every tensor is contiguous, row-major (the last index fastest)."
        for n in self.notes:
            p += " " + n
        return p

    def families(self):
        """leap-task(5)'s operator families of the graph: {family: the inputs its operators read
        directly}; the same table as lib/task/task.c's, by operator rather than by word."""
        fam = {}
        for n in self.nodes:
            f = _family_of(n)
            if f:
                # a statistic's or an arg-max's own input (not a norm's affine parameters)
                reads = [n.x] if f in FAMILY_PATTERN else n.ins
                fam.setdefault(f, set()).update(t.name for t in reads if t.kind == "in")
        return fam

    def dists(self):
        """{input name: its patterns}: its own, and the pattern of the hard region of each family
        whose operator reads it directly (a norm's x near one, an arg-max's x in ties)."""
        out = {t.name: list(t.dist) if isinstance(t.dist, list) else ([t.dist] if t.dist else None)
               for t in self.inputs if t.dtype == "float"}
        fams = self.families()
        for f, names in sorted(fams.items()):
            for name in sorted(names):
                if f in FAMILY_PATTERN and name in out:
                    d = out[name] or list(DEFAULT_DISTS)
                    out[name] = d + [FAMILY_PATTERN[f]] if FAMILY_PATTERN[f] not in d else d
        if ("exp" in fams and self.id not in EXP_NO_LARGE_INT
                and not any(FAMILY_NEED["exp"] & set(d or DEFAULT_DISTS) for d in out.values())):
            # inputs kept from large magnitudes (products and sums of them miss fp32's tolerance)
            # take large_int, all at the same turn: integer products and sums are exact, and the
            # exp's argument passes its range all the same
            for name, d in out.items():
                if d and "small" not in d:
                    out[name] = d + ["large_int"]
        return out

    def family_notes(self, dists):
        """(the families whose hard region an input reaches, a note per family none reaches)."""
        have, notes = [], []
        for f in sorted(self.families()):
            if any(FAMILY_NEED[f] & set(d or DEFAULT_DISTS) for d in dists.values()):
                have.append(f)
            else:
                notes.append("not of family %s: %s" % (f, EXP_NO_LARGE_INT.get(self.id, FAMILY_WHY_NOT[f])
                                                       if f == "exp" else FAMILY_WHY_NOT[f]))
        return have, notes

    def residue_dim(self):
        """The scalar a vector width would run along: the last axis of an input (in order), then
        of the output, that is a scalar of its own with a plain range (a fixed or multiple_of
        range keeps what its problem needs). The first whose range has every remainder at a
        value of RESIDUE_MOD or more (a vector body runs before the tail) if one has, else the
        first whose range holds every remainder, else the first (its range is then widened)."""
        scalars = {d.name for d in self.ints}
        cands = []
        for t in self.inputs + [self.out]:
            for d in reversed(t.shape):
                if isinstance(d, int) or getattr(d, "derived", False) or d.name not in scalars:
                    continue
                r = self.ranges.get(d.name)
                if (isinstance(r, list) and all(isinstance(v, int) for v in r) and r[0] < r[1]
                        and d.name not in cands):
                    cands.append(d.name)
                break  # the axis a vector runs along is this one: no scalar of it, none
        for ok in (lambda r: r[0] <= RESIDUE_MOD and r[1] >= 2 * RESIDUE_MOD - 1,
                   lambda r: r[1] - r[0] >= RESIDUE_MOD - 1, lambda r: True):
            for name in cands:
                if ok(self.ranges[name]):
                    return name
        return None

    def cost(self, case):
        """(bytes, flops) of a case, as leap's budget of drawn cases counts them."""
        return self.set_bytes(case), self.eval(self.flops_expr(), case)

    def residue_sizes(self):
        """(ranges, listed cases, residues): the residue scalar's range widened to hold every
        remainder modulo RESIDUE_MOD, and, where the dearest residue case (the second listed
        case with that scalar at its largest residue value, as lib/task/ranges.c draws them)
        costs more than every listed case, that case listed too, so that each one fits."""
        name = self.residue_dim()
        if not name:
            return self.ranges, self.cases, None
        lo, hi = self.ranges[name]
        hi = max(hi, lo + RESIDUE_MOD - 1)
        ranges = dict(self.ranges, **{name: [lo, hi]})
        top = 0
        for k in range(RESIDUE_MOD):
            vals = [v for v in range(lo, hi + 1) if v % RESIDUE_MOD == k]
            top = max(top, next((v for v in vals if v >= RESIDUE_MOD), vals[0]))
        cases = list(self.cases)
        big = dict(cases[1 % len(cases)], **{name: top})
        costs = [self.cost(c) for c in cases]
        b, f = self.cost(big)
        if big not in cases and (b > max(c[0] for c in costs) or f > max(c[1] for c in costs)):
            cases.append(big)
        return ranges, cases, {name: RESIDUE_MOD}

    def task_json(self):
        params = []
        dists = self.dists()
        fams, fam_notes = self.family_notes(dists)
        for t in self.inputs:
            p = {"name": t.name, "type": {"float": "float", "int64": "int64", "uint8": "uint8"}[t.dtype], "role": "in",
                 "size": t.numel_full()}
            if t.dtype == "float":
                if dists[t.name]:
                    p["dist"] = dists[t.name]
            elif t.rng:
                p["range"] = t.rng
            params.append(p)
        params.append({"name": self.out.name, "type": "int64" if self.out.dtype == "int64" else "float",
                       "role": "out", "size": self.out.numel_full()})
        for d in self.ints:
            params.append({"name": d.name, "type": "int"})
        for n, _ in self.floats:
            params.append({"name": n, "type": "float"})
        j = {
            "id": self.id,
            "level": self.level,
            "title": self.title,
            "prompt": self.prompt(),
            "entry": self.entry,
            "precision": "fp32",
            "baseline_kind": self.baseline_kind(),
        }
        if self.libs():
            j["baseline_libraries"] = self.libs()
        j["reference_precision"] = "double"
        if fams:
            j["families"] = fams
        j["params"] = params
        fl = dict(self.floats)
        ranges, cases, residues = self.residue_sizes()
        j["cases"] = [dict(c, **fl) for c in cases]
        j["bench"] = dict(self.bench, **fl)
        j["bench_cpu"] = dict(self.bench_cpu, **fl)
        j["ranges"] = ranges
        if residues:
            j["residues"] = residues
        j["atol"] = self.atol
        j["rtol"] = self.rtol
        j["bytes"] = self.bytes_expr()
        j["flops"] = self.flops_expr()
        j["tags"] = ["kernelbench", "kernelbench-l%d" % self.level, self.kb]
        notes = ["KernelBench's %s, level%d/%s.py." % (SOURCE, self.level, self.kb)]
        notes.append("Baseline: " + self.baseline_words())
        notes.extend(self.kb_notes)
        bn = self.bench_note()
        if bn:
            notes.append(bn)
        if self.tol_why:
            notes.append(self.tol_why)
        notes += [n + "." for n in fam_notes]
        j["notes"] = " ".join(notes)
        return j

    def bench_note(self):
        return self.scale

    def task_json_text(self):
        j = self.task_json()
        lines = ["{"]
        keys = list(j.keys())
        for i, k in enumerate(keys):
            v = j[k]
            comma = "," if i < len(keys) - 1 else ""
            if k in ("params", "cases"):
                lines.append('  "%s": [' % k)
                for m, e in enumerate(v):
                    lines.append("    " + _fmt_json_value(e) + ("," if m < len(v) - 1 else ""))
                lines.append("  ]" + comma)
            else:
                lines.append('  "%s": %s%s' % (k, _fmt_json_value(v), comma))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def files(self):
        """{path relative to the repository: text}."""
        base = "tasks/%s/%s/" % (self.suite, self.id)
        fix = "tests/fixtures/tasks/%s/%s/" % (self.suite, self.id)
        return {
            base + "task.json": self.task_json_text(),
            base + "reference.c": self.c_source("double"),
            base + "baseline.cu": self.cu_source(),
            fix + "solution.c": self.c_source("float"),
        }

    # ---- operator shorthands (each returns the new tensor) ----

    def unary(self, kind, x, **p):
        return self.add(O.Unary(kind, x, self.tmp(x.shape), **p))

    def view(self, x, shape, torch_expr=None):
        t = Tensor("v%d" % (len(self.nodes) + 1), shape, dtype=x.dtype, kind="view")
        return self.add(O.View(x, t, torch_expr))

    def binary(self, kind, a, b):
        return self.add(O.Binary(kind, a, b, self.tmp(O.bcast_shape(a.shape, b.shape))))

    def reduce(self, kind, x, axes, keepdim=False):
        axes = [a % len(x.shape) for a in axes]
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keepdim else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        return self.add(O.Reduce(kind, x, axes, self.tmp(shape, "int64" if kind.startswith("arg") else "float")))

    def softmax(self, x, axes, log=False):
        return self.add(O.Softmax(x, [a % len(x.shape) for a in axes], self.tmp(x.shape), log))

    def batchnorm(self, x, w, b, eps=1e-5):
        """nn.BatchNormNd in training mode: the statistics of each channel over the batch."""
        N, C, S = x.shape[0], x.shape[1], x.shape[2:]
        self.batch_stats = True
        return self.add(O.GroupStats(x, prod_c([N]), prod_c([C]), prod_c(S), self.tmp(x.shape), eps, w, b, "g",
                                     torch_expr="F.batch_norm(%%(x)s, None, None, %%(w)s, %%(b)s, training=True, eps=%r)" % eps))

    def instancenorm(self, x, eps=1e-5):
        N, C, S = x.shape[0], x.shape[1], x.shape[2:]
        return self.add(O.GroupStats(x, "1L", prod_c([N, C]), prod_c(S), self.tmp(x.shape), eps,
                                     torch_expr="F.instance_norm(%%(x)s, eps=%r)" % eps))

    def groupnorm(self, x, groups, w, b, eps=1e-5):
        N, C, S = x.shape[0], x.shape[1], x.shape[2:]
        cpg = "(%s / %d)" % (cname(C), groups)
        return self.add(O.GroupStats(x, "1L", "(long)%s * %d" % (cname(N), groups), "%s * %s" % (cpg, prod_c(S)),
                                     self.tmp(x.shape), eps, w, b, "gn", p=(str(groups), cpg, prod_c(S)),
                                     torch_expr="F.group_norm(%%(x)s, %d, %%(w)s, %%(b)s, eps=%r)" % (groups, eps)))

    def layernorm(self, x, k, w, b, eps=1e-5):
        """nn.LayerNorm over the last k axes, elementwise affine w, b of that shape."""
        lead, norm = x.shape[:-k], x.shape[-k:]
        return self.add(O.GroupStats(x, "1L", prod_c(lead), prod_c(norm), self.tmp(x.shape), eps, w, b, "b",
                                     torch_expr="F.layer_norm(%%(x)s, %%(x)s.shape[-%d:], %%(w)s, %%(b)s, eps=%r)"
                                     % (k, eps)))

    def statscale(self, kind, x, axes, eps=0.0):
        return self.add(O.StatScale(kind, x, [a % len(x.shape) for a in axes], self.tmp(x.shape), eps))

    def scan(self, x, torch_expr, **kw):
        return self.add(O.Scan(x, self.tmp(x.shape), torch_expr=torch_expr, **kw))

    def elem_loss(self, kind, p, t):
        rows, cols = prod_c(p.shape[:-1]), prod_c(p.shape[-1:])
        return self.add(O.ElemLoss(kind, p, t, self.tmp([]), rows, cols, len(t.shape) == 1))

    def row_loss(self, kind, ins, **kw):
        x = ins[0]
        return self.add(O.RowLoss(kind, ins, self.tmp([]), prod_c(x.shape[:-1]), prod_c(x.shape[-1:]), **kw))

    def pool(self, kind, x, k, s=None, p=0, d=1, names=None):
        """nn.MaxPoolNd / nn.AvgPoolNd over the last len(k) axes (s defaults to k, as torch's)."""
        nd = len(k)
        s = s or k
        s = s if isinstance(s, (tuple, list)) else (s,) * nd
        p = p if isinstance(p, (tuple, list)) else (p,) * nd
        d = d if isinstance(d, (tuple, list)) else (d,) * nd
        sp = []
        for a, L in enumerate(x.shape[-nd:]):
            num = "%s%s - %d" % (cname(L), " + %d" % (2 * p[a]) if p[a] else "", d[a] * (k[a] - 1) + 1)
            expr = "(%s) / %d + 1" % (num, s[a]) if s[a] != 1 else "%s + 1" % num
            sp.append(self.dim((names or {}).get(a, "%s_out" % cname(L)), expr))
        return self.add(O.Pool(kind, x, self.tmp(list(x.shape[:-nd]) + sp), tuple(k), tuple(s), tuple(p), tuple(d)))

    def matmul(self, A, B, M, N, K, batch=None, out_shape=None, **kw):
        """C = op(A) op(B) (ops.Matmul); M, N, K and batch are lists of dims (their products)."""
        shape = out_shape or ((list(batch) if batch else []) + list(M) + list(N))
        op = O.Matmul(A, B, self.tmp(shape), prod_c(M), prod_c(N), prod_c(K), prod_c(batch) if batch else None, **kw)
        op.fl = "2*" + prod_full((list(batch) if batch else []) + list(M) + list(N) + list(K))
        return self.add(op)

    def conv(self, x, w, bias, cout, k, s=1, p=0, d=1, op=0, groups=1, transposed=False, names=None):
        """nn.ConvNd / nn.ConvTransposeNd (ops.Conv) over the last len(k) axes of x [N, Cin, ...]
        into cout channels. groups: an int, or a scalar's name (depthwise: groups = channels)."""
        nd = len(k)
        tup = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
        s, p, d, op = tup(s), tup(p), tup(d), tup(op)
        N, cin = x.shape[0], x.shape[1]
        sp = []
        for a, L in enumerate(x.shape[2:]):
            Lc = cname(L)
            if transposed:
                e = "(%s - 1) * %d" % (Lc, s[a]) if s[a] != 1 else "%s - 1" % Lc
                tail = d[a] * (k[a] - 1) + op[a] + 1 - 2 * p[a]
                expr = "%s %s %d" % (e, "+" if tail >= 0 else "-", abs(tail))
            else:
                num = "%s%s - %d" % (Lc, " + %d" % (2 * p[a]) if p[a] else "", d[a] * (k[a] - 1) + 1)
                expr = "(%s) / %d + 1" % (num, s[a]) if s[a] != 1 else "%s + 1" % num
            sp.append(self.dim((names or {}).get(a, "%s_out" % Lc), expr))
        out = self.tmp([N, cout] + sp)
        op_ = O.Conv(x, w, bias, out, transposed, tuple(k), s, p, d, op, str(groups), N, cin, cout)
        kv = 1
        for kk in k:
            kv *= kk
        other = cout if transposed else cin
        per = "1" if isinstance(groups, str) else full(other) if groups == 1 else "%s/%d" % (full(other), groups)
        big = prod_full(x.shape) if transposed else prod_full(out.shape)
        op_.fl = "2*%s*%s*%d" % (big, per, kv) if per != "1" else "2*%s*%d" % (big, kv)
        return self.add(op_)
