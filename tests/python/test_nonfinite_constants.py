"""NaN and infinite scalar constants lower to the IR's `nan` and `inf` names (docs/ir.md,
"Scalar expressions") and the lowered program runs and matches its source: `x * float("nan")`
and `x * jnp.nan` used to lower to `mul_scalar(t, nan)`, which model() refused as an
unknown name. Validation compares NaN with NaN and an infinity with the same infinity
(solar.tolerance), so a wrong sign of an infinity is a mismatch."""

from __future__ import annotations

import numpy as np
import pytest
import solar
import torch

# x = [[1, -2, 4]]: x * nan is nan everywhere (3 NaNs); x * inf is [inf, -inf, inf] and
# x * -inf is [-inf, inf, -inf] (3 infinities each, signs from x's).
X = [[1.0, -2.0, 4.0]]


def assert_matches(result, counts):
    v = result.validation
    assert v.status == "full", v.detail
    for c, (nans, infs) in zip(v.outputs, counts, strict=True):
        assert c.ok and c.mismatches == 0, c
        assert (c.expected_nan_count, c.nan_count, c.inf_count) == (nans, nans, infs), c


def test_pytorch_nan_and_inf_scalars_lower_to_ir_names():
    class Model(torch.nn.Module):
        def forward(self, x):
            return x * float("nan"), x * float("inf"), x * float("-inf")

    r = solar.analyze(Model(), [torch.tensor(X)], arch="H100_PCIe")
    text = r.ir_text
    assert ", nan)" in text and ", inf)" in text and ", -inf)" in text, text
    assert_matches(r, [(3, 0), (0, 3), (0, 3)])


def test_jax_nan_and_inf_scalars_lower_to_ir_names():
    jnp = pytest.importorskip("jax.numpy")

    def f(x):
        return x * jnp.nan, x * jnp.inf, x * -jnp.inf

    r = solar.analyze(f, [np.array(X, dtype=np.float32)], arch="H100_PCIe")
    text = r.ir_text
    assert ", nan)" in text and ", inf)" in text and ", -inf)" in text, text
    assert_matches(r, [(3, 0), (0, 3), (0, 3)])
