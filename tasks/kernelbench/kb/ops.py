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


# ---------------------------------------------------------------------------------------------
# normalisations


class GroupStats(Op):
    """Normalisation by the mean and (biased) variance of groups: x viewed as [A, G, B], group g
    the elements x[a][g][b] for every a and b; y = (x - mean_g) / sqrt(var_g + eps), times
    w[ch] plus bias[ch] when affine. ch, the affine parameters' index, is "g" (BatchNorm: a
    channel), "gn" (GroupNorm: the channel of element b of group g; p1 = groups, p2 = channels
    per group, p3 = spatial size) or "b" (LayerNorm: the position in the normalised shape).

    The baseline: partial sums (in double, so that a group of 16 million fp32 values keeps its
    variance) over blocks of a group, one thread per group to finish them, then one
    elementwise kernel, as eager's native norms do in three launches."""
    helpers = ("grid", "blockred")

    def __init__(self, x, A, G, B, out, eps, w=None, b=None, ch=None, p=(1, 1, 1), torch_expr=None, what=""):
        self.x, self.A, self.G, self.B, self.out, self.eps = x, A, G, B, out, eps
        self.w, self.b, self.ch, self.p, self.texpr, self.what = w, b, ch, p, torch_expr, what
        self.ins = [x] + [t for t in (w, b) if t is not None]

    def _ch(self):
        P1, P2, P3 = self.p
        return {"g": "g", "b": "b", "gn": "(g %% %s) * %s + b / (%s)" % (P1, P2, P3)}[self.ch]

    def c(self, E, code):
        code.scope()
        code("const long A = %s, G = %s, B = %s;" % (self.A, self.G, self.B))
        code.open("for (long g = 0; g < G; g++)")
        if E.T == "float":
            self._c_float_sums(E, code)
        else:
            code("%s s = 0, q = 0;" % E.T)
            code.open("for (long a = 0; a < A; a++)")
            code.open("for (long b = 0; b < B; b++)")
            code("s += %s;" % E.ld(self.x, "(a * G + g) * B + b"))
            code.close()
            code.close()
            code("const %s mean = s / (A * B);" % E.T)
            code.open("for (long a = 0; a < A; a++)")
            code.open("for (long b = 0; b < B; b++)")
            code("const %s d = %s - mean;" % (E.T, E.ld(self.x, "(a * G + g) * B + b")))
            code("q += d * d;")
            code.close()
            code.close()
        code("const %s rstd = %s / %s(q / (A * B) + %s);" % (E.T, E.k(1), E.fn("sqrt"), E.k(self.eps)))
        code.open("for (long a = 0; a < A; a++)")
        code.open("for (long b = 0; b < B; b++)")
        code("const long j = (a * G + g) * B + b;")
        v = "(%s - mean) * rstd" % E.ld(self.x, "j")
        if self.w is not None:
            ch = self._ch()
            v = "%s * %s + %s" % (v, E.ld(self.w, ch), E.ld(self.b, ch))
        code(E.st(self.out, "j", v))
        code.close()
        code.close()
        code.close()
        code.close()

    def _c_float_sums(self, E, code):
        """The fixture solution's mean and q (its squared deviations) in
        float, each summed as a GPU block sums: 256 strided partial sums, then a tree. One
        sequential float sum drifts by sqrt(n) roundings of the mean, which groups near one
        (near_one) magnify past KernelBench's tolerance; a GPU's order keeps within it."""
        x = E.ld(self.x, "(e / B * G + g) * B + e % B")
        code("float sp[256] = {0}, qp[256] = {0};")
        code.open("for (long e = 0; e < A * B; e++)")
        code("sp[e % 256] += " + x + ";")
        code.close()
        code.open("for (int h = 128; h > 0; h /= 2)")
        code.open("for (int t = 0; t < h; t++)")
        code("sp[t] += sp[t + h];")
        code.close()
        code.close()
        code("const float mean = sp[0] / (A * B);")
        code.open("for (long e = 0; e < A * B; e++)")
        code("const float d = %s - mean;" % x)
        code("qp[e % 256] += d * d;")
        code.close()
        code.open("for (int h = 128; h > 0; h /= 2)")
        code.open("for (int t = 0; t < h; t++)")
        code("qp[t] += qp[t + h];")
        code.close()
        code.close()
        code("const float q = qp[0];")

    def ws(self):
        return "16L * %s * 64 + 8L * %s" % (self.G, self.G)

    def cu_defs(self, u):
        aff = ""
        if self.w is not None:
            ch = {"g": "g", "b": "i % B", "gn": "(g % p1) * p2 + i % B / p3"}[self.ch]
            aff = " * w[%s] + bb[%s]" % (ch, ch)
        return [("gstats", r'''/* Partial sums of group g = blockIdx.x over its chunk blockIdx.y of P: part[g][p] = (sum,
 * sum of squares), in double. (Groups on x: there may be millions, past gridDim.y's 65535.) */
__global__ static void gstats_part(const float *__restrict__ x, double2 *__restrict__ part, long A, long G, long B, long chunk)
{
	const long g = blockIdx.x, n = A * B, e0 = (long)blockIdx.y * chunk;
	const long e1 = e0 + chunk < n ? e0 + chunk : n;
	double s = 0, q = 0;
	for (long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
		double v = x[(e / B * G + g) * B + e % B];
		s += v;
		q += v * v;
	}
	s = block_sum(s);
	q = block_sum(q);
	if (threadIdx.x == 0)
		part[g * gridDim.y + blockIdx.y] = make_double2(s, q);
}

/* One thread per group: the mean and 1 / sqrt(variance + eps) from the partial sums. */
__global__ static void gstats_final(const double2 *__restrict__ part, float2 *__restrict__ st, long G, int P, long n, double eps)
{
	for (long g = (long)blockIdx.x * blockDim.x + threadIdx.x; g < G; g += (long)gridDim.x * blockDim.x) {
		double s = 0, q = 0;
		for (int p = 0; p < P; p++) {
			s += part[g * P + p].x;
			q += part[g * P + p].y;
		}
		double mean = s / n, var = q / n - mean * mean;
		st[g] = make_float2((float)mean, (float)(1.0 / sqrt((var > 0 ? var : 0) + eps)));
	}
}

/* P, the blocks a group's sums are split into: enough blocks to fill the GPU, at least 2048
 * elements a block, at most 64. */
static int gstats_split(long G, long n)
{
	long p = (2048 + G - 1) / G, most = (n + 2047) / 2048;
	p = p < most ? p : most;
	return (int)(p < 1 ? 1 : p > 64 ? 64 : p);
}
'''), ("g%d" % u, r'''/* y = (x - mean) * rstd%(aff_words)s elementwise, the statistics of element i's group. */
__global__ static void k%(u)d(const float *__restrict__ x, const float2 *__restrict__ st, const float *__restrict__ w,
			    const float *__restrict__ bb, float *__restrict__ y, long n, long G, long B, long p1, long p2, long p3)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const long g = i / B %% G;
		const float2 m = st[g];
		y[i] = (x[i] - m.x) * m.y%(aff)s;
	}
}
''' % dict(u=u, aff=aff, aff_words=" * w + b (the channel's)" if aff else ""))]

    def cu(self, E, code, u):
        code.scope()
        code("const long A = %s, G = %s, B = %s, n = A * G * B;" % (self.A, self.G, self.B))
        code("const int P = gstats_split(G, A * B);")
        code("double2 *part = (double2 *)ws%d;" % u)
        code("float2 *st = (float2 *)(part + G * 64);")
        code("gstats_part<<<dim3((unsigned)G, P), 256>>>(%s, part, A, G, B, (A * B + P - 1) / P);" % E.buf(self.x))
        code("gstats_final<<<grid_for(G, 128, 1), 128>>>(part, st, G, P, A * B, %s);" % repr(float(self.eps)))
        P1, P2, P3 = self.p
        code("k%d<<<grid_for(n, 256, 1), 256>>>(%s, st, %s, %s, %s, n, G, B, %s, %s, %s);" % (
            u, E.buf(self.x), E.buf(self.w) if self.w is not None else "NULL",
            E.buf(self.b) if self.b is not None else "NULL", E.buf(self.out), P1, P2, P3))
        code.close()

    def torch(self, nm):
        return self.texpr % dict((k, nm[v]) for k, v in (("x", self.x), ("w", self.w), ("b", self.b)) if v is not None)

    def flops(self):
        return "8*" + self.x.numel_full()


