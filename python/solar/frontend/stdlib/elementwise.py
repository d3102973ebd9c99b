# Elementwise kernels of the PyTorch front end, over flattened (1-D) tensors: the lowering
# reshapes any tensor to one dim "N" (a view), applies the kernel and reshapes back.
# Allocations say dtype="fp32"; the lowering instantiates other dtypes by substitution.
from solar.ir import kernel, Tensor, Dim


@kernel
def copy(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i]
    return Y


@kernel
def relu(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = max(X[i], 0.0)
    return Y


@kernel
def gelu(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = 0.5 * X[i] * (1.0 + erf(X[i] * 0.7071067811865476))
    return Y


@kernel
def gelu_tanh(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = 0.5 * X[i] * (1.0 + tanh(X[i] * (0.7978845608028654 + 0.035677408136300125 * X[i] * X[i])))
    return Y


@kernel
def sigmoid_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = sigmoid(X[i])
    return Y


@kernel
def tanh_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = tanh(X[i])
    return Y


@kernel
def exp_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = exp(X[i])
    return Y


@kernel
def log_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = log(X[i])
    return Y


@kernel
def sqrt_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = sqrt(X[i])
    return Y


@kernel
def rsqrt_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = rsqrt(X[i])
    return Y


@kernel
def neg(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = -X[i]
    return Y


@kernel
def abs_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = abs(X[i])
    return Y


@kernel
def reciprocal(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = 1.0 / X[i]
    return Y


@kernel
def erf_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = erf(X[i])
    return Y


@kernel
def sin_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = sin(X[i])
    return Y


@kernel
def cos_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = cos(X[i])
    return Y


@kernel
def log1p_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = log1p(X[i])
    return Y


@kernel
def expm1_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = expm1(X[i])
    return Y


@kernel
def floor_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = floor(X[i])
    return Y


@kernel
def sign(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, 1.0, select(X[i] < 0.0, -1.0, 0.0))
    return Y


@kernel
def leaky_relu(X: Tensor("N"), slope: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i], X[i] * slope)
    return Y


# ELU family, scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)). Parameters equal
# to 1 are not multiplied by: nn.ELU() is `elu_unit`, ELU(alpha) `elu_alpha`, SELU
# `elu_scaled`, CELU (input_scale = 1 / alpha) `elu_input`, anything else `elu`.
@kernel
def elu(X: Tensor("N"), alpha: float, scale: float, input_scale: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i] * scale, expm1(X[i] * input_scale) * (alpha * scale))
    return Y


@kernel
def elu_scaled(X: Tensor("N"), alpha: float, scale: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i] * scale, expm1(X[i]) * (alpha * scale))
    return Y


@kernel
def elu_input(X: Tensor("N"), alpha: float, input_scale: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i], alpha * expm1(X[i] * input_scale))
    return Y


@kernel
def elu_alpha(X: Tensor("N"), alpha: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i], alpha * expm1(X[i]))
    return Y


@kernel
def elu_unit(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > 0.0, X[i], expm1(X[i]))
    return Y


@kernel
def clamp(X: Tensor("N"), lo: float, hi: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = min(max(X[i], lo), hi)
    return Y


# softplus: log(1 + exp(beta * x)) / beta, x itself above the threshold. beta * x is computed
# once (a local, on chip); beta = 1 (the default) multiplies by nothing (`softplus_unit`).
@kernel
def softplus(X: Tensor("N"), beta: float, threshold: float) -> Tensor("N", dtype="fp32"):
    Z = Tensor(N=X.shape[0], dtype="fp64")
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Z[i] = X[i] * beta
    for i in Dim("N", parallel=True):
        Y[i] = select(Z[i] > threshold, X[i], log1p(exp(Z[i])) / beta)
    return Y


@kernel
def softplus_unit(X: Tensor("N"), threshold: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > threshold, X[i], log1p(exp(X[i])))
    return Y


@kernel
def pow_scalar(X: Tensor("N"), e: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] ** e
    return Y


# x ** 2 (mse, variances written out, RMS norm): one mul.
@kernel
def square(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * X[i]
    return Y


@kernel
def add_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] + s
    return Y


@kernel
def mul_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * s
    return Y


@kernel
def rsub_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = s - X[i]
    return Y


@kernel
def div_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] / s
    return Y


@kernel
def add(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] + Z[i]
    return Y


@kernel
def add_alpha(X: Tensor("N"), Z: Tensor("N"), alpha: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] + alpha * Z[i]
    return Y


@kernel
def sub(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] - Z[i]
    return Y


@kernel
def mul(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * Z[i]
    return Y


@kernel
def div(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] / Z[i]
    return Y


@kernel
def maximum(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = max(X[i], Z[i])
    return Y


@kernel
def minimum(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = min(X[i], Z[i])
    return Y


@kernel
def pow_tensor(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] ** Z[i]
    return Y


@kernel
def where(C: Tensor("N"), X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(C[i] != 0, X[i], Z[i])
    return Y


@kernel
def gt(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > Z[i], 1, 0)
    return Y


@kernel
def lt(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] < Z[i], 1, 0)
    return Y


@kernel
def ge(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] >= Z[i], 1, 0)
    return Y


@kernel
def le(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] <= Z[i], 1, 0)
    return Y


@kernel
def eq(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] == Z[i], 1, 0)
    return Y


