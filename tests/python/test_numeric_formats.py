"""Stores into the executor's narrow formats against ml_dtypes and NumPy, bitwise.

`solar._core.numeric_roundtrip(name, values)` stores each float64 into the format with the
T=double conversions of include/solar/exec/numeric.h and loads it back (decode(encode(v)));
the result must equal the reference bit for bit, NaN-aware (any NaN equals any NaN of the
same sign). Formats and the behaviour checked here: docs/numeric-formats.md.

The reference is `v.astype(ml_type).astype(float64)` with one correction: ml_dtypes before 0.7
casts a float64 *array* to bfloat16/float8/float4 through float32, rounding twice (1 + 2^-8 +
2^-40 becomes 1.0 in bfloat16, not the correctly rounded 1 + 2^-7), and the executor rounds
once. So the reference (whichever ml_dtypes is installed) first rounds float64 to float32 with
round-to-odd (truncate, then set the last bit when inexact); a second round-to-nearest-even to
a format at least two bits narrower is then the correctly rounded result (Boldo & Melquiond,
2008). float32 has at least 13 more bits than every format here, subnormal ranges included. The
reference is checked against ml_dtypes' scalar constructors, which round float64 directly for
float8 and float4, and against hand-derived cases.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from solar import _core

if not hasattr(_core, "numeric_roundtrip"):
    pytest.skip(
        "solar._core.numeric_roundtrip is not bound yet (the binding of exec/numeric.h)",
        allow_module_level=True,
    )

ML_TYPES = {
    "bf16": ml_dtypes.bfloat16,
    "fp16": np.float16,
    "fp8_e4m3": ml_dtypes.float8_e4m3fn,
    "fp8_e5m2": ml_dtypes.float8_e5m2,
    "nvfp4": ml_dtypes.float4_e2m1fn,
}
# log2 of the smallest subnormal and of the largest finite value, for sampling magnitudes.
RANGES = {
    "bf16": (-133, 128),
    "fp16": (-24, 16),
    "fp8_e4m3": (-9, 8.81),
    "fp8_e5m2": (-16, 15.81),
    "nvfp4": (-1, 2.59),
    "tf32": (-136, 128),
    "int4": (-4, 4),
}
NAMES = [*ML_TYPES, "tf32", "int4"]


def roundtrip(name: str, v: np.ndarray) -> np.ndarray:
    out = np.asarray(_core.numeric_roundtrip(name, np.ascontiguousarray(v, dtype=np.float64)))
    assert out.dtype == np.float64 and out.shape == v.shape
    return out


# --- the reference ---------------------------------------------------------------------


def f32_round_to_odd(v: np.ndarray) -> np.ndarray:
    """float64 -> float32, truncated toward zero, with the last bit set when inexact."""
    with np.errstate(over="ignore"):
        f = v.astype(np.float32)
    back = f.astype(np.float64)
    inexact = np.isfinite(v) & (back != v)
    over = inexact & (np.abs(back) > np.abs(v))  # rounded away from zero (or to inf)
    f[over] = np.nextafter(f[over], np.float32(0))
    bits = f.view(np.uint32)
    bits[inexact] |= np.uint32(1)
    return f


def reference(name: str, v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "fp16":  # NumPy rounds float64 -> float16 directly
            return v.astype(np.float16).astype(np.float64)
        if name in ML_TYPES:
            return f32_round_to_odd(v).astype(ML_TYPES[name]).astype(np.float64)
        if name == "tf32":  # RNE of the float32 bits to their top 19 (inf on carry-out)
            bits = f32_round_to_odd(v).view(np.uint32).astype(np.uint64)
            rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
            out = rounded.astype(np.uint32).view(np.float32).astype(np.float64)
            return np.where(np.isnan(v), v, out)
        assert name == "int4"
        # ml_dtypes truncates toward zero inside [-8, 7] and sends NaN to 0; outside it wraps
        # modulo 16 (8 -> -8, 100 -> 4) before 0.7, where the executor saturates, like every
        # integer store.
        t = np.trunc(v)
        inside = (t >= -8) & (t <= 7)
        out = np.where(np.isnan(v), 0.0, np.clip(t, -8, 7))
        out[inside] = v[inside].astype(ml_dtypes.int4).astype(np.float64)
        return out


def assert_bitwise(name: str, v: np.ndarray, got: np.ndarray, want: np.ndarray) -> None:
    both_nan = np.isnan(got) & np.isnan(want) & (np.signbit(got) == np.signbit(want))
    same = (got.view(np.uint64) == want.view(np.uint64)) | both_nan
    if not same.all():
        bad = np.flatnonzero(~same)
        shown = ", ".join(
            f"{float(v[i]).hex()} -> {float(got[i]).hex()} (want {float(want[i]).hex()})"
            for i in bad[:8]
        )
        pytest.fail(f"{name}: {bad.size} of {v.size} values differ: {shown}")


# --- the values ------------------------------------------------------------------------


def code_values(name: str) -> np.ndarray:
    """Every finite value of the format, >= 0, sorted."""
    if name == "int4":
        return np.arange(0.0, 8.0)
    ml_type = ML_TYPES[name]
    bits = 16 if np.dtype(ml_type).itemsize == 2 else 8
    codes = np.arange(2**bits, dtype=np.uint16 if bits == 16 else np.uint8)
    if name == "nvfp4":
        codes = codes[:16]
    with np.errstate(invalid="ignore"):
        values = codes.view(ml_type).astype(np.float64)
    return np.unique(np.abs(values[np.isfinite(values)]))


def midpoints(name: str) -> np.ndarray:
    """Ties between adjacent finite values, and the one above the largest (the overflow or
    saturation threshold)."""
    a = code_values(name)
    mids = (a[:-1] + a[1:]) / 2  # exact: neighbours share an exponent or one is a power of 2
    return np.append(mids, a[-1] + (a[-1] - a[-2]) / 2)


def edge_values(name: str) -> np.ndarray:
    lo, _ = RANGES[name]
    v = [
        0.0,
        np.inf,
        np.nan,
        2.0**lo,  # smallest subnormal
        2.0 ** (lo - 1),  # half of it: ties to 0
        np.nextafter(2.0 ** (lo - 1), np.inf),  # rounds up to the smallest subnormal
        np.finfo(np.float64).max,
        np.finfo(np.float64).tiny,
        5e-324,
        float(np.finfo(np.float32).max),
        float(np.finfo(np.float32).smallest_subnormal),
        1.0,
        1 + 2.0**-8 + 2.0**-40,  # double-rounding traps: ties once rounded to float32
        1 + 2.0**-11 + 2.0**-40,
        1 + 2.0**-4 + 2.0**-40,
        1 + 2.0**-3 + 2.0**-40,
        0.25 + 2.0**-40,
        1.25 + 2.0**-40,
    ]
    if name in ("bf16", "tf32"):  # the overflow tie below 2^128: largest + ulp/2
        top = (2 - 2.0 ** (-8 if name == "bf16" else -11)) * 2.0**127
        v += [top, np.nextafter(top, 0)]
    if name == "int4":
        v += [7.0, 7.999, 8.0, 8.5, 9.0, 15.0, 16.0, 100.0, -8.0, -8.999, -9.0, -17.0, 2.0**40]
    v = np.array(v, dtype=np.float64)
    return np.concatenate([v, -v])


def sample_values(name: str, size: int = 1_000_000) -> np.ndarray:
    rng = np.random.default_rng(NAMES.index(name) + 17)
    lo, hi = RANGES[name]
    n = size // 4
    # Every float64 bit pattern is equally likely: all magnitudes, subnormals, inf, NaNs.
    any_bits = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False).view(np.float64)
    # Log-uniform over the format's range and two binades beyond it on each side.
    mags = np.exp2(rng.uniform(lo - 2, hi + 2, size=n))
    in_range = np.where(rng.integers(0, 2, size=n) == 1, -mags, mags)
    # float32 values (ml_dtypes then rounds once even without the correction).
    with np.errstate(over="ignore"):
        f32 = in_range[: n // 2].astype(np.float32).astype(np.float64)
    # Every value of the format and every tie between neighbours (for tf32 random ones: float32
    # bits ending in 0 or 0x1000), each with its float64 neighbours.
    if name == "tf32":
        bits = rng.integers(0, 0x7F800000, size=n // 6, dtype=np.uint32) & ~np.uint32(0x1FFF)
        ties = np.concatenate([bits, bits | np.uint32(0x1000)]).view(np.float32)
        ties = ties.astype(np.float64)
    else:
        ties = np.concatenate([midpoints(name), code_values(name)])
    near = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf)])
    near = np.concatenate([near, -near])
    rest = max(size - (2 * n + f32.size + near.size), 0)
    more = np.exp2(rng.uniform(lo - 2, hi + 2, size=rest))
    return np.concatenate([edge_values(name), any_bits, in_range, f32, near, more])


# --- the tests -------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_roundtrip_matches_reference(name):
    v = sample_values(name)
    assert v.size >= 900_000
    assert_bitwise(name, v, roundtrip(name, v), reference(name, v))


@pytest.mark.parametrize("name", ["fp8_e4m3", "fp8_e5m2", "nvfp4"])
def test_reference_matches_ml_dtypes_scalar_conversion(name):
    # ml_dtypes' float8/float4 scalar constructors round a float64 directly (no float32 step),
    # so on a sample, ties and double-rounding traps included, they must agree with the
    # reference and with the executor.
    ml_type = ML_TYPES[name]
    rng = np.random.default_rng(5)
    v = sample_values(name)
    sample = np.concatenate([edge_values(name), rng.choice(v, 4000), midpoints(name)])
    with np.errstate(over="ignore", invalid="ignore"):
        sample = np.concatenate(
            [sample, np.nextafter(sample, np.inf), np.nextafter(sample, -np.inf)]
        )
        scalar = np.array([float(ml_type(np.float64(x))) for x in sample])
    assert_bitwise(name, sample, reference(name, sample), scalar)
    assert_bitwise(name, sample, roundtrip(name, sample), scalar)


def test_single_rounding_from_double():
    # Each value lies just above a tie of its format, by 2^-40: below float32's resolution,
    # so rounding through float32 lands on the tie and then goes to even (down); rounding
    # once goes up.
    cases = {
        # bf16 (7 mantissa bits): ulp(1) = 2^-7, tie 1 + 2^-8 -> up to 1 + 2^-7.
        "bf16": (1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-7),
        # fp16 (10 bits): tie 1 + 2^-11 -> 1 + 2^-10.
        "fp16": (1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-10),
        # tf32 (10 bits): as fp16.
        "tf32": (1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-10),
        # e4m3 (3 bits): tie 1.0625 between 1 and 1.125 -> 1.125.
        "fp8_e4m3": (1 + 2.0**-4 + 2.0**-40, 1.125),
        # e5m2 (2 bits): tie 1.125 between 1 and 1.25 -> 1.25.
        "fp8_e5m2": (1 + 2.0**-3 + 2.0**-40, 1.25),
        # e2m1: tie 0.25 between 0 and 0.5 -> 0.5.
        "nvfp4": (0.25 + 2.0**-40, 0.5),
    }
    for name, (x, want) in cases.items():
        v = np.array([x, -x])
        assert_bitwise(name, v, roundtrip(name, v), np.array([want, -want]))


def test_overflow_nan_and_saturation():
    nan, inf = np.nan, np.inf
    cases = {
        # NaN in -> NaN out; +-inf and overflow -> +-inf; 65520 = 65504 + ulp/2 ties away
        # from the odd largest code 0x7BFF.
        "fp16": ([nan, inf, -inf, 65519.99, 65520.0, -1e300], [nan, inf, -inf, 65504, inf, -inf]),
        "bf16": ([nan, inf, 3.4e38, -3.4e38], [nan, inf, inf, -inf]),
        # e4m3fn has no inf: inf and |x| > 464 -> NaN; 464 ties to even 448 (0x7E).
        "fp8_e4m3": ([inf, -inf, 464.0, 464.001, -480.0], [nan, -nan, 448, nan, -nan]),
        # e5m2: 61440 = 57344 + ulp/2 ties away from the odd largest code 0x7B -> inf.
        "fp8_e5m2": ([nan, inf, 61439.99, 61440.0, -1e10], [nan, inf, 57344, inf, -inf]),
        # e2m1 saturates to +-6; NaN -> -0 (positive NaN) or +0 (negative NaN).
        "nvfp4": ([inf, -inf, 7.0, 1e300, -100.0, nan, -nan], [6, -6, 6, 6, -6, -0.0, 0.0]),
        "tf32": ([nan, inf, 3.4028235e38, -1e300], [nan, inf, inf, -inf]),
        # int4 saturates like every integer store: NaN -> 0, truncation toward zero.
        "int4": (
            [nan, inf, -inf, 8.0, 100.0, 1e300, -8.9, -9.0, -1e300, 7.9, -0.9, 2.5, -2.5],
            [0, 7, -8, 7, 7, 7, -8, -8, -8, 7, 0, 2, -2],
        ),
    }
    for name, (v, want) in cases.items():
        v = np.array(v, dtype=np.float64)
        assert_bitwise(name, v, roundtrip(name, v), np.array(want, dtype=np.float64))
        if name in ML_TYPES:  # ml_dtypes/NumPy agree
            assert_bitwise(name, v, roundtrip(name, v), reference(name, v))
