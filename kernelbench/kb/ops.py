"""ops.py - the operators of KernelBench's problems, each written four ways (see core.py).

Every node has inputs `ins`, an output `out` (a Tensor it creates) and writes:
  c(E, code)       C that computes out from ins in E.T (double: reference; float: solution);
  cu(E, code, u)   the CUDA entry's code for it (u: a number unique in the file), and
  cu_defs(u)       the kernels it launches, as PyTorch eager would: one library call (cuBLAS,
                   cuDNN) or one kernel per torch operator, no fusion;
  torch(nm)        the torch expression of the same operator (the oracle's side);
  flops()          its arithmetic, an expression over the task's scalars;
  doc(nm)          one sentence of the task's prompt.
"""

from .core import Dim, Tensor, cname, full, prod_c, prod_full, index, is_one, loops, close_loops

# ---------------------------------------------------------------------------------------------
# elementwise


def _sig(E, v):
    return "%s / (%s + %s(-%s))" % (E.k(1), E.k(1), E.fn("exp"), v)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

# kind -> (C expression of v (E gives constants and functions), torch expression of x, flops,
#          words). p: the node's parameters.
UNARY = {
    "relu": (lambda E, v, p: "%s > 0 ? %s : %s" % (v, v, E.k(0)), lambda x, p: "torch.relu(%s)" % x, 1,
             lambda p: "max(v, 0)"),
    "leaky_relu": (lambda E, v, p: "%s > 0 ? %s : %s * %s" % (v, v, E.k(p["slope"]), v),
                   lambda x, p: "F.leaky_relu(%s, %r)" % (x, p["slope"]), 2,
                   lambda p: "v if v > 0, else %r * v" % p["slope"]),
    "sigmoid": (lambda E, v, p: _sig(E, v), lambda x, p: "torch.sigmoid(%s)" % x, 4, lambda p: "1 / (1 + exp(-v))"),
    "tanh": (lambda E, v, p: "%s(%s)" % (E.fn("tanh"), v), lambda x, p: "torch.tanh(%s)" % x, 4, lambda p: "tanh(v)"),
    "swish": (lambda E, v, p: "%s / (%s + %s(-%s))" % (v, E.k(1), E.fn("exp"), v),
              lambda x, p: "%s * torch.sigmoid(%s)" % (x, x), 5, lambda p: "v * sigmoid(v) = v / (1 + exp(-v))"),
    "gelu": (lambda E, v, p: "%s * %s * (%s + %s(%s * %s))" % (E.k(0.5), v, E.k(1), E.fn("erf"), v,
                                                              E.k(0.7071067811865476)),
             lambda x, p: "F.gelu(%s)" % x, 8, lambda p: "0.5 * v * (1 + erf(v / sqrt(2))) (the exact GELU)"),
    "gelu_tanh": (lambda E, v, p: "%s * %s * (%s + %s(%s * (%s + %s * %s * %s * %s)))" % (
        E.k(0.5), v, E.k(1), E.fn("tanh"), E.k(0.7978845608028654), v, E.k(0.044715), v, v, v),
        lambda x, p: "0.5 * %s * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (%s + 0.044715 * torch.pow(%s, 3.0))))"
        % (x, x, x), 10,
        lambda p: "0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v^3))) (GELU's tanh approximation)"),
    "selu": (lambda E, v, p: "%s * (%s > 0 ? %s : %s * %s(%s))" % (E.k(SELU_SCALE), v, v, E.k(SELU_ALPHA),
                                                                  E.fn("expm1"), v),
             lambda x, p: "torch.selu(%s)" % x, 6,
             lambda p: "scale * (v if v > 0, else alpha * (exp(v) - 1)) with alpha = %r, scale = %r"
             % (SELU_ALPHA, SELU_SCALE)),
    "hardsigmoid": (lambda E, v, p: "%s(%s(%s / %s + %s, %s), %s)" % (E.fn("fmin"), E.fn("fmax"), v, E.k(6), E.k(0.5),
                                                                     E.k(0), E.k(1)),
                    lambda x, p: "F.hardsigmoid(%s)" % x, 3, lambda p: "min(max(v / 6 + 1/2, 0), 1)"),
    "softplus": (lambda E, v, p: "%s > %s ? %s : %s(%s(%s))" % (v, E.k(20), v, E.fn("log1p"), E.fn("exp"), v),
                 lambda x, p: "F.softplus(%s)" % x, 4,
                 lambda p: "log(1 + exp(v)), and v itself where v > 20 (torch's threshold)"),
    "softsign": (lambda E, v, p: "%s / (%s + %s(%s))" % (v, E.k(1), E.fn("fabs"), v),
                 lambda x, p: "%s / (1 + torch.abs(%s))" % (x, x), 3, lambda p: "v / (1 + |v|)"),
    "elu": (lambda E, v, p: "%s > 0 ? %s : %s * %s(%s)" % (v, v, E.k(p["alpha"]), E.fn("expm1"), v),
            lambda x, p: "F.elu(%s, alpha=%r)" % (x, p["alpha"]), 4,
            lambda p: "v if v > 0, else %r * (exp(v) - 1)" % p["alpha"]),
    "hardtanh": (lambda E, v, p: "%s(%s(%s, %s), %s)" % (E.fn("fmin"), E.fn("fmax"), v, E.k(p["lo"]), E.k(p["hi"])),
                 lambda x, p: "F.hardtanh(%s, min_val=%r, max_val=%r)" % (x, p["lo"], p["hi"]), 2,
                 lambda p: "min(max(v, %r), %r)" % (p["lo"], p["hi"])),
    "clamp": (lambda E, v, p: "%s(%s(%s, %s), %s)" % (E.fn("fmin"), E.fn("fmax"), v, E.k(p["lo"]), E.k(p["hi"])),
              lambda x, p: "torch.clamp(%s, %r, %r)" % (x, p["lo"], p["hi"]), 2,
              lambda p: "min(max(v, %r), %r)" % (p["lo"], p["hi"])),
    "clamp_min": (lambda E, v, p: "%s(%s, %s)" % (E.fn("fmax"), v, E.k(p["lo"])),
                  lambda x, p: "torch.clamp(%s, min=%r)" % (x, p["lo"]), 1, lambda p: "max(v, %r)" % p["lo"]),
    "clamp_max": (lambda E, v, p: "%s(%s, %s)" % (E.fn("fmin"), v, E.k(p["hi"])),
                  lambda x, p: "torch.clamp(%s, max=%r)" % (x, p["hi"]), 1, lambda p: "min(v, %r)" % p["hi"]),
    "mish": (lambda E, v, p: "%s * %s(%s(%s(%s)))" % (v, E.fn("tanh"), E.fn("log1p"), E.fn("exp"), v),
             lambda x, p: "F.mish(%s)" % x, 8, lambda p: "v * tanh(log(1 + exp(v)))"),
    "hardswish": (lambda E, v, p: "%s * %s(%s(%s + %s, %s), %s) / %s" % (v, E.fn("fmin"), E.fn("fmax"), v, E.k(3),
                                                                          E.k(0), E.k(6), E.k(6)),
                  lambda x, p: "F.hardswish(%s)" % x, 4, lambda p: "v * min(max(v + 3, 0), 6) / 6"),
    "exp": (lambda E, v, p: "%s(%s)" % (E.fn("exp"), v), lambda x, p: "torch.exp(%s)" % x, 4, lambda p: "exp(v)"),
    "log": (lambda E, v, p: "%s(%s)" % (E.fn("log"), v), lambda x, p: "torch.log(%s)" % x, 4, lambda p: "log(v)"),
    "abs": (lambda E, v, p: "%s(%s)" % (E.fn("fabs"), v), lambda x, p: "torch.abs(%s)" % x, 1, lambda p: "|v|"),
    "square": (lambda E, v, p: "%s * %s" % (v, v), lambda x, p: "%s ** 2" % x, 1, lambda p: "v * v"),
    "add_c": (lambda E, v, p: "%s + %s" % (v, E.k(p["c"])), lambda x, p: "(%s + %r)" % (x, p["c"]), 1,
              lambda p: "v + %r" % p["c"]),
    "sub_c": (lambda E, v, p: "%s - %s" % (v, E.k(p["c"])), lambda x, p: "(%s - %r)" % (x, p["c"]), 1,
              lambda p: "v - %r" % p["c"]),
    "mul_c": (lambda E, v, p: "%s * %s" % (v, E.k(p["c"])), lambda x, p: "(%s * %r)" % (x, p["c"]), 1,
              lambda p: "v * %r" % p["c"]),
    "div_c": (lambda E, v, p: "%s / %s" % (v, E.k(p["c"])), lambda x, p: "(%s / %r)" % (x, p["c"]), 1,
              lambda p: "v / %r" % p["c"]),
    "rsub_c": (lambda E, v, p: "%s - %s" % (E.k(p["c"]), v), lambda x, p: "(%r - %s)" % (p["c"], x), 1,
               lambda p: "%r - v" % p["c"]),
    "min_c": (lambda E, v, p: "%s(%s, %s)" % (E.fn("fmin"), v, E.k(p["c"])),
              lambda x, p: "torch.min(%s, torch.tensor(%r, dtype=%s.dtype))" % (x, p["c"], x), 1,
              lambda p: "min(v, %r)" % p["c"]),
    "max_c": (lambda E, v, p: "%s(%s, %s)" % (E.fn("fmax"), v, E.k(p["c"])),
              lambda x, p: "torch.max(%s, torch.tensor(%r, dtype=%s.dtype))" % (x, p["c"], x), 1,
              lambda p: "max(v, %r)" % p["c"]),
    # a float scalar parameter of the task (p["s"] names it)
    "mul_s": (lambda E, v, p: "%s * %s" % (v, p["s"]), lambda x, p: "(%s * %s)" % (x, p["s"]), 1,
              lambda p: "v * %s" % p["s"]),
}


