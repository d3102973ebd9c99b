"""The core's session of this process (src/pipeline/session.h): the kernels the native
backend has loaded and the cache-aware mode's tiling searches, kept between calls. The C++
core holds no process-wide state; this module holds the one session the Python layer passes
to it. A process forked from this one (a warm batch worker) inherits a copy."""

from __future__ import annotations

import contextlib
import contextvars
import functools

# The starting state of the analyses made inside `starting_state(warm=...)` (docs/sol-modes.md,
# "Starting state"): False, inputs and weights start in DRAM; True, --warm.
_WARM = contextvars.ContextVar("solar_warm", default=False)


@contextlib.contextmanager
def starting_state(warm: bool):
    """Every analyze_graph call inside (front ends included) uses this starting state, unless
    it passes `warm` itself."""
    token = _WARM.set(bool(warm))
    try:
        yield
    finally:
        _WARM.reset(token)


@functools.cache
def core_session():
    """The process's `_core.Session`, made on first use."""
    from . import _core

    return _core.Session()


def analyze_graph(graph, arch, fp32_math="default", cache_aware: bool = True, warm=None):
    """`_core.analyze` with the process's session: tiling searches are shared between the
    analyses of one process (the same graph on several archs, a sweep, a measurement).
    `fp32_math`: an --fp32-math value, or a solar.accuracy.MathPolicy that adds the
    accuracy contract and a quantisation recipe (front ends pass it through unchanged).
    `warm`: the starting state (None: the enclosing `starting_state`, cold by default)."""
    from . import _core
    from .accuracy import unpack

    fp32, accuracy, quantize, kv_cache = unpack(fp32_math)
    warm = _WARM.get() if warm is None else bool(warm)
    session = core_session()
    return _core.analyze(
        graph, arch, fp32, cache_aware, session, accuracy, warm, quantize, kv_cache
    )


def analysed_graph(graph, analysis):
    """The graph `analysis` priced: `graph`, or under a quantisation recipe the graph with the
    recipe applied (the same nodes; their bytes, FLOPs and matrix formats as analysed), for
    tables and plots that read nodes beside the analysis's per-node results."""
    from . import _core

    q = analysis.quantization
    return graph if q is None else _core.quantized_graph(graph, q.recipe, q.kv_format)
