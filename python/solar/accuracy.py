"""The accuracy contract (docs/sol-modes.md, "The accuracy contract"): what a correct
implementation must meet, which decides the fastest format a contraction may be priced in.

A contract is a tolerance `|out - ref| <= atol + rtol |ref|` on unit-scale data, so the
relative error it allows a contraction is `atol + rtol`; the C++ analysis
(src/sol/analysis.cpp, contract_rate) prices each floating-point contraction at the fastest
matrix format whose operand rounding stays within that, or that holds the operands exactly
(split bf16 products for fp32). Where it comes from, first match:

- `--accuracy` (or the Python API's `accuracy=`): `framework` (no contract: the framework's
  own settings, as before), `exact` (as accurate as the operands' own format), a number X
  (atol = rtol = X, as `torch.allclose(atol=X, rtol=X)`), or `atol=A,rtol=R`;
- a SOL-ExecBench / FlashInfer-Trace workload's `tolerance` (`max_atol`, `max_rtol`);
- a PyTorch or JAX program: KernelBench's convention, atol = rtol = 1e-2 (Solar's problem
  files are KernelBench's format, and its checker is `torch.allclose(atol=1e-2, rtol=1e-2)`);
- an IR program: none (its units' `fp32_math=` and the platform default, docs/ir.md §4.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# KernelBench's correctness check: torch.allclose(output, reference, atol=1e-02, rtol=1e-02)
# (KernelBench, src/eval.py, eval_kernel_against_ref).
KERNELBENCH_TOLERANCE = 1e-2
# "exact": a relative error no format but one holding the operands exactly meets.
_EXACT = 1e-300


@dataclass(frozen=True)
class MathPolicy:
    """How a program's contractions may be priced: `fp32_math` (--fp32-math, an override
    for fp32 nodes; "default": none) and the accuracy contract (`accuracy`, the relative
    error allowed; 0: none) with where it came from (`source`, for the report)."""

    fp32_math: str = "default"
    accuracy: float = 0.0
    source: str = ""
    # A quantisation recipe (--quantize, docs/sol-modes.md "Quantisation recipes"): the weight
    # contractions are priced as the recipe stores and multiplies them; "": none.
    quantize: str = ""
    # The KV cache's format (--kv-cache: fp8, int8, nvfp4; "": as written).
    kv_cache: str = ""

    def line(self) -> str:
        """The report's line, or "" without a contract."""
        if not self.accuracy:
            return ""
        return f"  accuracy contract: {self.source} (docs/sol-modes.md)"


def _number(text: str, what: str) -> float:
    from .errors import argument_error

    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0.0 <= value < float("inf")):
        raise argument_error(
            f"--accuracy: {what} {text!r} is not a tolerance",
            "framework, exact, a number X (atol = rtol = X) or atol=A,rtol=R",
        )
    return value


def tolerance_policy(atol: float, rtol: float, where: str, fp32_math: str = "default"):
    relative = atol + rtol
    if relative <= 0.0:
        return MathPolicy(fp32_math, _EXACT, f"exact ({where}: atol 0, rtol 0)")
    return MathPolicy(
        fp32_math, relative, f"atol {atol:g}, rtol {rtol:g} ({where}): relative {relative:.3g}"
    )


def parse(text: str, fp32_math: str = "default") -> MathPolicy:
    """The policy of an `--accuracy` value."""
    t = text.strip().lower()
    if t == "framework":
        return MathPolicy(fp32_math)
    if t == "exact":
        return MathPolicy(fp32_math, _EXACT, "exact (--accuracy exact)")
    m = re.fullmatch(r"atol=([^,]+),\s*rtol=(.+)", t)
    if m:
        atol, rtol = _number(m.group(1), "atol"), _number(m.group(2), "rtol")
        return tolerance_policy(atol, rtol, "--accuracy", fp32_math)
    x = _number(t, "tolerance")
    return tolerance_policy(x, x, "--accuracy", fp32_math)


def default_policy(kind: str, fp32_math: str = "default") -> MathPolicy:
    """The contract of a program of `kind` ("pytorch", "jax", "ir") without --accuracy."""
    if kind in ("pytorch", "jax"):
        x = KERNELBENCH_TOLERANCE
        return tolerance_policy(x, x, "KernelBench's convention, the default", fp32_math)
    return MathPolicy(fp32_math)


def workload_policy(tolerance: dict | None, fp32_math: str = "default") -> MathPolicy:
    """The contract of a definition's workload: its `tolerance`, else KernelBench's."""
    if tolerance and ("max_atol" in tolerance or "max_rtol" in tolerance):
        atol = float(tolerance.get("max_atol") or 0.0)
        rtol = float(tolerance.get("max_rtol") or 0.0)
        return tolerance_policy(atol, rtol, "the workload's tolerance", fp32_math)
    return default_policy("pytorch", fp32_math)


def unpack(fp32_math) -> tuple[str, float, str, str]:
    """(--fp32-math, accuracy, --quantize, --kv-cache) of a MathPolicy or a plain
    --fp32-math string."""
    if isinstance(fp32_math, MathPolicy):
        p = fp32_math
        return p.fp32_math, p.accuracy, p.quantize, p.kv_cache
    return fp32_math, 0.0, "", ""


def with_quantize(policy, recipe: str | None, kv_cache: str | None = None):
    """`policy` (a MathPolicy or an --fp32-math string) with the quantisation recipe
    `recipe` and the KV-cache format `kv_cache` (None or "": unchanged). A value the core
    does not know is an error naming the recipes or the formats."""
    if not recipe and not kv_cache:
        return policy
    from . import _core

    _core.check_quant_recipe(recipe or "", kv_cache or "")
    if not isinstance(policy, MathPolicy):
        policy = MathPolicy(policy)
    return replace(policy, quantize=recipe or "", kv_cache=kv_cache or "")