STAT = {
    # kind: (C accumulate of v into s, C scale from s and R (E), torch expression, words)
    "rms": ("s += v * v;", lambda E, R, eps: "%s(s / %s + %s)" % (E.fn("sqrt"), R, E.k(eps)),
            "%(x)s / torch.sqrt(torch.mean(%(x)s ** 2, dim=%(d)s, keepdim=True) + %(eps)r)"),
    "l2": ("s += v * v;", lambda E, R, eps: "%s(s)" % E.fn("sqrt"), "%(x)s / torch.norm(%(x)s, p=2, dim=%(d)s, keepdim=True)"),
    "l1": ("s += %(fabs)s(v);", lambda E, R, eps: "s / %s" % R,
           "%(x)s / torch.mean(torch.abs(%(x)s), dim=%(d)s, keepdim=True)"),
    "fro": ("s += v * v;", lambda E, R, eps: "%s(s)" % E.fn("sqrt"), "%(x)s / torch.norm(%(x)s, p='fro')"),
}


class StatScale(Op):
    """y = x / f(a statistic of x over the axes `axes`) ([O, R, I] view): RMSNorm (rms), the
    L1 and L2 normalisations of rows, the Frobenius normalisation of the whole tensor."""
    helpers = ("grid", "blockred")

    def __init__(self, kind, x, axes, out, eps=0.0):
        self.kind, self.x, self.axes, self.out, self.eps = kind, x, list(axes), out, eps
        self.ins = [x]
        self.O, self.R, self.I = ori(x.shape, axes)

    def c(self, E, code):
        acc, scale, _ = STAT[self.kind]
        code.scope()
        code("const long O = %s, R = %s, I = %s;" % (prod_c(self.O), prod_c(self.R), prod_c(self.I)))
        code.open("for (long o = 0; o < O; o++)")
        code.open("for (long i = 0; i < I; i++)")
        code("%s s = 0;" % E.T)
        code.open("for (long r = 0; r < R; r++)")
        code("const %s v = %s;" % (E.T, E.ld(self.x, "(o * R + r) * I + i")))
        code(acc % {"fabs": E.fn("fabs")})
        code.close()
        code("const %s f = %s;" % (E.T, scale(E, "R", self.eps)))
        code.open("for (long r = 0; r < R; r++)")
        code(E.st(self.out, "(o * R + r) * I + i", "%s / f" % E.ld(self.x, "(o * R + r) * I + i")))
        code.close()
        code.close()
        code.close()
        code.close()

    def ws(self):
        return "64L * 1024" if self.kind == "fro" else None

    def _cuda_acc(self):
        return {"rms": "s += v * v;", "l2": "s += v * v;", "fro": "s += v * v;", "l1": "s += fabsf(v);"}[self.kind]

    def _cuda_scale(self):
        return {"rms": "sqrtf(s / (float)R + %sf)" % repr(float(self.eps)), "l2": "sqrtf(s)", "fro": "sqrtf(s)",
                "l1": "s / (float)R"}[self.kind]

    def cu_defs(self, u):
        if self.kind == "fro":
            return [("f%d" % u, r'''/* The sum of squares of the whole tensor: partial sums (double) of grid-stride chunks... */
__global__ static void k%(u)dp(const float *__restrict__ x, double *__restrict__ part, long n)
{
	double s = 0;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		double v = x[i];
		s += v * v;
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

/* ... summed by one block into the norm ... */
__global__ static void k%(u)dn(const double *__restrict__ part, int P, float *__restrict__ norm)
{
	double s = 0;
	for (int p = threadIdx.x; p < P; p += blockDim.x)
		s += part[p];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*norm = (float)sqrt(s);
}

/* ... and y = x / norm elementwise. */
__global__ static void k%(u)d(const float *__restrict__ x, const float *__restrict__ norm, float *__restrict__ y, long n)
{
	const float f = *norm;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		y[i] = x[i] / f;
}
''' % dict(u=u))]
        return [("n%d" % u, r'''/* One block per row (I == 1): the statistic by a block reduction, then y = x / f(s). */
__global__ static void k%(u)dr(const float *__restrict__ x, float *__restrict__ y, long R)
{
	const float *xr = x + (long)blockIdx.x * R;
	float *yr = y + (long)blockIdx.x * R;
	float s = 0.0f;
	for (long r = threadIdx.x; r < R; r += blockDim.x) {
		float v = xr[r];
		%(acc)s
	}
	s = block_sum(s);
	const float f = %(scale)s;
	for (long r = threadIdx.x; r < R; r += blockDim.x)
		yr[r] = xr[r] / f;
}

/* One thread per (o, i) (I > 1): neighbouring threads read neighbouring elements. */
__global__ static void k%(u)dc(const float *__restrict__ x, float *__restrict__ y, long O, long R, long I)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < O * I; t += (long)gridDim.x * blockDim.x) {
		const long base = t / I * R * I + t %% I;
		float s = 0.0f;
		for (long r = 0; r < R; r++) {
			float v = x[base + r * I];
			%(acc)s
		}
		const float f = %(scale)s;
		for (long r = 0; r < R; r++)
			y[base + r * I] = x[base + r * I] / f;
	}
}
''' % dict(u=u, acc=self._cuda_acc(), scale=self._cuda_scale()))]

    def cu(self, E, code, u):
        code.scope()
        if self.kind == "fro":
            code("const long R = %s;" % prod_c(self.R))
            code("double *part = (double *)ws%d;" % u)
            code("float *norm = (float *)(part + 1024);")
            code("const unsigned P = grid_for(R, 256, 8) < 1024 ? grid_for(R, 256, 8) : 1024;")
            code("k%dp<<<P, 256>>>(%s, part, R);" % (u, E.buf(self.x)))
            code("k%dn<<<1, 1024>>>(part, (int)P, norm);" % u)
            code("k%d<<<grid_for(R, 256, 4), 256>>>(%s, norm, %s, R);" % (u, E.buf(self.x), E.buf(self.out)))
        else:
            code("const long O = %s, R = %s, I = %s;" % (prod_c(self.O), prod_c(self.R), prod_c(self.I)))
            code.open("if (I == 1)")
            code("k%dr<<<(unsigned)O, R >= 16384 ? 1024 : 256>>>(%s, %s, R);" % (u, E.buf(self.x), E.buf(self.out)))
            code.close(" else {")
            code.depth += 1
            code("k%dc<<<grid_for(O * I, 256, 1), 256>>>(%s, %s, O, R, I);" % (u, E.buf(self.x), E.buf(self.out)))
            code.close()
        code.close()

    def torch(self, nm):
        d = self.axes[0] if len(self.axes) == 1 else tuple(self.axes)
        return STAT[self.kind][2] % {"x": nm[self.x], "d": d, "eps": self.eps}

    def flops(self):
        return "3*" + self.x.numel_full()


