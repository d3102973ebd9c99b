"""Differential tests: the executor (`solar.run`) against independent NumPy references.

Every program in examples/ir/ is run at small sizes (references.SMALL_DIMS) on random inputs
from `solar.make_inputs` and compared with references.REFERENCES, which recompute what
model() returns in float64 NumPy from the same inputs (cast to float64), written as
whole-array NumPy rather than as the IR's loop nests.

Tolerances (documented here, used by `assert_matches_reference`):

- fp32 outputs: ``rtol = 2e-5`` and ``atol = 2e-6 * max(1, max|reference|)``. The executor
  computes in fp32 and the reference in float64; the absolute part scales with the output's
  magnitude because an element that cancels to nearly 0 still carries the rounding error of
  its larger terms (conv sums, residual streams of tens). Measured with PyTorch fp32 against
  these references on 40 random cases per example, the largest error used under 0.2 of this
  tolerance. Any semantic slip (a wrong stride, mask, eps, reduction) is far above it.
- int64 outputs (argmax): exact.
- bf16 outputs (data_movement's cast): one bf16 unit in the last place (``rtol = 2**-7``), and
  every value must be exactly representable in bf16. A bf16 output may come back as an
  ml_dtypes.bfloat16 array, as raw uint16 bit patterns, or as float32/float64 values.
- interpreter vs native: fp32 ``rtol = 1e-5``, ``atol = 1e-6 * max(1, max|interpreter|)``
  (the two may sum in different orders: GEMMs, SIMD reductions, threads), int64 exact,
  bf16 one ulp.

Tests marked `native` use the compiled backend; they are skipped, with the reason, when
`solar.run(..., backend="native")` raises NotImplementedError or a UserError saying the native
backend is unavailable. Deselect them with ``-m "not native"``.
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib

import numpy as np
import pytest
import solar

ROOT = pathlib.Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "ir"


def _load_references():
    # Loaded by path so that the tests work under any pytest import mode.
    spec = importlib.util.spec_from_file_location(
        "solar_test_references", pathlib.Path(__file__).parent / "references.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_refs = _load_references()
REFERENCES = _refs.REFERENCES
SMALL_DIMS = _refs.SMALL_DIMS
OUTPUT_DTYPES = _refs.OUTPUT_DTYPES
bf16_round = _refs.bf16_round

STEMS = sorted(p.stem for p in EXAMPLES.glob("*.py"))
SEEDS = (0, 1, 2)

# Integer index inputs and the dim of the table they index (the gather's `dim`).
INDEX_INPUTS = {("embedding", "tokens"): "V"}

FP32_RTOL, FP32_ATOL = 2e-5, 2e-6
AGREE_RTOL, AGREE_ATOL = 1e-5, 1e-6
BF16_RTOL = 2.0**-7  # one bf16 ulp, relative to a value in [2^e, 2^(e+1))

BACKENDS = [
    pytest.param("interpreter", id="interpreter"),
    pytest.param("native", id="native", marks=pytest.mark.native),
]


# ---------------------------------------------------------------------------------------------
# helpers


def example(stem: str) -> pathlib.Path:
    return EXAMPLES / f"{stem}.py"


def model_signature(stem: str):
    """(DIMS, [(name, dims, dtype), ...]) of a program's model() tensor parameters, read with
    Python's ast (independently of Solar's front end)."""
    tree = ast.parse(example(stem).read_text())
    defaults, params = {}, []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DIMS" for t in node.targets
        ):
            defaults = ast.literal_eval(node.value)
        if isinstance(node, ast.FunctionDef) and node.name == "model":
            for arg in node.args.args:
                ann = arg.annotation
                if not (isinstance(ann, ast.Call) and getattr(ann.func, "id", "") == "Tensor"):
                    continue  # a scalar parameter
                names = ast.literal_eval(ann.args[0])
                dtype = "fp32"
                for kw in ann.keywords:
                    if kw.arg == "dtype":
                        dtype = ast.literal_eval(kw.value)
                params.append((arg.arg, tuple(d for d in names.split(",") if d), dtype))
    return defaults, params


def sizes_for(stem: str, dims: dict[str, int]) -> dict[str, int]:
    defaults, _ = model_signature(stem)
    return {**defaults, **dims}


def expected_shapes(stem: str, dims: dict[str, int]) -> dict[str, tuple[int, ...]]:
    sizes = sizes_for(stem, dims)
    _, params = model_signature(stem)
    return {name: tuple(sizes[d] for d in names) for name, names, _ in params}


def as_float64_inputs(inputs):
    """The executor's inputs as the reference takes them: floats in float64, ints as they are."""
    out = {}
    for name, value in inputs.items():
        value = np.asarray(value)
        if np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_:
            out[name] = value.copy()
        else:
            out[name] = value.astype(np.float64)
    return out


