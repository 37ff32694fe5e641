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