# ---------------------------------------------------------------------------------------------
# scans along the last axis: x viewed as [rows, len]


class Scan(Op):
    """Cumulative sum or product along the last axis; reverse (from the end), exclusive (y[j]
    leaves out x[j]; y[0] is the identity), masked (x[j] * mask[j], mask 0 or 1).

    The baseline: one block per row, each thread a contiguous chunk of it: the chunks' totals,
    a scan of the totals in shared memory, then each chunk scanned again from its prefix."""
    helpers = ()

    def __init__(self, x, out, prod=False, reverse=False, exclusive=False, mask=None, torch_expr=None):
        self.x, self.out, self.prod, self.reverse, self.exclusive, self.mask = x, out, prod, reverse, exclusive, mask
        self.ins = [x] + ([mask] if mask is not None else [])
        self.texpr = torch_expr
        self.rows, self.len = prod_c(x.shape[:-1]), prod_c(x.shape[-1:])

    def c(self, E, code):
        code.scope()
        code("const long nrow = %s, nlen = %s;" % (self.rows, self.len))
        code.open("for (long r = 0; r < nrow; r++)")
        code("%s acc = %s;" % (E.T, E.k(1 if self.prod else 0)))
        code.open("for (long p = 0; p < nlen; p++)")
        code("const long j = r * nlen + %s;" % ("nlen - 1 - p" if self.reverse else "p"))
        v = E.ld(self.x, "j")
        if self.mask is not None:
            v = "(%s)%s * %s" % (E.T, v, E.ld(self.mask, "j"))
        op = "*=" if self.prod else "+="
        if self.exclusive:
            code(E.st(self.out, "j", "acc"))
            code("acc %s %s;" % (op, v))
        else:
            code("acc %s %s;" % (op, v))
            code(E.st(self.out, "j", "acc"))
        code.close()
        code.close()
        code.close()

    def cu_defs(self, u):
        op = "*" if self.prod else "+"
        ident = "1.0f" if self.prod else "0.0f"
        pos = "len - 1 - p" if self.reverse else "p"
        val = "x[base + j] * (float)mask[base + j]" if self.mask is not None else "x[base + j]"
        mp = ", const uint8_t *__restrict__ mask" if self.mask is not None else ""
        if self.exclusive:
            body = "y[base + j] = acc;\n\t\tacc = acc %s v;" % op
        else:
            body = "acc = acc %s v;\n\t\ty[base + j] = acc;" % op
        return [("c%d" % u, r'''/* One block of 1024 threads per row: thread t scans elements [t * chunk, (t + 1) * chunk) of
 * the row (in scan order), after the totals of the chunks before it. */
__global__ static void __launch_bounds__(1024) k%(u)d(const float *__restrict__ x%(mp)s, float *__restrict__ y, long len)
{
	__shared__ float tot[1024];
	const long base = (long)blockIdx.x * len, chunk = (len + 1023) / 1024;
	const long p0 = threadIdx.x * chunk, p1 = p0 + chunk < len ? p0 + chunk : len;
	float acc = %(ident)s;
	for (long p = p0; p < p1; p++) {
		const long j = %(pos)s;
		acc = acc %(op)s %(val)s;
	}
	tot[threadIdx.x] = acc;
	__syncthreads();
	for (int o = 1; o < 1024; o <<= 1) { /* inclusive scan of the totals (Hillis-Steele) */
		float t = threadIdx.x >= o ? tot[threadIdx.x - o] : %(ident)s;
		__syncthreads();
		tot[threadIdx.x] = tot[threadIdx.x] %(op)s t;
		__syncthreads();
	}
	acc = threadIdx.x ? tot[threadIdx.x - 1] : %(ident)s;
	for (long p = p0; p < p1; p++) {
		const long j = %(pos)s;
		const float v = %(val)s;
		%(body)s
	}
}
''' % dict(u=u, op=op, ident=ident, pos=pos, val=val, mp=mp, body=body))]

    def cu(self, E, code, u):
        args = [E.buf(self.x)] + ([E.buf(self.mask)] if self.mask is not None else [])
        code("k%d<<<(unsigned)(%s), 1024>>>(%s, %s, %s);" % (u, self.rows, ", ".join(args), E.buf(self.out), self.len))

    def torch(self, nm):
        return self.texpr % dict(x=nm[self.x], mask=nm[self.mask] if self.mask is not None else None)

    def flops(self):
        return self.x.numel_full()


