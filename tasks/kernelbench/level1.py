"""level1.py - KernelBench level 1 (100 single operators) as leap tasks.

Each function below builds the tasks of one family of problems. The sizes of `bench` are
KernelBench's own (its module-level constants; /work/shared/kernelbench/problems.jsonl lists
them), scaled down by a stated factor only where one benchmark input set would not fit the
budget of kb/task.py (BUDGET); the listed cases are small and awkward (1, primes, sizes that are
no multiple of a warp), the ranges let leap-verify draw others, and bench_cpu is what the C
reference (the cpu backend's baseline) runs in tens of milliseconds.

KernelBench draws every input with torch.rand (uniform on [0, 1)). The tasks draw them from
leap's input patterns instead (each task.json names the patterns it allows): negative values,
zeros, tiny and large magnitudes exercise every branch of an operator, where [0, 1) would leave
ReLU an identity and a softmax nearly flat. Where an operator needs a domain (a log, a
division), the patterns are the positive ones; the prompt says so.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kb.task import Task  # noqa: E402

ACT = ["normal", "uniform", "small", "large", "sparse"]
RAND_NOTE = ("KernelBench draws the inputs from torch.rand (uniform on [0, 1)); here they are drawn from the "
             "patterns listed below, negative values included, so every branch of the operator is exercised.")


# ---------------------------------------------------------------------------------------------
# elementwise activations: (batch, dim) -> (batch, dim)

ELEMENTWISE = [
    # num, KernelBench file, short id, title, kind, params, torch name
    (19, "19_ReLU", "relu", "ReLU", "relu", {}, "torch.relu"),
    (20, "20_LeakyReLU", "leaky_relu", "LeakyReLU (slope 0.01)", "leaky_relu", {"slope": 0.01},
     "torch.nn.functional.leaky_relu(x, negative_slope=0.01)"),
    (21, "21_Sigmoid", "sigmoid", "Sigmoid", "sigmoid", {}, "torch.sigmoid"),
    (22, "22_Tanh", "tanh", "Tanh", "tanh", {}, "torch.tanh"),
    (25, "25_Swish", "swish", "Swish (x * sigmoid(x))", "swish", {}, "x * torch.sigmoid(x)"),
    (26, "26_GELU_", "gelu", "GELU (exact, erf)", "gelu", {}, "torch.nn.functional.gelu (exact, with erf)"),
    (27, "27_SELU_", "selu", "SELU", "selu", {}, "torch.selu"),
    (28, "28_HardSigmoid", "hardsigmoid", "HardSigmoid", "hardsigmoid", {}, "torch.nn.functional.hardsigmoid"),
    (29, "29_Softplus", "softplus", "Softplus", "softplus", {},
     "torch.nn.functional.softplus (beta 1, threshold 20)"),
    (30, "30_Softsign", "softsign", "Softsign", "softsign", {}, "x / (1 + torch.abs(x))"),
    (31, "31_ELU", "elu", "ELU (alpha 1.0)", "elu", {"alpha": 1.0}, "torch.nn.functional.elu(x, alpha=1.0)"),
    (32, "32_HardTanh", "hardtanh", "HardTanh [-1, 1]", "hardtanh", {"lo": -1.0, "hi": 1.0},
     "torch.nn.functional.hardtanh(x, min_val=-1., max_val=1.)"),
    (88, "88_MinGPTNewGelu", "mingpt_new_gelu", "GELU, tanh approximation (minGPT's NewGELU)", "gelu_tanh", {},
     "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))"),
]

EW_CASES = [{"batch": 1, "dim": 1}, {"batch": 7, "dim": 33}, {"batch": 3, "dim": 1000}, {"batch": 17, "dim": 4097}]
EW_RANGES = {"batch": [1, 17], "dim": [1, 4097]}


def elementwise():
    out = []
    for num, kb, short, title, kind, p, tname in ELEMENTWISE:
        t = Task(1, num, kb, short, title)
        batch, dim = t.int("batch", "dim")
        x = t.input("x", [batch, dim], dist=ACT)
        y = t.output(t.unary(kind, x, **p))
        from kb.ops import UNARY

        t.stmt = "Compute %s elementwise: y[i][j] = f(x[i][j]) with f(v) = %s." % (tname, UNARY[kind][3](p))
        t.notes.append(RAND_NOTE)
        big = {"batch": 8192, "dim": 8192} if num == 88 else {"batch": 4096, "dim": 393216}
        t.sizes(EW_CASES, big, {"batch": 64, "dim": 65536}, EW_RANGES)
        out.append(t)
    # 5: A * s with a float scalar
    t = Task(1, 5, "5_Matrix_scalar_multiplication", "matrix_scalar_mul", "Matrix-scalar multiplication")
    M, N = t.int("M", "N")
    A = t.input("A", [M, N], dist=ACT)
    s = t.float("s", 3.14)
    t.output(t.unary("mul_s", A, s=s), "C")
    t.stmt = "Multiply the matrix A by the scalar s: C[i][j] = A[i][j] * s (s = 3.14, as KernelBench passes it)."
    t.notes.append(RAND_NOTE)
    t.sizes([{"M": 1, "N": 1}, {"M": 7, "N": 33}, {"M": 3, "N": 1000}, {"M": 17, "N": 4097}],
            {"M": 65536, "N": 16384}, {"M": 1024, "N": 4096}, {"M": [1, 17], "N": [1, 4097]})
    out.append(t)
    # 12: diag(A) @ B written as A.unsqueeze(1) * B
    t = Task(1, 12, "12_Matmul_with_diagonal_matrices_", "diag_matmul", "Diagonal matrix times a matrix")
    N, M = t.int("N", "M")
    A = t.input("A", [N], dist=["normal", "uniform", "large"])
    B = t.input("B", [N, M], dist=["normal", "uniform", "sparse"])
    t.output(t.binary("mul", t.view(A, [N, 1], "%s.unsqueeze(1)"), B), "C")
    t.stmt = ("Multiply B on the left by the diagonal matrix diag(A), as KernelBench computes it "
              "(A.unsqueeze(1) * B, no matrix product): C[i][j] = A[i] * B[i][j].")
    t.notes.append(RAND_NOTE)
    t.sizes([{"N": 1, "M": 1}, {"N": 7, "M": 33}, {"N": 100, "M": 31}, {"N": 17, "M": 4097}],
            {"N": 4096, "M": 4096}, {"N": 2048, "M": 2048}, {"N": [1, 100], "M": [1, 4097]})
    out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# softmax and reductions over one axis

def softmaxes():
    out = []
    for num, kb, short, title, log in [(23, "23_Softmax", "softmax", "Softmax over rows", False),
                                       (24, "24_LogSoftmax", "log_softmax", "LogSoftmax over rows", True)]:
        t = Task(1, num, kb, short, title)
        batch, dim = t.int("batch", "dim")
        x = t.input("x", [batch, dim], dist=["logits", "normal", "uniform", "large"])
        t.output(t.softmax(x, [1], log=log))
        if log:
            t.stmt = ("Compute torch.log_softmax(x, dim=1): y[i][j] = x[i][j] - m_i - log(sum over k of "
                      "exp(x[i][k] - m_i)), m_i the maximum of row i (subtracting it keeps large inputs finite).")
        else:
            t.stmt = ("Compute torch.softmax(x, dim=1): y[i][j] = exp(x[i][j] - m_i) / sum over k of "
                      "exp(x[i][k] - m_i), m_i the maximum of row i (subtracting it keeps large inputs finite).")
        t.notes.append(RAND_NOTE)
        t.sizes([{"batch": 1, "dim": 2}, {"batch": 7, "dim": 33}, {"batch": 64, "dim": 1000},
                 {"batch": 3, "dim": 4097}], {"batch": 4096, "dim": 393216}, {"batch": 256, "dim": 16384},
                {"batch": [1, 64], "dim": [2, 4097]})
        out.append(t)
    return out


REDUCTIONS = [
    (47, "47_Sum_reduction_over_a_dimension", "sum_dim", "Sum over dimension 1 (keepdim)", "sum", True),
    (48, "48_Mean_reduction_over_a_dimension", "mean_dim", "Mean over dimension 1", "mean", False),
    (49, "49_Max_reduction_over_a_dimension", "max_dim", "Max over dimension 1", "max", False),
    (51, "51_Argmax_over_a_dimension", "argmax_dim", "Argmax over dimension 1", "argmax", False),
    (52, "52_Argmin_over_a_dimension", "argmin_dim", "Argmin over dimension 1", "argmin", False),
    (53, "53_Min_reduction_over_a_dimension", "min_dim", "Min over dimension 1", "min", False),
]

TORCH_REDUCE = {"sum": "torch.sum(x, dim=1, keepdim=True)", "mean": "torch.mean(x, dim=1)",
                "max": "torch.max(x, dim=1)[0]", "min": "torch.min(x, dim=1)[0]", "argmax": "torch.argmax(x, dim=1)",
                "argmin": "torch.argmin(x, dim=1)"}


def reductions():
    out = []
    for num, kb, short, title, kind, keep in REDUCTIONS:
        t = Task(1, num, kb, short, title)
        b, d1, d2 = t.int("batch", "dim1", "dim2")
        arg = kind.startswith("arg")
        x = t.input("x", [b, d1, d2], dist=["normal", "uniform", "large"] if arg else ACT)
        t.output(t.reduce(kind, x, [1], keepdim=keep))
        from kb.ops import REDUCE

        what = REDUCE[kind][4]
        t.stmt = "Compute %s: y[b][k] = %s of x[b][j][k] over j%s." % (
            TORCH_REDUCE[kind], what, " (an int64 index; among equal values the first)" if arg else "")
        t.notes.append(RAND_NOTE)
        lo = 2 if arg else 1
        t.sizes([{"batch": 2, "dim1": max(lo, 1), "dim2": 3}, {"batch": 3, "dim1": 33, "dim2": 7},
                 {"batch": 1, "dim1": 100, "dim2": 65}, {"batch": 5, "dim1": 17, "dim2": 1}],
                {"batch": 128, "dim1": 4096, "dim2": 4095}, {"batch": 16, "dim1": 1024, "dim2": 1023},
                {"batch": [1, 5], "dim1": [lo, 100], "dim2": [1, 65]})
        out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# normalisations

NCHW_CASES = [{"batch": 2, "features": 3, "dim1": 5, "dim2": 7}, {"batch": 1, "features": 4, "dim1": 16, "dim2": 17},
              {"batch": 3, "features": 2, "dim1": 1, "dim2": 33}, {"batch": 4, "features": 8, "dim1": 9, "dim2": 9}]
NCHW_RANGES = {"batch": [1, 4], "features": [1, 8], "dim1": [1, 17], "dim2": [2, 33]}
NORM_DIST = ["normal", "uniform", "small", "large"]
PARAM_DIST = ["normal", "uniform"]
BATCH_STATS = ("KernelBench's harness never calls model.eval(): the module is in training mode, so it normalises "
               "with the statistics of this batch (biased variance) and its running statistics, which it would update, "
               "are no output.")


def norms():
    out = []

    def nchw(t, big, cpu, cases=NCHW_CASES, ranges=NCHW_RANGES):
        t.sizes(cases, big, cpu, ranges)

    # 33: BatchNorm2d in training mode
    t = Task(1, 33, "33_BatchNorm", "batchnorm2d", "BatchNorm2d (training mode: batch statistics)")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    w = t.input("weight", [C], dist=PARAM_DIST, doc="nn.BatchNorm2d's weight")
    b = t.input("bias", [C], dist=PARAM_DIST, doc="its bias")
    t.output(t.batchnorm(x, w, b))
    t.stmt = ("Compute nn.BatchNorm2d(features)(x) in training mode (eps 1e-5): for each channel c, mean_c and "
              "var_c (biased) over every batch and position, y[n][c][h][w] = (x[n][c][h][w] - mean_c) / "
              "sqrt(var_c + 1e-5) * weight[c] + bias[c]. " + BATCH_STATS)
    t.notes.append("The module's weight and bias (ones and zeros when KernelBench builds it) are inputs here, drawn "
                   "like x. " + RAND_NOTE)
    nchw(t, {"batch": 64, "features": 64, "dim1": 512, "dim2": 512}, {"batch": 8, "features": 16, "dim1": 128, "dim2": 128})
    out.append(t)
    # 34: InstanceNorm2d (no affine by default)
    t = Task(1, 34, "34_InstanceNorm", "instancenorm2d", "InstanceNorm2d")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    t.output(t.instancenorm(x))
    t.stmt = ("Compute nn.InstanceNorm2d(features)(x) (no affine parameters, eps 1e-5): for each image n and "
              "channel c, mean and var (biased) over its dim1 x dim2 positions, y = (x - mean) / sqrt(var + 1e-5).")
    t.notes.append(RAND_NOTE)
    nchw(t, {"batch": 112, "features": 64, "dim1": 512, "dim2": 512},
         {"batch": 8, "features": 16, "dim1": 128, "dim2": 128})
    out.append(t)
    # 35: GroupNorm with 8 groups
    t = Task(1, 35, "35_GroupNorm_", "groupnorm", "GroupNorm (8 groups)")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    w = t.input("weight", [C], dist=PARAM_DIST, doc="nn.GroupNorm's weight")
    b = t.input("bias", [C], dist=PARAM_DIST, doc="its bias")
    t.output(t.groupnorm(x, 8, w, b))
    t.stmt = ("Compute nn.GroupNorm(num_groups=8, num_channels=features)(x) (eps 1e-5): the channels form 8 groups "
              "of features/8 consecutive channels; for each image n and group g, mean and var (biased) over the "
              "group's channels and positions, y[n][c][h][w] = (x[n][c][h][w] - mean) / sqrt(var + 1e-5) * "
              "weight[c] + bias[c]. features is a multiple of 8.")
    t.notes.append("The module's weight and bias are inputs here, drawn like x. " + RAND_NOTE)
    nchw(t, {"batch": 112, "features": 64, "dim1": 512, "dim2": 512}, {"batch": 4, "features": 32, "dim1": 128, "dim2": 128},
         [{"batch": 2, "features": 8, "dim1": 5, "dim2": 7}, {"batch": 1, "features": 16, "dim1": 16, "dim2": 17},
          {"batch": 3, "features": 8, "dim1": 1, "dim2": 33}, {"batch": 4, "features": 16, "dim1": 9, "dim2": 9}],
         {"batch": [1, 4], "features": {"range": [8, 16], "multiple_of": 8}, "dim1": [1, 17], "dim2": [1, 33]})
    out.append(t)
    # 36: RMSNorm over the channels
    t = Task(1, 36, "36_RMSNorm_", "rmsnorm", "RMS normalisation over the channel axis")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    t.output(t.statscale("rms", x, [1], eps=1e-5))
    t.stmt = ("Divide x by its root mean square over the channel axis (dim 1), as KernelBench's module computes it: "
              "rms[n][h][w] = sqrt(mean over c of x[n][c][h][w]^2 + 1e-5), y = x / rms.")
    t.notes.append(RAND_NOTE)
    nchw(t, {"batch": 112, "features": 64, "dim1": 512, "dim2": 512}, {"batch": 8, "features": 16, "dim1": 128, "dim2": 128})
    out.append(t)
    # 37: Frobenius norm of the whole tensor
    t = Task(1, 37, "37_FrobeniusNorm_", "frobenius_norm", "Division by the Frobenius norm")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    t.output(t.statscale("fro", x, [0, 1, 2, 3]))
    t.stmt = "Divide x by its Frobenius norm (torch.norm(x, p='fro'), over the whole tensor): y = x / sqrt(sum of x^2)."
    t.notes.append(RAND_NOTE)
    nchw(t, {"batch": 112, "features": 64, "dim1": 512, "dim2": 512}, {"batch": 8, "features": 16, "dim1": 128, "dim2": 128})
    out.append(t)
    # 38, 39: L1 and L2 normalisation of rows
    for num, kb, short, title, kind, words in [
            (38, "38_L1Norm_", "l1_norm", "L1 normalisation of rows", "l1",
             "Divide each row of x by the mean of its absolute values (dim 1): y[i][j] = x[i][j] / (mean over k of "
             "|x[i][k]|)."),
            (39, "39_L2Norm_", "l2_norm", "L2 normalisation of rows", "l2",
             "Divide each row of x by its Euclidean norm (torch.norm(x, p=2, dim=1)): y[i][j] = x[i][j] / sqrt(sum "
             "over k of x[i][k]^2).")]:
        t = Task(1, num, kb, short, title)
        batch, dim = t.int("batch", "dim")
        x = t.input("x", [batch, dim], dist=NORM_DIST)
        t.output(t.statscale(kind, x, [1]))
        t.stmt = words
        t.notes.append(RAND_NOTE)
        t.sizes([{"batch": 1, "dim": 2}, {"batch": 7, "dim": 33}, {"batch": 64, "dim": 1000}, {"batch": 3, "dim": 4097}],
                {"batch": 32768, "dim": 65535}, {"batch": 256, "dim": 16384}, {"batch": [1, 64], "dim": [2, 4097]})
        out.append(t)
    # 40: LayerNorm over (features, dim1, dim2)
    t = Task(1, 40, "40_LayerNorm", "layernorm", "LayerNorm over the last three axes")
    N, C, H, W = t.int("batch", "features", "dim1", "dim2")
    x = t.input("x", [N, C, H, W], dist=NORM_DIST)
    w = t.input("weight", [C, H, W], dist=PARAM_DIST, doc="nn.LayerNorm's elementwise weight")
    b = t.input("bias", [C, H, W], dist=PARAM_DIST, doc="its bias")
    t.output(t.layernorm(x, 3, w, b))
    t.stmt = ("Compute nn.LayerNorm((features, dim1, dim2))(x) (eps 1e-5): for each image n, mean and var (biased) "
              "over its features x dim1 x dim2 elements, y[n][c][h][w] = (x[n][c][h][w] - mean) / sqrt(var + 1e-5) * "
              "weight[c][h][w] + bias[c][h][w].")
    t.notes.append("The module's weight and bias are inputs here, drawn like x. " + RAND_NOTE)
    nchw(t, {"batch": 16, "features": 64, "dim1": 256, "dim2": 256}, {"batch": 4, "features": 16, "dim1": 128, "dim2": 128})
    out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# scans along dim 1 of (batch, 32768)

SCAN_CASES = [{"batch": 1, "len": 2}, {"batch": 7, "len": 33}, {"batch": 64, "len": 1000}, {"batch": 3, "len": 4097}]
SCAN_RANGES = {"batch": [1, 64], "len": [2, 4097]}


def scans():
    out = []
    specs = [
        (89, "89_cumsum", "cumsum", "Cumulative sum", {}, "torch.cumsum(%(x)s, dim=1)",
         "y[i][j] = x[i][0] + ... + x[i][j] (torch.cumsum(x, dim=1))."),
        (90, "90_cumprod", "cumprod", "Cumulative product", {"prod": True}, "torch.cumprod(%(x)s, dim=1)",
         "y[i][j] = x[i][0] * ... * x[i][j] (torch.cumprod(x, dim=1))."),
        (91, "91_cumsum_reverse", "cumsum_reverse", "Reverse cumulative sum", {"reverse": True},
         "torch.cumsum(%(x)s.flip(1), dim=1).flip(1)",
         "y[i][j] = x[i][j] + ... + x[i][len-1] (torch.cumsum(x.flip(1), dim=1).flip(1))."),
        (92, "92_cumsum_exclusive", "cumsum_exclusive", "Exclusive cumulative sum", {"exclusive": True},
         "torch.cat((torch.zeros_like(%(x)s[:, :1]), torch.cumsum(%(x)s[:, :-1], dim=1)), dim=1)",
         "y[i][0] = 0 and y[i][j] = x[i][0] + ... + x[i][j-1] (KernelBench: the cumsum of x without its last "
         "column, after a column of zeros)."),
        (93, "93_masked_cumsum", "masked_cumsum", "Masked cumulative sum", {"mask": True},
         "torch.cumsum(%(x)s * %(mask)s, dim=1)",
         "y[i][j] = sum over k <= j of x[i][k] * mask[i][k] (torch.cumsum(x * mask, dim=1)); mask holds 0 or 1 (a "
         "bool tensor in KernelBench, one byte an element here)."),
    ]
    for num, kb, short, title, kw, texpr, words in specs:
        t = Task(1, num, kb, short, title)
        batch, ln = t.int("batch", "len")
        if kw.get("prod"):
            x = t.input("x", [batch, ln], dist=["near_one"])
        else:
            x = t.input("x", [batch, ln], dist=["positive", "uniform"])
        if kw.get("mask"):
            kw = dict(kw, mask=t.input("mask", [batch, ln], dtype="uint8", rng=[0, 1]))
        t.output(t.scan(x, texpr, **kw))
        t.stmt = "Scan every row of x along dim 1: " + words
        if kw.get("prod"):
            t.notes.append("KernelBench draws x from torch.rand: a product of 32768 such values underflows to 0 "
                           "within a few hundred elements, so most of its output is zeros that a kernel need not "
                           "compute. Here x is drawn near 1 (1 + N(0, 1) x 1e-2), and every element of every row "
                           "is an informative product.")
        else:
            t.notes.append("KernelBench draws x from torch.rand (positive); here x is drawn positive (uniform on "
                           "[0.1, 10]) or uniform on [-1, 1].")
        t.sizes(SCAN_CASES, {"batch": 32768, "len": 32768}, {"batch": 256, "len": 16384}, SCAN_RANGES)
        out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# losses: one scalar

LOSS_NOTE = ("The output is one number, the mean over %s: at the benchmark size it averages about a billion terms "
             "and hardly depends on the inputs, so the listed and drawn cases (small sizes, every input pattern "
             "in turn) are where a wrong kernel shows.")


def losses():
    out = []
    for num, kb, short, title, kind, words, pd, td in [
            (94, "94_MSELoss", "mse_loss", "Mean squared error", "mse",
             "torch.mean((predictions - targets) ** 2), one number.", ACT, ACT),
            (96, "96_HuberLoss", "huber_loss", "Huber (smooth L1) loss", "huber",
             "torch.nn.functional.smooth_l1_loss(predictions, targets) (beta 1, mean): the mean over elements of "
             "0.5 d^2 where |d| < 1, else |d| - 0.5, d = predictions - targets; one number.", ACT, ACT),
            (98, "98_KLDivLoss", "kl_div_loss", "KL divergence (batchmean)", "kl",
             "torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean'): the sum over every "
             "element of targets * (log(targets) - log(predictions)), divided by the batch size; one number. Both "
             "inputs are positive.", ["positive"], ["positive"]),
            (100, "100_HingeLoss", "hinge_loss", "Hinge loss", "hinge",
             "torch.mean(torch.clamp(1 - predictions * targets, min=0)) where targets (one value per column) "
             "broadcasts along the last axis: the mean over i, j of max(0, 1 - predictions[i][j] * targets[j]); one "
             "number.", ACT, ["normal", "uniform"])]:
        t = Task(1, num, kb, short, title)
        batch, dim = t.int("batch", "dim")
        p = t.input("predictions", [batch, dim], dist=pd)
        tg = t.input("targets", [dim] if kind == "hinge" else [batch, dim], dist=td)
        t.output(t.elem_loss(kind, p, tg))
        t.stmt = "Compute " + words
        if kind == "hinge":
            t.notes.append("KernelBench's targets are batch_size values of +1 or -1 multiplying a batch_size x "
                           "batch_size matrix, so they broadcast along the columns; here they have one value per "
                           "column (dim of them) and take any value.")
        elif kind == "kl":
            t.notes.append("KernelBench passes rows that are softmaxes (each sums to 1); here they are positive "
                           "values that need not sum to 1, and the formula above is what torch computes for them.")
        else:
            t.notes.append("KernelBench scales predictions by a random factor; here both inputs take every pattern.")
        t.notes.append(LOSS_NOTE % "the elements" if kind != "kl" else LOSS_NOTE % "the rows")
        big = {"batch": 16384, "dim": 16384} if num == 98 else {"batch": 32768, "dim": 32768}
        t.sizes([{"batch": 1, "dim": 1}, {"batch": 7, "dim": 33}, {"batch": 64, "dim": 1000}, {"batch": 3, "dim": 4097}],
                big, {"batch": 256, "dim": 16384}, {"batch": [1, 64], "dim": [1, 4097]})
        out.append(t)
    # 95: cross entropy with int64 labels
    t = Task(1, 95, "95_CrossEntropyLoss", "cross_entropy_loss", "Cross-entropy loss")
    batch, classes = t.int("batch", "num_classes")
    x = t.input("predictions", [batch, classes], dist=["logits", "normal", "large"])
    lab = t.input("targets", [batch], dtype="int64", rng=[0, 32], doc="int64 class indices")
    t.output(t.row_loss("ce", [x, lab]))
    t.stmt = ("Compute torch.nn.functional.cross_entropy(predictions, targets): the mean over rows i of "
              "log(sum over j of exp(predictions[i][j])) - predictions[i][targets[i]]; one number. Compute the "
              "log-sum-exp stably (the inputs may be large).")
    t.notes.append("targets are int64 class indices, drawn here from 0 to 32 (every case has at least 33 classes) so "
                   "that a drawn case never holds an index past its num_classes; KernelBench draws them from all "
                   "4096 classes, which a kernel must handle the same way.")
    t.notes.append(LOSS_NOTE % "the rows")
    t.sizes([{"batch": 1, "num_classes": 33}, {"batch": 7, "num_classes": 100}, {"batch": 64, "num_classes": 1000},
             {"batch": 3, "num_classes": 4097}], {"batch": 32768, "num_classes": 4096},
            {"batch": 1024, "num_classes": 4096}, {"batch": [1, 64], "num_classes": [33, 4097]})
    out.append(t)
    # 99: triplet margin loss
    t = Task(1, 99, "99_TripletMarginLoss", "triplet_margin_loss", "Triplet margin loss")
    batch, dim = t.int("batch", "dim")
    a = t.input("anchor", [batch, dim], dist=["normal", "uniform"])
    pp = t.input("positive", [batch, dim], dist=["normal", "uniform"])
    n = t.input("negative", [batch, dim], dist=["normal", "uniform"])
    t.output(t.row_loss("triplet", [a, pp, n]))
    t.stmt = ("Compute torch.nn.TripletMarginLoss(margin=1.0)(anchor, positive, negative): the mean over rows i of "
              "max(d(anchor_i, positive_i) - d(anchor_i, negative_i) + 1, 0), d(u, v) = sqrt(sum over j of "
              "(u[j] - v[j] + 1e-6)^2) (torch's pairwise distance adds its eps 1e-6 to each difference); one number.")
    t.notes.append(LOSS_NOTE % "the rows")
    t.sizes([{"batch": 1, "dim": 1}, {"batch": 7, "dim": 33}, {"batch": 64, "dim": 1000}, {"batch": 3, "dim": 4097}],
            {"batch": 32768, "dim": 8192}, {"batch": 256, "dim": 16384}, {"batch": [1, 64], "dim": [1, 4097]})
    out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# pooling

def pools():
    out = []
    specs = [
        # num, kb, short, title, kind, nd, k, s, p, d, shape names, bench, cpu, cases (spatial), ranges (spatial)
        (41, "41_Max_Pooling_1D", "maxpool1d", "MaxPool1d (kernel 8, stride 1, padding 4, dilation 3)", "max", 1,
         (8,), 1, 4, 3, ["batch", "features", "sequence_length"], [64, 192, 65536], [8, 32, 8192],
         [[14], [33], [100], [1000]], [[14, 1000]]),
        (42, "42_Max_Pooling_2D", "maxpool2d", "MaxPool2d (kernel 4, stride 1, padding 1)", "max", 2, (4, 4), 1, 1, 1,
         ["batch", "channels", "height", "width"], [32, 64, 512, 512], [4, 16, 256, 256],
         [[2, 3], [5, 7], [17, 16], [33, 9]], [[2, 33], [2, 16]]),
        (43, "43_Max_Pooling_3D", "maxpool3d", "MaxPool3d (kernel 3, stride 2, padding 1, dilation 3)", "max", 3,
         (3, 3, 3), 2, 1, 3, ["batch", "channels", "dim1", "dim2", "dim3"], [16, 32, 128, 128, 128],
         [2, 8, 64, 64, 64], [[5, 5, 5], [6, 9, 7], [12, 8, 13], [17, 6, 5]], [[5, 17], [5, 9], [5, 13]]),
        (44, "44_Average_Pooling_1D", "avgpool1d", "AvgPool1d (kernel 8, stride 1, padding 4)", "avg", 1, (8,), 1, 4, 1,
         ["batch", "in_channels", "input_length"], [64, 128, 65536], [8, 32, 8192], [[1], [33], [100], [1000]],
         [[1, 1000]]),
        (45, "45_Average_Pooling_2D", "avgpool2d", "AvgPool2d (kernel 11, stride 11)", "avg", 2, (11, 11), 11, 0, 1,
         ["batch", "channels", "height", "width"], [8, 64, 2048, 2048], [2, 16, 512, 512],
         [[11, 11], [23, 12], [40, 33], [11, 57]], [[11, 40], [11, 57]]),
        (46, "46_Average_Pooling_3D", "avgpool3d", "AvgPool3d (kernel 3, stride 2, padding 1)", "avg", 3, (3, 3, 3), 2,
         1, 1, ["batch", "channels", "depth", "height", "width"], [16, 32, 128, 128, 256], [2, 8, 64, 64, 64],
         [[3, 3, 4], [6, 9, 7], [12, 8, 13], [17, 6, 5]], [[3, 17], [3, 9], [3, 13]]),
    ]
    for num, kb, short, title, kind, nd, k, st, pd, dl, names, big, cpu, cases, rng in specs:
        t = Task(1, num, kb, short, title)
        dims = t.int(*names)
        x = t.input("x", dims, dist=ACT)
        t.output(t.pool(kind, x, k, st, pd, dl))
        words = ("the maximum of its window (padding never wins)" if kind == "max" else
                 "the mean of its window, padding counted as zeros in a divisor of %d (count_include_pad)" % (
                     k[0] ** nd))
        t.stmt = ("Compute nn.%sPool%dd(kernel_size=%d, stride=%d, padding=%d%s)(x) over the last %d ax%s: each "
                  "output element is %s; output length per axis floor((L + 2*%d - %d*(%d - 1) - 1) / %d) + 1." % (
                      "Max" if kind == "max" else "Avg", nd, k[0], st, pd, ", dilation=%d" % dl if kind == "max" else "",
                      nd, "is" if nd == 1 else "es", words, pd, dl, k[0], st))
        t.notes.append(RAND_NOTE)
        if num == 45:
            t.scale = ("The benchmark batch is KernelBench's 16 halved to 8: at 16, x alone is 16 GiB, past the budget "
                       "of one benchmark input set (16 GiB with the output) on one H200.")
            t.notes.append("The benchmark case is KernelBench's with the batch halved (16 to 8), to fit one H200.")
        lead = [{"%s" % names[0]: 2, names[1]: 3}, {names[0]: 1, names[1]: 4}, {names[0]: 3, names[1]: 2},
                {names[0]: 2, names[1]: 5}]
        cs = []
        for c, sp in zip(lead, cases):
            c = dict(c)
            for a in range(nd):
                c[names[2 + a]] = sp[a]
            cs.append(c)
        ranges = {names[0]: [1, 3], names[1]: [2, 5]}
        for a in range(nd):
            ranges[names[2 + a]] = rng[a]
        t.sizes(cs, dict(zip(names, big)), dict(zip(names, cpu)), ranges)
        out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# matrix products

GEMM_DIST = ["normal", "uniform"]
FP32_NOTE = ("Precision fp32: on these zero-mean inputs a product on TF32 tensor cores misses KernelBench's fp32 "
             "tolerance (1e-4); KernelBench's torch.rand inputs, all positive, would hide that.")


def gemms():
    out = []

    def mk(num, kb, short, title, stmt, names, shapes, build, cases, big, cpu, ranges, extra=None):
        t = Task(1, num, kb, short, title)
        r = t.int(*names)
        ds = dict(zip(names, r if isinstance(r, list) else [r]))
        ins = [t.input(n, [ds[d] for d in sh], dist=GEMM_DIST) for n, sh in shapes]
        t.output(build(t, ds, *ins), "C")
        t.stmt = stmt
        t.notes.append(FP32_NOTE)
        if extra:
            t.notes.append(extra)
        t.notes.append(RAND_NOTE)
        t.sizes(cases, big, cpu, ranges)
        out.append(t)

    mk(1, "1_Square_matrix_multiplication_", "square_matmul", "Square matrix multiplication",
       "Multiply two N x N matrices: C = A B, C[i][j] = sum over k of A[i][k] * B[k][j] (torch.matmul).",
       ["N"], [("A", ["N", "N"]), ("B", ["N", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["N"]], [d["N"]], [d["N"]]),
       [{"N": 1}, {"N": 17}, {"N": 64}, {"N": 130}], {"N": 4096}, {"N": 256}, {"N": [1, 130]})
    mk(2, "2_Standard_matrix_multiplication_", "matmul", "Matrix multiplication",
       "Multiply A (M x K) by B (K x N): C[i][j] = sum over k of A[i][k] * B[k][j] (torch.matmul).",
       ["M", "K", "N"], [("A", ["M", "K"]), ("B", ["K", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["N"]], [d["K"]]),
       [{"M": 1, "K": 1, "N": 1}, {"M": 7, "K": 33, "N": 5}, {"M": 64, "K": 100, "N": 70}, {"M": 33, "K": 257, "N": 17}],
       {"M": 2048, "K": 8192, "N": 4096}, {"M": 256, "K": 256, "N": 256},
       {"M": [1, 64], "K": [1, 257], "N": [1, 70]})
    mk(3, "3_Batched_matrix_multiplication", "bmm", "Batched matrix multiplication",
       "Multiply each of batch_size pairs: C[b] = A[b] B[b], A[b] m x k, B[b] k x n (torch.bmm).",
       ["batch_size", "m", "k", "n"], [("A", ["batch_size", "m", "k"]), ("B", ["batch_size", "k", "n"])],
       lambda t, d, A, B: t.matmul(A, B, [d["m"]], [d["n"]], [d["k"]], batch=[d["batch_size"]]),
       [{"batch_size": 1, "m": 1, "k": 1, "n": 1}, {"batch_size": 3, "m": 7, "k": 33, "n": 5},
        {"batch_size": 2, "m": 64, "k": 100, "n": 70}, {"batch_size": 5, "m": 33, "k": 65, "n": 17}],
       {"batch_size": 128, "m": 512, "k": 1024, "n": 2048}, {"batch_size": 8, "m": 128, "k": 128, "n": 128},
       {"batch_size": [1, 5], "m": [1, 64], "k": [1, 100], "n": [1, 70]})
    mk(4, "4_Matrix_vector_multiplication_", "matvec", "Matrix-vector multiplication",
       "Multiply the M x K matrix A by the K x 1 column B: C[i] = sum over k of A[i][k] * B[k] (torch.matmul).",
       ["M", "K"], [("A", ["M", "K"]), ("B", ["K"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [1], [d["K"]], out_shape=[d["M"], 1]),
       [{"M": 1, "K": 1}, {"M": 7, "K": 33}, {"M": 64, "K": 1000}, {"M": 3, "K": 4097}],
       {"M": 2048, "K": 1048576}, {"M": 256, "K": 65536}, {"M": [1, 64], "K": [1, 4097]},
       "B is given as its K values (KernelBench's K x 1 tensor), C as M values (its M x 1 result). The benchmark's A "
       "holds 2^31 elements: index it with 64-bit integers.")
    mk(6, "6_Matmul_with_large_K_dimension_", "matmul_large_k", "Matrix multiplication, large K",
       "Multiply A (M x K) by B (K x N), K much larger than M and N: C[i][j] = sum over k of A[i][k] * B[k][j].",
       ["M", "N", "K"], [("A", ["M", "K"]), ("B", ["K", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["N"]], [d["K"]]),
       [{"M": 1, "N": 1, "K": 1}, {"M": 7, "N": 5, "K": 1000}, {"M": 16, "N": 17, "K": 2049},
        {"M": 3, "N": 2, "K": 4097}], {"M": 256, "N": 256, "K": 524288}, {"M": 64, "N": 64, "K": 16384},
       {"M": [1, 16], "N": [1, 17], "K": [1, 4097]})
    mk(7, "7_Matmul_with_small_K_dimension_", "matmul_small_k", "Matrix multiplication, small K",
       "Multiply A (M x K) by B (K x N), K small: C[i][j] = sum over k of A[i][k] * B[k][j].",
       ["M", "N", "K"], [("A", ["M", "K"]), ("B", ["K", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["N"]], [d["K"]]),
       [{"M": 1, "N": 1, "K": 1}, {"M": 33, "N": 70, "K": 64}, {"M": 100, "N": 129, "K": 7},
        {"M": 257, "N": 33, "K": 32}], {"M": 32768, "N": 32768, "K": 64}, {"M": 1024, "N": 1024, "K": 64},
       {"M": [1, 257], "N": [1, 129], "K": [1, 64]})
    mk(8, "8_Matmul_with_irregular_shapes_", "matmul_irregular", "Matrix multiplication, irregular shapes",
       "Multiply A (M x K) by B (K x N): C[i][j] = sum over k of A[i][k] * B[k][j] (sizes that are no multiple of "
       "any tile).", ["M", "K", "N"], [("A", ["M", "K"]), ("B", ["K", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["N"]], [d["K"]]),
       [{"M": 1, "K": 1, "N": 1}, {"M": 13, "K": 29, "N": 5}, {"M": 61, "K": 103, "N": 71},
        {"M": 41, "K": 257, "N": 19}], {"M": 8205, "K": 2949, "N": 5921}, {"M": 257, "K": 251, "N": 263},
       {"M": [1, 61], "K": [1, 257], "N": [1, 71]})
    mk(9, "9_Tall_skinny_matrix_multiplication_", "tall_skinny_matmul", "Tall-skinny matrix multiplication",
       "Multiply the tall A (M x N) by the wide B (N x M), N small: C (M x M), C[i][j] = sum over k < N of "
       "A[i][k] * B[k][j].", ["M", "N"], [("A", ["M", "N"]), ("B", ["N", "M"])],
       lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["M"]], [d["N"]]),
       [{"M": 1, "N": 1}, {"M": 33, "N": 7}, {"M": 100, "N": 32}, {"M": 257, "N": 16}], {"M": 32768, "N": 32},
       {"M": 1024, "N": 32}, {"M": [1, 257], "N": [1, 32]})
    mk(10, "10_3D_tensor_matrix_multiplication", "tensor3d_matmul", "3-D tensor times a matrix",
       "Multiply every N x M slice... precisely: C[n][m][l] = sum over k of A[n][m][k] * B[k][l] (torch.matmul of "
       "an N x M x K tensor and a K x L matrix).", ["N", "M", "K", "L"], [("A", ["N", "M", "K"]), ("B", ["K", "L"])],
       lambda t, d, A, B: t.matmul(A, B, [d["N"], d["M"]], [d["L"]], [d["K"]], out_shape=[d["N"], d["M"], d["L"]]),
       [{"N": 1, "M": 1, "K": 1, "L": 1}, {"N": 3, "M": 7, "K": 33, "L": 5}, {"N": 2, "M": 64, "K": 100, "L": 70},
        {"N": 4, "M": 17, "K": 65, "L": 33}], {"N": 16, "M": 1024, "K": 2048, "L": 768},
       {"N": 4, "M": 128, "K": 256, "L": 128}, {"N": [1, 4], "M": [1, 64], "K": [1, 100], "L": [1, 70]})
    mk(11, "11_4D_tensor_matrix_multiplication", "tensor4d_matmul", "4-D tensor times a matrix (einsum)",
       "Compute torch.einsum(\"bijl,lk->bijk\", A, B): C[b][i][j][k] = sum over l of A[b][i][j][l] * B[l][k].",
       ["b", "i", "j", "l", "k"], [("A", ["b", "i", "j", "l"]), ("B", ["l", "k"])],
       lambda t, d, A, B: t.matmul(A, B, [d["b"], d["i"], d["j"]], [d["k"]], [d["l"]],
                                   out_shape=[d["b"], d["i"], d["j"], d["k"]]),
       [{"b": 1, "i": 1, "j": 1, "l": 1, "k": 1}, {"b": 2, "i": 3, "j": 5, "l": 33, "k": 7},
        {"b": 1, "i": 8, "j": 9, "l": 100, "k": 70}, {"b": 3, "i": 2, "j": 17, "l": 65, "k": 33}],
       {"b": 8, "i": 256, "j": 512, "l": 256, "k": 768}, {"b": 2, "i": 32, "j": 64, "l": 256, "k": 128},
       {"b": [1, 3], "i": [1, 8], "j": [1, 17], "l": [1, 100], "k": [1, 70]})
    mk(13, "13_Matmul_for_symmetric_matrices", "symmetric_matmul", "Product of symmetric matrices",
       "Multiply two symmetric N x N matrices: C = A B. A and B are given by their lower triangles: element "
       "(i, j) of A is A[i][j] for j <= i and A[j][i] above the diagonal (likewise B); the entries above the "
       "diagonal of the inputs are not part of the matrices and must not be read as such.",
       ["N"], [("A", ["N", "N"]), ("B", ["N", "N"])],
       lambda t, d, A, B: t.matmul(A, B, [d["N"]], [d["N"]], [d["N"]], sym=True),
       [{"N": 1}, {"N": 17}, {"N": 64}, {"N": 130}], {"N": 4096}, {"N": 256}, {"N": [1, 130]},
       "KernelBench passes symmetric matrices ((X + X^T) / 2); the harness here draws every entry, so the task "
       "names the lower triangles as the data, which is the same product for KernelBench's inputs. The baseline "
       "mirrors them (a copy of 2 N^2 elements, 1% of the product at N = 4096) and calls SGEMM, as eager would on "
       "the full matrices.")
    for num, kb, short, title, tri in [(14, "14_Matmul_for_upper_triangular_matrices", "upper_triangular_matmul",
                                        "Product of upper triangular matrices", "upper"),
                                       (15, "15_Matmul_for_lower_triangular_matrices", "lower_triangular_matmul",
                                        "Product of lower triangular matrices", "lower")]:
        nm = "N" if tri == "upper" else "M"
        word = "below" if tri == "upper" else "above"
        mk(num, kb, short, title,
           "Multiply two %s triangular %s x %s matrices and keep the %s triangle of the product: C = torch.%s(A B). "
           "The entries %s the diagonal of A and B are zeros of the matrices; the harness fills them with other "
           "values, which must not be read as part of the matrices. C's entries %s the diagonal are 0." % (
               tri, nm, nm, tri, "triu" if tri == "upper" else "tril", word, word),
           [nm], [("A", [nm, nm]), ("B", [nm, nm])],
           (lambda tri_: lambda t, d, A, B: t.matmul(A, B, list(d.values()), list(d.values()), list(d.values()),
                                                     tri=tri_))(tri),
           [{nm: 1}, {nm: 17}, {nm: 64}, {nm: 130}], {nm: 4096}, {nm: 256}, {nm: [1, 130]},
           "KernelBench passes matrices with zeros there; the baseline zeroes copies of them, calls SGEMM and then "
           "torch.%s, as eager would." % ("triu" if tri == "upper" else "tril"))
    for num, kb, short, title, ta, tb in [(16, "16_Matmul_with_transposed_A", "matmul_transposed_a",
                                           "Matrix multiplication, A transposed", True, False),
                                          (17, "17_Matmul_with_transposed_B", "matmul_transposed_b",
                                           "Matrix multiplication, B transposed", False, True),
                                          (18, "18_Matmul_with_transposed_both", "matmul_transposed_both",
                                           "Matrix multiplication, both transposed", True, True)]:
        a_sh = ["K", "M"] if ta else ["M", "K"]
        b_sh = ["N", "K"] if tb else ["K", "N"]
        aw = "A[k][i]" if ta else "A[i][k]"
        bw = "B[j][k]" if tb else "B[k][j]"
        mk(num, kb, short, title,
           "Compute torch.matmul(%s, %s) with A stored %s x %s and B stored %s x %s: C[i][j] = sum over k of %s * %s "
           "(C is M x N)." % ("A.T" if ta else "A", "B.T" if tb else "B", a_sh[0], a_sh[1], b_sh[0], b_sh[1], aw, bw),
           ["M", "K", "N"], [("A", a_sh), ("B", b_sh)],
           (lambda ta_, tb_: lambda t, d, A, B: t.matmul(A, B, [d["M"]], [d["N"]], [d["K"]], ta=ta_, tb=tb_))(ta, tb),
           [{"M": 1, "K": 1, "N": 1}, {"M": 7, "K": 33, "N": 5}, {"M": 64, "K": 100, "N": 70},
            {"M": 33, "K": 257, "N": 17}], {"M": 2048, "K": 8192, "N": 4096}, {"M": 256, "K": 256, "N": 256},
           {"M": [1, 64], "K": [1, 257], "N": [1, 70]})
    return out


# ---------------------------------------------------------------------------------------------
# convolutions

# num, KernelBench file, short id, transposed, kernel, stride, padding, dilation, output padding, groups ("dw":
# depthwise), bias, spatial names, (batch, in, out, spatial...) of the benchmark
CONVS = [
    (50, "50_conv_standard_2D__square_input__square_kernel", "conv2d_alexnet_stem", False, (11, 11), 4, 2, 1, 0, 1,
     True, ["height", "width"], (256, 3, 96, 224, 224)),
    (54, "54_conv_standard_3D__square_input__square_kernel", "conv3d_square", False, (3, 3, 3), 1, 0, 1, 0, 1, False,
     ["depth", "width", "height"], (16, 3, 64, 64, 64, 64)),
    (55, "55_conv_standard_2D__asymmetric_input__square_kernel", "conv2d_asym_input", False, (3, 3), 1, 0, 1, 0, 1,
     False, ["height", "width"], (8, 64, 128, 512, 1024)),
    (56, "56_conv_standard_2D__asymmetric_input__asymmetric_kernel", "conv2d_asym_kernel", False, (5, 7), 1, 0, 1, 0,
     1, False, ["height", "width"], (8, 64, 128, 512, 256)),
    (57, "57_conv_transposed_2D__square_input__square_kernel", "conv_transpose2d_square", True, (3, 3), 1, 0, 1, 0, 1,
     False, ["height", "width"], (8, 64, 64, 1024, 1024)),
    (58, "58_conv_transposed_3D__asymmetric_input__asymmetric_kernel", "conv_transpose3d_asym", True, (3, 5, 7), 1, 0,
     1, 0, 1, False, ["depth_in", "height_in", "width_in"], (16, 32, 16, 16, 32, 64)),
    (59, "59_conv_standard_3D__asymmetric_input__square_kernel", "conv3d_asym_input", False, (3, 3, 1), 1, 0, 1, 0, 1,
     False, ["height", "width", "depth"], (16, 3, 64, 256, 256, 10)),
    (60, "60_conv_standard_3D__square_input__asymmetric_kernel", "conv3d_asym_kernel", False, (3, 5, 7), 1, 0, 1, 0,
     1, False, ["width", "height", "depth"], (16, 3, 64, 64, 64, 64)),
    (61, "61_conv_transposed_3D__square_input__square_kernel", "conv_transpose3d_square", True, (3, 3, 3), 1, 0, 1,
     0, 1, False, ["depth", "height", "width"], (8, 48, 48, 64, 64, 64)),
    (62, "62_conv_standard_2D__square_input__asymmetric_kernel", "conv2d_kernel_5x9", False, (5, 9), 1, 0, 1, 0, 1,
     False, ["height", "width"], (8, 32, 64, 512, 512)),
    (63, "63_conv_standard_2D__square_input__square_kernel", "conv2d_square", False, (3, 3), 1, 0, 1, 0, 1, False,
     ["height", "width"], (16, 16, 128, 1024, 1024)),
    (64, "64_conv_transposed_1D", "conv_transpose1d", True, (3,), 1, 0, 1, 0, 1, False, ["length"],
     (64, 128, 128, 65536)),
    (65, "65_conv_transposed_2D__square_input__asymmetric_kernel", "conv_transpose2d_kernel_3x7", True, (3, 7), 1, 0,
     1, 0, 1, False, ["height", "width"], (8, 64, 64, 512, 512)),
    (66, "66_conv_standard_3D__asymmetric_input__asymmetric_kernel", "conv3d_asym", False, (3, 5, 7), 1, 0, 1, 0, 1,
     False, ["depth", "height", "width"], (8, 3, 64, 16, 128, 128)),
    (67, "67_conv_standard_1D", "conv1d", False, (3,), 1, 0, 1, 0, 1, False, ["length"], (32, 64, 128, 131072)),
    (68, "68_conv_transposed_3D__square_input__asymmetric_kernel", "conv_transpose3d_kernel_3x5x5", True, (3, 5, 5),
     1, 0, 1, 0, 1, False, ["depth", "width", "height"], (16, 32, 64, 64, 64, 64)),
    (69, "69_conv_transposed_2D__asymmetric_input__asymmetric_kernel", "conv_transpose2d_asym", True, (3, 5), 1, 0, 1,
     0, 1, False, ["height_in", "width_in"], (64, 64, 128, 128, 256)),
    (70, "70_conv_transposed_3D__asymmetric_input__square_kernel", "conv_transpose3d_96", True, (3, 3, 3), 1, 0, 1, 0,
     1, False, ["depth", "height", "width"], (8, 48, 24, 96, 96, 96)),
    (71, "71_conv_transposed_2D__asymmetric_input__square_kernel", "conv_transpose2d_asym_input", True, (3, 3), 1, 0,
     1, 0, 1, False, ["height_in", "width_in"], (8, 32, 32, 512, 1024)),
    (72, "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_",
     "conv_transpose3d_strided_padded_grouped", True, (3, 5, 7), (2, 2, 2), (1, 2, 3), 1, (1, 1, 1), 4, False,
     ["depth", "height", "width"], (8, 32, 32, 12, 24, 48)),
    # 73's groups is 1, not its file's 4: GROUPS_UNUSED below
    (73, "73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped",
     "conv_transpose3d_strided_grouped", True, (3, 3, 3), 2, 1, 1, 0, 1, False, ["depth", "height", "width"],
     (4, 32, 32, 32, 64, 128)),
    (74, "74_conv_transposed_1D_dilated", "conv_transpose1d_dilated", True, (5,), 1, 0, 3, 0, 1, False, ["length"],
     (32, 32, 64, 131072)),
    (75, "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__",
     "conv_transpose2d_strided_grouped_dilated", True, (3, 5), (2, 3), (1, 2), (2, 1), 0, 4, False,
     ["height", "width"], (16, 32, 64, 128, 256)),
    (76, "76_conv_standard_1D_dilated_strided__", "conv1d_dilated_strided", False, (3,), 3, 0, 4, 0, 1, False,
     ["length"], (64, 64, 128, 524280)),
    (77, "77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__",
     "conv_transpose3d_padded_dilated_strided", True, (3, 3, 3), 2, 1, 2, 0, 1, False, ["depth", "height", "width"],
     (16, 32, 64, 16, 32, 32)),
    (78, "78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__", "conv_transpose2d_padded", True,
     (3, 7), 1, (1, 3), 1, 0, 1, False, ["height", "width"], (8, 32, 32, 512, 1024)),
    (79, "79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__",
     "conv_transpose1d_padded_strided_dilated", True, (3,), 2, 1, 2, 0, 1, False, ["length"], (16, 32, 64, 131072)),
    (80, "80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__", "conv2d_dilated_padded", False,
     (5, 9), 1, (2, 4), (2, 3), 0, 1, False, ["height", "width"], (8, 32, 64, 512, 512)),
    (81, "81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__",
     "conv_transpose2d_dilated_padded_strided", True, (3, 3), 5, 1, 2, 0, 1, False, ["height_in", "width_in"],
     (16, 32, 64, 64, 128)),
    (82, "82_conv_depthwise_2D_square_input_square_kernel", "depthwise_conv2d", False, (3, 3), 1, 0, 1, 0, "dw",
     False, ["height", "width"], (16, 64, 64, 512, 512)),
    (83, "83_conv_depthwise_2D_square_input_asymmetric_kernel", "depthwise_conv2d_kernel_3x1", False, (3, 1), 1, 0, 1,
     0, "dw", False, ["height", "width"], (64, 8, 8, 512, 512)),
    (84, "84_conv_depthwise_2D_asymmetric_input_square_kernel", "depthwise_conv2d_asym_input", False, (3, 3), 1, 0,
     1, 0, "dw", False, ["height_in", "width_in"], (64, 128, 128, 256, 512)),
    (85, "85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel", "depthwise_conv2d_kernel_3x7", False, (3, 7), 1,
     0, 1, 0, "dw", False, ["height", "width"], (32, 128, 128, 128, 256)),
    (87, "87_conv_pointwise_2D", "pointwise_conv2d", False, (1, 1), 1, 0, 1, 0, 1, False, ["height", "width"],
     (16, 64, 128, 1024, 1024)),
]


# Problems whose file names groups that its module never passes on: 73's get_init_inputs() returns
# [in, out, k, stride, padding, groups], whose sixth lands on __init__'s output_padding, which the
# module drops, so KernelBench runs groups=1 (and no output padding). Published numbers are on what
# it runs, so the task is that; its id keeps the file's name, and this says why.
GROUPS_UNUSED = {
    73: ("KernelBench's file names it grouped (groups = 4), but its get_init_inputs() passes groups as the "
         "sixth argument of Model.__init__, which is output_padding, and the module passes neither to "
         "nn.ConvTranspose3d: KernelBench runs groups = 1 and no output padding, and so does this task."),
}


def _tup(v, nd):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def _conv_out(L, k, s, p, d, op, tr):
    if tr:
        return (L - 1) * s - 2 * p + d * (k - 1) + op + 1
    return (L + 2 * p - d * (k - 1) - 1) // s + 1


def _conv_flops(c, nd, k, s, p, d, op, tr, g):
    n, ci, co = c[0], c[1], c[2]
    sp = c[3:]
    kv = 1
    for kk in k:
        kv *= kk
    out = 1
    for a in range(nd):
        out *= _conv_out(sp[a], k[a], s[a], p[a], d[a], op[a], tr)
    per = 1 if g == "dw" else (co if tr else ci) // g
    if tr:
        inn = 1
        for v in sp:
            inn *= v
        return 2 * n * ci * inn * per * kv
    return 2 * n * co * out * per * kv


def convs():
    out = []
    for num, kb, short, tr, k, st, pd, dl, op, g, bias, sp_names, big in CONVS:
        nd = len(k)
        s, p, d, opd = _tup(st, nd), _tup(pd, nd), _tup(dl, nd), _tup(op, nd)
        title = "%s%dd %s" % ("ConvTranspose" if tr else "Conv", nd, "x".join(map(str, k)))
        if g == "dw":
            title = "Depthwise " + title
        t = Task(1, num, kb, short, title)
        dw = g == "dw"
        if dw:
            names = ["batch_size", "in_channels"] + sp_names
        else:
            names = ["batch_size", "in_channels", "out_channels"] + sp_names
        ds = t.int(*names)
        N, cin = ds[0], ds[1]
        cout = cin if dw else ds[2]
        sps = ds[1 + (1 if dw else 2):]
        x = t.input("x", [N, cin] + sps, dist=["normal", "uniform"])
        if dw:
            wshape = [cin, 1] + list(k)
        elif tr:
            wshape = [cin, cout if g == 1 else t.dim("out_per_group", "out_channels / %d" % g)] + list(k)
        else:
            wshape = [cout, cin if g == 1 else t.dim("in_per_group", "in_channels / %d" % g)] + list(k)
        w = t.input("weight", wshape, dist=["normal", "uniform"], doc="the module's weight")
        b = t.input("bias", [cout], dist=["normal", "uniform"], doc="its bias") if bias else None
        groups = "in_channels" if dw else g
        t.output(t.conv(x, w, b, cout, k, s, p, d, opd, groups, transposed=tr,
                        names={a: n[:-3] + "_out" if n.endswith("_in") else n + "_out"
                               for a, n in enumerate(sp_names)}))
        mod = "nn.ConvTranspose%dd" % nd if tr else "nn.Conv%dd" % nd
        args = ["kernel_size=%s" % ((k if len(set(k)) > 1 else k[0]),)]
        if set(s) != {1}:
            args.append("stride=%s" % ((s if len(set(s)) > 1 else s[0]),))
        if set(p) != {0}:
            args.append("padding=%s" % ((p if len(set(p)) > 1 else p[0]),))
        if tr and set(opd) != {0}:
            args.append("output_padding=%s" % ((opd if len(set(opd)) > 1 else opd[0]),))
        if set(d) != {1}:
            args.append("dilation=%s" % ((d if len(set(d)) > 1 else d[0]),))
        if dw:
            args.append("groups=in_channels")
        elif g != 1:
            args.append("groups=%d" % g)
        args.append("bias=%s" % bias)
        what = "%s(%s, %s, %s)" % (mod, "in_channels", "in_channels" if dw else "out_channels", ", ".join(args))
        if tr:
            how = ("each input element x[n][c][i...] adds x * weight[c][o - g*out/groups][q...] to output position "
                   "i * stride - padding + q * dilation of channel o (for the channels o of c's group g)")
            lay = "weight is in_channels x out_channels/groups x kernel (torch's layout for a transposed convolution)"
        else:
            how = ("y[n][o][pos] = sum over the channels c of o's group and the kernel positions q of x[n][c][pos * "
                   "stride - padding + q * dilation] * weight[o][c - g*in/groups][q], positions outside x reading 0")
            lay = "weight is out_channels x in_channels/groups x kernel"
        t.stmt = "Compute %s(x)%s: %s; %s%s." % (
            what, " plus its bias per output channel" if bias else " (no bias)", how, lay,
            "; groups = in_channels, so each channel is convolved with its own filter" if dw else "")
        if g != 1 and not dw:
            t.stmt += " in_channels and out_channels are multiples of %d." % g
        t.notes.append("The module's weight%s (initialised at random when KernelBench builds the module) %s an input "
                       "here, drawn like x." % (" and bias" if bias else "", "are" if bias else "is"))
        t.notes.append("cuDNN's fp32 convolution is the baseline (CUDNN_FMA_MATH); PyTorch eager would let cuDNN use "
                       "TF32 (torch.backends.cudnn.allow_tf32 is True by default), which misses KernelBench's fp32 "
                       "tolerance on these zero-mean inputs." + (" For a depthwise convolution in fp32, eager calls "
                                                                 "its own kernel rather than cuDNN." if dw else ""))
        t.notes.append(RAND_NOTE)
        if num in GROUPS_UNUSED:
            t.notes.append(GROUPS_UNUSED[num])
            t.kb_notes.append(GROUPS_UNUSED[num])
        # sizes: KernelBench's for the benchmark (problem 54's file names kernel_size's dims depth, width, height)
        bench = dict(zip(names, [big[0], big[1]] + ([] if dw else [big[2]]) + list(big[3:] if len(big) == 3 + nd
                                                                                       else big[-nd:])))
        # the smallest spatial size giving an output
        mins = [1 if tr else max(1, d[a] * (k[a] - 1) + 1 - 2 * p[a]) for a in range(nd)]
        gg = 1 if (g == "dw" or g == 1) else g
        chans = [(1, 1), (3, 5), (4, 2), (2, 3)] if gg == 1 else [(gg, gg), (2 * gg, gg), (gg, 2 * gg), (gg, gg)]
        grow = {1: [[0], [13], [60], [5]], 2: [[0, 1], [3, 6], [9, 4], [1, 11]], 3: [[0, 0, 1], [2, 3, 1], [4, 1, 3],
                                                                                     [1, 2, 2]]}[nd]
        cases = []
        for m, (ci, co) in enumerate(chans):
            c = {names[0]: [1, 2, 1, 3][m], names[1]: ci}
            if not dw:
                c[names[2]] = co
            for a in range(nd):
                c[sp_names[a]] = mins[a] + grow[m][a]
            cases.append(c)
        ranges = {names[0]: [1, 3]}
        if gg == 1:
            ranges[names[1]] = [1, 4]
            if not dw:
                ranges[names[2]] = [1, 5]
        else:
            ranges[names[1]] = {"range": [gg, 2 * gg], "multiple_of": gg}
            ranges[names[2]] = {"range": [gg, 2 * gg], "multiple_of": gg}
        for a in range(nd):
            ranges[sp_names[a]] = [mins[a], max(c[sp_names[a]] for c in cases)]
        # bench_cpu: batch 1, then halve the largest dims until the reference's work is about 1e8 MACs x 2
        cpu = dict(bench)
        cpu[names[0]] = 1
        order = list(sp_names) + names[1:1 + (1 if dw else 2)]
        for _ in range(60):
            vals = [cpu[n] for n in names]
            if not dw:
                f = _conv_flops(vals, nd, k, s, p, d, opd, tr, g)
            else:
                f = _conv_flops([vals[0], vals[1], vals[1]] + vals[2:], nd, k, s, p, d, opd, tr, g)
            if f <= 2e8:
                break
            cand = [n for n in order if (cpu[n] // 2 >= max(mins[sp_names.index(n)] if n in sp_names else gg, 1)
                                         and (n in sp_names or cpu[n] // 2 % gg == 0))]
            if not cand:
                break
            n = max(cand, key=lambda q: cpu[q])
            cpu[n] //= 2
        t.sizes(cases, bench, cpu, ranges)
        out.append(t)
    # 86: depthwise separable = depthwise 3x3 (padding 1) then pointwise 1x1
    t = Task(1, 86, "86_conv_depthwise_separable_2D", "depthwise_separable_conv2d", "Depthwise-separable Conv2d")
    N, cin, cout, H, W = t.int("batch_size", "in_channels", "out_channels", "height", "width")
    x = t.input("x", [N, cin, H, W], dist=["normal", "uniform"])
    wd = t.input("depthwise_weight", [cin, 1, 3, 3], dist=["normal", "uniform"], doc="the depthwise conv's weight")
    wp = t.input("pointwise_weight", [cout, cin, 1, 1], dist=["normal", "uniform"], doc="the pointwise conv's weight")
    h = t.conv(x, wd, None, cin, (3, 3), 1, 1, 1, 0, "in_channels", names={0: "h_mid", 1: "w_mid"})
    t.output(t.conv(h, wp, None, cout, (1, 1), names={0: "h_out", 1: "w_out"}))
    t.stmt = ("Compute a depthwise-separable convolution: h = nn.Conv2d(in_channels, in_channels, 3, padding=1, "
              "groups=in_channels, bias=False)(x) (each channel with its own 3 x 3 filter, zero padding 1), then "
              "y = nn.Conv2d(in_channels, out_channels, 1, bias=False)(h): y[n][o][i][j] = sum over c of "
              "pointwise_weight[o][c] * h[n][c][i][j].")
    t.notes.append("The modules' weights are inputs here, drawn like x.")
    t.notes.append("The baseline is cuDNN's fp32 convolution for both, as eager's two modules.")
    t.notes.append(RAND_NOTE)
    t.sizes([{"batch_size": 1, "in_channels": 1, "out_channels": 1, "height": 1, "width": 2},
             {"batch_size": 2, "in_channels": 3, "out_channels": 5, "height": 4, "width": 7},
             {"batch_size": 1, "in_channels": 4, "out_channels": 2, "height": 10, "width": 5},
             {"batch_size": 3, "in_channels": 2, "out_channels": 3, "height": 2, "width": 12}],
            {"batch_size": 16, "in_channels": 64, "out_channels": 128, "height": 512, "width": 512},
            {"batch_size": 1, "in_channels": 16, "out_channels": 32, "height": 128, "width": 128},
            {"batch_size": [1, 3], "in_channels": [1, 4], "out_channels": [1, 5], "height": [1, 10], "width": [2, 12]})
    out.append(t)
    return out


# ---------------------------------------------------------------------------------------------
# attention

def attention():
    t = Task(1, 97, "97_ScaledDotProductAttention", "scaled_dot_product_attention", "Scaled dot-product attention")
    B, H, S, E = t.int("batch_size", "num_heads", "sequence_length", "embedding_dimension")
    Q = t.input("Q", [B, H, S, E], dist=["normal", "uniform"])
    K = t.input("K", [B, H, S, E], dist=["normal", "uniform"])
    V = t.input("V", [B, H, S, E], dist=["normal", "uniform"])
    sc = t.matmul(Q, K, [S], [S], [E], batch=[B, H], tb=True,
                  alpha_expr=("1.0 / sqrt((double)embedding_dimension)", "(1.0 / math.sqrt(embedding_dimension))"))
    pr = t.softmax(sc, [3])
    t.output(t.matmul(pr, V, [S], [E], [S], batch=[B, H]), "out")
    t.torch_lines = ["out = F.scaled_dot_product_attention(Q, K, V)"]
    t.stmt = ("Compute torch.nn.functional.scaled_dot_product_attention(Q, K, V) (no mask, no dropout): for each "
              "batch b and head h, scores = Q K^T / sqrt(embedding_dimension) (sequence_length x sequence_length), "
              "P = the softmax of each row of scores, out = P V.")
    t.notes.append("The baseline is what eager runs for fp32 with a head dimension of 1024 (past the fused kernels' "
                   "limits): two cuBLAS batched SGEMMs and a softmax kernel between them, the scores in a buffer of "
                   "batch x heads x sequence_length^2 floats.")
    t.notes.append(FP32_NOTE)
    t.notes.append(RAND_NOTE)
    t.sizes([{"batch_size": 1, "num_heads": 1, "sequence_length": 1, "embedding_dimension": 1},
             {"batch_size": 2, "num_heads": 3, "sequence_length": 7, "embedding_dimension": 16},
             {"batch_size": 1, "num_heads": 2, "sequence_length": 33, "embedding_dimension": 64},
             {"batch_size": 1, "num_heads": 1, "sequence_length": 100, "embedding_dimension": 9}],
            {"batch_size": 32, "num_heads": 32, "sequence_length": 512, "embedding_dimension": 1024},
            {"batch_size": 1, "num_heads": 4, "sequence_length": 256, "embedding_dimension": 128},
            {"batch_size": [1, 2], "num_heads": [1, 3], "sequence_length": [1, 100], "embedding_dimension": [1, 64]})
    return [t]


def tasks():
    return (elementwise() + softmaxes() + reductions() + norms() + scans() + losses() + pools() + gemms() + convs() +
            attention())
