"""The comparison criterion of every validation (solar/tolerance.py, docs/execution.md,
"Comparing outputs").

Correct programs must pass against fp32 and fp64 references (false failures: the Figure 2
program against NumPy, softmax, layer norm, K = 65,536 reductions, every examples/ir program
against its reference, NaN where both sides have NaN); a one-element corruption of any
output must fail (a sign flip, an element off by 1% of the output's largest magnitude, a
swapped pair, a NaN where the reference has a number). The budgets are derived by hand from
the counting rule of solar.tolerance._nest_roundings: a nest rounds c times per point (each
+ - * / and `other` once, a transcendental 4 times, a MAC twice, at least once); an element of
a `+=` reduction gathers L points (L = the reduced ranks' sizes), an element of a scan chains
L = the shifted rank's size; per element the nest charges L (c - 1) roundings in the compute
precision plus L at the store, except that the store of an elementwise nest (L = 1) writing
the compared output is its final rounding, charged by rtol instead.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import solar
from solar.tolerance import (
    LAMBDA,
    Budget,
    compare,
    compare_all,
    output_budgets,
    perturb,
    perturbation_unit,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ir"
FIG2 = EXAMPLES / "linear_bias_matmul.py"
U32 = 2.0**-24


def _references():
    spec = importlib.util.spec_from_file_location(
        "solar_tolerance_references", Path(__file__).parent / "references.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFS = _references()


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=300
    )


def write(tmp_path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_and_rerun(path, inputs, dims=None, corrupt=None):
    """The program's outputs and the `rerun` that validation uses: the same program on
    inputs moved by one ulp. `corrupt` (outputs -> outputs) stands for a wrong program: it
    changes the outputs of both runs alike."""
    corrupt = corrupt or (lambda outs: outs)
    outs = solar.run(str(path), inputs, dims=dims, backend="native", bounds_check=False)

    def rerun():
        rng = np.random.default_rng(0)
        moved = {k: perturb(v, rng) for k, v in inputs.items()}
        again = solar.run(str(path), moved, dims=dims, backend="native", bounds_check=False)
        again = corrupt(again)
        return [again[k] for k in outs], perturbation_unit(inputs.values())

    return corrupt(outs), rerun


def compare_program(path, inputs, want, dims=None, corrupt=None):
    """Every output of `path` on `inputs` against `want` (a list), as validation compares."""
    graph = solar.trace(str(path), dims=dims) if dims else solar.trace(str(path))
    outs, rerun = run_and_rerun(path, inputs, dims, corrupt)
    keys = list(outs)
    return compare_all(
        keys,
        [outs[k] for k in keys],
        want,
        [graph.tensors[t].dtype for t in graph.outputs],
        output_budgets(graph),
        rerun,
    )


def fig2_reference(inputs, dtype):
    x, w, b, d = (inputs[k].astype(dtype) for k in ("x", "fc_weight", "fc_bias", "D"))
    return (x @ w.T + b) @ d


# ------------------------------------------------------------------------------------------
# Budgets, by hand


def test_budget_of_the_figure_2_program():
    # linear#0: the bias nest copies (c = 1, L = 1, not the output): 1 store; the MAC nest
    #   (c = 2, L = K = 256): 256 * 1 + 256 = 512. matmul#0 (c = 2, L = N = 512): 512 + 512 =
    #   1,024, a reduction, so its stores stay in the budget. 1 + 512 + 1,024 = 1,537, all fp32.
    (b,) = output_budgets(solar.trace(str(FIG2)))
    assert b.count == 1537
    assert b.nodes == 2
    assert b.relative() == pytest.approx(U32 * math.sqrt(1537), rel=1e-12)


def test_budget_of_softmax_layer_norm_cumsum_and_reductions():
    # softmax (R=512, C=1024): scale#0 1 mul (c = 1): 1 store. softmax#0: the max nest (a
    #   comparison is exact, c = 1): 1 store; the exp-sum nest (sub, exp = 4, accumulate add:
    #   c = 6, L = 1,024): 1,024 * 5 + 1,024 = 6,144; the divide nest (sub, exp, div: c = 6,
    #   the output): 5. 1 + 1 + 6,144 + 5 = 6,151.
    (b,) = output_budgets(solar.trace(str(EXAMPLES / "softmax.py")))
    assert (b.count, b.nodes) == (6151, 2)
    # layer_norm (D=768): S1 (add, L = 768): 768; Mu (div): 1; S2 (sub, pow = 4, add: c = 6,
    #   L = 768): 768 * 5 + 768 = 4,608; Rs (div, add, rsqrt = 4: c = 6): 5 + 1 = 6; Y (sub,
    #   2 mul, add: c = 4, the output through the reshape): 3. 768 + 1 + 4,608 + 6 + 3 = 5,386.
    (b,) = output_budgets(solar.trace(str(EXAMPLES / "layer_norm.py")))
    assert (b.count, b.nodes) == (5386, 1)
    # cumsum (C=4096): each scan shifts C (c = 1 add): L = 4,096 stores per element.
    assert [x.count for x in output_budgets(solar.trace(str(EXAMPLES / "cumsum.py")))] == [
        4096,
        4096,
    ]
    # reductions (R=512, C=1024): the row sum L = C = 1,024; the column mean L = R = 512
    #   plus its in-place divide Y[j] / n (not a scan: the read is the written element; the
    #   output's final store): 0; argmax is int64, exact: nothing.
    budgets = output_budgets(solar.trace(str(EXAMPLES / "reductions.py")))
    assert [x.count for x in budgets] == [1024, 512, 0]


def test_budget_of_a_bf16_output():
    # data_movement: the bias add (c = 1) stores fp32 once: 1 rounding at 2^-24; the final
    # cast to bf16 is the output's final rounding, charged by rtol = 2 * 2^-8 (+ u_expected).
    (b,) = output_budgets(solar.trace(str(EXAMPLES / "data_movement.py")))
    assert b.roundings == ((U32, 1.0),)
    got = np.array([1.0], dtype=ml_dtypes.bfloat16)
    c = compare("y", got, np.array([1.0]), "bf16", b)
    assert c.rtol == 2 * 2.0**-8 + 2.0**-53


# ------------------------------------------------------------------------------------------
# False failures: correct programs pass


def test_figure_2_validates_against_fp64_and_fp32_numpy(tmp_path):
    # The defect: against an fp64 NumPy reference the fixed rtol 1e-4 / atol 1e-5 failed 43 of
    # 16,384 elements (max rel error 1.2%, all near zero where the sum cancels). The allowed
    # error now: 16 * 2^-24 * sqrt(1,537) = 3.74e-5 of the output's largest magnitude.
    inp = tmp_path / "in.npz"
    assert cli("inputs", str(FIG2), "--out", str(inp)).returncode == 0
    arrays = dict(np.load(inp))
    for dtype in (np.float64, np.float32):
        golden = tmp_path / f"golden_{np.dtype(dtype).name}.npz"
        np.savez(golden, out0=fig2_reference(arrays, dtype))
        r = cli("validate", str(FIG2), "--inputs", str(inp), "--expected", str(golden))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "out0 vs out0: ok" in r.stdout
        assert "1,537 roundings per element over 2 node(s)" in r.stdout
        assert "mismatches 0 of 16384" in r.stdout


def test_figure_2_allowed_error_is_far_below_a_one_percent_corruption():
    inputs = solar.make_inputs(str(FIG2), seed=0)
    want = fig2_reference(inputs, np.float64)
    (c,) = compare_program(FIG2, inputs, [want])
    scale = np.abs(want).max()
    assert c.ok, c.summary()
    # atol = LAMBDA * 2 * B * S with B = 2^-24 sqrt(1,537) (the reference's budget counts the
    # same roundings: an fp64 array gives no coarser unit).
    assert c.atol == pytest.approx(2 * LAMBDA * U32 * math.sqrt(1537) * scale, rel=1e-9)
    assert c.atol + c.rtol * scale < 1e-4 * scale


LONG = """
from solar.ir import kernel, Tensor, Dim