# ---------------------------------------------------------------------------------------------
# losses: a mean over elements or rows, one scalar out

LOSS_ELEM = {
    # kind: (C term from p, t as T values (E), CUDA term, torch, denominator "n" or "rows")
    "mse": (lambda E: "(p - t) * (p - t)", "(p - t) * (p - t)", "torch.mean((%(p)s - %(t)s) ** 2)", "n"),
    "huber": (lambda E: "%s(p - t) < 1 ? %s * (p - t) * (p - t) : %s(p - t) - %s" % (E.fn("fabs"), E.k(0.5), E.fn("fabs"),
                                                                                     E.k(0.5)),
              "fabsf(p - t) < 1.0f ? 0.5f * (p - t) * (p - t) : fabsf(p - t) - 0.5f",
              "F.smooth_l1_loss(%(p)s, %(t)s)", "n"),
    "kl": (lambda E: "t * (%s(t) - %s(p))" % (E.fn("log"), E.fn("log")), "t * (logf(t) - logf(p))",
           "F.kl_div(torch.log(%(p)s), %(t)s, reduction='batchmean')", "rows"),
    "hinge": (lambda E: "%s(%s - p * t, %s)" % (E.fn("fmax"), E.k(1), E.k(0)), "fmaxf(1.0f - p * t, 0.0f)",
              "torch.mean(torch.clamp(1 - %(p)s * %(t)s, min=0))", "n"),
}


class ElemLoss(Op):
    """mean (or sum / rows) of a term of two tensors; t broadcasts along the last axis (hinge)."""
    helpers = ("blockred",)

    def __init__(self, kind, p, t, out, rows, cols, tcols):
        self.kind, self.p, self.t, self.out = kind, p, t, out
        self.ins = [p, t]
        self.rows, self.cols, self.tcols = rows, cols, tcols  # tcols: t is [cols] (broadcast) when True

    def c(self, E, code):
        term = LOSS_ELEM[self.kind][0](E)
        code.scope()
        code("const long rows = %s, cols = %s;" % (self.rows, self.cols))
        code("%s s = 0;" % E.T)
        code.open("for (long i = 0; i < rows; i++)")
        code.open("for (long j = 0; j < cols; j++)")
        code("const %s p = %s, t = %s;" % (E.T, E.ld(self.p, "i * cols + j"), E.ld(self.t, "j" if self.tcols else "i * cols + j")))
        code("s += %s;" % term)
        code.close()
        code.close()
        code(E.st(self.out, "0", "s / %s" % ("(rows * cols)" if LOSS_ELEM[self.kind][3] == "n" else "rows")))
        code.close()

    def ws(self):
        return "8L * 1024"

    def cu_defs(self, u):
        tidx = "i %% cols" if self.tcols else "i"
        return [("l%d" % u, r'''/* Partial sums (double) of the loss's terms over grid-stride chunks... */
__global__ static void k%(u)dp(const float *__restrict__ P, const float *__restrict__ T, double *__restrict__ part, long n, long cols)
{
	double s = 0;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		const float p = P[i], t = T[%(tidx)s];
		s += %(term)s;
	}
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
	(void)cols;
}

/* ... summed by one block and divided into the mean. */
__global__ static void k%(u)dn(const double *__restrict__ part, int P, float *__restrict__ y, double denom)
{
	double s = 0;
	for (int p = threadIdx.x; p < P; p += blockDim.x)
		s += part[p];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*y = (float)(s / denom);
}
''' % dict(u=u, tidx=tidx.replace("%%", "%"), term=LOSS_ELEM[self.kind][1]))]

    def cu(self, E, code, u):
        code.scope()
        code("const long rows = %s, cols = %s, n = rows * cols;" % (self.rows, self.cols))
        code("const unsigned P = grid_for(n, 256, 8) < 1024 ? grid_for(n, 256, 8) : 1024;")
        code("k%dp<<<P, 256>>>(%s, %s, (double *)ws%d, n, cols);" % (u, E.buf(self.p), E.buf(self.t), u))
        code("k%dn<<<1, 1024>>>((const double *)ws%d, (int)P, %s, (double)%s);" % (
            u, u, E.buf(self.out), "n" if LOSS_ELEM[self.kind][3] == "n" else "rows"))
        code.close()

    def uses(self):
        return {"grid", "blockred"}

    def torch(self, nm):
        return LOSS_ELEM[self.kind][2] % {"p": nm[self.p], "t": nm[self.t]}

    def flops(self):
        return "3*" + self.p.numel_full()


