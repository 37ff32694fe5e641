"""level2.py - KernelBench level 2 (100 fusions) as leap tasks, composed of level-1 operators.

Each problem is a front layer (a convolution, transposed or not, or a linear layer) followed by
the elementwise, reduction, normalisation and pooling steps its forward takes, each one the
level-1 operator of kb/ops.py: the reference computes the whole sequence in double (its
intermediates too), the baseline runs it as PyTorch eager does, one library call or kernel per
operator, the oracle evaluates the same torch calls. The module's parameters (weights, biases,
norm affines, learned scalars) are inputs drawn like x.

The sizes: `bench` is KernelBench's; the listed cases are small, generated from the front
layer's shape and what the steps after it need (a pool of 2 twice needs an output of 4, a
GroupNorm channels in multiples of its groups); bench_cpu is KernelBench's shrunk until the C
reference takes tens of milliseconds.

Not done, with the reason (EXCLUDED): problems whose output is zero whatever the input, or
drawn from a random generator no reference can reproduce.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kb.task import Task  # noqa: E402

X_DIST = ["normal", "uniform"]
P_DIST = ["normal", "uniform"]
NOTE = ("The module's parameters (weights, biases, norm affines, learned scalars; KernelBench initialises them at "
        "random or to ones and zeros) are inputs here, drawn like x. KernelBench draws x from torch.rand; here every "
        "input takes the patterns listed below.")
# said only where the model has a BatchNorm: elsewhere it sends the model looking for one
BN_NOTE = "KernelBench's harness never calls model.eval(): BatchNorm uses the batch's statistics."

EXCLUDED = {
    66: "Dropout(0.2) in training mode (KernelBench never calls eval()) multiplies by a random mask drawn from "
        "torch's generator: no reference outside torch reproduces it, and the task is not deterministic.",
    80: "The output is zero whatever the input: x - x.mean(dim=1, keepdim=True) of a tensor whose dim 1 has size 1 "
        "(after max(dim=1, keepdim=True)) is 0, and GELU(0) = 0; zeros pass.",
    83: "The output is zero whatever the input: torch.min(x, 0) then clamp(min=0, max=1) is 0 everywhere (and the "
        "Dropout after it, in training mode, is random); zeros pass.",
}


def _out(L, k, s, p, d, op, tr):
    return (L - 1) * s - 2 * p + d * (k - 1) + op + 1 if tr else (L + 2 * p - d * (k - 1) - 1) // s + 1


class Front:
    """The problem's first layer and the sizes around it."""

    def __init__(self, t, kind, bench, **kw):
        self.t, self.kind, self.kw, self.bench = t, kind, kw, bench


def conv_task(num, kb, short, title, nd, k, s=1, p=0, op=0, transposed=False, bias=True, names=None, bench=None,
              mult=1, min_out=1, min_batch=1, pre_pool=None, extra=None, saturating=False, xdist=None):
    """A task whose forward starts with nn.Conv{nd}d or nn.ConvTranspose{nd}d (k, s, p, op ints):
    returns (task, x's dims, conv output). mult: out_channels a multiple of it; min_out: the
    conv output's least spatial size the steps after need; pre_pool: an AvgPool of that kernel
    on x before the convolution (problem 38)."""
    t = Task(2, num, kb, short, title)
    sp_names = names or {1: ["length"], 2: ["height", "width"], 3: ["depth", "height", "width"]}[nd]
    N, cin, cout = t.int("batch_size", "in_channels", "out_channels")
    sps = t.int(*sp_names)
    sps = sps if isinstance(sps, list) else [sps]
    # a step that saturates (softmax over channels, clamp, tanh) gives constants on large values:
    # such a task also takes x small, and weights of variance 1/3, where its outputs still vary
    x = t.input("x", [N, cin] + sps, dist=xdist or X_DIST + (["small"] if saturating else []))
    h = x
    if pre_pool:
        h = t.pool("avg", x, (pre_pool,) * nd, names={a: n + "_pooled" for a, n in enumerate(sp_names)})
    w = t.input("weight", ([cin, cout] if transposed else [cout, cin]) + [k] * nd,
                dist=["uniform"] if saturating else P_DIST,
                doc="the %s's weight" % ("transposed convolution" if transposed else "convolution"))
    b = t.input("bias", [cout], dist=P_DIST, doc="its bias") if bias else None
    y = t.conv(h, w, b, cout, (k,) * nd, s, p, 1, op, 1, transposed=transposed,
               names={a: n + "_c" for a, n in enumerate(sp_names)})
    mod = ("nn.ConvTranspose%dd" if transposed else "nn.Conv%dd") % nd
    args = ["kernel_size=%d" % k]
    if s != 1:
        args.append("stride=%d" % s)
    if p:
        args.append("padding=%d" % p)
    if op:
        args.append("output_padding=%d" % op)
    if not bias:
        args.append("bias=False")
    t.front = "%s(in_channels, out_channels, %s)" % (mod, ", ".join(args))
    if pre_pool:
        t.front = "nn.AvgPool%dd(%d) on x, then " % (nd, pre_pool) + t.front
    # sizes
    names_all = ["batch_size", "in_channels", "out_channels"] + sp_names
    bench_v = dict(zip(names_all, bench))

    def conv_out(L):
        if pre_pool:
            L = L // pre_pool
            if L < 1:
                return 0
        return _out(L, k, s, p, 1, op, transposed)

    def least_in(target):
        L = 1
        while conv_out(L) < target:
            L += 1
        return L

    grow = {1: [0, 13, 5, 2], 2: [(0, 1), (3, 0), (1, 4), (2, 2)], 3: [(0, 0, 1), (1, 2, 0), (2, 1, 2), (0, 1, 1)]}[nd]
    # at least 2 output channels: a softmax, logsumexp or min over the channels of one is constant
    chans = [(1, max(2, mult)), (3, 2 * mult if mult > 1 else 2), (2, max(2, mult)), (4, 2 * mult if mult > 1 else 3)]
    batches = [max(1, min_batch), 2, max(1, min_batch), 3]
    cases = []
    lmin = least_in(min_out)
    for m in range(4):
        c = {"batch_size": batches[m], "in_channels": chans[m][0], "out_channels": chans[m][1]}
        g = grow[m] if nd > 1 else (grow[m],)
        for a in range(nd):
            c[sp_names[a]] = least_in(min_out + g[a])
        cases.append(c)
    ranges = {"batch_size": [min(batches), 3], "in_channels": [1, 4]}
    ranges["out_channels"] = {"range": [mult, 2 * mult], "multiple_of": mult} if mult > 1 else [2, 3]
    for a in range(nd):
        ranges[sp_names[a]] = [lmin, max(c[sp_names[a]] for c in cases)]
    cpu = dict(bench_v)
    cpu["batch_size"] = max(min_batch, 1 if min_batch < 2 else 2)

    def flops(v):
        o = 1
        for a in range(nd):
            o *= max(conv_out(v[sp_names[a]]), 1)
        return 2 * v["batch_size"] * v["in_channels"] * v["out_channels"] * o * k ** nd

    for _ in range(40):
        if flops(cpu) <= 1e8:
            break
        big = max(sp_names, key=lambda q: cpu[q])
        if cpu[big] // 2 >= max(lmin, 8):
            cpu[big] //= 2
        elif cpu["in_channels"] > 4:
            cpu["in_channels"] //= 2
        elif cpu["out_channels"] // 2 >= mult and cpu["out_channels"] // 2 % mult == 0 and cpu["out_channels"] > 4:
            cpu["out_channels"] //= 2
        else:
            break
    t.sizes(cases, bench_v, cpu, ranges)
    t.notes.append(NOTE)
    return t, x, y