def native_unavailable(err: Exception) -> bool:
    text = str(err).lower()
    return "native" in text and ("unavailable" in text or "not available" in text)


def run(stem: str, inputs, dims, backend: str, bounds_check: bool = True):
    """solar.run, skipping the test when the native backend is not available here."""
    try:
        return solar.run(
            str(example(stem)), inputs, dims=dims, backend=backend, bounds_check=bounds_check
        )
    except NotImplementedError as err:
        if backend == "native":
            pytest.skip(f"native backend not implemented: {err}")
        raise
    except solar.UserError as err:
        if backend == "native" and native_unavailable(err):
            pytest.skip(f"native backend unavailable: {err}")
        raise


def bf16_values(arr) -> np.ndarray:
    """A bf16 output as float64, whatever array type carries it."""
    arr = np.asarray(arr)
    if arr.dtype.name == "bfloat16":  # ml_dtypes
        return arr.astype(np.float64)
    if arr.dtype == np.uint16:  # raw bit patterns
        bits = arr.astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    if arr.dtype in (np.float32, np.float64):
        return arr.astype(np.float64)
    raise AssertionError(f"a bf16 output came back as {arr.dtype}")


def check_output_keys(stem: str, outputs) -> None:
    want = [f"out{i}" for i in range(len(OUTPUT_DTYPES[stem]))]
    assert sorted(outputs) == sorted(want), f"{stem}: outputs {sorted(outputs)}, want {want}"


def assert_matches_reference(stem: str, outputs, reference, what: str) -> None:
    check_output_keys(stem, outputs)
    assert len(reference) == len(OUTPUT_DTYPES[stem])
    for i, (want, dtype) in enumerate(zip(reference, OUTPUT_DTYPES[stem], strict=True)):
        got = np.asarray(outputs[f"out{i}"])
        msg = f"{stem} {what} out{i} ({dtype})"
        assert got.shape == want.shape, f"{msg}: shape {got.shape}, reference {want.shape}"
        if dtype == "int64":
            assert got.dtype == np.int64, f"{msg}: dtype {got.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=msg)
        elif dtype == "bf16":
            values = bf16_values(got)
            np.testing.assert_array_equal(
                bf16_round(values), values, err_msg=f"{msg}: not bf16 values"
            )
            np.testing.assert_allclose(values, want, rtol=BF16_RTOL, atol=0, err_msg=msg)
        else:
            assert dtype == "fp32"
            assert got.dtype == np.float32, f"{msg}: dtype {got.dtype}"
            assert np.all(np.isfinite(want)), f"{msg}: the reference is not finite"
            atol = FP32_ATOL * max(1.0, float(np.max(np.abs(want), initial=0.0)))
            np.testing.assert_allclose(
                got.astype(np.float64), want, rtol=FP32_RTOL, atol=atol, err_msg=msg
            )


def synthetic_inputs(stem: str, dims: dict[str, int], seed: int):
    """Inputs built from model()'s annotations without Solar (for reference-only checks)."""
    rng = np.random.default_rng(seed)
    _, params = model_signature(stem)
    sizes = sizes_for(stem, dims)
    out = {}
    for name, names, dtype in params:
        shape = tuple(sizes[d] for d in names)
        if (stem, name) in INDEX_INPUTS:
            out[name] = rng.integers(0, sizes[INDEX_INPUTS[stem, name]], size=shape)
        else:
            assert dtype == "fp32", f"{stem}.{name}: add a generator for {dtype}"
            out[name] = rng.standard_normal(shape)
    return out


# ---------------------------------------------------------------------------------------------
# (b) completeness of the references (NumPy only: these pass without the executor)