class RowLoss(Op):
    """The mean over rows of a per-row loss: cross entropy (logits, int64 labels) or the triplet
    margin loss (anchor, positive, negative; Euclidean distances with torch's eps 1e-6 added to
    the differences, margin 1)."""
    helpers = ("blockred",)

    def __init__(self, kind, ins, out, rows, cols, margin=1.0, eps=1e-6):
        self.kind, self.ins, self.out, self.rows, self.cols = kind, list(ins), out, rows, cols
        self.margin, self.eps = margin, eps

    def c(self, E, code):
        code.scope()
        code("const long rows = %s, cols = %s;" % (self.rows, self.cols))
        code("%s s = 0;" % E.T)
        code.open("for (long i = 0; i < rows; i++)")
        if self.kind == "ce":
            x, lab = self.ins
            code("const %s *xr = %s + i * cols;" % ("float" if x.kind == "in" else E.T, E.buf(x)))
            code("%s m = xr[0], e = 0;" % E.T)
            code.open("for (long j = 1; j < cols; j++)")
            code("m = xr[j] > m ? xr[j] : m;")
            code.close()
            code.open("for (long j = 0; j < cols; j++)")
            code("e += %s((%s)xr[j] - m);" % (E.fn("exp"), E.T))
            code.close()
            code("s += m + %s(e) - xr[%s];" % (E.fn("log"), E.ld(lab, "i")))
        else:
            a, p, n = self.ins
            code("%s dp = 0, dn = 0;" % E.T)
            code.open("for (long j = 0; j < cols; j++)")
            code("const %s da = (%s)%s - %s + %s, db = (%s)%s - %s + %s;" % (
                E.T, E.T, E.ld(a, "i * cols + j"), E.ld(p, "i * cols + j"), E.k(self.eps), E.T, E.ld(a, "i * cols + j"),
                E.ld(n, "i * cols + j"), E.k(self.eps)))
            code("dp += da * da;")
            code("dn += db * db;")
            code.close()
            code("s += %s(%s(dp) - %s(dn) + %s, %s);" % (E.fn("fmax"), E.fn("sqrt"), E.fn("sqrt"), E.k(self.margin),
                                                           E.k(0)))
        code.close()
        code(E.st(self.out, "0", "s / rows"))
        code.close()

    def ws(self):
        return "4L * (%s)" % self.rows

    def cu_defs(self, u):
        if self.kind == "ce":
            row = r'''/* One block per row: the row's cross entropy, log(sum(exp(x))) - x[label]. */
__global__ static void k%(u)dr(const float *__restrict__ x, const int64_t *__restrict__ lab, float *__restrict__ loss, long cols)
{
	const float *xr = x + (long)blockIdx.x * cols;
	float m = -INFINITY, s = 0.0f;
	for (long j = threadIdx.x; j < cols; j += blockDim.x)
		m = fmaxf(m, xr[j]);
	__shared__ float wm[32];
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		wm[threadIdx.x >> 5] = m;
	__syncthreads();
	m = wm[0];
	for (int w = 1; w < (int)(blockDim.x >> 5); w++)
		m = fmaxf(m, wm[w]);
	for (long j = threadIdx.x; j < cols; j += blockDim.x)
		s += expf(xr[j] - m);
	s = block_sum(s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = m + logf(s) - xr[lab[blockIdx.x]];
}
'''
        else:
            row = r'''/* One block per row: max(|a - p + eps| - |a - n + eps| + margin, 0). */
__global__ static void k%%(u)dr(const float *__restrict__ a, const float *__restrict__ p, const float *__restrict__ n,
			     float *__restrict__ loss, long cols)
{
	const long base = (long)blockIdx.x * cols;
	float dp = 0.0f, dn = 0.0f;
	for (long j = threadIdx.x; j < cols; j += blockDim.x) {
		const float da = a[base + j] - p[base + j] + %(eps)sf, db = a[base + j] - n[base + j] + %(eps)sf;
		dp += da * da;
		dn += db * db;
	}
	dp = block_sum(dp);
	dn = block_sum(dn);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = fmaxf(sqrtf(dp) - sqrtf(dn) + %(margin)sf, 0.0f);
}
''' % dict(eps=repr(self.eps), margin=repr(float(self.margin)))
        return [("rl%d" % u, (row + r'''
/* The mean of the rows' losses, by one block. */
__global__ static void k%(u)dm(const float *__restrict__ loss, long rows, float *__restrict__ y)
{
	double s = 0;
	for (long i = threadIdx.x; i < rows; i += blockDim.x)
		s += loss[i];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*y = (float)(s / rows);
}
''') % dict(u=u))]

    def cu(self, E, code, u):
        code.scope()
        code("const long rows = %s, cols = %s;" % (self.rows, self.cols))
        code("float *loss = (float *)ws%d;" % u)
        code("k%dr<<<(unsigned)rows, 256>>>(%s, loss, cols);" % (u, ", ".join(E.buf(t) for t in self.ins)))
        code("k%dm<<<1, 1024>>>(loss, rows, %s);" % (u, E.buf(self.out)))
        code.close()

    def torch(self, nm):
        if self.kind == "ce":
            return "F.cross_entropy(%s, %s)" % (nm[self.ins[0]], nm[self.ins[1]])
        return "F.triplet_margin_loss(%s, %s, %s, margin=%r)" % (nm[self.ins[0]], nm[self.ins[1]], nm[self.ins[2]],
                                                                 self.margin)

    def flops(self):
        return "4*" + self.ins[0].numel_full()


# ---------------------------------------------------------------------------------------------
# pooling over the last nd axes of [N, C, spatial...]