@kernel
def ne(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] != Z[i], 1, 0)
    return Y


@kernel
def logical_and(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] != 0 and Z[i] != 0, 1, 0)
    return Y


@kernel
def logical_or(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] != 0 or Z[i] != 0, 1, 0)
    return Y


@kernel
def logical_not(X: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] == 0, 1, 0)
    return Y


@kernel
def dropout(X: Tensor("N"), M: Tensor("N"), scale: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * M[i] * scale
    return Y


@kernel
def gt_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] > s, 1, 0)
    return Y

@kernel
def lt_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] < s, 1, 0)
    return Y

@kernel
def ge_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] >= s, 1, 0)
    return Y

@kernel
def le_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] <= s, 1, 0)
    return Y

@kernel
def eq_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] == s, 1, 0)
    return Y

@kernel
def ne_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] != s, 1, 0)
    return Y


# Rounding, remainders and the rest of the unary family (flat, as above).
@kernel
def ceil_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = ceil(X[i])
    return Y


# round half to even, as torch.round
@kernel
def round_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = round(X[i])
    return Y


@kernel
def trunc_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] < 0.0, ceil(X[i]), floor(X[i]))
    return Y


@kernel
def log2_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = log(X[i]) * 1.4426950408889634
    return Y


@kernel
def log10_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = log(X[i]) * 0.4342944819032518
    return Y


@kernel
def exp2_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = exp(X[i] * 0.6931471805599453)
    return Y


@kernel
def sinh_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = 0.5 * (exp(X[i]) - exp(-X[i]))
    return Y


@kernel
def cosh_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = 0.5 * (exp(X[i]) + exp(-X[i]))
    return Y


@kernel
def tan_(X: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = sin(X[i]) / cos(X[i])
    return Y


@kernel
def isnan_(X: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(X[i] != X[i], 1, 0)
    return Y


@kernel
def isinf_(X: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select(abs(X[i]) == inf, 1, 0)
    return Y


# torch.fmod: the remainder has the sign of the dividend (x - trunc(x / s) * s). The quotient
# is computed once (an fp64 local, on chip); trunc is select(q < 0, ceil(q), floor(q)).
@kernel
def fmod_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Q = Tensor(N=X.shape[0], dtype="fp64")
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Q[i] = X[i] / s
    for i in Dim("N", parallel=True):
        Y[i] = X[i] - s * select(Q[i] < 0.0, ceil(Q[i]), floor(Q[i]))
    return Y


# torch.remainder: the remainder has the sign of the divisor (x - floor(x / s) * s).
@kernel
def remainder_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] - s * floor(X[i] / s)
    return Y


@kernel
def fmod_tensor(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Q = Tensor(N=X.shape[0], dtype="fp64")
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Q[i] = X[i] / Z[i]
    for i in Dim("N", parallel=True):
        Y[i] = X[i] - Z[i] * select(Q[i] < 0.0, ceil(Q[i]), floor(Q[i]))
    return Y


@kernel
def remainder_tensor(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] - Z[i] * floor(X[i] / Z[i])
    return Y


@kernel
def floor_divide(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = floor(X[i] / Z[i])
    return Y


@kernel
def trunc_divide(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Q = Tensor(N=X.shape[0], dtype="fp64")
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Q[i] = X[i] / Z[i]
    for i in Dim("N", parallel=True):
        Y[i] = select(Q[i] < 0.0, ceil(Q[i]), floor(Q[i]))
    return Y


@kernel
def floor_multiple_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = s * floor(X[i] / s)
    return Y


@kernel
def floor_divide_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = floor(X[i] / s)
    return Y


@kernel
def trunc_divide_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Q = Tensor(N=X.shape[0], dtype="fp64")
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Q[i] = X[i] / s
    for i in Dim("N", parallel=True):
        Y[i] = select(Q[i] < 0.0, ceil(Q[i]), floor(Q[i]))
    return Y


# s / x and s ** x (a scalar first operand)
@kernel
def rdiv_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = s / X[i]
    return Y


@kernel
def rpow_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = s ** X[i]
    return Y


@kernel
def logical_xor(X: Tensor("N"), Z: Tensor("N")) -> Tensor("N", dtype="bool"):
    Y = Tensor(N=X.shape[0], dtype="bool")
    for i in Dim("N", parallel=True):
        Y[i] = select((X[i] != 0) != (Z[i] != 0), 1, 0)
    return Y


# clamp with tensor bounds (either may be absent: +-inf is passed as a broadcast constant)
@kernel
def clamp_tensor(X: Tensor("N"), Lo: Tensor("N"), Hi: Tensor("N")) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = min(max(X[i], Lo[i]), Hi[i])
    return Y


# A NaN constant (the IR has no NaN literal): inf - inf.
@kernel
def nan_const(n: int) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=n, dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = inf - inf
    return Y


# max(x, s) and min(x, s) with a scalar (the JAX front end: jnp.maximum(x, 0.5)): one
# comparison per element.
@kernel
def maximum_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = max(X[i], s)
    return Y


@kernel
def minimum_scalar(X: Tensor("N"), s: float) -> Tensor("N", dtype="fp32"):
    Y = Tensor(N=X.shape[0], dtype="fp32")
    for i in Dim("N", parallel=True):
        Y[i] = min(X[i], s)
    return Y