@kernel
def dot(X: Tensor("R,K"), W: Tensor("K")) -> Tensor("R"):
    Y = Tensor(R=X.shape[0])
    for r in Dim("R", parallel=True):
        for k in Dim("K"):
            Y[r] += X[r, k] * W[k]
    return Y

@kernel
def sum_squares(X: Tensor("R,K")) -> Tensor("R"):
    Y = Tensor(R=X.shape[0])
    for r in Dim("R", parallel=True):
        for k in Dim("K"):
            Y[r] += X[r, k] * X[r, k]
    return Y

DIMS = {"R": 64, "K": 65536}

def model(x: Tensor("R,K", role="input"), w: Tensor("K", role="weight")):
    return dot(x, w), sum_squares(x)
"""


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_k65536_reductions_pass_against_fp64_and_fp32(tmp_path, backend):
    path = write(tmp_path, LONG)
    g = solar.trace(str(path))
    budgets = output_budgets(g)
    # Each is a MAC nest (c = 2) over L = K = 65,536: 65,536 + 65,536 = 131,072 roundings.
    assert [b.count for b in budgets] == [131072, 131072]
    for seed in (0, 1):
        inputs = solar.make_inputs(str(path), seed=seed)
        outs = solar.run(str(path), inputs, backend=backend)  # sequential fp32 sums
        x, w = inputs["x"], inputs["w"]
        for dtype in (np.float64, np.float32):
            xd, wd = x.astype(dtype), w.astype(dtype)
            want = [xd @ wd, np.einsum("rk,rk->r", xd, xd)]
            for i, b in enumerate(budgets):
                c = compare(f"out{i}", outs[f"out{i}"], want[i], "fp32", b)
                assert c.ok, c.summary()
                # One element off by 1% of the largest magnitude still fails: the allowance
                # is 2 * 8 * 2^-24 * sqrt(131,072) = 3.45e-4 of it (+ rtol <= 1.8e-7).
                scale = float(np.abs(want[i]).max())
                assert c.atol == pytest.approx(16 * U32 * math.sqrt(131072) * scale, rel=1e-9)
                bad = outs[f"out{i}"].astype(np.float64)
                bad[5] += 0.01 * scale * np.sign(bad[5] - want[i][5] or 1.0)
                c = compare(f"out{i}", bad, want[i], "fp32", b)
                assert not c.ok and c.mismatches == 1 and c.first_mismatch == (5,)


def stems_with_references():
    return sorted(REFS.REFERENCES)


def reference_outputs(stem, inputs, graph):
    f64 = {
        k: v.astype(np.float64) if v.dtype.kind == "f" or v.dtype == ml_dtypes.bfloat16 else v
        for k, v in inputs.items()
    }
    return [np.asarray(w) for w in REFS.REFERENCES[stem](f64, dict(graph.dims))]


@pytest.mark.parametrize("stem", stems_with_references())
def test_every_example_passes_against_its_fp64_reference(stem):
    path = EXAMPLES / f"{stem}.py"
    dims = REFS.SMALL_DIMS[stem]
    graph = solar.trace(str(path), dims=dims)
    for seed in (0, 1, 2):
        inputs = solar.make_inputs(str(path), seed=seed, dims=dims)
        want = reference_outputs(stem, inputs, graph)
        for c in compare_program(path, inputs, want, dims):
            assert c.ok, f"{stem} seed {seed}: {c.summary()}"
            assert c.informative


# Examples cheap enough at their own DIMS (the rest run at SMALL_DIMS above).
FULL_SIZE = ["linear_bias_matmul", "softmax", "layer_norm", "rms_norm", "cumsum", "reductions"]


@pytest.mark.parametrize("stem", FULL_SIZE)
def test_examples_at_their_own_sizes_pass_against_fp64_and_fp32(stem):
    path = EXAMPLES / f"{stem}.py"
    graph = solar.trace(str(path))
    inputs = solar.make_inputs(str(path), seed=0)
    want64 = reference_outputs(stem, inputs, graph)
    f32 = {k: v.astype(np.float32) if v.dtype.kind == "f" else v for k, v in inputs.items()}
    want32 = [np.asarray(w) for w in REFS.REFERENCES[stem](f32, dict(graph.dims))]
    for want in (want64, want32):
        for c in compare_program(path, inputs, want):
            assert c.ok, f"{stem}: {c.summary()}"


# ------------------------------------------------------------------------------------------
# False passes: one corrupted element fails


def corruptions(got: np.ndarray, want: np.ndarray, exact: bool):
    """(what, change, corrupted flat indices) for one output; `change` maps an output array
    to its corrupted copy, the same change for any run (a wrong program)."""
    flat_want = want.reshape(-1).astype(np.float64)
    top = int(np.argmax(np.abs(flat_want)))
    low, high = int(np.argmin(flat_want)), int(np.argmax(flat_want))
    # 1% of S in the direction of the existing error: |error| >= 0.01 S.
    step = 0.01 * abs(flat_want[top])
    step *= np.sign(float(got.reshape(-1)[top]) - flat_want[top]) or 1.0

    def changed(edit):
        def apply(a):
            b = a.astype(np.int64 if exact else np.float64).reshape(-1)
            edit(b)
            return b.reshape(a.shape)

        return apply

    def flip(b):
        b[top] = -b[top]  # error 2 |want[top]| = 2 S

    def off_by_one(b):
        b[top] += 1

    def one_percent(b):
        b[top] += step

    def nan(b):
        b[top] = np.nan

    def swap(b):
        b[low], b[high] = b[high], b[low]  # error max - min at both

    out = [("sign flip", changed(flip), [top])]
    if exact:
        out.append(("off by one", changed(off_by_one), [top]))
    else:
        out.append(("1% of the largest magnitude", changed(one_percent), [top]))
        out.append(("NaN", changed(nan), [top]))
    out.append(("swapped pair", changed(swap), sorted([low, high])))
    return out


@pytest.mark.parametrize("stem", stems_with_references())
def test_every_example_output_fails_with_one_corrupted_element(stem):
    path = EXAMPLES / f"{stem}.py"
    dims = REFS.SMALL_DIMS[stem]
    graph = solar.trace(str(path), dims=dims)
    inputs = solar.make_inputs(str(path), seed=0, dims=dims)
    want = reference_outputs(stem, inputs, graph)
    outs, _ = run_and_rerun(path, inputs, dims)
    clean = compare_program(path, inputs, want, dims)
    for i, key in enumerate(outs):
        c0 = clean[i]
        exact = c0.criterion.endswith("exact")
        scale = float(np.abs(want[i]).max())
        if not exact:
            # The corruptions exceed the allowance: 1% of S > rtol S + atol (and so do 2 S,
            # a NaN, and a swap of the largest and smallest values, spread > 2% of S here).
            assert c0.rtol * scale + c0.atol < 0.01 * scale, c0.criterion
            assert np.ptp(want[i]) > 0.02 * scale
        else:
            assert np.ptp(want[i]) > 0
        for what, change, idx in corruptions(outs[key], want[i], exact):

            def corrupt(o, key=key, change=change):
                return {**o, key: change(o[key])}

            c = compare_program(path, inputs, want, dims, corrupt)[i]
            first = tuple(int(j) for j in np.unravel_index(idx[0], want[i].shape))
            assert not c.ok, f"{stem} {key} {what}: {c.summary()}"
            assert c.mismatches == len(idx), f"{stem} {key} {what}: {c.summary()}"
            assert c.first_mismatch == first, f"{stem} {key} {what}"


# ------------------------------------------------------------------------------------------
# NaN, infinities, exact dtypes, all-zero outputs, narrow formats


def test_nan_at_the_same_position_agrees_and_equal_infinities_agree():
    # The defect: rtol * |NaN| made the allowed error NaN, so NaN vs NaN was a mismatch.
    got = np.array([np.nan, 1.0, np.inf, -np.inf], dtype=np.float32)
    want = np.array([np.nan, 1.0, np.inf, -np.inf])
    c = compare("y", got, want, "fp32")
    assert c.ok and c.mismatches == 0
    assert (c.nan_count, c.expected_nan_count, c.inf_count) == (1, 1, 2)


@pytest.mark.parametrize(
    ("got", "want", "index"),
    [
        ([np.nan, 1.0], [1.0, 1.0], 0),  # NaN where the reference has a number
        ([1.0, 1.0], [np.nan, 1.0], 0),  # a number where the reference has NaN
        ([1.0, np.inf], [1.0, -np.inf], 1),  # infinities of opposite signs
        ([1.0, np.inf], [1.0, 3.0e38], 1),  # an infinity where the reference is finite
        ([np.nan, 1.5], [np.nan, 1.0], 1),  # NaNs agree, the number next to them does not
    ],
)
def test_nan_and_infinity_mismatches(got, want, index):
    c = compare("y", np.array(got, dtype=np.float32), np.array(want), "fp32")
    assert not c.ok and c.mismatches == 1 and c.first_mismatch == (index,)


def test_eval_batch_norm_with_negative_running_variance_validates():
    # A negative running variance makes (var + eps)^-1/2 NaN in PyTorch and in the IR, for
    # the same channels: agreement, not a failure.
    torch = pytest.importorskip("torch")
    bn = torch.nn.BatchNorm2d(8).eval()
    with torch.no_grad():
        bn.running_var.copy_(torch.tensor([1.0, -1.0] * 4))
        bn.running_mean.copy_(torch.linspace(-1, 1, 8))
    x = torch.randn(2, 8, 5, 5, generator=torch.Generator().manual_seed(0))
    assert torch.isnan(bn(x)[:, 1]).all() and not torch.isnan(bn(x)[:, 0]).any()
    r = solar.analyze(bn, [x], arch="H100_PCIe")
    assert r.validation.status == "full", r.validation.detail


def test_per_kernel_log_of_random_inputs_validates():
    # Per-kernel validation draws N(0, 1) inputs: log of the negative half is NaN on both
    # sides (the KL-divergence workload's failure).
    torch = pytest.importorskip("torch")

    class Log(torch.nn.Module):
        def forward(self, x):
            return torch.log(x)

    with torch.device("meta"):
        m = Log()
    r = solar.analyze(m, [torch.empty(64, 32, device="meta")], arch="H100_PCIe")
    assert r.validation.status == "per-kernel", r.validation.detail


def test_integers_compare_exactly():
    # 2^60 + 1 and 2^60 are the same float64: compared as integers they differ.
    big = np.array([2**60 + 1, 3], dtype=np.int64)
    c = compare("i", big, np.array([2**60, 3], dtype=np.int64), "int64")
    assert not c.ok and c.mismatches == 1 and c.first_mismatch == (0,)
    assert compare("i", big, big.copy(), "int64").ok
    flags = np.array([True, False])
    assert not compare("b", flags, ~flags, "bool").ok
    assert compare("b", flags, flags.copy(), "bool").ok


def test_all_zero_output():
    zeros = np.zeros(4, dtype=np.float32)
    assert compare("z", zeros, np.zeros(4), "fp32", Budget.elementwise("fp32")).ok
    # No magnitude to scale by: the allowance is twice half the smallest subnormal, 2^-149.
    c = compare("z", np.array([0, 0, 1e-30, 0], np.float32), np.zeros(4), "fp32")
    assert not c.ok and c.first_mismatch == (2,)
    assert c.atol == 2.0**-149
    assert any("no nonzero finite element" in n for n in c.notes)


@pytest.mark.parametrize(
    ("dtype", "ulp"),
    [("bf16", 2.0**-7), ("fp16", 2.0**-10), ("fp8_e4m3", 2.0**-3), ("fp8_e5m2", 2.0**-2)],
)
def test_narrow_outputs_allow_one_ulp_of_each_final_rounding(dtype, ulp):
    # Nothing accumulated (Budget()): rtol = 2u + u(float64) with u = ulp(1) / 2, so an
    # output of 1.0 against 1 + ulp matches (error ulp <= 2u (1 + ulp)) and against 1 + 2 ulp
    # does not (2 ulp > ulp (1 + 2 ulp) since ulp < 1/2).
    got = np.array([1.0])
    assert compare("y", got, np.array([1.0 + ulp]), dtype, Budget()).ok
    c = compare("y", got, np.array([1.0 + 2 * ulp]), dtype, Budget())
    assert not c.ok and c.mismatches == 1


BF16_DOT = """
from solar.ir import kernel, Tensor, Dim

