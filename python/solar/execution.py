"""Running IR programs on concrete arrays, generating inputs, and comparing outputs.

The C++ executor runs the same einsum graph the analysis uses (docs/execution.md). This
module converts between NumPy/PyTorch arrays and the executor's storage formats, checks
inputs, applies the execution budget, and compares outputs with expected ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np

from . import _core
from .errors import Diagnostic, UserError
from .tolerance import Comparison, compare  # noqa: F401 - the comparison criterion

# The NumPy type of each IR dtype, and the storage type the executor uses for it.
NUMPY_TYPES = {
    "fp64": np.dtype(np.float64),
    "fp32": np.dtype(np.float32),
    "tf32": np.dtype(np.float32),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp16": np.dtype(np.float16),
    "fp8_e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "nvfp4": np.dtype(ml_dtypes.float4_e2m1fn),
    "int64": np.dtype(np.int64),
    "int32": np.dtype(np.int32),
    "int16": np.dtype(np.int16),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int4": np.dtype(ml_dtypes.int4),
    "bool": np.dtype(np.bool_),
}
_STORAGE = {
    "bf16": np.uint16,
    "fp16": np.uint16,
    "fp8_e4m3": np.uint8,
    "fp8_e5m2": np.uint8,
    "nvfp4": np.uint8,
    "int4": np.uint8,
    "bool": np.uint8,
}
_FLOATS = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "nvfp4"}

# Budget defaults: what fits comfortably on a 24 GiB, 2-core machine and about a minute.
DEFAULT_MAX_BYTES = int(os.environ.get("SOLAR_MAX_BYTES", 8 * 2**30))
DEFAULT_MAX_SECONDS = float(os.environ.get("SOLAR_MAX_SECONDS", 60))
# Throughput assumed by the time estimate, in operations per second (measured on the
# examples: bench/bench_exec.py); deliberately conservative.
RATES = {"interpreter": 2e7, "native": 5e8}
GEMM_RATE = 1e10  # FLOP/s of OpenBLAS GEMM on 2 cores, conservatively


def _error(kind: str, message: str, hint: str = "", file: str = "") -> UserError:
    d = Diagnostic(kind, file, 0, 0, message, hint)
    return UserError(str(d), [d])


def _program(program):
    if isinstance(program, _core.Program):
        return program
    return _core.load_program(str(program))


def _to_numpy(value) -> np.ndarray:
    """NumPy view of a NumPy array, a PyTorch tensor (zero-copy on the CPU) or a scalar."""
    if isinstance(value, np.ndarray):
        return value
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch

        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            target = (
                ml_dtypes.float8_e4m3fn if t.dtype == torch.float8_e4m3fn else ml_dtypes.float8_e5m2
            )
            return t.view(torch.uint8).numpy().view(target)
        return t.numpy()
    return np.asarray(value)


def model_inputs(program) -> list[tuple[str, list[str], str, str]]:
    """(name, dims, dtype, role) of each model() tensor parameter, in order."""
    return _core.model_inputs(_program(program))


def _infer_dims(prog, arrays: dict[str, np.ndarray]) -> dict[str, int]:
    """Sizes of model() dims as the given arrays bind them (used without explicit dims)."""
    dims: dict[str, int] = {}
    for name, names, _, _ in _core.model_inputs(prog):
        if name not in arrays:
            continue
        shape = arrays[name].shape
        if len(shape) != len(names):
            continue  # reported with both shapes when the inputs are checked
        for d, n in zip(names, shape, strict=True):
            if dims.setdefault(d, int(n)) != int(n):
                raise _error(
                    "input",
                    f"input '{name}' gives dim {d} = {n}, but another input gives {dims[d]}",
                    "all inputs must agree on each named dim",
                    prog.file,
                )
    return dims


def prepare(program, inputs, dims=None):
    """Checks `inputs` against model() and returns (program, graph, arrays in order)."""
    prog = _program(program)
    params = _core.model_inputs(prog)
    names = [p[0] for p in params]
    if isinstance(inputs, (list, tuple)):
        if len(inputs) != len(names):
            raise _error(
                "input",
                f"model() takes {len(names)} inputs ({', '.join(names)}), got {len(inputs)}",
                file=prog.file,
            )
        inputs = dict(zip(names, inputs, strict=True))
    arrays = {k: _to_numpy(v) for k, v in dict(inputs).items()}
    unknown = sorted(set(arrays) - set(names))
    missing = [n for n in names if n not in arrays]
    if unknown or missing:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(repr(m) for m in missing))
        if unknown:
            parts.append("unknown " + ", ".join(repr(u) for u in unknown))
        raise _error(
            "input",
            "inputs do not match model(): " + "; ".join(parts),
            f"model() takes {', '.join(names)}",
            prog.file,
        )
    from . import dim_overrides

    overrides = dict(dim_overrides(dims)) if dims else _infer_dims(prog, arrays)
    graph = _core.trace(prog, list(overrides.items()))
    ordered = []
    for (name, dim_names, _, _), tid in zip(params, graph.inputs, strict=True):
        t = graph.tensors[tid]
        a = arrays[name]
        if tuple(a.shape) != tuple(t.shape):
            raise _error(
                "input",
                f"input '{name}' must have shape {list(t.shape)} ({','.join(dim_names)}), "
                f"got {list(a.shape)}",
                "pass --dim/dims= to change sizes, or give arrays of the declared shape",
                prog.file,
            )
        want = NUMPY_TYPES[t.dtype]
        if a.dtype != want:
            lossless_kind = t.dtype in _FLOATS and a.dtype.kind == "f"
            int_kind = t.dtype not in _FLOATS and t.dtype != "bool" and a.dtype.kind in "iu"
            bool_kind = t.dtype == "bool" and a.dtype.kind == "b"
            if not (lossless_kind or int_kind or bool_kind):
                raise _error(
                    "input",
                    f"input '{name}' must have dtype {t.dtype} (NumPy {want}), got {a.dtype}",
                    "convert it, e.g. x.astype(...)",
                    prog.file,
                )
            a = a.astype(want)  # e.g. float32 arrays from an .npz for a bf16 parameter
        a = np.require(a, requirements="C")  # keeps 0-d arrays 0-d
        if t.dtype in _STORAGE:  # formats NumPy lacks travel as their bits
            a = a.view(_STORAGE[t.dtype])
        ordered.append((a, t.dtype))
    return prog, graph, ordered


def estimate_seconds(graph, backend: str, bounds_check: bool = True) -> float:
    """Conservative run-time estimate: operations at the backend's rate, except that without
    bounds checks the native backend runs contractions as GEMMs (MACs at GEMM_RATE)."""
    _, ops = _core.estimate_cost(graph)
    if backend == "native" and not bounds_check:
        macs = _gemm_macs(graph)
        return max(ops - 2 * macs, 0) / RATES[backend] + 2 * macs / GEMM_RATE
    return ops / RATES[backend]


def _gemm_macs(graph) -> int:
    """MACs of the nests the native backend runs as GEMMs. A nest whose output is written at
    an affine position (the scatter form of a transposed convolution, einsum output such as
    `(H+R)`) is a scalar loop nest, at the backend's scalar rate."""
    total = 0
    for node in graph.nodes:
        for e in node.einsums or []:
            if e.macs and "(" not in e.text.partition("->")[2]:
                total += e.macs
    return total


