"""core.py - sizes, tensors, the operator graph of one task, and the code builder.

A KernelBench problem is written here as a small graph: inputs (the forward's tensors and the
module's parameters), then one node per torch operator the forward calls, in order. Each node
(kb/ops.py) knows how to write itself four ways: C accumulating in double (the reference), C in
float (the fixture solution the fairness lint runs), CUDA as PyTorch eager runs it (one library
call or one kernel per operator: the baseline) and the torch expression the oracle evaluates.
A level-2 fusion is the same graph with more nodes, so every task, level 1 or 2, is built by the
same emitters and checked by the same lint and oracle.
"""

import re


class Dim:
    """A size: an int scalar of the task (full is None) or an expression over the scalars.

    name is the C identifier the generated code declares it as; full is the expression in the
    scalars alone, as task.json's size expressions and the oracle need it."""

    def __init__(self, name, full=None):
        self.name = name
        self.full = full if full is not None else name
        self.derived = full is not None

    def __repr__(self):
        return self.name


def full(d):
    """The expression of a size in the task's scalars (int or Dim), parenthesized if compound."""
    if isinstance(d, int):
        return str(d)
    return "(%s)" % d.full if d.derived and not re.fullmatch(r"\w+", d.full) else d.full


def cname(d):
    return str(d) if isinstance(d, int) else d.name


def prod_full(dims):
    """Element count of a shape as a task.json expression ("batch*dim")."""
    parts = [full(d) for d in dims if not (isinstance(d, int) and d == 1)]
    return "*".join(parts) if parts else "1"


def prod_c(dims):
    """Element count of a shape as a C expression of type long ("(long)batch * dim")."""
    parts = [cname(d) for d in dims if not (isinstance(d, int) and d == 1)]
    if not parts:
        return "1L"
    if len(parts) == 1:
        return "(long)" + parts[0]
    return "(long)" + " * ".join(parts)


def sub_dims(expr, dims):
    """expr (over dim names) with every derived dim replaced by its full expression."""
    names = {d.name: d for d in dims if isinstance(d, Dim) and d.derived}

    def rep(m):
        d = names.get(m.group(0))
        return full(d) if d else m.group(0)

    return re.sub(r"\b[A-Za-z_]\w*\b", rep, expr)


class Tensor:
    """A tensor of the graph: an input (kind "in"), an intermediate ("tmp") or the output."""

    def __init__(self, name, shape, dtype="float", kind="tmp", dist=None, rng=None, doc=None):
        self.name = name
        self.shape = list(shape)
        self.dtype = dtype  # float, int64, uint8
        self.kind = kind
        self.dist = dist
        self.rng = rng
        self.doc = doc

    def numel_c(self):
        return prod_c(self.shape)

    def numel_full(self):
        return prod_full(self.shape)


class Code:
    """Lines of C with tab indentation."""

    def __init__(self, depth=0):
        self.lines = []
        self.depth = depth

    def __call__(self, line=""):
        for ln in line.split("\n"):
            self.lines.append(("\t" * self.depth + ln) if ln else "")
        return self

    def open(self, line):
        self(line + " {")
        self.depth += 1
        return self

    def scope(self):
        """Opens a bare block (its own declarations)."""
        self("{")
        self.depth += 1
        return self

    def close(self, tail=""):
        self.depth -= 1
        self("}" + tail)
        return self

    def block(self, other):
        for ln in other.lines:
            self.lines.append(("\t" * self.depth + ln) if ln else "")
        return self

    def text(self):
        return "\n".join(self.lines) + "\n"


def loops(code, dims, var):
    """Opens one for loop per dim (variables var0, var1, ...); returns the variable names."""
    vs = []
    for i, d in enumerate(dims):
        v = "%s%d" % (var, i)
        code.open("for (long %s = 0; %s < %s; %s++)" % (v, v, cname(d), v))
        vs.append(v)
    return vs


def close_loops(code, n):
    for _ in range(n):
        code.close()


def is_one(d):
    return isinstance(d, int) and d == 1


def index(shape, vs):
    """Row-major linear index, in the coordinates vs of an output, of an operand of `shape`
    (right-aligned with the output, as torch broadcasts): a dim of size 1 adds nothing."""
    expr = None
    off = len(vs) - len(shape)
    for i, d in enumerate(shape):
        if is_one(d):
            continue
        v = vs[off + i]
        if expr is None:
            expr = v
        else:
            expr = "%s * %s + %s" % (expr if " " not in expr else "(%s)" % expr, cname(d), v)
    return expr if expr is not None else "0"


def fmt_float(v):
    """A double constant as C writes it (exactly the value the spec gives)."""
    r = repr(float(v))
    if "e" not in r and "." not in r and "inf" not in r:
        r += ".0"
    return r


def fmt_floatf(v):
    return fmt_float(v) + "f"