@kernel
def dot(X: Tensor("R,K", dtype="bf16"), W: Tensor("K", dtype="bf16")) -> Tensor("R", dtype="bf16"):
    Y = Tensor(R=X.shape[0], dtype="bf16")
    for r in Dim("R", parallel=True):
        for k in Dim("K"):
            Y[r] += X[r, k] * W[k]
    return Y

DIMS = {"R": 32, "K": 16}

def model(x: Tensor("R,K", dtype="bf16", role="input"),
          w: Tensor("K", dtype="bf16", role="weight")):
    return dot(x, w)
"""


def test_bf16_accumulation_passes_and_its_budget_is_the_bf16_one(tmp_path):
    # Every += stores bf16: per element L = K = 16 products in fp32 (16 roundings at 2^-24)
    # and 16 stores at 2^-8, so B = sqrt(16 * 2^-48 + 16 * 2^-16) ~ 4 * 2^-8.
    path = write(tmp_path, BF16_DOT)
    g = solar.trace(str(path))
    (b,) = output_budgets(g)
    assert b.roundings == ((U32, 16.0), (2.0**-8, 16.0))
    for seed in (0, 1, 2):
        inputs = solar.make_inputs(str(path), seed=seed)
        want = inputs["x"].astype(np.float64) @ inputs["w"].astype(np.float64)
        (c,) = compare_program(path, inputs, [want])
        assert c.ok, c.summary()
        # 2 * 8 * 4 * 2^-8 = 1/4 of the output's magnitude: a sign flip still fails.
        assert c.atol == pytest.approx(16 * b.relative() * np.abs(want).max(), rel=1e-9)


# ------------------------------------------------------------------------------------------
# Ill-conditioned outputs: the second stage


LOGISTIC = """
from solar.ir import kernel, Tensor, Dim