class Op:
    libs = ()
    helpers = ()

    def cu_defs(self, u):
        return []

    def uses(self):
        return set(self.helpers)


def _flat_loop(code, n, var="i"):
    code.open("for (long %s = 0; %s < %s; %s++)" % (var, var, n, var))


class Unary(Op):
    helpers = ("grid",)

    def __init__(self, kind, x, out, **p):
        self.kind, self.x, self.out, self.p = kind, x, out, p
        self.ins = [x]

    def expr(self, E, v):
        return UNARY[self.kind][0](E, v, self.p)

    def c(self, E, code):
        _flat_loop(code, self.x.numel_c())
        code("%s v = %s;" % (E.T, E.ld(self.x, "i")))
        code(E.st(self.out, "i", self.expr(E, "v")))
        code.close()

    def _sarg(self):
        return self.p.get("s")

    def cu_defs(self, u):
        s = self._sarg()
        sp, sa = (", float %s" % s, ", %s" % s) if s else ("", "")
        from .emit import CudaEm

        e = self.expr(CudaEm({}, {}), "v")
        return [("u%d" % u, r'''__device__ static __forceinline__ float f%(u)d(float v%(sp)s)
{
	return %(e)s;
}

/* y = f%(u)d(x) elementwise: a grid-stride loop, four elements a thread a step where both
 * pointers are 16-byte aligned. */
__global__ static void k%(u)d(const float *__restrict__ x, float *__restrict__ y, long n%(sp)s)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x, step = (long)gridDim.x * blockDim.x;
	long n4 = (size_t)x %% 16 == 0 && (size_t)y %% 16 == 0 ? n / 4 : 0;
	for (long j = i; j < n4; j += step) {
		float4 a = ((const float4 *)x)[j];
		a.x = f%(u)d(a.x%(sa)s);
		a.y = f%(u)d(a.y%(sa)s);
		a.z = f%(u)d(a.z%(sa)s);
		a.w = f%(u)d(a.w%(sa)s);
		((float4 *)y)[j] = a;
	}
	for (long j = 4 * n4 + i; j < n; j += step)
		y[j] = f%(u)d(x[j]%(sa)s);
}
''' % dict(u=u, e=e, sp=sp, sa=sa))]

    def cu(self, E, code, u):
        s = self._sarg()
        n = self.x.numel_c()
        code("k%d<<<grid_for(%s, 256, 4), 256>>>(%s, %s, %s%s);" % (u, n, E.buf(self.x), E.buf(self.out), n,
                                                                   ", " + s if s else ""))

    def torch(self, nm):
        return UNARY[self.kind][1](nm[self.x], self.p)

    def flops(self):
        return "%d*%s" % (UNARY[self.kind][2], self.x.numel_full()) if UNARY[self.kind][2] > 1 else self.x.numel_full()

    def words(self):
        return UNARY[self.kind][3](self.p)