def check_budget(
    graph, backend: str, max_bytes=None, max_seconds=None, file: str = "", bounds_check: bool = True
):
    """Refuses (kind "budget") executions that would not fit this machine's budget."""
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    max_seconds = DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds
    peak, _ = _core.estimate_cost(graph)
    seconds = estimate_seconds(graph, backend, bounds_check)
    dims = " ".join(f"--dim {k}=..." for k, _ in graph.dims[:3])
    if peak > max_bytes or seconds > max_seconds:
        what = []
        if peak > max_bytes:
            what.append(f"{peak / 2**30:.2f} GiB of arrays (budget {max_bytes / 2**30:.2f} GiB)")
        if seconds > max_seconds:
            what.append(
                f"about {seconds:.0f} s with the {backend} backend (budget {max_seconds:.0f} s)"
            )
        raise _error(
            "budget",
            "execution would need " + " and ".join(what),
            f"run at reduced sizes ({dims}), or raise the budget (--max-memory/--max-seconds, "
            "or SOLAR_MAX_BYTES/SOLAR_MAX_SECONDS)",
            file,
        )
    return peak, seconds


def include_dir() -> str:
    here = Path(__file__).resolve().parent
    for candidate in (here / "include", here.parents[1] / "include"):
        if (candidate / "solar" / "exec" / "numeric.h").exists():
            return str(candidate)
    return str(here / "include")


def cache_dir() -> str:
    base = os.environ.get("SOLAR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "solar", "kernels"
    )
    return base


def run(
    program,
    inputs,
    dims=None,
    backend: str = "native",
    bounds_check: bool = True,
    max_bytes=None,
    max_seconds=None,
) -> dict[str, np.ndarray]:
    """Runs model() on `inputs` (dict by parameter name, or a list in order; NumPy arrays
    or PyTorch tensors) and returns its outputs as {"out0": ..., "out1": ...}."""
    prog, graph, ordered = prepare(program, inputs, dims)
    check_budget(graph, backend, max_bytes, max_seconds, prog.file, bounds_check)
    results = _core.execute(
        prog,
        graph,
        ordered,
        backend,
        bounds_check,
        cache_dir(),
        include_dir(),
        os.environ.get("SOLAR_CXX", ""),
    )
    out = {}
    for i, (arr, dtype) in enumerate(results):
        out[f"out{i}"] = arr.view(NUMPY_TYPES[dtype]) if dtype in _STORAGE else arr
    return out


def make_inputs(program, seed: int = 0, dims=None) -> dict[str, np.ndarray]:
    """Random inputs for model(): floats ~ N(0, 1) rounded to the parameter's dtype; integer
    tensors that feed a gather as indices uniform in [0, rows of the gathered dim); other
    integers uniform in [0, 8); bool with probability 1/2."""
    from . import dim_overrides

    prog = _program(program)
    graph = _core.trace(prog, dim_overrides(dims))
    rng = np.random.default_rng(seed)
    bound = {}
    for node in graph.nodes:
        if node.op == "gather":
            table = graph.tensors[node.inputs[0]]
            index = graph.tensors[node.inputs[1]]
            bound[index.storage] = table.shape[node.attrs[0]]  # rows of the gathered dim
    result = {}
    for (name, _, _, _), tid in zip(_core.model_inputs(prog), graph.inputs, strict=True):
        t = graph.tensors[tid]
        shape = tuple(t.shape)
        if t.dtype in _FLOATS:
            a = rng.standard_normal(shape).astype(NUMPY_TYPES[t.dtype])
        elif t.dtype == "bool":
            a = rng.random(shape) < 0.5
        else:
            a = rng.integers(0, bound.get(tid, 8), size=shape).astype(NUMPY_TYPES[t.dtype])
        result[name] = a
    return result
