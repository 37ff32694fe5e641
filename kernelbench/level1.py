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


def tasks():
    return elementwise() + softmaxes() + reductions() + norms()
