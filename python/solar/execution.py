"""Running IR programs on concrete arrays, generating inputs, and comparing outputs.

The C++ executor runs the same einsum graph the analysis uses (docs/execution.md). This
module converts between NumPy/PyTorch arrays and the executor's storage formats, checks
inputs, applies the execution budget, and compares outputs with expected ones.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from . import _core
from .errors import Diagnostic, UserError
from .tolerance import Comparison, _to_numpy, compare  # noqa: F401 - the comparison criterion

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
    from .api import dim_overrides

    overrides = dict(dim_overrides(dims)) if dims else _infer_dims(prog, arrays)
    graph = _core.trace(prog, list(overrides.items()))
    ordered = []
    tensors = graph.tensors
    for (name, dim_names, _, _), tid in zip(params, graph.inputs, strict=True):
        t = tensors[tid]
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


def estimate_seconds(graph, backend: str) -> float:
    """Run-time estimate: operations at the backend's rate, except that the native backend
    runs contractions as GEMMs (MACs at GEMM_RATE). With bounds checks it does so where the
    kernel's accesses are proven in range when it is generated (the loop bounds and guards
    imply them, as in every program Solar lowers); a nest with an access left to check at run
    time runs as scalar loops, slower than this estimate."""
    _, ops, macs = _core.estimate_cost(graph)
    if backend == "native":
        return max(ops - 2 * macs, 0) / RATES[backend] + 2 * macs / GEMM_RATE
    return ops / RATES[backend]


def storage_bytes_of(tensor) -> int:
    """Bytes of a graph tensor in the executor's storage format."""
    n = 1
    for d in tensor.shape:
        n *= int(d)
    return n * NUMPY_TYPES[tensor.dtype].itemsize


def estimate_bytes(graph, backend: str) -> int:
    """Peak bytes of live arrays while the graph runs, with the packed operands of the
    native backend's GEMM path, which it may take with or without bounds checks."""
    peak, _, _ = _core.estimate_cost(graph, backend == "native")
    return peak


def budget_error(what: list[str], graph, file: str = "") -> UserError:
    """The `budget` error for an execution that needs `what` (phrases), with the way out."""
    dims = " ".join(f"--dim {k}=..." for k, _ in graph.dims[:3]) if graph is not None else ""
    return _error(
        "budget",
        "execution would need " + " and ".join(what),
        (f"run at reduced sizes ({dims}), or " if dims else "")
        + "raise the budget (--max-memory/--max-seconds, or SOLAR_MAX_BYTES/SOLAR_MAX_SECONDS)",
        file,
    )


def check_budget(
    graph,
    backend: str,
    max_bytes=None,
    max_seconds=None,
    file: str = "",
    extra_bytes: int = 0,
    extra_what: str = "",
):
    """Refuses (kind "budget") executions that would not fit this machine's budget.
    `extra_bytes` is memory the caller needs beside the arrays (`extra_what` says what)."""
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    max_seconds = DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds
    peak = estimate_bytes(graph, backend)
    seconds = estimate_seconds(graph, backend)
    if peak + extra_bytes > max_bytes or seconds > max_seconds:
        what = []
        if peak + extra_bytes > max_bytes:
            extra = f" + {extra_bytes / 2**30:.2f} GiB {extra_what}" if extra_bytes else ""
            what.append(
                f"{peak / 2**30:.2f} GiB of arrays{extra} (budget {max_bytes / 2**30:.2f} GiB)"
            )
        if seconds > max_seconds:
            what.append(
                f"about {seconds:.0f} s with the {backend} backend (budget {max_seconds:.0f} s)"
            )
        raise budget_error(what, graph, file)
    return peak + extra_bytes, seconds


# The one header generated kernels include (self-contained on purpose).
KERNEL_HEADER = Path("solar") / "exec" / "numeric.h"


def _include_candidates() -> tuple[Path, Path]:
    """Where KERNEL_HEADER's include directory may be: inside the installed package (the
    wheel carries it, CMakeLists.txt's install rules) or the source tree's include/."""
    here = Path(__file__).resolve().parent
    return here / "include", here.parents[1] / "include"


