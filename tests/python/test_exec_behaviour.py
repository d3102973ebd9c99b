"""Executor behaviour beyond the examples: dtypes and rounding, every failure path by its
message, budgets, the command line (inputs / run / validate), and Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import solar
from solar.execution import NUMPY_TYPES
from subprocesses import sigint_default

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ["interpreter", pytest.param("native", marks=pytest.mark.native)]


def write(tmp_path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


AXPB = """
@kernel
def axpb(X: Tensor("N"), W: Tensor("N")) -> Tensor("N", dtype="{dt}"):
    Y = Tensor(N=X.shape[0], dtype="{dt}")
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * W[i] + 0.5
    return Y
DIMS = {{"N": 257}}
def model(x: Tensor("N", dtype="{dt}"), w: Tensor("N", dtype="{dt}", role="weight")):
    return axpb(x, w)
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "dt", ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "nvfp4"]
)
def test_float_formats_round_at_the_store(tmp_path, dt, backend):
    # Y = X*W + 0.5 computed in fp32 (fp64 for fp64) and rounded once to the dtype at the
    # store; the interpreter computes in double. Each element must equal one of the two
    # correctly rounded results (they differ only where fp32 itself rounded).
    path = write(tmp_path, AXPB.format(dt=dt))
    inputs = solar.make_inputs(path, seed=1)
    out = solar.run(path, inputs, backend=backend)["out0"]
    assert out.dtype == NUMPY_TYPES[dt]
    x, w = (inputs[k].astype(np.float64) for k in ("x", "w"))
    if dt == "tf32":  # float32 storage, mantissa rounded to 10 bits
        want = [solar._core.numeric_roundtrip("tf32", v) for v in (x * w + 0.5,)]
        want.append(
            solar._core.numeric_roundtrip(
                "tf32",
                (x.astype(np.float32) * w.astype(np.float32) + np.float32(0.5)).astype(np.float64),
            )
        )
    else:
        t = NUMPY_TYPES[dt]
        want = [
            solar._core.numeric_roundtrip(dt, x * w + 0.5),
            (x.astype(np.float32) * w.astype(np.float32) + np.float32(0.5))
            .astype(t)
            .astype(np.float64),
        ]
    got = out.astype(np.float64)
    ok = np.zeros(got.shape, bool)
    for candidate in want:
        ok |= (got == candidate) | (np.isnan(got) & np.isnan(candidate))
    assert ok.all(), (got[~ok][:5], [c[~ok][:5] for c in want])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "int4", "bool"])
def test_integer_and_bool_tensors(tmp_path, dt, backend):
    prog = f"""
@kernel
def add(X: Tensor("N"), W: Tensor("N")) -> Tensor("N", dtype="{dt}"):
    Y = Tensor(N=X.shape[0], dtype="{dt}")
    for i in Dim("N"):
        Y[i] = X[i] + W[i]
    return Y
DIMS = {{"N": 9}}
def model(x: Tensor("N", dtype="{dt}"), w: Tensor("N", dtype="{dt}")):
    return add(x, w)
"""
    path = write(tmp_path, prog)
    x = np.array([0, 1, 2, 3, 0, 1, 2, 3, 1]).astype(NUMPY_TYPES[dt])
    w = np.array([1, 1, 0, 2, 0, 3, 1, 3, 0]).astype(NUMPY_TYPES[dt])
    out = solar.run(path, {"x": x, "w": w}, backend=backend)["out0"]
    assert out.dtype == NUMPY_TYPES[dt]
    if dt == "bool":  # logical or: 1 + 1 = 2 stores as True
        np.testing.assert_array_equal(out, x | w)
    else:  # small values: no overflow; int4 holds -8..7
        np.testing.assert_array_equal(out.astype(np.int64), x.astype(np.int64) + w.astype(np.int64))


def test_cast_rounds_inside_an_expression(tmp_path):
    # cast(e, "bf16") rounds the intermediate: 1 + 2^-9 is not a bf16 value (8 mantissa
    # bits) and rounds to 1.0, so Y = cast(X, "bf16") - 1 is 0 for X = 1 + 2^-9.
    prog = """
@kernel
def k(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = cast(X[i], "bf16") - 1.0
    return Y
DIMS = {"N": 2}
def model(x: Tensor("N")):
    return k(x)
"""
    path = write(tmp_path, prog)
    x = np.array([1 + 2**-9, 1 + 2**-7], np.float32)
    for backend in ("interpreter", "native"):
        out = solar.run(path, {"x": x}, backend=backend)["out0"]
        np.testing.assert_array_equal(out, np.array([0.0, 2**-7], np.float32))


MISSING_GUARD = """
@kernel
def shift(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i - 1]
    return Y
DIMS = {"N": 4}
def model(x: Tensor("N")):
    return shift(x)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_of_bounds_access_names_kernel_line_indices_and_shape(tmp_path, backend):
    path = write(tmp_path, MISSING_GUARD)
    with pytest.raises(solar.UserError) as e:
        solar.run(path, {"x": np.zeros(4, np.float32)}, backend=backend)
    err = e.value
    assert err.kind == "bounds"
    d = err.diagnostics[0]
    assert d.line == 6  # the statement Y[i] = X[i - 1]
    # i = 0 reads X[-1]; X has shape [4].
    assert (
        "kernel 'shift' (call shift#0) accesses X[-1] but 'X' has shape [4] (at i=0)" in d.message
    )
    assert "missing guard" in d.hint


def test_gather_index_out_of_range(tmp_path):
    prog = """