class Pool(Op):
    """nn.MaxPoolNd / nn.AvgPoolNd (floor mode; an average counts the padding, as
    count_include_pad=True does). Baseline: one thread per output element."""
    helpers = ("grid",)

    def __init__(self, kind, x, out, k, s, p, d):
        self.kind, self.x, self.out, self.k, self.s, self.p, self.d = kind, x, out, k, s, p, d
        self.ins = [x]
        self.nd = len(k)

    def _loops(self, code, E, T, ld):
        nd = self.nd
        sp_in = [cname(x) for x in self.x.shape[-nd:]]
        sp_out = [cname(x) for x in self.out.shape[-nd:]]
        code.open("for (long nc = 0; nc < %s; nc++)" % prod_c(self.x.shape[:-nd]))
        for a in range(nd):
            code.open("for (long o%d = 0; o%d < %s; o%d++)" % (a, a, sp_out[a], a))
        init = ("-INFINITY" if T == "float" and not E.cuda else "-INFINITY") if self.kind == "max" else E.k(0)
        code("%s acc = %s;" % (T, init))
        for a in range(nd):
            code.open("for (long q%d = 0; q%d < %d; q%d++)" % (a, a, self.k[a], a))
            code("const long i%d = o%d * %d - %d + q%d * %d;" % (a, a, self.s[a], self.p[a], a, self.d[a]))
            code.open("if (i%d < 0 || i%d >= %s)" % (a, a, sp_in[a]))
            code("continue;")
            code.close()
        idx = "nc"
        for a in range(nd):
            idx = "(%s) * %s + i%d" % (idx, sp_in[a], a) if a else "%s * %s + i%d" % (idx, sp_in[a], a)
        v = ld(idx)
        if self.kind == "max":
            code("const %s v = %s;" % (T, v))
            code("acc = v > acc ? v : acc;")
        else:
            code("acc += %s;" % v)
        for a in range(nd):
            code.close()
        oidx = "nc"
        for a in range(nd):
            oidx = "(%s) * %s + o%d" % (oidx, sp_out[a], a) if a else "%s * %s + o%d" % (oidx, sp_out[a], a)
        win = 1
        for kk in self.k:
            win *= kk
        res = "acc" if self.kind == "max" else "acc / %s" % E.k(float(win))
        return oidx, res

    def c(self, E, code):
        oidx, res = self._loops(code, E, E.T, lambda i: E.ld(self.x, i))
        code(E.st(self.out, oidx, res))
        for a in range(self.nd + 1):
            code.close()

    def cu_defs(self, u):
        from .core import Code
        from .emit import CudaEm

        E = CudaEm({}, {})
        nd = self.nd
        c = Code(1)
        # one thread per output: decompose t into (nc, o0, ...) instead of looping
        c("long r = t;")
        for a in reversed(range(nd)):
            c("const long o%d = r %% so%d;" % (a, a))
            c("r /= so%d;" % a)
        c("const long nc = r;")
        init = "-INFINITY" if self.kind == "max" else "0.0f"
        c("float acc = %s;" % init)
        for a in range(nd):
            c.open("for (int q%d = 0; q%d < %d; q%d++)" % (a, a, self.k[a], a))
            c("const long i%d = o%d * %d - %d + q%d * %d;" % (a, a, self.s[a], self.p[a], a, self.d[a]))
            c.open("if (i%d < 0 || i%d >= si%d)" % (a, a, a))
            c("continue;")
            c.close()
        idx = "nc"
        for a in range(nd):
            idx = "(%s * si%d + i%d)" % (idx, a, a)
        c(("acc = fmaxf(acc, x[%s]);" if self.kind == "max" else "acc += x[%s];") % idx)
        for a in range(nd):
            c.close()
        win = 1
        for kk in self.k:
            win *= kk
        c("y[t] = %s;" % ("acc" if self.kind == "max" else "acc / %d.0f" % win))
        params = ", ".join("long si%d, long so%d" % (a, a) for a in range(nd))
        body = "\n".join("\t" + ln if ln else ln for ln in c.lines)
        return [("p%d" % u, '''/* One thread per output element of a %s pool (window %s, stride %s, padding %s, dilation %s). */
__global__ static void k%d(const float *__restrict__ x, float *__restrict__ y, long n, %s)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (long)gridDim.x * blockDim.x) {
%s
	}
}
''' % (self.kind, self.k, self.s, self.p, self.d, u, params, body))]

    def cu(self, E, code, u):
        nd = self.nd
        sizes = ", ".join("%s, %s" % (cname(self.x.shape[-nd + a]), cname(self.out.shape[-nd + a])) for a in range(nd))
        n = self.out.numel_c()
        code("k%d<<<grid_for(%s, 256, 1), 256>>>(%s, %s, %s, %s);" % (u, n, E.buf(self.x), E.buf(self.out), n, sizes))

    def torch(self, nm):
        nd = self.nd
        if self.kind == "max":
            return "F.max_pool%dd(%s, %r, stride=%r, padding=%r, dilation=%r)" % (nd, nm[self.x], self.k, self.s,
                                                                                 self.p, self.d)
        return "F.avg_pool%dd(%s, %r, stride=%r, padding=%r)" % (nd, nm[self.x], self.k, self.s, self.p)

    def flops(self):
        win = 1
        for kk in self.k:
            win *= kk
        return "%d*%s" % (win, self.out.numel_full())


# ---------------------------------------------------------------------------------------------
# matrix products (cuBLAS)