BINARY = {
    "add": ("%s + %s", "(%s + %s)", "a + b"),
    "sub": ("%s - %s", "(%s - %s)", "a - b"),
    "mul": ("%s * %s", "(%s * %s)", "a * b"),
    "div": ("%s / %s", "(%s / %s)", "a / b"),
    "min": ("fmin(%s, %s)", "torch.min(%s, %s)", "min(a, b)"),
    "max": ("fmax(%s, %s)", "torch.max(%s, %s)", "max(a, b)"),
}


def bcast_shape(a, b):
    """The broadcast shape of two shapes (right-aligned; a size-1 dim takes the other's)."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if is_one(x):
            out.append(y)
        elif is_one(y) or x is y or (isinstance(x, Dim) and isinstance(y, Dim) and x.full == y.full):
            out.append(x)
        else:
            raise ValueError("shapes do not broadcast: %r %r" % (a, b))
    return out


class Binary(Op):
    helpers = ("grid",)

    def __init__(self, kind, a, b, out):
        self.kind, self.a, self.b, self.out = kind, a, b, out
        self.ins = [a, b] if b is not a else [a]

    def same(self):
        return len(self.a.shape) == len(self.b.shape) and all(
            x is y or (isinstance(x, Dim) and isinstance(y, Dim) and x.full == y.full) or x == y
            for x, y in zip(self.a.shape, self.b.shape)) and len(self.a.shape) == len(self.out.shape)

    def fmt(self, E):
        f = BINARY[self.kind][0]
        if self.kind in ("min", "max"):
            f = E.fn(f.split("(")[0]) + "(" + f.split("(", 1)[1]
        return f

    def c(self, E, code):
        f = self.fmt(E)
        if self.same():
            _flat_loop(code, self.out.numel_c())
            code(E.st(self.out, "i", f % ("(%s)%s" % (E.T, E.ld(self.a, "i")), E.ld(self.b, "i"))))
            code.close()
            return
        vs = loops(code, self.out.shape, "i")
        code(E.st(self.out, index(self.out.shape, vs),
                  f % ("(%s)%s" % (E.T, E.ld(self.a, index(self.a.shape, vs))), E.ld(self.b, index(self.b.shape, vs)))))
        close_loops(code, len(vs))

    def cu_defs(self, u):
        from .emit import CudaEm

        f = self.fmt(CudaEm({}, {})) % ("a", "b")
        if self.same():
            return [("b%d" % u, r'''/* y = a %(k)s b elementwise (same shapes). */
__global__ static void k%(u)d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ y, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		float a = A[i], b = B[i];
		y[i] = %(f)s;
	}
}
''' % dict(u=u, f=f, k=self.kind))]
        return [("bshape", r'''/* The output's dims and, per dim, each operand's stride (0 where it broadcasts). */
struct bshape {
	int nd;
	long n[6], sa[6], sb[6];
};

/* Fills s for an output of nd dims n[] from operand shapes na[] and nb[] (same rank, 1 where
 * an operand broadcasts). */
static struct bshape bshape_of(int nd, const long *n, const long *na, const long *nb)
{
	struct bshape s;
	long ra = 1, rb = 1;
	s.nd = nd;
	for (int d = nd - 1; d >= 0; d--) {
		s.n[d] = n[d];
		s.sa[d] = na[d] == 1 ? 0 : ra;
		s.sb[d] = nb[d] == 1 ? 0 : rb;
		ra *= na[d];
		rb *= nb[d];
	}
	return s;
}
'''), ("b%d" % u, r'''/* y = a %(k)s b with broadcasting: each output index mapped to the operands' indices. */
__global__ static void k%(u)d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ y, struct bshape s, long n)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		long r = i, ia = 0, ib = 0;
		for (int d = s.nd - 1; d >= 0; d--) {
			long c = r %% s.n[d];
			r /= s.n[d];
			ia += c * s.sa[d];
			ib += c * s.sb[d];
		}
		float a = A[ia], b = B[ib];
		y[i] = %(f)s;
	}
}
''' % dict(u=u, f=f, k=self.kind))]

    def cu(self, E, code, u):
        n = self.out.numel_c()
        if self.same():
            code("k%d<<<grid_for(%s, 256, 1), 256>>>(%s, %s, %s, %s);" % (u, n, E.buf(self.a), E.buf(self.b),
                                                                         E.buf(self.out), n))
            return
        nd = len(self.out.shape)

        def pad(s):
            return [1] * (nd - len(s)) + list(s)

        code.scope()
        code("const long n%d[] = {%s}, na%d[] = {%s}, nb%d[] = {%s};" % (
            u, ", ".join(cname(d) for d in self.out.shape), u, ", ".join(cname(d) for d in pad(self.a.shape)), u,
            ", ".join(cname(d) for d in pad(self.b.shape))))
        code("k%d<<<grid_for(%s, 256, 1), 256>>>(%s, %s, %s, bshape_of(%d, n%d, na%d, nb%d), %s);" % (
            u, n, E.buf(self.a), E.buf(self.b), E.buf(self.out), nd, u, u, u, n))
        code.close()

    def torch(self, nm):
        return BINARY[self.kind][1] % (nm[self.a], nm[self.b])

    def flops(self):
        return self.out.numel_full()

    def words(self):
        return BINARY[self.kind][2]


class View(Op):
    """The same elements under another shape (torch's view/unsqueeze/flatten): no copy, no
    kernel; the C and CUDA code alias the buffer."""

    def __init__(self, x, out, torch_expr=None):
        self.x, self.out = x, out
        self.ins = [x]
        self.texpr = torch_expr

    def c(self, E, code):
        if E.kinds[self.x] == "in":
            code("const %s *%s = %s;" % ({"float": "float", "int64": "int64_t", "uint8": "uint8_t"}[self.x.dtype],
                                         E.buf(self.out), E.buf(self.x)))
        else:
            code("%s *%s = %s;" % (E.T, E.buf(self.out), E.buf(self.x)))

    def cu(self, E, code, u):
        const = "const " if self.x.kind == "in" else ""
        code("%sfloat *%s = %s;" % (const, E.buf(self.out), E.buf(self.x)))

    def torch(self, nm):
        if self.texpr:
            return self.texpr % nm[self.x]
        return "%s.reshape(%s)" % (nm[self.x], ", ".join(cname(d) for d in self.out.shape))

    def flops(self):
        return "0"


# ---------------------------------------------------------------------------------------------
# reductions over a run of axes: x viewed as [O, R, I]


def ori(shape, axes):
    """The [O, R, I] view of `shape` reduced over the contiguous `axes`."""
    axes = sorted(a % len(shape) for a in axes)
    assert axes == list(range(axes[0], axes[-1] + 1)), "reduced axes must be contiguous"
    return shape[:axes[0]], shape[axes[0]:axes[-1] + 1], shape[axes[-1] + 1:]


REDUCE = {
    # kind: (init, update (C, T acc, v, r), final(acc, R), torch, words)
    "sum": ("0", "acc += v;", "acc", "torch.sum(%s, dim=%s, keepdim=%s)", "the sum"),
    "mean": ("0", "acc += v;", "acc / R", "torch.mean(%s, dim=%s, keepdim=%s)", "the mean"),
    "max": (None, "if (r == 0 || v > acc)\n\tacc = v;", "acc", "torch.amax(%s, dim=%s, keepdim=%s)", "the maximum"),
    "min": (None, "if (r == 0 || v < acc)\n\tacc = v;", "acc", "torch.amin(%s, dim=%s, keepdim=%s)", "the minimum"),
    "argmax": (None, "if (r == 0 || v > acc) {\n\tacc = v;\n\tbest = r;\n}", "best",
               "torch.argmax(%s, dim=%s, keepdim=%s)", "the index of the first maximum"),
    "argmin": (None, "if (r == 0 || v < acc) {\n\tacc = v;\n\tbest = r;\n}", "best",
               "torch.argmin(%s, dim=%s, keepdim=%s)", "the index of the first minimum"),
    "prod": ("1", "acc *= v;", "acc", "torch.prod(%s, dim=%s, keepdim=%s)", "the product"),
    "logsumexp": (None, None, None, "torch.logsumexp(%s, dim=%s, keepdim=%s)", "log(sum(exp(v)))"),
}


class Reduce(Op):
    helpers = ("grid",)

    def __init__(self, kind, x, axes, out):
        self.kind, self.x, self.axes, self.out = kind, x, list(axes), out
        self.ins = [x]
        self.O, self.R, self.I = ori(x.shape, axes)

    def c(self, E, code):
        O, R, I = prod_c(self.O), prod_c(self.R), prod_c(self.I)
        code.scope()
        code("const long O = %s, R = %s, I = %s;" % (O, R, I))
        code.open("for (long o = 0; o < O; o++)")
        code.open("for (long i = 0; i < I; i++)")
        code("const %s *xp = %s + o * R * I + i;" % ("float" if self.x.kind == "in" else E.T, E.buf(self.x)))
        if self.kind == "logsumexp":
            code("%s m = xp[0], s = 0;" % E.T)
            code.open("for (long r = 1; r < R; r++)")
            code("m = xp[r * I] > m ? xp[r * I] : m;")
            code.close()
            code.open("for (long r = 0; r < R; r++)")
            code("s += %s(xp[r * I] - m);" % E.fn("exp"))
            code.close()
            code(E.st(self.out, "o * I + i", "m + %s(s)" % E.fn("log")))
        else:
            init, upd, fin = REDUCE[self.kind][:3]
            code("%s acc = %s;" % (E.T, E.k(float(init)) if init else E.k(0)))
            if self.kind.startswith("arg"):
                code("long best = 0;")
            code.open("for (long r = 0; r < R; r++)")
            code("%s v = xp[r * I];" % E.T)
            code(upd)
            code.close()
            code(E.st(self.out, "o * I + i", fin))
        code.close()
        code.close()
        code.close()

    def _parts(self):
        k = self.kind
        init = {"sum": "0.0f", "mean": "0.0f", "prod": "1.0f", "max": "-INFINITY", "min": "INFINITY",
                "argmax": "-INFINITY", "argmin": "INFINITY", "logsumexp": "-INFINITY"}[k]
        upd = {"sum": "acc += v;", "mean": "acc += v;", "prod": "acc *= v;", "max": "acc = fmaxf(acc, v);",
               "min": "acc = fminf(acc, v);", "argmax": "if (v > acc) {\n\tacc = v;\n\tidx = r;\n}",
               "argmin": "if (v < acc) {\n\tacc = v;\n\tidx = r;\n}", "logsumexp": "acc = fmaxf(acc, v);"}[k]
        merge = {"sum": "acc += a2;", "mean": "acc += a2;", "prod": "acc *= a2;", "max": "acc = fmaxf(acc, a2);",
                 "min": "acc = fminf(acc, a2);",
                 "argmax": "if (a2 > acc || (a2 == acc && i2 < idx)) {\n\tacc = a2;\n\tidx = i2;\n}",
                 "argmin": "if (a2 < acc || (a2 == acc && i2 < idx)) {\n\tacc = a2;\n\tidx = i2;\n}",
                 "logsumexp": "acc = fmaxf(acc, a2);"}[k]
        fin = {"mean": "acc / (float)R", "argmax": "idx", "argmin": "idx"}.get(k, "acc")
        return init, upd, merge, fin

    def cu_defs(self, u):
        init, upd, merge, fin = self._parts()
        ot = "int64_t" if self.out.dtype == "int64" else "float"
        ind = lambda s, n: ("\n" + "\t" * n).join(s.split("\n"))
        lse_row = lse_col = ""
        if self.kind == "logsumexp":
            # a second pass: the sum of exp(v - max)
            lse_row = r'''
	__shared__ float mx;
	if (threadIdx.x == 0)
		mx = acc;
	__syncthreads();
	float m = mx, s = 0.0f;
	for (long r = threadIdx.x; r < R; r += blockDim.x)
		s += expf(xr[r] - m);
	acc = red%(u)d(s, &idx, 1);
	acc = m + logf(acc);''' % dict(u=u)
            lse_col = r'''
		float m = acc, s = 0.0f;
		for (long r = 0; r < R; r++)
			s += expf(xp[r * I] - m);
		acc = m + logf(s);'''
        merge_sum = "acc += a2;"
        return [("r%d" % u, r'''/* Combines (acc, idx) over the block (sum: 1 adds, else the operator's own merge); the
 * result in every thread. */
__device__ static float red%(u)d(float acc, long *pidx, int sum)
{
	__shared__ float sa[32];
	__shared__ long si[32];
	long idx = *pidx;
	for (int o = 16; o > 0; o >>= 1) {
		float a2 = __shfl_xor_sync(0xffffffffu, acc, o);
%(i2shfl)s		if (sum) {
			%(merge_sum)s
		} else {
			%(merge)s
		}
	}
	__syncthreads();
	if ((threadIdx.x & 31) == 0) {
		sa[threadIdx.x >> 5] = acc;
		si[threadIdx.x >> 5] = idx;
	}
	__syncthreads();
	acc = sa[0];
	idx = si[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++) {
		float a2 = sa[w];
%(i2sh)s		if (sum) {
			%(merge_sum)s
		} else {
			%(merge)s
		}
	}
	*pidx = idx;
	return acc;
}

/* One block per row of a reduction over contiguous elements (I == 1). */
__global__ static void k%(u)dr(const float *__restrict__ x, %(ot)s *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float acc = %(init)s;
	long idx = 0;
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		%(upd)s
	}
	acc = red%(u)d(acc, &idx, 0);%(lse_row)s
	if (threadIdx.x == 0)
		y[blockIdx.x] = %(fin)s;
}

/* One thread per (o, i) of a reduction over a strided axis (I > 1): neighbouring threads read
 * neighbouring elements. */
__global__ static void k%(u)dc(const float *__restrict__ x, %(ot)s *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		const float *xp = x + t / I * R * I + t %% I;
		float acc = %(init)s;%(idxdecl)s
		for (long r = 0; r < R; r++) {
			float v = xp[r * I];
			%(updc)s
		}%(lse_col)s
		y[t] = %(fin)s;
	}
}
''' % dict(u=u, ot=ot, init=init, upd=ind(upd, 2), updc=ind(upd, 3), merge=ind(merge, 3), merge_sum=merge_sum,
           fin=fin, lse_row=lse_row, lse_col=lse_col,
           idxdecl="\n\t\tlong idx = 0;" if self.kind.startswith("arg") else "",
           i2shfl="\t\tlong i2 = __shfl_xor_sync(0xffffffffu, idx, o);\n" if self.kind.startswith("arg") else "",
           i2sh="\t\tlong i2 = si[w];\n" if self.kind.startswith("arg") else ""))]

    def cu(self, E, code, u):
        O, R, I = prod_c(self.O), prod_c(self.R), prod_c(self.I)
        code.scope()
        code("const long O = %s, R = %s, I = %s;" % (O, R, I))
        code.open("if (I == 1)")
        code("k%dr<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(%s, %s, R);" % (u, E.buf(self.x), E.buf(self.out)))
        code.close(" else {")
        code.depth += 1
        code("k%dc<<<grid_for(O * I, 256, 1), 256>>>(%s, %s, O, R, I);" % (u, E.buf(self.x), E.buf(self.out)))
        code.close()
        code.close()

    def torch(self, nm):
        keep = len(self.out.shape) == len(self.x.shape)
        ax = self.axes[0] if len(self.axes) == 1 else tuple(self.axes)
        if self.kind in ("argmax", "argmin", "prod"):
            assert len(self.axes) == 1
        return REDUCE[self.kind][3] % (nm[self.x], ax, keep)

    def flops(self):
        return self.x.numel_full() if self.kind != "logsumexp" else "5*" + self.x.numel_full()

    def words(self):
        return REDUCE[self.kind][4]


class Softmax(Op):
    """softmax or log_softmax over a run of axes ([O, R, I] view), stable (the max subtracted)."""
    helpers = ("grid",)

    def __init__(self, x, axes, out, log=False):
        self.x, self.axes, self.out, self.log = x, list(axes), out, log
        self.ins = [x]
        self.O, self.R, self.I = ori(x.shape, axes)

    def c(self, E, code):
        code.scope()
        code("const long O = %s, R = %s, I = %s;" % (prod_c(self.O), prod_c(self.R), prod_c(self.I)))
        code.open("for (long o = 0; o < O; o++)")
        code.open("for (long i = 0; i < I; i++)")
        code("const %s *xp = %s + o * R * I + i;" % ("float" if self.x.kind == "in" else E.T, E.buf(self.x)))
        code("%s m = xp[0], s = 0;" % E.T)
        code.open("for (long r = 1; r < R; r++)")
        code("m = xp[r * I] > m ? xp[r * I] : m;")
        code.close()
        code.open("for (long r = 0; r < R; r++)")
        code("s += %s((%s)xp[r * I] - m);" % (E.fn("exp"), E.T))
        code.close()
        code.open("for (long r = 0; r < R; r++)")
        if self.log:
            code(E.st(self.out, "o * R * I + i + r * I", "(%s)xp[r * I] - m - %s(s)" % (E.T, E.fn("log"))))
        else:
            code(E.st(self.out, "o * R * I + i + r * I", "%s((%s)xp[r * I] - m) / s" % (E.fn("exp"), E.T)))
        code.close()
        code.close()
        code.close()
        code.close()

    def cu_defs(self, u):
        wr = "v - m - logf(s)" if self.log else "expf(v - m) / s"
        return [("online", r'''/* Merges the running (max, sum of exp(v - max)) of two parts of a row. */
__device__ static __forceinline__ void online_merge(float *m, float *s, float m2, float s2)
{
	float mm = fmaxf(*m, m2);
	if (mm == -INFINITY)
		return;
	*s = *s * expf(*m - mm) + s2 * expf(m2 - mm);
	*m = mm;
}
'''), ("s%d" % u, r'''/* One block per row (I == 1): one pass for the max and the sum of exponentials (online), one
 * to write. */
__global__ static void k%(u)dr(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float *yr = y + (long)blockIdx.x * R;
	float m = -INFINITY, s = 0.0f;
	for (long r = threadIdx.x; r < R; r += blockDim.x)
		online_merge(&m, &s, xr[r], 1.0f);
	for (int o = 16; o > 0; o >>= 1)
		online_merge(&m, &s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	__shared__ float pm[32], ps[32];
	if ((threadIdx.x & 31) == 0) {
		pm[threadIdx.x >> 5] = m;
		ps[threadIdx.x >> 5] = s;
	}
	__syncthreads();
	m = pm[0];
	s = ps[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++)
		online_merge(&m, &s, pm[w], ps[w]);
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		yr[r] = %(wr)s;
	}
}

/* One thread per (o, i) (I > 1): neighbouring threads read neighbouring elements. */
__global__ static void k%(u)dc(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		long base = t / I * R * I + t %% I;
		float m = -INFINITY, s = 0.0f;
		for (long r = 0; r < R; r++)
			online_merge(&m, &s, x[base + r * I], 1.0f);
		for (long r = 0; r < R; r++) {
			float v = x[base + r * I];
			y[base + r * I] = %(wr)s;
		}
	}
}
''' % dict(u=u, wr=wr))]

    def cu(self, E, code, u):
        code.scope()
        code("const long O = %s, R = %s, I = %s;" % (prod_c(self.O), prod_c(self.R), prod_c(self.I)))
        code.open("if (I == 1)")
        code("k%dr<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(%s, %s, R);" % (u, E.buf(self.x), E.buf(self.out)))
        code.close(" else {")
        code.depth += 1
        code("k%dc<<<grid_for(O * I, 256, 1), 256>>>(%s, %s, O, R, I);" % (u, E.buf(self.x), E.buf(self.out)))
        code.close()
        code.close()

    def torch(self, nm):
        f = "torch.log_softmax" if self.log else "torch.softmax"
        if len(self.axes) == 1:
            return "%s(%s, dim=%d)" % (f, nm[self.x], self.axes[0])
        a0, a1 = min(self.axes), max(self.axes)
        return "%s(%s.flatten(%d, %d), dim=%d).reshape(%s.shape)" % (f, nm[self.x], a0, a1, a0, nm[self.x])

    def flops(self):
        return "5*" + self.x.numel_full()