def test_every_example_has_a_reference_and_small_dims():
    assert STEMS, f"no examples found in {EXAMPLES}"
    assert sorted(REFERENCES) == STEMS, "REFERENCES must cover exactly examples/ir/*.py"
    assert sorted(SMALL_DIMS) == STEMS, "SMALL_DIMS must cover exactly examples/ir/*.py"
    assert sorted(OUTPUT_DTYPES) == STEMS, "OUTPUT_DTYPES must cover exactly examples/ir/*.py"


@pytest.mark.parametrize("stem", STEMS)
def test_small_dims_name_every_model_dim(stem):
    defaults, params = model_signature(stem)
    annotated = {d for _, names, _ in params for d in names}
    assert set(SMALL_DIMS[stem]) == annotated, (
        f"{stem}: SMALL_DIMS {sorted(SMALL_DIMS[stem])} vs model() dims {sorted(annotated)}"
    )
    assert set(defaults) >= annotated, f"{stem}: DIMS lacks {sorted(annotated - set(defaults))}"
    assert all(isinstance(v, int) and v >= 1 for v in SMALL_DIMS[stem].values())


@pytest.mark.parametrize("stem", STEMS)
def test_reference_accepts_model_inputs(stem):
    dims = SMALL_DIMS[stem]
    out = REFERENCES[stem](synthetic_inputs(stem, dims, seed=0), sizes_for(stem, dims))
    assert isinstance(out, list) and len(out) == len(OUTPUT_DTYPES[stem])
    for arr, dtype in zip(out, OUTPUT_DTYPES[stem], strict=True):
        assert isinstance(arr, np.ndarray)
        if dtype == "int64":
            assert arr.dtype == np.int64
        else:
            assert arr.dtype == np.float64 and np.all(np.isfinite(arr))


# ---------------------------------------------------------------------------------------------
# make_inputs


@pytest.mark.parametrize("stem", STEMS)
def test_make_inputs_match_model_signature(stem):
    dims = SMALL_DIMS[stem]
    inputs = solar.make_inputs(str(example(stem)), seed=0, dims=dims)
    _, params = model_signature(stem)
    assert sorted(inputs) == sorted(name for name, _, _ in params)
    shapes = expected_shapes(stem, dims)
    sizes = sizes_for(stem, dims)
    for name, _, dtype in params:
        arr = inputs[name]
        assert isinstance(arr, np.ndarray)
        assert arr.shape == shapes[name], f"{stem}.{name}: {arr.shape} != {shapes[name]}"
        assert arr.dtype == {"fp32": np.float32, "int64": np.int64}[dtype], (name, arr.dtype)
        if (stem, name) in INDEX_INPUTS:
            bound = sizes[INDEX_INPUTS[stem, name]]
            assert arr.min() >= 0 and arr.max() < bound, f"{stem}.{name} out of [0, {bound})"
        else:
            assert np.all(np.isfinite(arr))
            if arr.size > 1:
                assert np.unique(arr).size > 1, f"{stem}.{name} is constant"


def test_make_inputs_is_seeded():
    path = str(example("softmax"))
    dims = SMALL_DIMS["softmax"]
    a = solar.make_inputs(path, seed=0, dims=dims)
    b = solar.make_inputs(path, seed=0, dims=dims)
    c = solar.make_inputs(path, seed=1, dims=dims)
    np.testing.assert_array_equal(a["x"], b["x"])
    assert not np.array_equal(a["x"], c["x"])


SCATTER = """
DIMS = {"T": 64, "E": 5, "K": 2}
def model(x: Tensor("T,E"), i: Tensor("T,K", dtype="int64"), s: Tensor("T,K")):
    return scatter(x, i, s, dim="E")
"""


def test_make_inputs_draw_scatter_indices_within_the_base_dim(tmp_path):
    # A scatter's index, like a gather's, is drawn in [0, 5) (E, the dim it indexes), so
    # `solar run` on random inputs never fails its bounds check; the result is x with each
    # row's K positions overwritten by s, checked with NumPy.
    path = tmp_path / "scatter.py"
    path.write_text(SCATTER)
    for seed in SEEDS:
        feeds = solar.make_inputs(str(path), seed=seed)
        assert feeds["i"].min() >= 0 and feeds["i"].max() < 5
        got = solar.run(str(path), feeds)["out0"]
        want = feeds["x"].copy()
        np.put_along_axis(want, feeds["i"], feeds["s"], axis=1)
        distinct = [len(set(row)) == 2 for row in feeds["i"]]  # a duplicate's winner: either
        np.testing.assert_array_equal(got[distinct], want[distinct])