class Matmul(Op):
    """C[b] = op(A[b]) op(B[b]) (+ bias[j]) with C[b] M x N: ta, A stored K x M; tb, B stored
    N x K; a batch (bs: A and B both batched, or only A when B is shared). tri "upper" or
    "lower": A and B are triangular (the other triangle is not read: it is zero) and so is C
    (torch.triu/tril of the product); sym: A and B are symmetric, given by their lower triangles.

    Baseline: cublasSgemm (StridedBatched for a batch), as torch.matmul/bmm/Linear eager call
    it, with the elementwise kernels eager would run around it (a bias broadcast, a triu)."""
    libs = ("cublas",)
    helpers = ("grid", "blas")

    def __init__(self, A, B, out, M, N, K, batch=None, ta=False, tb=False, bshared=False, bias=None, tri=None,
                 sym=False, alpha=1.0, alpha_expr=None):
        self.A, self.B, self.out, self.M, self.N, self.K = A, B, out, M, N, K
        self.batch, self.ta, self.tb, self.bshared, self.bias = batch, ta, tb, bshared, bias
        self.tri, self.sym, self.alpha = tri, sym, alpha
        self.alpha_expr = alpha_expr  # (C expression in double, torch expression): a scale from the sizes
        self.ins = [A, B] + ([bias] if bias is not None else [])

    def _aval(self, E):
        if self.sym:
            return "(ii >= kk ? %s : %s)" % (E.ld(self.A, "ii * gk + kk"), E.ld(self.A, "kk * gk + ii"))
        return E.ld(self.A, "%s%s" % ("bt * gm * gk + " if self.batch else "", "kk * gm + ii" if self.ta else "ii * gk + kk"))

    def _bval(self, E):
        if self.sym:
            return "(kk >= jj ? %s : %s)" % (E.ld(self.B, "kk * gn + jj"), E.ld(self.B, "jj * gn + kk"))
        off = "bt * gk * gn + " if self.batch and not self.bshared else ""
        return E.ld(self.B, off + ("jj * gk + kk" if self.tb else "kk * gn + jj"))

    def c(self, E, code):
        code.scope()
        code("const long gm = %s, gn = %s, gk = %s;" % (self.M, self.N, self.K))
        if self.batch:
            code.open("for (long bt = 0; bt < %s; bt++)" % self.batch)
        code.open("for (long ii = 0; ii < gm; ii++)")
        code.open("for (long jj = 0; jj < gn; jj++)")
        oi = ("(bt * gm + ii) * gn + jj" if self.batch else "ii * gn + jj")
        lo, hi = "0", "gk"
        if self.tri == "upper":
            code.open("if (jj < ii)")
            code(E.st(self.out, oi, E.k(0)))
            code("continue;")
            code.close()
            lo, hi = "ii", "jj + 1"
        elif self.tri == "lower":
            code.open("if (jj > ii)")
            code(E.st(self.out, oi, E.k(0)))
            code("continue;")
            code.close()
            lo, hi = "jj", "ii + 1"
        code("%s acc = %s;" % (E.T, E.ld(self.bias, "jj") if self.bias is not None else E.k(0)))
        code.open("for (long kk = %s; kk < %s; kk++)" % (lo, hi))
        code("acc += (%s)%s * %s;" % (E.T, self._aval(E), self._bval(E)))
        code.close()
        if self.alpha_expr:
            code(E.st(self.out, oi, "acc * (%s)(%s)" % (E.T, self.alpha_expr[0])))
        else:
            code(E.st(self.out, oi, "acc" if self.alpha == 1.0 else "acc * %s" % E.k(self.alpha)))
        code.close()
        code.close()
        if self.batch:
            code.close()
        code.close()

    def uses(self):
        return {"blas", "grid"} if self.bias is not None or self.sym or self.tri else {"blas"}

    def ws(self):
        if self.sym or self.tri:
            return "8L * %s * %s" % (self.M, self.M)
        return None

    def cu_defs(self, u):
        d = []
        if self.bias is not None:
            d.append(("biasrows", r'''/* C[i][j] = bias[j]: the bias copied into every row, the output SGEMM then adds to (beta 1),
 * as addmm does for nn.Linear. */
__global__ static void bias_rows(const float *__restrict__ bias, float *__restrict__ C, long rows, long cols)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < rows * cols; i += (long)gridDim.x * blockDim.x)
		C[i] = bias[i % cols];
}
'''))
        if self.sym:
            d.append(("mirror", r'''/* S = the symmetric matrix whose lower triangle is A's (n x n): the full operand cuBLAS reads. */
__global__ static void mirror(const float *__restrict__ A, float *__restrict__ S, long n)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n * n; t += (long)gridDim.x * blockDim.x) {
		const long i = t / n, j = t % n;
		S[t] = i >= j ? A[t] : A[j * n + i];
	}
}
'''))
        if self.tri:
            d.append(("trimask", r'''/* S = A with the triangle below (upper: 1) or above (upper: 0) the diagonal zeroed; in place
 * when S is A (torch.triu/tril of the product). */
__global__ static void tri_mask(const float *A, float *S, long n, int upper)
{
	for (long t = (long)blockIdx.x * blockDim.x + threadIdx.x; t < n * n; t += (long)gridDim.x * blockDim.x) {
		const long i = t / n, j = t % n;
		S[t] = (upper ? j >= i : j <= i) ? A[t] : 0.0f;
	}
}
'''))
        return d

    def cu(self, E, code, u):
        code.scope()
        code("const long gm = %s, gn = %s, gk = %s;" % (self.M, self.N, self.K))
        A, B = E.buf(self.A), E.buf(self.B)
        if self.sym or self.tri:
            code("float *a2 = (float *)ws%d, *b2 = a2 + gm * gm;" % u)
            if self.sym:
                code("mirror<<<grid_for(gm * gm, 256, 1), 256>>>(%s, a2, gm);" % A)
                code("mirror<<<grid_for(gm * gm, 256, 1), 256>>>(%s, b2, gm);" % B)
            else:
                up = 1 if self.tri == "upper" else 0
                code("tri_mask<<<grid_for(gm * gm, 256, 1), 256>>>(%s, a2, gm, %d);" % (A, up))
                code("tri_mask<<<grid_for(gm * gm, 256, 1), 256>>>(%s, b2, gm, %d);" % (B, up))
            A, B = "a2", "b2"
        beta = "0.0f"
        if self.bias is not None:
            code("bias_rows<<<grid_for(gm * gn, 256, 1), 256>>>(%s, %s, gm, gn);" % (E.buf(self.bias), E.buf(self.out)))
            beta = "1.0f"
        batch = self.batch or "1"
        sa = "gm * gk" if self.batch else "0"
        sb = "gk * gn" if self.batch and not self.bshared else "0"
        sc = "gm * gn" if self.batch else "0"
        alpha = "(float)(%s)" % self.alpha_expr[0] if self.alpha_expr else repr(float(self.alpha)) + "f"
        code("gemm(%d, %d, gm, gn, gk, %s, %s, %s, %s, %s, %s, %s, %s, %s);" % (
            self.ta, self.tb, alpha, A, sa, B, sb, beta, E.buf(self.out), sc, batch))
        if self.tri:
            code("tri_mask<<<grid_for(gm * gn, 256, 1), 256>>>(%s, %s, gm, %d);" % (
                E.buf(self.out), E.buf(self.out), 1 if self.tri == "upper" else 0))
        code.close()

    def torch(self, nm):
        A, B = nm[self.A], nm[self.B]
        if self.sym:
            A = "(torch.tril(%s) + torch.tril(%s, -1).T)" % (A, A)
            B = "(torch.tril(%s) + torch.tril(%s, -1).T)" % (B, B)
        if self.tri:
            f = "torch.triu" if self.tri == "upper" else "torch.tril"
            return "%s(torch.matmul(%s(%s), %s(%s)))" % (f, f, A, f, B)
        if self.ta:
            A = "%s.transpose(-1, -2)" % A
        if self.tb:
            B = "%s.transpose(-1, -2)" % B
        r = "torch.matmul(%s, %s)" % (A, B)
        if self.bias is not None:
            r = "(%s + %s)" % (r, nm[self.bias])
        if self.alpha_expr:
            r = "(%s * %s)" % (r, self.alpha_expr[1])
        elif self.alpha != 1.0:
            r = "(%s * %r)" % (r, self.alpha)
        return r

    def flops(self):
        return self.fl


# ---------------------------------------------------------------------------------------------
# convolutions (cuDNN)