@functools.cache
def include_dir() -> str:
    """The C++ headers generated kernels include, or "" where neither candidate has them
    (found once: resolving paths took a third of a millisecond of every run)."""
    return next((str(c) for c in _include_candidates() if (c / KERNEL_HEADER).is_file()), "")


def cache_dir() -> str:
    """The kernel cache: $SOLAR_CACHE_DIR, else $XDG_CACHE_HOME/solar/kernels (an absolute
    XDG_CACHE_HOME only, as the XDG spec says), else ~/.cache/solar/kernels: the C++ core's
    own default (src/exec/native.cpp, cache_path). Private to the user: the core creates it
    0700 and refuses one that others can write (docs/execution.md, The cache)."""
    explicit = os.environ.get("SOLAR_CACHE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "solar", "kernels")


def compiler() -> str:
    """The native backend's compiler command ($SOLAR_CXX; default c++), run without a shell."""
    return os.environ.get("SOLAR_CXX", "")


def native_unavailable() -> str:
    """Why the native backend cannot run here (the kernels' header missing, no compiler, no
    writable kernel cache), found without compiling anything; "" when it looks usable."""
    if not include_dir():
        looked = " and ".join(str(c) for c in _include_candidates())
        return f"the header its kernels include, {KERNEL_HEADER}, is missing (looked in {looked})"
    return _core.native_unavailable_reason(cache_dir(), compiler())


@dataclass
class Execution:
    """What one execution returned and how it ran."""

    outputs: dict  # {"out0": array, ...}
    backend: str  # the backend that ran the kernel calls
    seconds: float
    peak_bytes: int  # the estimate the budget checked
    native_calls: int = 0
    interpreted_calls: int = 0


@contextlib.contextmanager
def _interrupt_fds():
    """(read, write) ends of a pipe that Python's signal machinery writes each caught
    signal's number to while the block runs (signal.set_wakeup_fd): the executor's binding
    watches it and stops the run on SIGINT, and Python's own handler raises KeyboardInterrupt
    as usual; it ends its watch with a 0 byte (no signal's number). (-1, -1) off the main
    thread, where Python takes no wakeup fd (signals reach the main thread only). The previous
    wakeup fd (asyncio's, say) is restored afterwards; signals that arrive during the block
    are not written to it."""
    if threading.current_thread() is not threading.main_thread():
        yield -1, -1
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # another interpreter than the main one
        os.close(read)
        os.close(write)
        yield -1, -1
        return
    try:
        yield read, write
    finally:
        signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)


def execute(
    program,
    inputs,
    dims=None,
    backend: str = "native",
    bounds_check: bool = True,
    max_bytes=None,
    max_seconds=None,
    session=None,
) -> Execution:
    """Runs model() on `inputs` (dict by parameter name, or a list in order; NumPy arrays
    or PyTorch tensors) within the budget. The native backend fails with an error of kind
    `compile` (the compiler's message) where it cannot compile or load a kernel; it never
    falls back silently. `session` (a _core.Session) keeps loaded kernels between calls; by
    default the process's (solar.session.core_session()), so that a kernel run again is not
    loaded again (0.1-0.2 ms a call); pass `_core.Session()` for a call of its own."""
    import time

    from .session import core_session

    if session is None:
        session = core_session()

    prog, graph, ordered = prepare(program, inputs, dims)
    peak, _ = check_budget(graph, backend, max_bytes, max_seconds, prog.file)
    start = time.perf_counter()
    with _interrupt_fds() as fds:
        results, report = _core.execute(
            prog,
            graph,
            ordered,
            backend,
            bounds_check,
            cache_dir(),
            include_dir(),
            compiler(),
            session,
            False,
            fds,
        )
    seconds = time.perf_counter() - start
    out = {}
    for i, (arr, dtype) in enumerate(results):
        out[f"out{i}"] = arr.view(NUMPY_TYPES[dtype]) if dtype in _STORAGE else arr
    return Execution(
        out,
        report["backend"],
        seconds,
        peak,
        report["native_calls"],
        report["interpreted_calls"],
    )