@kernel
def logistic(X: Tensor("R,T")) -> Tensor("R,T"):
    Y = Tensor(R=X.shape[0], T=X.shape[1])
    for r in Dim("R", parallel=True):
        for t in Dim("T"):
            if t == 0:
                Y[r, t] = sigmoid(X[r, 0])
            else:
                Y[r, t] = 4.0 * Y[r, t - 1] * (1.0 - Y[r, t - 1])
    return Y

DIMS = {"R": 256, "T": 8}

def model(x: Tensor("R,T", role="input")):
    return logistic(x)
"""


def logistic_reference(x, steps):
    y = np.zeros((x.shape[0], steps))
    y[:, 0] = 1.0 / (1.0 + np.exp(-x[:, 0].astype(np.float64)))
    for t in range(1, steps):
        y[:, t] = 4.0 * y[:, t - 1] * (1.0 - y[:, t - 1])
    return y


def test_ill_conditioned_output_passes_in_the_second_stage(tmp_path):
    # The map 4y(1 - y) doubles a perturbation per step on average, so the first steps'
    # rounding errors grow ~2^7 = 128 times by step 8, beyond the a-priori allowance of
    # 16 sqrt(25) 2^-24 = 80 units of 2^-24 (a scan of T = 8: the sigmoid at t = 0, 4
    # roundings, then sub and 2 mul at each of the 7 later steps, each guard's branch counted
    # at its own points: 4 + 7 * 3 = 25 roundings). Rerun on inputs moved by one ulp, the
    # program shows how sensitive the output is; the allowance grows with that response and
    # still catches 1%.
    path = write(tmp_path, LOGISTIC)
    (b,) = output_budgets(solar.trace(str(path)))
    assert b.count == 25
    for seed in (0, 1, 2):
        inputs = solar.make_inputs(str(path), seed=seed)
        want = logistic_reference(inputs["x"], 8)
        got = solar.run(str(path), inputs)["out0"]
        assert not compare("out0", got, want, "fp32", b).ok  # the first stage alone
        (c,) = compare_program(path, inputs, [want])
        assert c.ok and c.informative and c.response is not None, c.summary()
        assert "ill-conditioned" in c.criterion
        assert c.atol < 0.01 * np.abs(want).max()


def test_chaotic_output_is_reported_as_uninformative(tmp_path):
    # After 60 steps any rounding has grown ~2^60 times: fp32 and fp64 runs are unrelated, so
    # no comparison can tell a correct result; the output passes with a note saying so.
    path = write(tmp_path, LOGISTIC.replace('"T": 8', '"T": 60'))
    inputs = solar.make_inputs(str(path), seed=0)
    (c,) = compare_program(path, inputs, [logistic_reference(inputs["x"], 60)])
    assert c.ok and not c.informative
    assert any("cannot tell a correct result from a wrong one" in n for n in c.notes)


# ------------------------------------------------------------------------------------------
# Reports


def test_mismatch_report_names_output_count_worst_error_and_first_mismatch(tmp_path):
    inp, golden = tmp_path / "in.npz", tmp_path / "golden.npz"
    assert cli("inputs", str(FIG2), "--out", str(inp)).returncode == 0
    arrays = dict(np.load(inp))
    want = fig2_reference(arrays, np.float64)
    scale = np.abs(want).max()
    bad = want.copy()
    bad[1, 2, 3] += 0.01 * scale  # 1% of S, far above the allowed 3.7e-5 S
    np.savez(golden, out0=bad)
    r = cli("validate", str(FIG2), "--inputs", str(inp), "--expected", str(golden))
    assert r.returncode == 1
    assert "out0 vs out0: MISMATCH" in r.stdout
    assert "mismatches 1 of 16384" in r.stdout
    assert "worst at [1, 2, 3]" in r.stdout and "first mismatch at [1, 2, 3]" in r.stdout
    assert "allowed" in r.stdout and "validation FAILED" in r.stdout
    got = solar.run(str(FIG2), arrays)["out0"]
    (b,) = output_budgets(solar.trace(str(FIG2)))
    c = compare("out0", got, bad, "fp32", b)
    text = c.summary("at the program's own sizes")
    assert text.startswith("out0 differs at the program's own sizes: 1 of 16384 elements")
    assert "worst at [1, 2, 3]" in text and "> allowed" in text


def test_given_tolerances_replace_the_criterion():
    c = compare("y", np.array([1.0]), np.array([1.1]), "fp32", rtol=0.0, atol=0.2)
    assert c.ok and c.atol == 0.2 and "(given)" in c.criterion
    c = compare("y", np.array([1.0]), np.array([1.1]), "fp32", rtol=0.01)
    assert not c.ok  # 0.1 > 0 + 0.01 * 1.1


def test_pytorch_validation_measures_the_reference_response():
    # Nine logistic-map steps in PyTorch: the first stage's allowance (a few fp32 roundings
    # per step, 16 * 2^-24 * sqrt(n) of the magnitude) is below the ~2^9-fold amplified
    # rounding, so validation reruns PyTorch with inputs moved by one ulp and allows what
    # that response implies; the detail says so.
    torch = pytest.importorskip("torch")

    class Logistic(torch.nn.Module):
        def forward(self, x):
            y = torch.sigmoid(x)
            for _ in range(9):
                y = 4.0 * y * (1.0 - y)
            return y

    x = torch.randn(4096, generator=torch.Generator().manual_seed(0))
    r = solar.analyze(Logistic(), [x], arch="H100_PCIe")
    assert r.validation.status == "full", r.validation.detail
    assert "out0 is ill-conditioned" in r.validation.detail
    (c,) = r.validation.outputs
    assert c.response is not None and c.informative


def test_output_budgets_reads_the_graph_tensors_once():
    # graph.tensors was a list converted at each read, and output_budgets read it three
    # times per node, so its time grew with nodes x tensors: a 6-layer LSTM over 512 steps
    # (KernelBench level 3 problem 35, 3,079 nodes) spent over 400 s there. The attribute is
    # now a view (test_core_seams.py); the budget of the Figure 2 program still comes from
    # one read, whatever the node count.
    class Counting:
        def __init__(self, graph):
            self._graph, self.reads = graph, 0

        @property
        def tensors(self):
            self.reads += 1
            return self._graph.tensors

        def __getattr__(self, name):
            return getattr(self._graph, name)

    graph = solar.trace(str(FIG2))
    counting = Counting(graph)
    assert output_budgets(counting) == output_budgets(graph)
    assert counting.reads == 1


def test_perturb_moves_a_zero_dimensional_tensor_by_one_ulp():
    # A 0-d tensor (PaliGemma passes scalars as inputs) crashed perturb: `rng.random(())` is
    # a NumPy scalar, which torch.from_numpy refuses. Now it moves like any other element:
    # fp32 1.0 goes to its neighbour above, 1 + 2^-23, or below, 1 - 2^-24; a 0-d int64
    # tensor is returned unchanged.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    moved = perturb(torch.tensor(1.0), rng)
    assert moved.shape == ()
    assert float(moved) in (1.0 + 2.0**-23, 1.0 - 2.0**-24)
    assert perturb(torch.tensor(7), rng).item() == 7
    moved_np = perturb(np.float32(1.0), rng)
    assert float(moved_np) in (1.0 + 2.0**-23, 1.0 - 2.0**-24)