class Conv(Op):
    """nn.ConvNd (transposed=False) or nn.ConvTransposeNd over [N, C, spatial...], nd of 1 to 3,
    with groups, stride, padding, dilation, output padding and an optional bias. Weights are
    [Cout, Cin/groups, k...] (forward) or [Cin, Cout/groups, k...] (transposed), as torch's.

    The reference gathers: every output element sums its window (for a transposed convolution,
    the input positions i with i * stride - padding + q * dilation at the output's place).
    Baseline: cuDNN forward (or backward data for the transposed one), as PyTorch eager calls
    it, split over the batch where a tensor has 2^31 elements or more (cuDNN indexes with 32
    bits, and PyTorch splits so too); the bias by a kernel of its own."""
    libs = ("cudnn",)

    def __init__(self, x, w, bias, out, transposed, k, s, p, d, op, groups, N, cin, cout):
        self.x, self.w, self.bias, self.out, self.tr = x, w, bias, out, transposed
        self.k, self.s, self.p, self.d, self.op, self.groups = k, s, p, d, op, groups
        self.N, self.cin, self.cout = N, cin, cout
        self.nd = len(k)
        self.ins = [x, w] + ([bias] if bias is not None else [])

    def uses(self):
        return {"dnn", "grid"} if self.bias is not None else {"dnn"}

    def c(self, E, code):
        nd = self.nd
        Ls = [cname(v) for v in self.x.shape[2:]]
        Os = [cname(v) for v in self.out.shape[2:]]
        code.scope()
        code("const long nb = %s, ci = %s, co = %s, ng = %s;" % (cname(self.N), cname(self.cin), cname(self.cout),
                                                                  self.groups))
        code("const long cig = ci / ng, cog = co / ng;")
        code.open("for (long n = 0; n < nb; n++)")
        code.open("for (long o = 0; o < co; o++)")
        for a in range(nd):
            code.open("for (long y%d = 0; y%d < %s; y%d++)" % (a, a, Os[a], a))
        code("const long g = o / cog;")
        code("%s acc = %s;" % (E.T, E.ld(self.bias, "o") if self.bias is not None else E.k(0)))
        code.open("for (long c = 0; c < cig; c++)")
        for a in range(nd):
            code.open("for (long q%d = 0; q%d < %d; q%d++)" % (a, a, self.k[a], a))
            if not self.tr:
                code("const long i%d = y%d * %d - %d + q%d * %d;" % (a, a, self.s[a], self.p[a], a, self.d[a]))
                code.open("if (i%d < 0 || i%d >= %s)" % (a, a, Ls[a]))
                code("continue;")
                code.close()
            else:
                code("const long u%d = y%d + %d - q%d * %d;" % (a, a, self.p[a], a, self.d[a]))
                code.open("if (u%d < 0 || u%d %% %d != 0 || u%d / %d >= %s)" % (a, a, self.s[a], a, self.s[a], Ls[a]))
                code("continue;")
                code.close()
                code("const long i%d = u%d / %d;" % (a, a, self.s[a]))
        xi = "n * ci + g * cig + c"
        for a in range(nd):
            xi = "(%s) * %s + i%d" % (xi, Ls[a], a)
        if not self.tr:
            wi = "o * cig + c"
        else:
            wi = "(g * cig + c) * cog + o % cog"
        for a in range(nd):
            wi = "(%s) * %d + q%d" % (wi, self.k[a], a)
        code("acc += (%s)%s * %s;" % (E.T, E.ld(self.x, xi), E.ld(self.w, wi)))
        for a in range(nd):
            code.close()
        code.close()
        oi = "n * co + o"
        for a in range(nd):
            oi = "(%s) * %s + y%d" % (oi, Os[a], a)
        code(E.st(self.out, oi, "acc"))
        for a in range(nd + 2):
            code.close()
        code.close()

    def cu_defs(self, u):
        if self.bias is None:
            return []
        return [("chbias", r'''/* y[n][c][...] += bias[c]: the convolution's bias, added as eager adds it after cuDNN. */
__global__ static void channel_bias(float *__restrict__ y, const float *__restrict__ bias, long n, long C, long S)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		y[i] += bias[i / S % C];
}
''')]

    def cu(self, E, code, u):
        nd = self.nd
        Ls = [cname(v) for v in self.x.shape[2:]]
        Os = [cname(v) for v in self.out.shape[2:]]
        code.scope()
        code("static struct conv_plan plan[2]; /* the batch's chunks, and the last one when shorter */")
        code("const int xs[] = {%s}, ys[] = {%s}, ks[] = {%s}, st[] = {%s}, pd[] = {%s}, dl[] = {%s};" % (
            ", ".join("(int)%s" % v for v in Ls), ", ".join("(int)%s" % v for v in Os),
            ", ".join(map(str, self.k)), ", ".join(map(str, self.s)), ", ".join(map(str, self.p)),
            ", ".join(map(str, self.d))))
        code("const long xper = %s, yper = %s;" % (prod_c([self.cin] + self.x.shape[2:]),
                                                  prod_c([self.cout] + self.out.shape[2:])))
        code("const long most = 2147483647L / (xper > yper ? xper : yper);")
        code("const int ng = (int)(%s), nb = %s, chunk = (int)(nb < most ? nb : most < 1 ? 1 : most);" % (
            self.groups, cname(self.N)))
        code.open("for (int b0 = 0; b0 < nb; b0 += chunk)")
        code("const int m = nb - b0 < chunk ? nb - b0 : chunk;")
        code("struct conv_plan *p = &plan[m != chunk];")
        fk, fc = ("%s" % cname(self.cin), "%s / ng" % cname(self.cout)) if self.tr else \
            ("%s" % cname(self.cout), "%s / ng" % cname(self.cin))
        code("if (conv_setup(p, %d, %d, m, %s, xs, %s, ys, %s, %s, ks, st, pd, dl, ng) ||" % (
            1 if self.tr else 0, nd, cname(self.cin), cname(self.cout), fk, fc))
        code("    conv_run(p, %d, %s + b0 * xper, %s, %s + b0 * yper))" % (1 if self.tr else 0, E.buf(self.x),
                                                                        E.buf(self.w), E.buf(self.out)))
        code("\treturn;")
        code.close()
        if self.bias is not None:
            n = self.out.numel_c()
            code("channel_bias<<<grid_for(%s, 256, 1), 256>>>(%s, %s, %s, %s, %s);" % (
                n, E.buf(self.out), E.buf(self.bias), n, cname(self.cout), prod_c(self.out.shape[2:])))
        code.close()

    def torch(self, nm):
        b = nm[self.bias] if self.bias is not None else "None"
        g = self.groups if not isinstance(self.groups, str) else self.groups
        if self.tr:
            return "F.conv_transpose%dd(%s, %s, %s, stride=%r, padding=%r, output_padding=%r, groups=%s, dilation=%r)" % (
                self.nd, nm[self.x], nm[self.w], b, self.s, self.p, self.op, g, self.d)
        return "F.conv%dd(%s, %s, %s, stride=%r, padding=%r, dilation=%r, groups=%s)" % (
            self.nd, nm[self.x], nm[self.w], b, self.s, self.p, self.d, g)

    def flops(self):
        return self.fl