def run(
    program,
    inputs,
    dims=None,
    backend: str = "native",
    bounds_check: bool = True,
    max_bytes=None,
    max_seconds=None,
    session=None,
) -> dict[str, np.ndarray]:
    """Runs model() on `inputs` (dict by parameter name, or a list in order; NumPy arrays
    or PyTorch tensors) and returns its outputs as {"out0": ..., "out1": ...}. See
    `execute` for `session`."""
    return execute(
        program, inputs, dims, backend, bounds_check, max_bytes, max_seconds, session
    ).outputs


# Elements drawn at a time: the float64 draw of a block is the only temporary.
_DRAW_BLOCK = 1 << 20


def _index_bounds(graph) -> dict[int, int]:
    """Graph tensor (by storage) -> rows of the dim it indexes, for tensors a gather or a
    scatter (or scatter_add) reads as indices (the table's or the base's dim)."""
    bound: dict[int, int] = {}
    tensors = graph.tensors
    for node in graph.nodes:
        if node.op in ("gather", "scatter", "scatter_add"):
            table = tensors[node.inputs[0]]
            index = tensors[node.inputs[1]]
            rows = table.shape[node.attributes["axis"]]  # rows of the gathered dim
            bound[index.storage] = min(bound.get(index.storage, rows), rows)
    return bound


def inputs_bytes(program, dims=None) -> int:
    """Memory make_inputs needs: every input in its storage format, plus one block of
    float64 draws and the widest .npz copy of one input (formats NumPy lacks are written
    widened to float32)."""
    from .api import dim_overrides

    prog = _program(program)
    graph = _core.trace(prog, dim_overrides(dims))
    return _inputs_bytes(graph)


def _inputs_bytes(graph) -> int:
    total, largest, widest = 0, 0, 0
    tensors = graph.tensors
    for tid in graph.inputs:
        t = tensors[tid]
        n = 1
        for d in t.shape:
            n *= int(d)
        total += n * NUMPY_TYPES[t.dtype].itemsize
        largest = max(largest, n)
        if t.dtype in _STORAGE and t.dtype != "bool":
            widest = max(widest, 4 * n)
    return total + 8 * min(largest, _DRAW_BLOCK) + widest


def make_inputs(program, seed: int = 0, dims=None, max_bytes=None) -> dict[str, np.ndarray]:
    """Random inputs for model(), drawn valid for their role and dtype: floats ~ N(0, 1)
    rounded to the parameter's dtype; integer tensors that feed a gather or a scatter as
    indices uniform over the indexed dim's rows that the index dtype can hold ([0, min(rows,
    max + 1))); other integers uniform in [0, 8); bool with probability 1/2. Refused (kind
    `budget`)
    when the inputs would not fit `max_bytes` (default: the budget of `solar run`)."""
    from .api import dim_overrides

    prog = _program(program)
    graph = _core.trace(prog, dim_overrides(dims))
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    need = _inputs_bytes(graph)
    if need > max_bytes:
        raise budget_error(
            [f"{need / 2**30:.2f} GiB for its inputs (budget {max_bytes / 2**30:.2f} GiB)"],
            graph,
            prog.file,
        )
    rng = np.random.default_rng(seed)
    bound = _index_bounds(graph)
    result = {}
    tensors = graph.tensors
    for (name, _, _, _), tid in zip(_core.model_inputs(prog), graph.inputs, strict=True):
        t = tensors[tid]
        dt = NUMPY_TYPES[t.dtype]
        if t.dtype in _FLOATS:
            draw = rng.standard_normal
        elif t.dtype == "bool":
            draw = lambda n: rng.random(n) < 0.5  # noqa: E731
        else:
            top = int(ml_dtypes.iinfo(dt).max) if t.dtype == "int4" else int(np.iinfo(dt).max)
            high = max(1, min(bound.get(t.storage, 8), top + 1))
            draw = lambda n, high=high: rng.integers(0, high, size=n)  # noqa: E731
        a = np.empty(tuple(t.shape), dt)
        flat = a.reshape(-1)
        for i in range(0, flat.size, _DRAW_BLOCK):
            flat[i : i + _DRAW_BLOCK] = draw(min(_DRAW_BLOCK, flat.size - i))
        result[name] = a
    return result