# ---------------------------------------------------------------------------------------------
# (a) every example, both backends, against its reference


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stem", STEMS)
def test_example_matches_reference(stem, backend, seed):
    dims = SMALL_DIMS[stem]
    inputs = solar.make_inputs(str(example(stem)), seed=seed, dims=dims)
    ref_inputs = as_float64_inputs(inputs)
    before = {k: np.array(v, copy=True) for k, v in inputs.items()}
    outputs = run(stem, inputs, dims, backend)
    for name, value in before.items():
        np.testing.assert_array_equal(inputs[name], value, err_msg=f"run() changed {name}")
    reference = REFERENCES[stem](ref_inputs, sizes_for(stem, dims))
    assert_matches_reference(stem, outputs, reference, f"{backend} seed={seed}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_argmax_ties_take_the_first_maximum(backend):
    # Few distinct values, so most rows have tied maxima; the program's strict `>` keeps the
    # first one (np.argmax does too). Column 0 is the unique maximum of the last row.
    dims = {"R": 9, "C": 7}
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, size=(dims["R"], dims["C"])).astype(np.float32)
    x[-1] = -1.0
    x[-1, 0] = 5.0
    outputs = run("reductions", {"x": x}, dims, backend)
    reference = REFERENCES["reductions"]({"x": x.astype(np.float64)}, dims)
    assert any(np.sum(row == row.max()) > 1 for row in x), "the case needs ties"
    assert_matches_reference("reductions", outputs, reference, f"{backend} ties")


# ---------------------------------------------------------------------------------------------
# (c) random shapes for simple programs (interpreter)

RANDOM_SHAPE_STEMS = ("softmax", "layer_norm", "rms_norm", "reductions", "cumsum")
RANDOM_SHAPE_STEMS += ("linear_bias_matmul",)
SIZE_CHOICES = (1, 2, 3, 5, 7, 16, 31)
CASES_PER_STEM = 4
MAX_SIZE_PRODUCT = 100_000  # bounds every loop nest's points (each nest uses at most all dims)


def _random_shape_cases():
    rng = np.random.default_rng(20240531)
    cases = []
    for stem in RANDOM_SHAPE_STEMS:
        names = sorted(SMALL_DIMS[stem])
        seen = set()
        for k in range(CASES_PER_STEM):
            while True:  # distinct shapes, each under the size cap
                dims = {n: int(rng.choice(SIZE_CHOICES)) for n in names}
                key = tuple(dims.values())
                if key not in seen and np.prod(key) <= MAX_SIZE_PRODUCT:
                    seen.add(key)
                    break
            label = ",".join(f"{n}={v}" for n, v in dims.items())
            cases.append(pytest.param(stem, dims, 100 + k, id=f"{stem}[{label}]"))
    return cases


@pytest.mark.parametrize(("stem", "dims", "seed"), _random_shape_cases())
def test_random_shapes_match_reference(stem, dims, seed):
    inputs = solar.make_inputs(str(example(stem)), seed=seed, dims=dims)
    shapes = expected_shapes(stem, dims)
    assert {k: v.shape for k, v in inputs.items()} == shapes
    outputs = run(stem, inputs, dims, "interpreter")
    reference = REFERENCES[stem](as_float64_inputs(inputs), sizes_for(stem, dims))
    assert_matches_reference(stem, outputs, reference, f"interpreter dims={dims}")


# ---------------------------------------------------------------------------------------------
# (d) interpreter and native backends agree