def linear_task(num, kb, short, title, bench, bias=True, mult=1, min_out=1, min_batch=1, names=None, min_in=1):
    """A task whose forward starts with nn.Linear(in_features, out_features) (bias=False: a
    plain x W^T): returns (task, x, the linear output)."""
    t = Task(2, num, kb, short, title)
    nb, ni, no = names or ("batch_size", "in_features", "out_features")
    N, fin, fout = t.int(nb, ni, no)
    x = t.input("x", [N, fin], dist=X_DIST)
    W = t.input("weight", [fout, fin], dist=P_DIST, doc="nn.Linear's weight")
    b = t.input("bias", [fout], dist=P_DIST, doc="its bias") if bias else None
    y = t.matmul(x, W, [N], [fout], [fin], tb=True, bias=b)
    t.front = "nn.Linear(%s, %s%s)" % (ni, no, "" if bias else ", bias=False")
    # at least 64 outputs a row: a row of a few values after a shift and a ReLU can be all zeros
    base = max(mult, min_out, 64)
    outs = [base, 2 * base + (0 if mult > 1 else 1), base + mult if mult > 1 else 97, 3 * base]
    outs = [o + (-o % mult) for o in outs]
    ins = [max(min_in, 1), max(min_in, 33), max(min_in, 64), max(min_in, 17)]
    cases = [{nb: max(min_batch, 1), ni: ins[0], no: outs[0]}, {nb: 7, ni: ins[1], no: outs[1]},
             {nb: max(min_batch, 3), ni: ins[2], no: outs[2]}, {nb: 2, ni: ins[3], no: outs[3]}]
    ranges = {nb: [max(min_batch, 1), 7], ni: [min(ins), max(ins)],
              no: {"range": [base, max(outs)], "multiple_of": mult} if mult > 1 else [base, max(outs)]}
    bv = dict(zip([nb, ni, no], bench))
    cpu = {nb: 64, ni: 1024, no: max(mult, min(1024, bv[no]) // mult * mult)}
    t.sizes(cases, bv, cpu, ranges)
    t.notes.append(NOTE)
    return t, x, y


def param(t, name, shape, doc, dist=None):
    return t.input(name, shape, dist=dist or P_DIST, doc=doc)


def finish(t, y, steps, out="y"):
    t.output(y, out)
    if t.batch_stats:
        t.notes.append(BN_NOTE)
    t.stmt = "Compute the forward of KernelBench's model: %s, then %s." % (t.front, steps)
    return t


def U(t, kind, x, **p):
    return t.unary(kind, x, **p)


def B(t, kind, a, b):
    return t.binary(kind, a, b)


def spatial(x):
    return list(range(2, len(x.shape)))


def tasks():
    out = []
    T = out.append

    # 1: Conv2d, ReLU, + bias (C, 1, 1)
    t, x, y = conv_task(1, "1_Conv2D_ReLU_BiasAdd", "conv2d_relu_biasadd", "Conv2d, ReLU, bias add", 2, 3,
                        bench=(128, 64, 128, 128, 128))
    C = t.ints[2]
    bias = param(t, "bias2", [C, 1, 1], "the added bias (out_channels x 1 x 1)")
    y = B(t, "add", U(t, "relu", y), bias)
    T(finish(t, y, "torch.relu, then + bias2 (broadcast per channel)"))

    # 2: ConvTranspose2d, + bias, clamp(0, 1), * 2, clamp(0, 1), / 2
    t, x, y = conv_task(2, "2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide",
                        "convtranspose2d_biasadd_clamp_scale_clamp_div", "ConvTranspose2d, bias, clamps, scaling", 2,
                        3, 2, 1, 1, True, bench=(128, 64, 64, 128, 128))
    bias = param(t, "bias2", [t.ints[2], 1, 1], "the added bias (out_channels x 1 x 1)")
    y = B(t, "add", y, bias)
    y = U(t, "clamp", y, lo=0.0, hi=1.0)
    y = U(t, "mul_c", y, c=2.0)
    y = U(t, "clamp", y, lo=0.0, hi=1.0)
    y = U(t, "div_c", y, c=2.0)
    T(finish(t, y, "+ bias2, torch.clamp(0, 1), * 2.0, torch.clamp(0, 1), / 2.0"))

    # 3: ConvTranspose3d, + sum_weight, LayerNorm(last dim), AvgPool3d(2), GELU
    t, x, y = conv_task(3, "3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU", "convtranspose3d_sum_layernorm_avgpool_gelu",
                        "ConvTranspose3d, add, LayerNorm, AvgPool3d, GELU", 3, 3, 2, 1, 1, True,
                        bench=(32, 32, 64, 16, 32, 32), min_out=2)
    sw = param(t, "sum_weight", [], "the learned scalar added (a single value)")
    y = B(t, "add", y, sw)
    Wl = y.shape[-1]
    lw = param(t, "ln_weight", [Wl], "nn.LayerNorm's weight, as long as the last dim")
    lb = param(t, "ln_bias", [Wl], "its bias")
    y = t.layernorm(y, 1, lw, lb)
    y = t.pool("avg", y, (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    y = U(t, "gelu", y)
    t.notes.append("KernelBench's LayerNorm((out_channels,)) normalises the last dim, whose size (width_c, twice width) "
                   "is out_channels at its sizes; here its weight and bias are as long as that last dim.")
    T(finish(t, y, "+ sum_weight, nn.LayerNorm over the last dim (eps 1e-5), nn.AvgPool3d(2), GELU"))

    # 4: Conv2d, Mish, Mish
    t, x, y = conv_task(4, "4_Conv2d_Mish_Mish", "conv2d_mish_mish", "Conv2d, Mish, Mish", 2, 3,
                        bench=(64, 64, 128, 256, 256))
    T(finish(t, U(t, "mish", U(t, "mish", y)), "mish, mish"))

    # 5: ConvTranspose2d(k4, s2, p1, op1), - bias, tanh
    t, x, y = conv_task(5, "5_ConvTranspose2d_Subtract_Tanh", "convtranspose2d_subtract_tanh",
                        "ConvTranspose2d, subtract, tanh", 2, 4, 2, 1, 1, True, bench=(32, 64, 64, 256, 256))
    bias = param(t, "bias2", [t.ints[2], 1, 1], "the subtracted bias (out_channels x 1 x 1)")
    T(finish(t, U(t, "tanh", B(t, "sub", y, bias)), "- bias2, tanh"))

    # 6: Conv3d, softmax(dim 1), MaxPool3d(2) twice. x small alone: on normal or uniform x the
    # softmax saturates and each max of 64 of its values is 1 within the tolerance
    t, x, y = conv_task(6, "6_Conv3d_Softmax_MaxPool_MaxPool", "conv3d_softmax_maxpool_maxpool",
                        "Conv3d, softmax, two MaxPool3d", 3, 3, saturating=True, bench=(128, 3, 16, 16, 32, 32), min_out=4,
                        xdist=["small"])
    y = t.softmax(y, [1])
    y = t.pool("max", y, (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    y = t.pool("max", y, (2, 2, 2), names={0: "d_q", 1: "h_q", 2: "w_q"})
    T(finish(t, y, "torch.softmax over dim 1, nn.MaxPool3d(2), nn.MaxPool3d(2)"))

    # 7: Conv3d, ReLU, LeakyReLU, GELU, Sigmoid, + bias
    t, x, y = conv_task(7, "7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd", "conv3d_relu_leakyrelu_gelu_sigmoid_biasadd",
                        "Conv3d, ReLU, LeakyReLU, GELU, sigmoid, bias", 3, 3, bench=(64, 8, 32, 32, 64, 64))
    bias = param(t, "bias2", [t.ints[2], 1, 1, 1], "the added bias (out_channels x 1 x 1 x 1)")
    y = U(t, "sigmoid", U(t, "gelu", U(t, "leaky_relu", U(t, "relu", y), slope=0.01)))
    T(finish(t, B(t, "add", y, bias), "relu, leaky_relu(0.01), GELU, sigmoid, + bias2"))

    # 8: Conv3d, / 2, MaxPool3d(2), global average, + bias, sum over channels
    t, x, y = conv_task(8, "8_Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum", "conv3d_div_maxpool_gap_biasadd_sum",
                        "Conv3d, divide, MaxPool3d, global average pool, bias, sum", 3, 3,
                        bench=(128, 8, 16, 16, 64, 64), min_out=2)
    y = t.pool("max", U(t, "div_c", y, c=2.0), (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    y = t.reduce("mean", y, [2, 3, 4], keepdim=True)
    bias = param(t, "bias2", [t.ints[2], 1, 1, 1], "the added bias (out_channels x 1 x 1 x 1)")
    y = t.reduce("sum", B(t, "add", y, bias), [1], keepdim=False)
    T(finish(t, y, "/ 2.0, nn.MaxPool3d(2), nn.AdaptiveAvgPool3d((1, 1, 1)), + bias2, torch.sum over dim 1 "
                   "(the output is batch_size x 1 x 1 x 1)"))

    # 9: Linear, - 2, * 1.5, ReLU
    t, x, y = linear_task(9, "9_Matmul_Subtract_Multiply_ReLU", "linear_sub_mul_relu", "Linear, subtract, multiply, ReLU",
                          (1024, 8192, 8192), min_in=64)
    T(finish(t, U(t, "relu", U(t, "mul_c", U(t, "sub_c", y, c=2.0), c=1.5)), "- 2.0, * 1.5, relu"))

    # 10: ConvTranspose2d, MaxPool2d(2, 2), Hardtanh(-1, 1), mean over (2, 3), tanh
    t, x, y = conv_task(10, "10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh", "convtranspose2d_maxpool_hardtanh_mean_tanh",
                        "ConvTranspose2d, MaxPool2d, Hardtanh, mean, tanh", 2, 3, 1, 1, 0, True,
                        bench=(128, 64, 64, 256, 256), min_out=2)
    y = t.pool("max", y, (2, 2), 2, names={0: "h_p", 1: "w_p"})
    y = t.reduce("mean", U(t, "hardtanh", y, lo=-1.0, hi=1.0), [2, 3], keepdim=True)
    T(finish(t, U(t, "tanh", y), "nn.MaxPool2d(2, stride 2), nn.Hardtanh(-1, 1), torch.mean over (2, 3) (keepdim), "
                                 "tanh"))

    # 11: ConvTranspose2d(k5, p1), BatchNorm2d, tanh, MaxPool2d(2, 2), GroupNorm(8)
    t, x, y = conv_task(11, "11_ConvTranspose2d_BatchNorm_Tanh_MaxPool_GroupNorm",
                        "convtranspose2d_batchnorm_tanh_maxpool_groupnorm",
                        "ConvTranspose2d, BatchNorm2d, tanh, MaxPool2d, GroupNorm", 2, 5, 1, 1, 0, True,
                        bench=(512, 64, 128, 32, 32), mult=8, min_out=4)
    C = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [C], "BatchNorm2d's weight"), param(t, "bn_bias", [C], "its bias"))
    y = t.pool("max", U(t, "tanh", y), (2, 2), 2, names={0: "h_p", 1: "w_p"})
    y = t.groupnorm(y, 8, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, y, "nn.BatchNorm2d (training: batch statistics), tanh, nn.MaxPool2d(2, stride 2), nn.GroupNorm(8 "
                   "groups); out_channels is a multiple of 8"))

    # 12: Linear, * 2, LeakyReLU(0.1)
    t, x, y = linear_task(12, "12_Gemm_Multiply_LeakyReLU", "linear_mul_leakyrelu", "Linear, multiply, LeakyReLU",
                          (1024, 8192, 8192))
    T(finish(t, U(t, "leaky_relu", U(t, "mul_c", y, c=2.0), slope=0.1), "* 2.0, leaky_relu(0.1)"))

    # 13: ConvTranspose3d(k3, p1), mean over depth, + bias, softmax(dim 1), tanh, * 2
    t, x, y = conv_task(13, "13_ConvTranspose3d_Mean_Add_Softmax_Tanh_Scaling",
                        "convtranspose3d_mean_add_softmax_tanh_scale", "ConvTranspose3d, mean, add, softmax, tanh, scale",
                        3, 3, 1, 1, 0, True, bench=(16, 16, 64, 32, 128, 128))
    y = t.reduce("mean", y, [2], keepdim=True)
    bias = param(t, "bias2", [1, t.ints[2], 1, 1, 1], "the added bias (1 x out_channels x 1 x 1 x 1)")
    y = U(t, "mul_c", U(t, "tanh", t.softmax(B(t, "add", y, bias), [1])), c=2.0)
    T(finish(t, y, "mean over dim 2 (keepdim), + bias2, softmax over dim 1, tanh, * 2.0"))

    # 14: x W^T (no bias), / 2, sum over dim 1 (keepdim), * 1.5
    t, x, y = linear_task(14, "14_Gemm_Divide_Sum_Scaling", "gemm_div_sum_scale", "Matmul, divide, sum, scale",
                          (1024, 8192, 8192), bias=False, names=("batch_size", "input_size", "hidden_size"))
    y = U(t, "mul_c", t.reduce("sum", U(t, "div_c", y, c=2.0), [1], keepdim=True), c=1.5)
    t.front = "torch.matmul(x, weight.T) (weight hidden_size x input_size, no bias)"
    T(finish(t, y, "/ 2, torch.sum over dim 1 (keepdim), * 1.5"))

    # 15: ConvTranspose3d(k3, s2, p1), BatchNorm3d, - mean over (2, 3, 4)
    t, x, y = conv_task(15, "15_ConvTranspose3d_BatchNorm_Subtract", "convtranspose3d_batchnorm_subtract",
                        "ConvTranspose3d, BatchNorm3d, subtract the spatial mean", 3, 3, 2, 1, 0, True,
                        min_out=2, bench=(16, 16, 32, 16, 32, 32))
    C = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [C], "BatchNorm3d's weight"), param(t, "bn_bias", [C], "its bias"))
    y = B(t, "sub", y, t.reduce("mean", y, [2, 3, 4], keepdim=True))
    T(finish(t, y, "nn.BatchNorm3d (batch statistics), x - torch.mean(x, dim=(2, 3, 4), keepdim=True)"))

    # 16: ConvTranspose2d(k3, s2, p1, op1), Mish, + 0.5, Hardtanh(-1, 1), * 2
    t, x, y = conv_task(16, "16_ConvTranspose2d_Mish_Add_Hardtanh_Scaling", "convtranspose2d_mish_add_hardtanh_scale",
                        "ConvTranspose2d, Mish, add, Hardtanh, scale", 2, 3, 2, 1, 1, True, bench=(128, 64, 64, 128, 128))
    y = U(t, "mul_c", U(t, "hardtanh", U(t, "add_c", U(t, "mish", y), c=0.5), lo=-1.0, hi=1.0), c=2.0)
    T(finish(t, y, "mish, + 0.5, hardtanh(-1, 1), * 2"))

    # 17: Conv2d, InstanceNorm2d, / 2
    t, x, y = conv_task(17, "17_Conv2d_InstanceNorm_Divide", "conv2d_instancenorm_div", "Conv2d, InstanceNorm2d, divide",
                        2, 3, bench=(128, 64, 128, 128, 128), min_out=2)
    T(finish(t, U(t, "div_c", t.instancenorm(y), c=2.0), "nn.InstanceNorm2d (no affine, eps 1e-5), / 2.0"))

    # 18: Linear, sum(dim 1), max, mean, logsumexp, logsumexp (each over a dim of size 1 after the sum)
    t, x, y = linear_task(18, "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp", "linear_sum_max_mean_lse_lse",
                          "Linear, sum, max, mean, two logsumexp", (1024, 8192, 8192))
    y = t.reduce("sum", y, [1], keepdim=True)
    y = t.reduce("max", y, [1], keepdim=True)
    y = t.reduce("mean", y, [1], keepdim=True)
    y = t.reduce("logsumexp", y, [1], keepdim=True)
    y = t.reduce("logsumexp", y, [1], keepdim=True)
    T(finish(t, y, "torch.sum over dim 1 (keepdim), then max, mean, logsumexp and logsumexp over dim 1 (keepdim; "
                   "each over a dim of size 1)"))

    # 19: ConvTranspose2d(k3), GELU, GroupNorm(8)
    t, x, y = conv_task(19, "19_ConvTranspose2d_GELU_GroupNorm", "convtranspose2d_gelu_groupnorm",
                        "ConvTranspose2d, GELU, GroupNorm", 2, 3, 1, 0, 0, True, min_out=2, bench=(128, 64, 64, 256, 256), mult=8)
    C = t.ints[2]
    y = t.groupnorm(U(t, "gelu", y), 8, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, y, "GELU, nn.GroupNorm(8 groups); out_channels is a multiple of 8"))

    # 20: ConvTranspose3d(k3, s2, p1, op1), ((x + bias) + x) * x + x
    t, x, y = conv_task(20, "20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd",
                        "convtranspose3d_bias_residual_mul_residual", "ConvTranspose3d, bias, residual adds, multiply",
                        3, 3, 2, 1, 1, True, bench=(16, 32, 64, 16, 32, 32))
    bias = param(t, "bias2", [t.ints[2], 1, 1, 1], "the added bias (out_channels x 1 x 1 x 1)")
    o = y
    y = B(t, "add", B(t, "mul", B(t, "add", B(t, "add", o, bias), o), o), o)
    T(finish(t, y, "with o the convolution's output: ((o + bias2) + o) * o + o"))

    # 21: Conv2d, + bias, * scale, sigmoid, GroupNorm(8)
    t, x, y = conv_task(21, "21_Conv2d_Add_Scale_Sigmoid_GroupNorm", "conv2d_add_scale_sigmoid_groupnorm",
                        "Conv2d, add, scale, sigmoid, GroupNorm", 2, 3, min_out=2, bench=(128, 8, 32, 256, 256), mult=8)
    C = t.ints[2]
    bias = param(t, "bias2", [C, 1, 1], "the added bias (out_channels x 1 x 1)")
    scale = param(t, "scale", [C, 1, 1], "the scale (out_channels x 1 x 1)")
    y = U(t, "sigmoid", B(t, "mul", B(t, "add", y, bias), scale))
    y = t.groupnorm(y, 8, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, y, "+ bias2, * scale, sigmoid, nn.GroupNorm(8 groups); out_channels is a multiple of 8"))

    # 22: Linear, * 2, x + x, clamp(-10, 10), logsumexp(dim 1, keepdim), x * mish(x)
    t, x, y = linear_task(22, "22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish", "linear_scale_residual_clamp_lse_mish",
                          "Linear, scale, residual, clamp, logsumexp, Mish", (1024, 8192, 8192),
                          names=("batch_size", "input_size", "hidden_size"))
    y = U(t, "mul_c", y, c=2.0)
    y = U(t, "clamp", B(t, "add", y, y), lo=-10.0, hi=10.0)
    y = t.reduce("logsumexp", y, [1], keepdim=True)
    y = B(t, "mul", y, U(t, "mish", y))
    T(finish(t, y, "* 2.0, x + x, torch.clamp(-10, 10), torch.logsumexp over dim 1 (keepdim), x * mish(x)"))

    # 23: Conv3d, GroupNorm(8), mean over (1, 2, 3, 4)
    t, x, y = conv_task(23, "23_Conv3d_GroupNorm_Mean", "conv3d_groupnorm_mean", "Conv3d, GroupNorm, mean", 3, 3,
                        min_out=2, bench=(128, 3, 24, 24, 32, 32), mult=8, names=["D", "H", "W"])
    C = t.ints[2]
    y = t.groupnorm(y, 8, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, t.reduce("mean", y, [1, 2, 3, 4]), "nn.GroupNorm(8 groups), mean over dims 1 to 4 (one value per "
                                                     "batch element); out_channels is a multiple of 8"))

    # 24: Conv3d, min over dim 2, softmax over dim 1
    t, x, y = conv_task(24, "24_Conv3d_Min_Softmax", "conv3d_min_softmax", "Conv3d, min over depth, softmax", 3, 3,
                        bench=(128, 3, 24, 24, 32, 32), names=["D", "H", "W"])
    T(finish(t, t.softmax(t.reduce("min", y, [2]), [1]), "torch.min over dim 2 (the depth), softmax over dim 1"))

    # 25: Conv2d, min over channels (keepdim), tanh, tanh
    t, x, y = conv_task(25, "25_Conv2d_Min_Tanh_Tanh", "conv2d_min_tanh_tanh", "Conv2d, min over channels, tanh, tanh",
                        2, 3, bench=(128, 16, 64, 256, 256))
    T(finish(t, U(t, "tanh", U(t, "tanh", t.reduce("min", y, [1], keepdim=True))),
             "torch.min over dim 1 (keepdim), tanh, tanh"))

    # 26: ConvTranspose3d(k3, s2, p1, op1), + add_input, x * hardswish(x)
    t, x, y = conv_task(26, "26_ConvTranspose3d_Add_HardSwish", "convtranspose3d_add_hardswish",
                        "ConvTranspose3d, add an input, HardSwish gate", 3, 3, 2, 1, 1, True,
                        bench=(128, 32, 64, 16, 16, 16), names=["D", "H", "W"])
    add = t.input("add_input", y.shape, dist=X_DIST, doc="the forward's second input, shaped as the convolution's output")
    y = B(t, "add", y, add)
    T(finish(t, B(t, "mul", y, U(t, "hardswish", y)), "+ add_input, x * hardswish(x)"))

    # 27: Conv3d(k4), HardSwish, GroupNorm(4), mean over (2, 3, 4)
    t, x, y = conv_task(27, "27_Conv3d_HardSwish_GroupNorm_Mean", "conv3d_hardswish_groupnorm_mean",
                        "Conv3d, HardSwish, GroupNorm, mean", 3, 4, min_out=2, bench=(1024, 3, 16, 16, 32, 32), mult=4)
    C = t.ints[2]
    y = t.groupnorm(U(t, "hardswish", y), 4, param(t, "gn_weight", [C], "GroupNorm's weight"),
                    param(t, "gn_bias", [C], "its bias"))
    T(finish(t, t.reduce("mean", y, [2, 3, 4]), "hardswish, nn.GroupNorm(4 groups), mean over dims 2 to 4; "
                                                "out_channels is a multiple of 4"))

    # 28: Linear, InstanceNorm over each row, + y, * y
    t, x, y = linear_task(28, "28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply", "linear_instancenorm_add_mul",
                          "Linear, InstanceNorm, add, multiply", (1024, 8192, 8192), min_out=2)
    N, fout = t.ints[0], t.ints[2]
    yin = t.input("y_in", [N, fout], dist=X_DIST, doc="the forward's second input")
    v = t.view(y, [N, 1, 1, fout], "%s.unsqueeze(1).unsqueeze(1)")
    z = t.view(t.instancenorm(v), [N, fout], "%s.squeeze(1).squeeze(1)")
    y = B(t, "mul", B(t, "add", z, yin), yin)
    t.notes.append("nn.InstanceNorm2d(out_features) on x.unsqueeze(1).unsqueeze(1) normalises each row over its "
                   "out_features values (one channel of 1 x out_features), as KernelBench's does.")
    T(finish(t, y, "each row normalised by its mean and biased variance (InstanceNorm2d of the row as a 1 x 1 x "
                   "out_features image, eps 1e-5), + y_in, * y_in"))

    # 29: Linear, Mish, Mish
    t, x, y = linear_task(29, "29_Matmul_Mish_Mish", "linear_mish_mish", "Linear, Mish, Mish", (1024, 8192, 8192))
    T(finish(t, U(t, "mish", U(t, "mish", y)), "mish, mish"))

    # 30: Linear, GroupNorm(16), Hardtanh(-2, 2)
    t, x, y = linear_task(30, "30_Gemm_GroupNorm_Hardtanh", "linear_groupnorm_hardtanh", "Linear, GroupNorm, Hardtanh",
                          (1024, 8192, 8192), mult=8 * 16)
    F_ = t.ints[2]
    y = t.groupnorm(y, 16, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    T(finish(t, U(t, "hardtanh", y, lo=-2.0, hi=2.0), "nn.GroupNorm(16 groups) over the features, hardtanh(-2, 2); "
                                                      "out_features is a multiple of 16"))

    # 31: Conv2d, min(x, 0.5), + bias, * 2
    t, x, y = conv_task(31, "31_Conv2d_Min_Add_Multiply", "conv2d_min_add_mul", "Conv2d, min with a constant, add, scale",
                        2, 3, bench=(128, 64, 128, 128, 128))
    bias = param(t, "bias2", [t.ints[2], 1, 1], "the added bias (out_channels x 1 x 1)")
    y = U(t, "mul_c", B(t, "add", U(t, "min_c", y, c=0.5), bias), c=2.0)
    T(finish(t, y, "torch.min(x, 0.5), + bias2, * 2.0"))

    # 32: Conv2d, * 2, min over channels (keepdim)
    t, x, y = conv_task(32, "32_Conv2d_Scaling_Min", "conv2d_scale_min", "Conv2d, scale, min over channels", 2, 3,
                        bench=(64, 64, 128, 256, 256))
    T(finish(t, t.reduce("min", U(t, "mul_c", y, c=2.0), [1], keepdim=True), "* 2.0, torch.min over dim 1 (keepdim)"))

    # 33, 39: Linear, * scale (per feature), BatchNorm1d
    for num, kb, short, bench in [(33, "33_Gemm_Scale_BatchNorm", "linear_scale_batchnorm", (1024, 8192, 8192)),
                                  (39, "39_Gemm_Scale_BatchNorm", "linear_scale_batchnorm_4096", (16384, 4096, 4096))]:
        t, x, y = linear_task(num, kb, short, "Linear, scale, BatchNorm1d", bench, min_batch=2)
        F_ = t.ints[2]
        y = B(t, "mul", y, param(t, "scale", [F_], "the per-feature scale"))
        y = t.batchnorm(y, param(t, "bn_weight", [F_], "BatchNorm1d's weight"), param(t, "bn_bias", [F_], "its bias"))
        T(finish(t, y, "* scale, nn.BatchNorm1d (batch statistics: mean and biased variance of each feature over the "
                       "batch, eps 1e-5)"))

    # 34: ConvTranspose3d(k4, s2, p1), LayerNorm(last dim), GELU, * 1.0
    t, x, y = conv_task(34, "34_ConvTranspose3d_LayerNorm_GELU_Scaling", "convtranspose3d_layernorm_gelu_scale",
                        "ConvTranspose3d, LayerNorm, GELU, scale", 3, 4, 2, 1, 0, True, bench=(32, 32, 64, 16, 32, 32),
                        names=["D", "H", "W"])
    Wl = y.shape[-1]
    y = t.layernorm(y, 1, param(t, "ln_weight", [Wl], "nn.LayerNorm's weight, as long as the last dim"),
                    param(t, "ln_bias", [Wl], "its bias"))
    y = U(t, "mul_c", U(t, "gelu", y), c=1.0)
    t.notes.append("KernelBench's LayerNorm(out_channels) normalises the last dim, whose size (W_c, twice W) is "
                   "out_channels at its sizes; here its weight and bias are as long as that last dim.")
    T(finish(t, y, "nn.LayerNorm over the last dim (eps 1e-5), GELU, * 1.0"))

    # 35: Conv2d, - 0.5, HardSwish, MaxPool2d(2), Mish
    t, x, y = conv_task(35, "35_Conv2d_Subtract_HardSwish_MaxPool_Mish", "conv2d_sub_hardswish_maxpool_mish",
                        "Conv2d, subtract, HardSwish, MaxPool2d, Mish", 2, 3, bench=(128, 64, 128, 128, 128), min_out=2)
    y = t.pool("max", U(t, "hardswish", U(t, "sub_c", y, c=0.5)), (2, 2), names={0: "h_p", 1: "w_p"})
    T(finish(t, U(t, "mish", y), "- 0.5, hardswish, nn.MaxPool2d(2), mish"))

    # 36: ConvTranspose2d(k3, s2, p1, op1), min over channels, sum over height, GELU, + bias
    t, x, y = conv_task(36, "36_ConvTranspose2d_Min_Sum_GELU_Add", "convtranspose2d_min_sum_gelu_add",
                        "ConvTranspose2d, min, sum, GELU, add", 2, 3, 2, 1, 1, True, bench=(16, 64, 128, 128, 128))
    y = t.reduce("sum", t.reduce("min", y, [1], keepdim=True), [2], keepdim=True)
    y = B(t, "add", U(t, "gelu", y), param(t, "bias2", [1, 1, 1], "the added bias (1 x 1 x 1: one value)"))
    T(finish(t, y, "torch.min over dim 1 (keepdim), torch.sum over dim 2 (keepdim), GELU, + bias2"))

    # 37: Linear, swish, + bias, GroupNorm(64)
    t, x, y = linear_task(37, "37_Matmul_Swish_Sum_GroupNorm", "linear_swish_add_groupnorm", "Linear, Swish, add, GroupNorm",
                          (32768, 1024, 4096), mult=8 * 64)
    F_ = t.ints[2]
    y = B(t, "add", U(t, "swish", y), param(t, "bias2", [F_], "the added bias"))
    y = t.groupnorm(y, 64, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    T(finish(t, y, "sigmoid(x) * x, + bias2, nn.GroupNorm(64 groups); out_features is a multiple of 64"))

    # 38: AvgPool3d(2) on x, ConvTranspose3d(k3, s2, p1, op1), clamp(0, 1), softmax over the positions, * scale
    t, x, y = conv_task(38, "38_ConvTranspose3d_AvgPool_Clamp_Softmax_Multiply",
                        "avgpool_convtranspose3d_clamp_softmax_mul", "AvgPool3d, ConvTranspose3d, clamp, softmax, scale",
                        3, 3, 2, 1, 1, True, bench=(32, 32, 64, 32, 64, 64), pre_pool=2, min_out=2)
    y = t.softmax(U(t, "clamp", y, lo=0.0, hi=1.0), [2, 3, 4])
    y = B(t, "mul", y, param(t, "scale", [1, t.ints[2], 1, 1, 1], "the scale (1 x out_channels x 1 x 1 x 1)"))
    T(finish(t, y, "torch.clamp(0, 1), softmax over all positions of each (batch, channel) (x.view(b, c, -1), dim "
                   "2), * scale"))

    # 40: Linear, x * 0.5 + x
    t, x, y = linear_task(40, "40_Matmul_Scaling_ResidualAdd", "linear_scale_residual", "Linear, scale, residual add",
                          (16384, 4096, 4096))
    T(finish(t, B(t, "add", U(t, "mul_c", y, c=0.5), y), "x * 0.5 + x (the copy of x taken after the linear)"))

    # 41: Linear, BatchNorm1d, GELU, ReLU
    t, x, y = linear_task(41, "41_Gemm_BatchNorm_GELU_ReLU", "linear_batchnorm_gelu_relu", "Linear, BatchNorm1d, GELU, ReLU",
                          (16384, 4096, 4096), min_batch=2)
    F_ = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [F_], "BatchNorm1d's weight"), param(t, "bn_bias", [F_], "its bias"))
    T(finish(t, U(t, "relu", U(t, "gelu", y)), "nn.BatchNorm1d (batch statistics), GELU, relu"))

    # 42: ConvTranspose2d(k3), mean over (2, 3), + bias, logsumexp over channels, sum over (2, 3), * 10
    t, x, y = conv_task(42, "42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply",
                        "convtranspose2d_gap_bias_lse_sum_mul", "ConvTranspose2d, global average, bias, logsumexp, sum",
                        2, 3, 1, 0, 0, True, bench=(16, 64, 128, 512, 512))
    y = t.reduce("mean", y, [2, 3], keepdim=True)
    y = B(t, "add", y, param(t, "bias2", [t.ints[2], 1, 1], "the added bias (out_channels x 1 x 1)"))
    y = t.reduce("sum", t.reduce("logsumexp", y, [1], keepdim=True), [2, 3])
    T(finish(t, U(t, "mul_c", y, c=10.0), "torch.mean over (2, 3) (keepdim), + bias2, torch.logsumexp over dim 1 "
                                          "(keepdim), torch.sum over (2, 3), * 10.0 (the output is batch_size x 1)"))

    # 43: Conv3d(k3, p1), MaxPool3d(2, 2), logsumexp over channels, ReLU
    t, x, y = conv_task(43, "43_Conv3d_Max_LogSumExp_ReLU", "conv3d_maxpool_lse_relu", "Conv3d, MaxPool3d, logsumexp, ReLU",
                        3, 3, 1, 1, bench=(4, 32, 64, 32, 128, 128), min_out=2)
    y = t.pool("max", y, (2, 2, 2), 2, names={0: "d_p", 1: "h_p", 2: "w_p"})
    T(finish(t, U(t, "relu", t.reduce("logsumexp", y, [1], keepdim=True)),
             "nn.MaxPool3d(2, stride 2), torch.logsumexp over dim 1 (keepdim), relu"))

    # 44: ConvTranspose2d(k3, s2, p1, op1), * 0.5, mean over (2, 3) twice
    t, x, y = conv_task(44, "44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean",
                        "convtranspose2d_mul_gap_gap", "ConvTranspose2d, scale, two global averages", 2, 3, 2, 1, 1, True,
                        bench=(16, 64, 128, 128, 128))
    y = t.reduce("mean", U(t, "mul_c", y, c=0.5), [2, 3], keepdim=True)
    T(finish(t, t.reduce("mean", y, [2, 3], keepdim=True), "* 0.5, torch.mean over (2, 3) (keepdim), and again"))

    # 45: Linear, sigmoid, Linear, logsumexp over dim 1
    t = Task(2, 45, "45_Gemm_Sigmoid_LogSumExp", "linear_sigmoid_linear_lse", "Linear, sigmoid, Linear, logsumexp")
    N, fi, fh, fo = t.int("batch_size", "input_size", "hidden_size", "output_size")
    x = t.input("x", [N, fi], dist=X_DIST)
    W1 = param(t, "weight1", [fh, fi], "linear1's weight")
    b1 = param(t, "bias1", [fh], "its bias")
    W2 = param(t, "weight2", [fo, fh], "linear2's weight")
    b2 = param(t, "bias2", [fo], "its bias")
    y = t.matmul(U(t, "sigmoid", t.matmul(x, W1, [N], [fh], [fi], tb=True, bias=b1)), W2, [N], [fo], [fh], tb=True, bias=b2)
    t.front = "nn.Linear(input_size, hidden_size)"
    t.sizes([{"batch_size": 1, "input_size": 1, "hidden_size": 1, "output_size": 1},
             {"batch_size": 7, "input_size": 33, "hidden_size": 17, "output_size": 5},
             {"batch_size": 3, "input_size": 64, "hidden_size": 40, "output_size": 33},
             {"batch_size": 2, "input_size": 17, "hidden_size": 64, "output_size": 9}],
            {"batch_size": 16384, "input_size": 2048, "hidden_size": 4096, "output_size": 1024},
            {"batch_size": 64, "input_size": 512, "hidden_size": 1024, "output_size": 256},
            {"batch_size": [1, 7], "input_size": [1, 64], "hidden_size": [1, 64], "output_size": [1, 33]})
    t.notes.append(NOTE)
    T(finish(t, t.reduce("logsumexp", y, [1]), "sigmoid, nn.Linear(hidden_size, output_size), torch.logsumexp over "
                                              "dim 1 (one value per row)"))

    # 46: Conv2d, - 0.5, tanh, - 0.2, AvgPool2d(2)
    t, x, y = conv_task(46, "46_Conv2d_Subtract_Tanh_Subtract_AvgPool", "conv2d_sub_tanh_sub_avgpool",
                        "Conv2d, subtract, tanh, subtract, AvgPool2d", 2, 3, bench=(128, 64, 128, 128, 128), min_out=2)
    y = U(t, "sub_c", U(t, "tanh", U(t, "sub_c", y, c=0.5)), c=0.2)
    T(finish(t, t.pool("avg", y, (2, 2), names={0: "h_p", 1: "w_p"}), "- 0.5, tanh, - 0.2, nn.AvgPool2d(2)"))

    # 47: Conv3d, Mish, tanh
    t, x, y = conv_task(47, "47_Conv3d_Mish_Tanh", "conv3d_mish_tanh", "Conv3d, Mish, tanh", 3, 3,
                        bench=(16, 32, 64, 32, 64, 64), names=["D", "H", "W"])
    T(finish(t, U(t, "tanh", U(t, "mish", y)), "mish, tanh"))

    # 48: Conv3d, * scaling, tanh, * bias, sigmoid
    t, x, y = conv_task(48, "48_Conv3d_Scaling_Tanh_Multiply_Sigmoid", "conv3d_scale_tanh_mul_sigmoid",
                        "Conv3d, scale, tanh, multiply, sigmoid", 3, 3, bench=(128, 3, 16, 16, 64, 64))
    C = t.ints[2]
    sc = param(t, "scaling_factor", [C, 1, 1, 1], "the learned scale (out_channels x 1 x 1 x 1)")
    bb = param(t, "bias2", [C, 1, 1, 1], "the learned multiplier called bias (out_channels x 1 x 1 x 1)")
    T(finish(t, U(t, "sigmoid", B(t, "mul", U(t, "tanh", B(t, "mul", y, sc)), bb)),
             "* scaling_factor, tanh, * bias2, sigmoid"))

    # 49: ConvTranspose3d(k3, s2, p1, op1), softmax over channels, sigmoid
    t, x, y = conv_task(49, "49_ConvTranspose3d_Softmax_Sigmoid", "convtranspose3d_softmax_sigmoid",
                        "ConvTranspose3d, softmax, sigmoid", 3, 3, 2, 1, 1, True, bench=(16, 32, 64, 16, 32, 32),
                        names=["D", "H", "W"])
    T(finish(t, U(t, "sigmoid", t.softmax(y, [1])), "softmax over dim 1, sigmoid"))

    # 50: ConvTranspose3d(k3, s2, p1), * scale1, AvgPool3d(2), + bias, * scale2
    t, x, y = conv_task(50, "50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling", "convtranspose3d_scale_avgpool_bias_scale",
                        "ConvTranspose3d, scale, AvgPool3d, bias, scale", 3, 3, 2, 1, 0, True,
                        bench=(128, 3, 16, 16, 32, 32), min_out=2)
    s1 = param(t, "scale1", [], "the learned scalar scale1 (one value)")
    s2 = param(t, "scale2", [], "the learned scalar scale2 (one value)")
    y = t.pool("avg", B(t, "mul", y, s1), (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    y = B(t, "mul", B(t, "add", y, param(t, "bias2", [t.ints[2], 1, 1, 1], "the added bias (out_channels x 1 x 1 x 1)")), s2)
    T(finish(t, y, "* scale1, nn.AvgPool3d(2), + bias2, * scale2"))

    # 51: Linear, - subtract, mean over dim 1, logsumexp, GELU, + the original x
    t, x, y = linear_task(51, "51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd",
                          "linear_sub_mean_lse_gelu_residual", "Linear, subtract, mean, logsumexp, GELU, residual",
                          (2048, 8192, 8192))
    y = B(t, "sub", y, param(t, "subtract", [t.ints[2]], "the subtracted parameter"))
    y = t.reduce("logsumexp", t.reduce("mean", y, [1], keepdim=True), [1], keepdim=True)
    T(finish(t, B(t, "add", U(t, "gelu", y), x), "- subtract, torch.mean over dim 1 (keepdim), torch.logsumexp over "
                                                 "dim 1 (keepdim), GELU, + x (the input, broadcast: batch_size x "
                                                 "in_features)"))

    # 52: Conv2d, tanh(softplus(x)) * x, BatchNorm2d
    t, x, y = conv_task(52, "52_Conv2d_Activation_BatchNorm", "conv2d_activation_batchnorm",
                        "Conv2d, tanh(softplus) gate, BatchNorm2d", 2, 3, min_out=2, bench=(64, 64, 128, 128, 128))
    C = t.ints[2]
    y = B(t, "mul", U(t, "tanh", U(t, "softplus", y)), y)
    y = t.batchnorm(y, param(t, "bn_weight", [C], "BatchNorm2d's weight"), param(t, "bn_bias", [C], "its bias"))
    T(finish(t, y, "torch.tanh(softplus(x)) * x, nn.BatchNorm2d (batch statistics)"))

    # 53: Linear, * 0.5, Hardtanh(-2, 2), GELU
    t, x, y = linear_task(53, "53_Gemm_Scaling_Hardtanh_GELU", "linear_scale_hardtanh_gelu", "Linear, scale, Hardtanh, GELU",
                          (2048, 8192, 8192))
    T(finish(t, U(t, "gelu", U(t, "hardtanh", U(t, "mul_c", y, c=0.5), lo=-2.0, hi=2.0)),
             "* 0.5, hardtanh(-2, 2), GELU"))

    # 54: Conv2d, * multiplier, LeakyReLU(0.01), GELU
    t, x, y = conv_task(54, "54_Conv2d_Multiply_LeakyReLU_GELU", "conv2d_mul_leakyrelu_gelu",
                        "Conv2d, multiply, LeakyReLU, GELU", 2, 3, bench=(64, 64, 64, 256, 256))
    m = param(t, "multiplier", [t.ints[2], 1, 1], "the learned multiplier (out_channels x 1 x 1)")
    T(finish(t, U(t, "gelu", U(t, "leaky_relu", B(t, "mul", y, m), slope=0.01)), "* multiplier, leaky_relu(0.01), GELU"))

    # 55: Linear, MaxPool1d(2) along the features, sum, * 0.5
    t, x, y = linear_task(55, "55_Matmul_MaxPool_Sum_Scale", "linear_maxpool_sum_scale", "Linear, MaxPool1d, sum, scale",
                          (128, 32768, 32768), min_out=2)
    N, F_ = t.ints[0], t.ints[2]
    v = t.view(y, [N, 1, F_], "%s.unsqueeze(1)")
    p = t.pool("max", v, (2,), names={0: "pooled"})
    y = t.reduce("sum", t.view(p, [N, p.shape[-1]], "%s.squeeze(1)"), [1])
    T(finish(t, U(t, "mul_c", y, c=0.5), "nn.MaxPool1d(2) along the features (x.unsqueeze(1)), torch.sum over dim 1, "
                                        "* 0.5 (one value per row)"))

    # 56: Linear, sigmoid, sum over dim 1 (keepdim)
    t, x, y = linear_task(56, "56_Matmul_Sigmoid_Sum", "linear_sigmoid_sum", "Linear, sigmoid, sum", (128, 32768, 32768),
                          names=("batch_size", "input_size", "hidden_size"))
    T(finish(t, t.reduce("sum", U(t, "sigmoid", y), [1], keepdim=True), "sigmoid, torch.sum over dim 1 (keepdim)"))

    # 57: Conv2d, ReLU, x * clamp((x + 3) / 6, 0, 1)
    t, x, y = conv_task(57, "57_Conv2d_ReLU_HardSwish", "conv2d_relu_hardswish", "Conv2d, ReLU, HardSwish", 2, 3,
                        bench=(128, 8, 64, 128, 128))
    y = U(t, "relu", y)
    g = U(t, "clamp", U(t, "div_c", U(t, "add_c", y, c=3.0), c=6.0), lo=0.0, hi=1.0)
    T(finish(t, B(t, "mul", y, g), "relu, x * torch.clamp((x + 3) / 6, 0, 1)"))

    # 58: ConvTranspose3d(k3, s2, p1), logsumexp over channels, x * sigmoid(x + 3) / 6, - bias, clamp(-1, 1)
    t, x, y = conv_task(58, "58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp",
                        "convtranspose3d_lse_hardswish_sub_clamp", "ConvTranspose3d, logsumexp, gate, subtract, clamp",
                        3, 3, 2, 1, 0, True, saturating=True, bench=(128, 3, 16, 16, 32, 32))
    y = t.reduce("logsumexp", y, [1], keepdim=True)
    y = U(t, "div_c", B(t, "mul", y, U(t, "sigmoid", U(t, "add_c", y, c=3.0))), c=6.0)
    # one value drawn small: a bias below -0.9 would clamp every output to 1 (so it does in KernelBench for such
    # a draw of its randn parameter)
    y = B(t, "sub", y, param(t, "bias2", [1, 1, 1, 1], "the subtracted bias (1 x 1 x 1 x 1: one value)", ["small"]))
    T(finish(t, U(t, "clamp", y, lo=-1.0, hi=1.0), "torch.logsumexp over dim 1 (keepdim), x * sigmoid(x + 3) / 6, "
                                                 "- bias2, torch.clamp(-1, 1)"))

    # 59: Linear, swish, * 2
    t, x, y = linear_task(59, "59_Matmul_Swish_Scaling", "linear_swish_scale", "Linear, Swish, scale", (128, 32768, 32768))
    T(finish(t, U(t, "mul_c", U(t, "swish", y), c=2.0), "x * sigmoid(x), * 2.0"))

    # 60: ConvTranspose3d(k3, s2, p1), swish, GroupNorm(4), HardSwish
    t, x, y = conv_task(60, "60_ConvTranspose3d_Swish_GroupNorm_HardSwish", "convtranspose3d_swish_groupnorm_hardswish",
                        "ConvTranspose3d, Swish, GroupNorm, HardSwish", 3, 3, 2, 1, 0, True,
                        min_out=2, bench=(128, 3, 16, 16, 32, 32), mult=4)
    C = t.ints[2]
    y = t.groupnorm(U(t, "swish", y), 4, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, U(t, "hardswish", y), "sigmoid(x) * x, nn.GroupNorm(4 groups), hardswish; out_channels is a "
                                      "multiple of 4"))

    # 61: ConvTranspose3d(k3, no bias), ReLU, GroupNorm(8)
    t, x, y = conv_task(61, "61_ConvTranspose3d_ReLU_GroupNorm", "convtranspose3d_relu_groupnorm",
                        "ConvTranspose3d, ReLU, GroupNorm", 3, 3, 1, 0, 0, True, bias=False,
                        min_out=2, bench=(16, 64, 128, 32, 32, 32), mult=8, names=["D", "H", "W"])
    C = t.ints[2]
    y = t.groupnorm(U(t, "relu", y), 8, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    T(finish(t, y, "relu, nn.GroupNorm(8 groups); out_channels is a multiple of 8"))

    # 62: Linear, GroupNorm(512), LeakyReLU(0.01), x + x
    t, x, y = linear_task(62, "62_Matmul_GroupNorm_LeakyReLU_Sum", "linear_groupnorm_leakyrelu_sum",
                          "Linear, GroupNorm, LeakyReLU, doubling", (1024, 8192, 8192), mult=8 * 512,
                          names=("batch_size", "input_size", "hidden_size"))
    F_ = t.ints[2]
    y = t.groupnorm(y, 512, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    y = U(t, "leaky_relu", y, slope=0.01)
    T(finish(t, B(t, "add", y, y), "nn.GroupNorm(512 groups), leaky_relu(0.01), x + x; hidden_size is a multiple of "
                                   "512"))

    # 63: Linear, ReLU, / 2
    t, x, y = linear_task(63, "63_Gemm_ReLU_Divide", "linear_relu_div", "Linear, ReLU, divide", (1024, 8192, 8192))
    T(finish(t, U(t, "div_c", U(t, "relu", y), c=2.0), "relu, / 2.0"))

    # 64: Linear, logsumexp (keepdim), LeakyReLU twice, GELU twice
    t, x, y = linear_task(64, "64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU", "linear_lse_leakyrelu2_gelu2",
                          "Linear, logsumexp, two LeakyReLU, two GELU", (1024, 8192, 8192))
    y = t.reduce("logsumexp", y, [1], keepdim=True)
    y = U(t, "leaky_relu", U(t, "leaky_relu", y, slope=0.01), slope=0.01)
    T(finish(t, U(t, "gelu", U(t, "gelu", y)), "torch.logsumexp over dim 1 (keepdim), leaky_relu(0.01) twice, GELU "
                                               "twice"))

    # 65: Conv2d, AvgPool2d(4), sigmoid, sum over (1, 2, 3)
    t, x, y = conv_task(65, "65_Conv2d_AvgPool_Sigmoid_Sum", "conv2d_avgpool_sigmoid_sum", "Conv2d, AvgPool2d, sigmoid, sum",
                        2, 3, bench=(128, 8, 64, 384, 384), min_out=4)
    y = U(t, "sigmoid", t.pool("avg", y, (4, 4), names={0: "h_p", 1: "w_p"}))
    T(finish(t, t.reduce("sum", y, [1, 2, 3]), "nn.AvgPool2d(4), sigmoid, torch.sum over dims 1 to 3 (one value per "
                                              "batch element)"))

    # 67: Conv2d, GELU, global average (squeezed)
    t, x, y = conv_task(67, "67_Conv2d_GELU_GlobalAvgPool", "conv2d_gelu_gap", "Conv2d, GELU, global average pool", 2, 3,
                        bench=(128, 8, 64, 256, 256))
    T(finish(t, t.reduce("mean", U(t, "gelu", y), [2, 3]), "GELU, adaptive_avg_pool2d(x, 1) squeezed: the mean of each "
                                                           "channel (batch_size x out_channels)"))

    # 68: Linear, min(x, constant), - constant
    t, x, y = linear_task(68, "68_Matmul_Min_Subtract", "linear_min_sub", "Linear, min with a parameter, subtract",
                          (128, 16384, 16384))
    c = param(t, "constant", [], "the learned scalar constant (one value)")
    T(finish(t, B(t, "sub", B(t, "min", y, c), c), "torch.min(x, constant), - constant"))

    # 69: Conv2d, HardSwish, ReLU
    t, x, y = conv_task(69, "69_Conv2d_HardSwish_ReLU", "conv2d_hardswish_relu", "Conv2d, HardSwish, ReLU", 2, 3,
                        bench=(128, 8, 64, 128, 128))
    T(finish(t, U(t, "relu", U(t, "hardswish", y)), "hardswish, relu"))

    # 70: Linear, sigmoid, * 2, + the linear's output
    t, x, y = linear_task(70, "70_Gemm_Sigmoid_Scaling_ResidualAdd", "linear_sigmoid_scale_residual",
                          "Linear, sigmoid, scale, residual add", (1024, 8192, 8192),
                          names=("batch_size", "input_size", "hidden_size"))
    T(finish(t, B(t, "add", U(t, "mul_c", U(t, "sigmoid", y), c=2.0), y), "sigmoid(x) * 2.0 + x (x the linear's "
                                                                          "output)"))

    # 71: Conv2d, / 2, LeakyReLU(0.01)
    t, x, y = conv_task(71, "71_Conv2d_Divide_LeakyReLU", "conv2d_div_leakyrelu", "Conv2d, divide, LeakyReLU", 2, 3,
                        bench=(128, 8, 64, 128, 128))
    T(finish(t, U(t, "leaky_relu", U(t, "div_c", y, c=2.0), slope=0.01), "/ 2, leaky_relu(0.01)"))

    # 72: ConvTranspose3d(k3, s2, p1), BatchNorm3d, AvgPool3d(2) twice
    t, x, y = conv_task(72, "72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool", "convtranspose3d_batchnorm_avgpool_avgpool",
                        "ConvTranspose3d, BatchNorm3d, two AvgPool3d", 3, 3, 2, 1, 0, True, bench=(64, 3, 16, 32, 32, 32),
                        min_out=4)
    C = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [C], "BatchNorm3d's weight"), param(t, "bn_bias", [C], "its bias"))
    y = t.pool("avg", y, (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    T(finish(t, t.pool("avg", y, (2, 2, 2), names={0: "d_q", 1: "h_q", 2: "w_q"}),
             "nn.BatchNorm3d (batch statistics), nn.AvgPool3d(2), nn.AvgPool3d(2)"))

    # 73: Conv2d, BatchNorm2d, * 2
    t, x, y = conv_task(73, "73_Conv2d_BatchNorm_Scaling", "conv2d_batchnorm_scale", "Conv2d, BatchNorm2d, scale", 2, 3,
                        min_out=2, bench=(128, 8, 64, 128, 128))
    C = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [C], "BatchNorm2d's weight"), param(t, "bn_bias", [C], "its bias"))
    T(finish(t, U(t, "mul_c", y, c=2.0), "nn.BatchNorm2d (batch statistics), * 2.0"))

    # 74: ConvTranspose3d(k3, s2, p1, op1), LeakyReLU(0.2), * multiplier, LeakyReLU(0.2), MaxPool3d(2)
    t, x, y = conv_task(74, "74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max",
                        "convtranspose3d_leakyrelu_mul_leakyrelu_maxpool", "ConvTranspose3d, LeakyReLU, multiply, MaxPool3d",
                        3, 3, 2, 1, 1, True, bench=(16, 16, 32, 16, 32, 32), min_out=2)
    m = param(t, "multiplier", [t.ints[2], 1, 1, 1], "the learned multiplier (out_channels x 1 x 1 x 1)")
    y = U(t, "leaky_relu", B(t, "mul", U(t, "leaky_relu", y, slope=0.2), m), slope=0.2)
    T(finish(t, t.pool("max", y, (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"}),
             "leaky_relu(0.2), * multiplier, leaky_relu(0.2), nn.MaxPool3d(2)"))

    # 75: Linear, GroupNorm(512), min over features (keepdim), + bias (1, out, 1, 1): broadcast to 1 x out x batch x 1
    t, x, y = linear_task(75, "75_Gemm_GroupNorm_Min_BiasAdd", "linear_groupnorm_min_biasadd",
                          "Linear, GroupNorm, min, broadcast bias add", (1024, 8192, 8192), mult=8 * 512)
    F_ = t.ints[2]
    y = t.groupnorm(y, 512, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    y = t.reduce("min", y, [1], keepdim=True)
    y = B(t, "add", y, param(t, "bias2", [1, F_, 1, 1], "the added bias (1 x out_features x 1 x 1)"))
    T(finish(t, y, "nn.GroupNorm(512 groups), torch.min over dim 1 (keepdim: batch_size x 1), + bias2, which "
                   "broadcasts the sum to 1 x out_features x batch_size x 1: y[0][f][b][0] = min_b + bias2[f]; "
                   "out_features is a multiple of 512"))

    # 76: x W^T (no bias), + bias, ReLU
    t, x, y = linear_task(76, "76_Gemm_Add_ReLU", "gemm_add_relu", "Matmul, bias add, ReLU", (1024, 8192, 8192), bias=False)
    T(finish(t, U(t, "relu", B(t, "add", y, param(t, "bias2", [t.ints[2]], "the added bias"))), "+ bias2, relu"))

    # 77: ConvTranspose3d(k5), * 2, BatchNorm3d, global average
    t, x, y = conv_task(77, "77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool", "convtranspose3d_scale_batchnorm_gap",
                        "ConvTranspose3d, scale, BatchNorm3d, global average", 3, 5, 1, 0, 0, True,
                        min_out=2, bench=(16, 64, 128, 16, 32, 32))
    C = t.ints[2]
    y = t.batchnorm(U(t, "mul_c", y, c=2.0), param(t, "bn_weight", [C], "BatchNorm3d's weight"),
                    param(t, "bn_bias", [C], "its bias"))
    T(finish(t, t.reduce("mean", y, [2, 3, 4], keepdim=True), "* 2.0, nn.BatchNorm3d (batch statistics), "
                                                             "nn.AdaptiveAvgPool3d((1, 1, 1))"))

    # 78: ConvTranspose3d(k5, s2, p2), MaxPool3d(2), MaxPool3d(3), sum over channels (keepdim)
    t, x, y = conv_task(78, "78_ConvTranspose3d_Max_Max_Sum", "convtranspose3d_maxpool_maxpool_sum",
                        "ConvTranspose3d, two MaxPool3d, sum", 3, 5, 2, 2, 0, True, bench=(16, 32, 64, 32, 32, 32),
                        min_out=6)
    y = t.pool("max", y, (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    y = t.pool("max", y, (3, 3, 3), names={0: "d_q", 1: "h_q", 2: "w_q"})
    T(finish(t, t.reduce("sum", y, [1], keepdim=True), "nn.MaxPool3d(2), nn.MaxPool3d(3), torch.sum over dim 1 "
                                                      "(keepdim)"))

    # 79: Conv3d, * multiplier, InstanceNorm3d, clamp(-1, 1), * multiplier, max over channels
    t, x, y = conv_task(79, "79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max", "conv3d_mul_instancenorm_clamp_mul_max",
                        "Conv3d, multiply, InstanceNorm3d, clamp, multiply, max", 3, 3, bench=(128, 3, 16, 16, 32, 32),
                        min_out=2)
    m = param(t, "multiplier", [t.ints[2], 1, 1, 1], "the learned multiplier (out_channels x 1 x 1 x 1)")
    y = U(t, "clamp", t.instancenorm(B(t, "mul", y, m)), lo=-1.0, hi=1.0)
    T(finish(t, t.reduce("max", B(t, "mul", y, m), [1]), "* multiplier, nn.InstanceNorm3d (no affine), "
                                                         "torch.clamp(-1, 1), * multiplier, torch.max over dim 1"))

    # 81: Linear, swish, / 2, clamp(-1, 1), tanh, clamp(-1, 1)
    t, x, y = linear_task(81, "81_Gemm_Swish_Divide_Clamp_Tanh_Clamp", "linear_swish_div_clamp_tanh_clamp",
                          "Linear, Swish, divide, clamp, tanh, clamp", (1024, 8192, 8192))
    y = U(t, "clamp", U(t, "div_c", U(t, "swish", y), c=2.0), lo=-1.0, hi=1.0)
    T(finish(t, U(t, "clamp", U(t, "tanh", y), lo=-1.0, hi=1.0), "x * sigmoid(x), / 2.0, torch.clamp(-1, 1), tanh, "
                                                                "torch.clamp(-1, 1)"))

    # 82: Conv2d, tanh, * 2, + bias, MaxPool2d(4)
    t, x, y = conv_task(82, "82_Conv2d_Tanh_Scaling_BiasAdd_Max", "conv2d_tanh_scale_bias_maxpool",
                        "Conv2d, tanh, scale, bias, MaxPool2d", 2, 3, bench=(128, 8, 64, 256, 256), min_out=4)
    y = B(t, "add", U(t, "mul_c", U(t, "tanh", y), c=2.0), param(t, "bias2", [t.ints[2], 1, 1],
                                                                  "the added bias (out_channels x 1 x 1)"))
    T(finish(t, t.pool("max", y, (4, 4), names={0: "h_p", 1: "w_p"}), "tanh, * 2.0, + bias2, nn.MaxPool2d(4)"))

    # 84: Linear, BatchNorm1d, * scale (one value), softmax over dim 1
    t, x, y = linear_task(84, "84_Gemm_BatchNorm_Scaling_Softmax", "linear_batchnorm_scale_softmax",
                          "Linear, BatchNorm1d, scale, softmax", (1024, 8192, 8192), min_batch=2)
    F_ = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [F_], "BatchNorm1d's weight"), param(t, "bn_bias", [F_], "its bias"))
    # the scale near one, as KernelBench's torch.ones: one value near zero flattens every row's
    # softmax to 1/out_features, which the mean of another seed's output then matches
    y = B(t, "mul", param(t, "scale", [1], "the learned scale (one value)", dist=["near_one"]), y)
    T(finish(t, t.softmax(y, [1]), "nn.BatchNorm1d (batch statistics), scale * x, softmax over dim 1"))

    # 85: Conv2d, GroupNorm(16), * scale, MaxPool2d(4), clamp(0, 1)
    t, x, y = conv_task(85, "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp", "conv2d_groupnorm_scale_maxpool_clamp",
                        "Conv2d, GroupNorm, scale, MaxPool2d, clamp", 2, 3, bench=(128, 8, 64, 128, 128), mult=16,
                        min_out=4)
    C = t.ints[2]
    y = t.groupnorm(y, 16, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    y = t.pool("max", B(t, "mul", y, param(t, "scale", [C, 1, 1], "the scale (out_channels x 1 x 1)")), (4, 4),
               names={0: "h_p", 1: "w_p"})
    T(finish(t, U(t, "clamp", y, lo=0.0, hi=1.0), "nn.GroupNorm(16 groups), * scale, nn.MaxPool2d(4), "
                                                 "torch.clamp(0, 1); out_channels is a multiple of 16"))

    # 86: Linear, / 10, GELU
    t, x, y = linear_task(86, "86_Matmul_Divide_GELU", "linear_div_gelu", "Linear, divide, GELU", (1024, 8192, 8192),
                          names=("batch_size", "input_size", "output_size"))
    T(finish(t, U(t, "gelu", U(t, "div_c", y, c=10.0)), "/ 10.0, GELU"))

    # 87: Conv2d, - 0.5, - 0.2, Mish
    t, x, y = conv_task(87, "87_Conv2d_Subtract_Subtract_Mish", "conv2d_sub_sub_mish", "Conv2d, two subtractions, Mish", 2,
                        3, bench=(128, 8, 64, 256, 256))
    T(finish(t, U(t, "mish", U(t, "sub_c", U(t, "sub_c", y, c=0.5), c=0.2)), "- 0.5, - 0.2, mish"))

    # 88: Linear, GroupNorm(256), swish, * w, swish
    t, x, y = linear_task(88, "88_Gemm_GroupNorm_Swish_Multiply_Swish", "linear_groupnorm_swish_mul_swish",
                          "Linear, GroupNorm, Swish, multiply, Swish", (1024, 8192, 8192), mult=8 * 256)
    F_ = t.ints[2]
    y = t.groupnorm(y, 256, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    y = B(t, "mul", U(t, "swish", y), param(t, "multiply_weight", [F_], "the learned multiplier"))
    T(finish(t, U(t, "swish", y), "nn.GroupNorm(256 groups), x * sigmoid(x), * multiply_weight, x * sigmoid(x); "
                                  "out_features is a multiple of 256"))

    # 89: ConvTranspose3d(k3, s2, p1, op1), MaxPool3d(2, 2), softmax over channels, - subtract, swish, max over channels
    t, x, y = conv_task(89, "89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max",
                        "convtranspose3d_maxpool_softmax_sub_swish_max", "ConvTranspose3d, MaxPool3d, softmax, subtract, "
                        "Swish, max", 3, 3, 2, 1, 1, True, bench=(128, 3, 16, 16, 32, 32), min_out=2)
    y = t.softmax(t.pool("max", y, (2, 2, 2), 2, names={0: "d_p", 1: "h_p", 2: "w_p"}), [1])
    y = U(t, "swish", B(t, "sub", y, param(t, "subtract", [t.ints[2], 1, 1, 1],
                                           "the subtracted parameter (out_channels values; x - subtract.view(1, -1, 1, 1, 1))")))
    T(finish(t, t.reduce("max", y, [1]), "nn.MaxPool3d(2, stride 2), softmax over dim 1, - subtract (per channel), "
                                         "sigmoid(x) * x, torch.max over dim 1"))

    # 90: Conv3d, LeakyReLU(0.2), + sum_tensor, clamp(-1, 1), GELU
    t, x, y = conv_task(90, "90_Conv3d_LeakyReLU_Sum_Clamp_GELU", "conv3d_leakyrelu_sum_clamp_gelu",
                        "Conv3d, LeakyReLU, add, clamp, GELU", 3, 3, bench=(128, 8, 64, 16, 64, 64))
    y = B(t, "add", U(t, "leaky_relu", y, slope=0.2), param(t, "sum_tensor", [t.ints[2], 1, 1, 1],
                                                             "the added tensor (out_channels x 1 x 1 x 1)"))
    T(finish(t, U(t, "gelu", U(t, "clamp", y, lo=-1.0, hi=1.0)), "leaky_relu(0.2), + sum_tensor, torch.clamp(-1, 1), "
                                                                 "GELU"))

    # 91: ConvTranspose2d(k4, s2, p1, op1), softmax over channels, + bias, * 2, sigmoid
    t, x, y = conv_task(91, "91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid",
                        "convtranspose2d_softmax_bias_scale_sigmoid", "ConvTranspose2d, softmax, bias, scale, sigmoid", 2,
                        4, 2, 1, 1, True, bench=(128, 64, 128, 64, 64))
    y = B(t, "add", t.softmax(y, [1]), param(t, "bias2", [t.ints[2], 1, 1], "the added bias (out_channels x 1 x 1)"))
    T(finish(t, U(t, "sigmoid", U(t, "mul_c", y, c=2.0)), "softmax over dim 1, + bias2, * 2.0, sigmoid"))

    # 92: Conv2d, GroupNorm(16), tanh, HardSwish, + the conv's output, logsumexp over channels (keepdim)
    t, x, y = conv_task(92, "92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
                        "conv2d_groupnorm_tanh_hardswish_residual_lse", "Conv2d, GroupNorm, tanh, HardSwish, residual, "
                        "logsumexp", 2, 3, min_out=2, bench=(128, 8, 64, 128, 128), mult=16)
    C = t.ints[2]
    z = t.groupnorm(y, 16, param(t, "gn_weight", [C], "GroupNorm's weight"), param(t, "gn_bias", [C], "its bias"))
    z = B(t, "add", y, U(t, "hardswish", U(t, "tanh", z)))
    T(finish(t, t.reduce("logsumexp", z, [1], keepdim=True), "with c the convolution's output: c + hardswish(tanh("
                                                             "GroupNorm(16 groups)(c))), torch.logsumexp over dim 1 "
                                                             "(keepdim); out_channels is a multiple of 16"))

    # 93: ConvTranspose2d(k4, s2), + 0.5, min(x, 0), GELU, * 2
    t, x, y = conv_task(93, "93_ConvTranspose2d_Add_Min_GELU_Multiply", "convtranspose2d_add_min_gelu_mul",
                        "ConvTranspose2d, add, min, GELU, scale", 2, 4, 2, 0, 0, True, xdist=["normal"], min_out=6, bench=(128, 64, 128, 64, 64))
    # x normal only: on uniform inputs most of x + 0.5 is positive, and the min with 0 leaves zeros (KernelBench's
    # torch.rand inputs and small initial weights do that to most of its output)
    y = U(t, "min_c", U(t, "add_c", y, c=0.5), c=0.0)
    T(finish(t, U(t, "mul_c", U(t, "gelu", y), c=2.0), "+ 0.5, torch.min(x, 0.0), GELU, * 2.0"))

    # 94: Linear, + bias, Hardtanh, Mish, GroupNorm(256)
    t, x, y = linear_task(94, "94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm", "linear_bias_hardtanh_mish_groupnorm",
                          "Linear, bias, Hardtanh, Mish, GroupNorm", (1024, 8192, 8192), mult=8 * 256)
    F_ = t.ints[2]
    y = U(t, "mish", U(t, "hardtanh", B(t, "add", y, param(t, "bias2", [F_], "the added bias")), lo=-1.0, hi=1.0))
    y = t.groupnorm(y, 256, param(t, "gn_weight", [F_], "GroupNorm's weight"), param(t, "gn_bias", [F_], "its bias"))
    T(finish(t, y, "+ bias2, hardtanh(-1, 1), mish, nn.GroupNorm(256 groups); out_features is a multiple of 256"))

    # 95: Linear, + add_value, swish, tanh, GELU, Hardtanh(-1, 1)
    t, x, y = linear_task(95, "95_Matmul_Add_Swish_Tanh_GELU_Hardtanh", "linear_add_swish_tanh_gelu_hardtanh",
                          "Linear, add, Swish, tanh, GELU, Hardtanh", (1024, 8192, 8192))
    y = U(t, "swish", B(t, "add", y, param(t, "add_value", [t.ints[2]], "the added parameter")))
    T(finish(t, U(t, "hardtanh", U(t, "gelu", U(t, "tanh", y)), lo=-1.0, hi=1.0),
             "+ add_value, sigmoid(x) * x, tanh, GELU, hardtanh(-1, 1)"))

    # 96: ConvTranspose3d(k3, s2, p1), * 0.5, MaxPool3d(2), global average, clamp(0, 1)
    t, x, y = conv_task(96, "96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp", "convtranspose3d_mul_maxpool_gap_clamp",
                        "ConvTranspose3d, scale, MaxPool3d, global average, clamp", 3, 3, 2, 1, 0, True,
                        bench=(128, 3, 16, 16, 32, 32), min_out=2)
    y = t.pool("max", U(t, "mul_c", y, c=0.5), (2, 2, 2), names={0: "d_p", 1: "h_p", 2: "w_p"})
    T(finish(t, U(t, "clamp", t.reduce("mean", y, [2, 3, 4], keepdim=True), lo=0.0, hi=1.0),
             "* 0.5, nn.MaxPool3d(2), nn.AdaptiveAvgPool3d((1, 1, 1)), torch.clamp(0, 1)"))

    # 97: Linear, BatchNorm1d, + bias (one value), / 1, swish
    t, x, y = linear_task(97, "97_Matmul_BatchNorm_BiasAdd_Divide_Swish", "linear_batchnorm_bias_div_swish",
                          "Linear, BatchNorm1d, bias, divide, Swish", (1024, 8192, 8192), min_batch=2)
    F_ = t.ints[2]
    y = t.batchnorm(y, param(t, "bn_weight", [F_], "BatchNorm1d's weight"), param(t, "bn_bias", [F_], "its bias"))
    y = U(t, "div_c", B(t, "add", y, param(t, "bias2", [1], "the added bias (one value)")), c=1.0)
    T(finish(t, U(t, "swish", y), "nn.BatchNorm1d (batch statistics), + bias2, / 1.0, x * sigmoid(x)"))

    # 98: Linear, AvgPool1d(16) along the features, GELU, * 2, max over dim 1
    t, x, y = linear_task(98, "98_Matmul_AvgPool_GELU_Scale_Max", "linear_avgpool_gelu_scale_max",
                          "Linear, AvgPool1d, GELU, scale, max", (1024, 8192, 8192), min_out=16)
    N, F_ = t.ints[0], t.ints[2]
    p = t.pool("avg", t.view(y, [N, 1, F_], "%s.unsqueeze(1)"), (16,), names={0: "pooled"})
    y = U(t, "mul_c", U(t, "gelu", t.view(p, [N, p.shape[-1]], "%s.squeeze(1)")), c=2.0)
    T(finish(t, t.reduce("max", y, [1]), "nn.AvgPool1d(16) along the features (x.unsqueeze(1)), GELU, * 2.0, "
                                         "torch.max over dim 1 (one value per row)"))

    # 99: Linear, GELU, softmax over dim 1
    t, x, y = linear_task(99, "99_Matmul_GELU_Softmax", "linear_gelu_softmax", "Linear, GELU, softmax", (1024, 8192, 8192))
    T(finish(t, t.softmax(U(t, "gelu", y), [1]), "GELU, softmax over dim 1"))

    # 100: ConvTranspose3d(k3, s2, p1), clamp(min=-1), / 2
    t, x, y = conv_task(100, "100_ConvTranspose3d_Clamp_Min_Divide", "convtranspose3d_clamp_div",
                        "ConvTranspose3d, clamp, divide", 3, 3, 2, 1, 0, True, bench=(16, 64, 128, 24, 48, 48))
    T(finish(t, U(t, "div_c", U(t, "clamp_min", y, lo=-1.0), c=2.0), "torch.clamp(min=-1.0), / 2.0"))

    return out