DIMS = {"V": 5, "D": 2, "S": 3}
def model(table: Tensor("V,D", role="weight"), ids: Tensor("S", dtype="int64")):
    return gather(table, ids, dim="V")
"""
    path = write(tmp_path, prog)
    with pytest.raises(solar.UserError) as e:
        solar.run(path, {"table": np.zeros((5, 2), np.float32), "ids": np.array([0, 7, 1])})
    assert e.value.kind == "bounds"
    assert "index value 7 at position 1 is out of range for dim 0 of size 5" in str(e.value)


SOFTMAX = ROOT / "examples" / "ir" / "softmax.py"


def test_input_errors_name_the_parameter(tmp_path):
    x = np.zeros((3, 7), np.float32)
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, {"y": x}, dims={"R": 3, "C": 7})
    assert e.value.kind == "input"
    assert "missing 'x'; unknown 'y'" in str(e.value)
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, {"x": np.zeros((3, 5), np.float32)}, dims={"R": 3, "C": 7})
    assert "input 'x' must have shape [3, 7] (R,C), got [3, 5]" in str(e.value)
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, {"x": np.zeros((3, 7), np.int32)}, dims={"R": 3, "C": 7})
    assert "input 'x' must have dtype fp32 (NumPy float32), got int32" in str(e.value)
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, [x, x], dims={"R": 3, "C": 7})
    assert "model() takes 1 inputs (x), got 2" in str(e.value)


def test_sizes_come_from_the_inputs_without_dims():
    # DIMS says R=512, C=1024; a [2, 3] input runs at R=2, C=3.
    out = solar.run(SOFTMAX, {"x": np.zeros((2, 3), np.float32)}, backend="interpreter")
    assert out["out0"].shape == (2, 3)
    np.testing.assert_allclose(out["out0"], np.full((2, 3), 1 / 3), rtol=1e-6)


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, 3)
    out = solar.run(SOFTMAX, {"x": x}, backend="interpreter")
    np.testing.assert_allclose(out["out0"], np.full((2, 3), 1 / 3), rtol=1e-6)


@pytest.mark.native
def test_a_kernel_run_again_is_not_loaded_again_and_each_cache_dir_keeps_its_own(
    tmp_path, monkeypatch
):
    # solar.run uses the process's session (solar.session.core_session()): the second run of
    # a program finds its kernel loaded. Deleting the cache between the two runs shows it:
    # the second run neither compiles (the directory is not even made again) nor fails.
    # Another cache directory starts afresh: 1 source and 1 object are written there, and a
    # call with a session of its own compiles into the first directory again (1 object).
    import shutil

    path = write(tmp_path, AXPB.format(dt="fp32"))
    inputs = solar.make_inputs(path, seed=1)
    first, second = tmp_path / "k1", tmp_path / "k2"
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(first))
    want = solar.run(path, inputs, backend="native")["out0"]
    assert len(list(first.glob("*.so"))) == 1
    shutil.rmtree(first)
    assert np.array_equal(solar.run(path, inputs, backend="native")["out0"], want)
    assert not first.exists()
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(second))
    assert np.array_equal(solar.run(path, inputs, backend="native")["out0"], want)
    assert (len(list(second.glob("*.cpp"))), len(list(second.glob("*.so")))) == (1, 1)
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(first))
    own = solar.run(path, inputs, backend="native", session=solar._core.Session())["out0"]
    assert np.array_equal(own, want) and len(list(first.glob("*.so"))) == 1


def test_budget_refusal_says_how_to_run_smaller():
    # Softmax at DIMS (512 x 1024 fp32: 2 MiB in, 2 MiB out) with a 1 MiB budget.
    x = np.zeros((512, 1024), np.float32)
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, {"x": x}, max_bytes=2**20)
    assert e.value.kind == "budget"
    assert "execution would need" in str(e.value) and "GiB of arrays" in str(e.value)
    assert "--dim R=..." in e.value.diagnostics[0].hint
    with pytest.raises(solar.UserError) as e:
        solar.run(SOFTMAX, {"x": x}, backend="interpreter", max_seconds=1e-6)
    assert "with the interpreter backend" in str(e.value)


def test_parallel_loop_with_a_race_is_rejected(tmp_path):
    racy = """
@kernel
def total(X: Tensor("N")) -> Tensor(""):
    S = Tensor()
    for i in Dim("N", parallel=True):
        S[] = 0
    return S
"""
    del racy  # rank-0 writes are covered by the reduction rule below
    prog = """