@pytest.mark.native
@pytest.mark.parametrize("bounds_check", [True, False], ids=["checked", "vector"])
@pytest.mark.parametrize("stem", STEMS)
def test_native_agrees_with_interpreter(stem, bounds_check):
    """With bounds checks the native code checks every access in order; without them
    (validation's mode) it runs the vector path and the GEMM path (src/exec/README.md)."""
    dims = SMALL_DIMS[stem]
    inputs = solar.make_inputs(str(example(stem)), seed=3, dims=dims)
    native = run(stem, inputs, dims, "native", bounds_check)
    interp = run(stem, inputs, dims, "interpreter")
    check_output_keys(stem, native)
    check_output_keys(stem, interp)
    for i, dtype in enumerate(OUTPUT_DTYPES[stem]):
        a, b = np.asarray(native[f"out{i}"]), np.asarray(interp[f"out{i}"])
        msg = f"{stem} out{i} ({dtype}): native vs interpreter"
        assert a.shape == b.shape and a.dtype == b.dtype, (
            f"{msg}: {a.shape}/{a.dtype}, {b.shape}/{b.dtype}"
        )
        if dtype == "int64":
            np.testing.assert_array_equal(a, b, err_msg=msg)
        elif dtype == "bf16":
            np.testing.assert_allclose(
                bf16_values(a), bf16_values(b), rtol=BF16_RTOL, atol=0, err_msg=msg
            )
        else:
            b64 = b.astype(np.float64)
            atol = AGREE_ATOL * max(1.0, float(np.max(np.abs(b64), initial=0.0)))
            np.testing.assert_allclose(
                a.astype(np.float64), b64, rtol=AGREE_RTOL, atol=atol, err_msg=msg
            )


# ---------------------------------------------------------------------------------------------
# errors


def test_wrong_input_shape_is_an_input_error():
    dims = SMALL_DIMS["softmax"]
    inputs = solar.make_inputs(str(example("softmax")), seed=0, dims=dims)
    inputs["x"] = np.zeros((dims["R"], dims["C"] + 1), dtype=np.float32)
    with pytest.raises(solar.UserError) as info:
        solar.run(str(example("softmax")), inputs, dims=dims, backend="interpreter")
    assert info.value.kind == "input"


# ---------------------------------------------------------------------------------------------
# (e) bitcast, and outputs that are inputs seen through a view

BITCAST = """
from solar.ir import Dim, Tensor, kernel

@kernel
def inc(X: Tensor("M,K", dtype="int32")) -> Tensor("M,K", dtype="int32"):
    Y = Tensor(M=X.shape[0], K=X.shape[1], dtype="int32")
    for m in Dim("M"):
        for k in Dim("K"):
            Y[m, k] = X[m, k] + 1
    return Y

DIMS = {"M": 2, "K": 4}

def model(x: Tensor("M,K", role="input"), b: Tensor("M,K", dtype="uint8", role="input")):
    return bitcast(inc(bitcast(x, "int32")), "fp32"), bitcast(b, "fp32"), bitcast(x, "uint8")
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_bitcast_reads_the_bytes_as_numpy_view_does(tmp_path, backend):
    """bitcast is NumPy's (and PyTorch's) `view(dtype)`: the int32 bits of x plus 1 read as
    fp32 (1.0 becomes the next float, 1.0 + 2^-23), 4 uint8 of a row as one fp32 (the
    last dim 4 -> 1), and each fp32 as its 4 bytes (4 -> 16; 1.0 is 00 00 80 3f)."""
    path = tmp_path / "bitcast.py"
    path.write_text(BITCAST)
    x = np.array([[1.0, 2.0, -3.5, 0.0], [7.0, 1e-3, 5.0, -0.0]], dtype=np.float32)
    b = np.arange(8, dtype=np.uint8).reshape(2, 4)
    out = solar.run(str(path), {"x": x, "b": b}, backend=backend)
    np.testing.assert_array_equal(out["out0"], (x.view(np.int32) + 1).view(np.float32))
    assert out["out0"][0, 0] == np.float32(1.0 + 2.0**-23)
    np.testing.assert_array_equal(out["out1"], b.view(np.float32))
    assert out["out1"].shape == (2, 1)
    np.testing.assert_array_equal(out["out2"], x.view(np.uint8))
    assert out["out2"].shape == (2, 16) and list(out["out2"][0, :4]) == [0, 0, 0x80, 0x3F]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_viewing_an_input_is_a_copy_of_its_own(tmp_path, backend):
    """model() returns its input through a reshape: the output keeps the values after the
    caller overwrites (or frees) the input. It used to point into the caller's memory."""
    path = tmp_path / "view.py"
    path.write_text(
        "from solar.ir import Tensor\n"
        'DIMS = {"M": 2, "K": 3}\n'
        'def model(x: Tensor("M,K", role="input")):\n'
        '    return reshape(x, "F", F=6), x\n'
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = solar.run(str(path), {"x": x}, backend=backend)
    x[:] = -1.0
    np.testing.assert_array_equal(out["out0"], np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(out["out1"], np.arange(6, dtype=np.float32).reshape(2, 3))
