"""Validation that cannot decide (docs/execution.md, "When a comparison cannot decide"): a
comparison decides an output when an all-zero output would fail it; an output that passed
undecided is compared again with bf16 and fp16 computed as fp32 on both sides (the widened
run), which can pass it (`full`) or catch a wrong lowering (`failed`); where that cannot run or
decide either, the status is `inconclusive`,
counted apart from `full` in the JSON and in `solar batch`'s summary."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from solar.batch import summary
from solar.frontend.validation import compared
from solar.tolerance import compare

torch = pytest.importorskip("torch")

from solar import _core  # noqa: E402
from solar.frontend.validate import validate  # noqa: E402
from solar.frontend.validation import load_lowered  # noqa: E402
from solar.pytorch import lower_pytorch  # noqa: E402


def solar(*args):
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)], capture_output=True, text=True
    )


# An output of magnitude 1e-3: 1e-3 * [1, -0.5, 0.25, -0.125].
SMALL = 1e-3 * np.array([1.0, -0.5, 0.25, -0.125])


def test_a_tolerance_above_the_magnitude_cannot_decide():
    # atol 1e-2, rtol 0 on S = 1e-3: the allowed error at the largest element, 1e-2, is not
    # below 1e-3, so all zeros pass (error 1e-3 <= 1e-2): undecided.
    c = compare("y", SMALL, SMALL, "fp64", atol=1e-2, rtol=0.0)
    zeros = compare("y", np.zeros(4), SMALL, "fp64", atol=1e-2, rtol=0.0)
    assert c.ok and zeros.ok
    assert not c.informative
    assert "an all-zero output would pass too" in c.notes[-1]
    # rtol 1 (atol 0): |0 - e| = |e| <= 1 * |e| at every element: undecided whatever S is.
    assert not compare("y", SMALL, SMALL, "fp64", atol=0.0, rtol=1.0).informative
    # atol 1e-4, rtol 0.5: zeros fail where |e| > 1e-4 + 0.5 |e|, i.e. |e| > 2e-4: at 1e-3,
    # 5e-4 and 2.5e-4 (not 1.25e-4); allowed at S is 6e-4 < 1e-3, and the comparison decides.
    c = compare("y", SMALL, SMALL, "fp64", atol=1e-4, rtol=0.5)
    assert c.ok and c.informative
    assert not compare("y", np.zeros(4), SMALL, "fp64", atol=1e-4, rtol=0.5).ok


def test_no_path_says_full_for_an_undecided_output():
    """compared() is what whole-program, scaled and per-kernel validation report from."""
    undecided = compare("out0", SMALL, SMALL, "fp64", atol=1e-2)
    decided = compare("out1", SMALL, SMALL, "fp64", atol=1e-5)  # 1e-5 < 1e-3: decides
    v = compared([decided, undecided], "PyTorch", "at the program's own sizes", "native")
    assert v.status == "inconclusive"
    assert "2 output(s) match PyTorch" in v.detail and "1 by a comparison that cannot" in v.detail
    assert "out0: the allowed error (0.01 at the largest |expected|)" in v.detail
    assert compared([decided], "PyTorch", "", "native").status == "full"


def test_the_batch_summary_counts_inconclusive_apart():
    rows = [
        {"source": f"d.json#{i}", "status": "ok", "validation": {"status": s, "detail": ""}}
        for i, s in enumerate(["full", "inconclusive", "inconclusive", "scaled"])
    ]
    assert "validation: full 1, inconclusive 2, scaled 1" in summary(rows)


class MatMul(torch.nn.Module):
    def forward(self, x, w):
        return x @ w


class MatMulOff(torch.nn.Module):
    """A wrong lowering: 3% too large at every element."""

    def forward(self, x, w):
        return (x @ w) * 1.03


def _bf16_gemm():
    """bf16 x [4, 1024] @ w [1024, 8]: K = 1024."""
    g = torch.Generator().manual_seed(0)
    return [
        torch.randn(4, 1024, generator=g).to(torch.bfloat16),
        torch.randn(1024, 8, generator=g).to(torch.bfloat16),
    ]


def test_the_widened_run_decides_a_bf16_gemm_and_catches_a_wrong_lowering():
    # The lowered nest C[m, n] += A[m, k] * B[k, n] stores bf16 C at every step: K = 1024
    # roundings of 2^-8 per element, B = 2^-8 sqrt(1024) = 0.125 (the 1024 fp32 roundings of
    # the products add 2^-24 sqrt(1024), nothing); the bf16 reference is charged all 2048 at
    # 2^-8, B_exp = 2^-8 sqrt(2048) = 0.177, so the allowed error is 8 (0.125 + 0.177) S =
    # 2.41 S >= S: zeros would pass. Widened (bf16 computed as fp32 on both sides):
    # B = B_exp = 2^-24 sqrt(2 * 1024) = 2.7e-6, allowed 3 * 2^-24 |e| + 16 * 2.7e-6 S, about
    # 4.3e-5 S, far below S: decided, and right.
    inputs = _bf16_gemm()
    capture, lowered = lower_pytorch(MatMul(), inputs)
    program = load_lowered(lowered)
    v = validate(capture, lowered, program, _core.trace(program, []), backend="interpreter")
    assert v.status == "full", v.detail
    assert "out0 decided by the widened run" in v.detail
    # The program of x @ w * 1.03 checked against x @ w: 3% off every element passes the bf16
    # comparison (it allows 2.41 S) but not the widened one (4.3e-5 S + 1.8e-7 |e| < 3% of |e|
    # at the largest element).
    _, wrong = lower_pytorch(MatMulOff(), inputs)
    wrong_program = load_lowered(wrong)
    v = validate(
        capture, wrong, wrong_program, _core.trace(wrong_program, []), backend="interpreter"
    )
    assert v.status == "failed", v.detail
    assert "widened (bf16 and fp16 computed as fp32 on both sides)" in v.detail


class MatMulBits(torch.nn.Module):
    """Passes its weight through its bits (bf16 -> int16 -> bf16, unchanged): the lowered
    program bitcasts, which a widened run would change, so nothing widens it."""

    def forward(self, x, w):
        return x @ (w.view(torch.int16) & -1).view(torch.bfloat16)


def test_without_a_widened_run_an_undecided_output_is_inconclusive():
    inputs = _bf16_gemm()  # as above: allowed 2.41 S >= S
    capture, lowered = lower_pytorch(MatMulBits(), inputs)
    program = load_lowered(lowered)
    v = validate(capture, lowered, program, _core.trace(program, []), backend="interpreter")
    assert v.status == "inconclusive", v.detail
    assert (
        "no widened run decides (the lowered program reinterprets a value's bits (bitcast))"
        in v.detail
    )


def _definition(folder, name, reference, dtype, k):
    """A definition x [M, K] @ w [K, N] (M = 4, N = 8) of `dtype`, one workload."""
    folder.mkdir(exist_ok=True)
    d = {
        "name": name,
        "axes": {
            "M": {"type": "var"},
            "K": {"type": "const", "value": k},
            "N": {"type": "const", "value": 8},
        },
        "inputs": {
            "x": {"shape": ["M", "K"], "dtype": dtype},
            "w": {"shape": ["K", "N"], "dtype": dtype},
        },
        "outputs": {"y": {"shape": ["M", "N"], "dtype": dtype}},
        "reference": reference,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(d))
    line = {
        "uuid": f"{name}-m4",
        "axes": {"M": 4},
        "inputs": {"x": {"type": "random"}, "w": {"type": "random"}},
        "tolerance": {"max_atol": 1e-2, "max_rtol": 1.0},
    }
    path.with_suffix(".jsonl").write_text(json.dumps(line))
    return path


def test_definitions_report_inconclusive_apart_in_json_and_batch(tmp_path):
    folder = tmp_path / "defs"
    # bf16, K = 1024, the weight passed through its bits by the reference: undecided (allowed
    # 2.41 S >= S, as above) and not widened (a bitcast): inconclusive. (The workload's
    # tolerance, rtol 1, is an accuracy contract: it does not enter validation.)
    undecided = _definition(
        folder,
        "mm_bf16",
        "import torch\n\ndef run(x, w):\n"
        "    return x @ (w.view(torch.int16) & -1).view(torch.bfloat16)\n",
        "bfloat16",
        1024,
    )
    # fp32, K = 16: rtol = 3 * 2^-24, atol = 8 * (2 B) S with B = 2^-24 sqrt(~2 * 16): far
    # below S, zeros fail: full.
    _definition(folder, "mm_fp32", "def run(x, w):\n    return x @ w\n", "float32", 16)
    r = solar("analyze", undecided, "--json", tmp_path / "u.json", "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "u.json").read_text())
    assert doc["validation"]["status"] == "inconclusive", doc["validation"]["detail"]
    out = tmp_path / "r.jsonl"
    r = solar("batch", folder, "--out", out, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    rows = {json.loads(x)["source"]: json.loads(x) for x in out.read_text().splitlines()}
    status = {k.rsplit("/", 1)[-1]: v["validation"]["status"] for k, v in rows.items()}
    assert status == {"mm_bf16.json#mm_bf16-m4": "inconclusive", "mm_fp32.json#mm_fp32-m4": "full"}
    # The progress line of each, then the summary: one of each status, counted apart.
    assert "validation: full 1, inconclusive 1" in r.stdout + r.stderr


def test_a_failed_widened_comparison_is_judged_by_its_measured_response():
    """decide_against_wide, as compare_all's second stage: a widened comparison that fails is
    judged again with the output's response to one-ulp changes of the widened reference's
    inputs. Here out0 passed undecided first (atol 1e-2 on S = 1e-3). Widened, the program is
    off by 1e-5 at every element (1% of S), and fp32's a-priori allowance (about 1e-6 S)
    fails it. A reference whose one-ulp (2^-24) perturbation moves the output by 5e-4, half
    its magnitude, is ill-conditioned: its rounding errors act on that response, whose
    allowance then reaches S, and the output stays undecided (the first comparison stands,
    with a note). A response of 0 (a well-conditioned reference) leaves it failed."""
    from solar.tolerance import decide_against_wide

    off = SMALL + 1e-5
    noisy = SMALL + 5e-4 * np.array([1.0, -1.0, 1.0, -1.0])
    for perturbed, failed in ((noisy, False), (SMALL, True)):
        results = [compare("out0", SMALL, SMALL, "fp64", atol=1e-2)]
        assert results[0].ok and not results[0].informative

        def wide(perturbed=perturbed):
            return [off], [SMALL], ["fp32"], [None], lambda: ([perturbed], 2.0**-24)

        decide_against_wide(results, wide)
        assert results[0].ok is not failed, results[0].summary()
        if failed:
            assert results[0].decided_wide
        else:
            assert not results[0].informative
            assert "in the widened run too the allowed error" in results[0].notes[-1]