@kernel
def rowsum(X: Tensor("N,M")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        for j in Dim("M", parallel=True):
            Y[i] += X[i, j]
    return Y
def model(x: Tensor("N,M")):
    return rowsum(x)
"""
    with pytest.raises(solar.UserError) as e:
        solar.check(write(tmp_path, prog))
    assert e.value.kind == "kernel-body"
    assert (
        "loop 'j' over Dim(\"M\") is marked parallel=True but the update at line 7 "
        "reduces over it" in str(e.value)
    )


def test_every_shipped_parallel_loop_is_race_free():
    # The checker enforces the rule; every example passes it.
    for path in sorted((ROOT / "examples" / "ir").glob("*.py")):
        solar.check(path)


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


def test_cli_inputs_run_validate(tmp_path):
    inp, out = tmp_path / "in.npz", tmp_path / "out.npz"
    r = cli(
        "inputs", str(SOFTMAX), "--out", str(inp), "--seed", "0", "--dim", "R=4", "--dim", "C=9"
    )
    assert r.returncode == 0, r.stderr
    assert "x" in r.stdout and "[4, 9]" in r.stdout
    r = cli("run", str(SOFTMAX), "--inputs", str(inp), "--out", str(out))
    assert r.returncode == 0, r.stderr
    x = np.load(inp)["x"].astype(np.float64)
    e = np.exp(0.5 * x - (0.5 * x).max(1, keepdims=True))
    golden = tmp_path / "golden.npz"
    np.savez(golden, e / e.sum(1, keepdims=True))
    r = cli("validate", str(SOFTMAX), "--inputs", str(inp), "--expected", str(golden))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "out0 vs arr_0: ok" in r.stdout and "all outputs match" in r.stdout
    assert "mismatches 0 of 36 (0.0000%)" in r.stdout
    np.savez(golden, e / e.sum(1, keepdims=True) + 1e-2 * (np.arange(36).reshape(4, 9) == 5))
    r = cli("validate", str(SOFTMAX), "--inputs", str(inp), "--expected", str(golden))
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "mismatches 1 of 36" in r.stdout
    assert "first mismatch at [0, 5]" in r.stdout and "validation FAILED" in r.stdout


def test_cli_run_reports_bad_inputs_file(tmp_path):
    r = cli("run", str(SOFTMAX), "--inputs", str(tmp_path / "nope.npz"))
    assert r.returncode == 1 and "cannot read arrays from" in r.stderr
    assert "Traceback" not in r.stderr


def test_ctrl_c_stops_a_long_run(tmp_path):
    # A 2048^3 matmul in the interpreter takes minutes; SIGINT must stop it within seconds.
    prog = """
@kernel
def mm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M"):
        for n in Dim("N"):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[k, n]
    return C
DIMS = {"M": 2048, "K": 2048, "N": 2048}
def model(a: Tensor("M,K"), b: Tensor("K,N")):
    return mm(a, b)
"""
    path = write(tmp_path, prog)
    inp = tmp_path / "in.npz"
    assert cli("inputs", str(path), "--out", str(inp)).returncode == 0
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solar.cli",
            "run",
            str(path),
            "--inputs",
            str(inp),
            "--backend",
            "interpreter",
            "--max-seconds",
            "1e9",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = p.communicate(timeout=30)
    assert time.monotonic() - start < 10
    assert p.returncode == 130 and "interrupted" in err


@pytest.mark.native
@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "examples" / "ir").glob("*.py")))
def test_unchecked_native_matches_the_interpreter(stem):
    # Without bounds checks the native backend runs parallel loops under OpenMP and
    # contractions as packed GEMMs (OpenBLAS), which sum in another order: agreement to
    # rtol 1e-4 with atol 1e-5 x the output's scale (sums of up to ~600 products here).
    import references

    path = ROOT / "examples" / "ir" / f"{stem}.py"
    dims = references.SMALL_DIMS[stem]
    inputs = solar.make_inputs(path, seed=3, dims=dims)
    fast = solar.run(path, inputs, dims=dims, backend="native", bounds_check=False)
    ref = solar.run(path, inputs, dims=dims, backend="interpreter")
    for key in ref:
        want = ref[key].astype(np.float64)
        got = fast[key].astype(np.float64)
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=key)


@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "examples" / "ir").glob("*.py")))
def test_cli_validate_every_example_against_its_reference(tmp_path, stem):
    # solar inputs -> an independent NumPy reference -> solar validate exits 0.
    import references

    path = ROOT / "examples" / "ir" / f"{stem}.py"
    dims = [f"--dim={k}={v}" for k, v in references.SMALL_DIMS[stem].items()]
    inp = tmp_path / "in.npz"
    r = cli("inputs", str(path), "--out", str(inp), "--seed", "0", *dims)
    assert r.returncode == 0, r.stderr
    with np.load(inp) as z:
        inputs = {k: z[k] for k in z.files}
    want = references.REFERENCES[stem](
        {k: v.astype(np.float64) if v.dtype.kind == "f" else v for k, v in inputs.items()},
        references.SMALL_DIMS[stem],
    )
    golden = tmp_path / "golden.npz"
    np.savez(golden, **{f"out{i}": w for i, w in enumerate(want)})
    r = cli("validate", str(path), "--inputs", str(inp), "--expected", str(golden), *dims)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all outputs match" in r.stdout
