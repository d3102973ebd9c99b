"""The core's session of this process (src/pipeline/session.h): the kernels the native
backend has loaded and the cache-aware mode's tiling searches, kept between calls. The C++
core holds no process-wide state; this module holds the one session the Python layer passes
to it. A process forked from this one (a warm batch worker) inherits a copy."""

from __future__ import annotations

import functools


@functools.cache
def core_session():
    """The process's `_core.Session`, made on first use."""
    from . import _core

    return _core.Session()


def analyze_graph(graph, arch, fp32_math="default", cache_aware: bool = True):
    """`_core.analyze` with the process's session: tiling searches are shared between the
    analyses of one process (the same graph on several archs, a sweep, a measurement).
    `fp32_math`: an --fp32-math value, or a solar.accuracy.MathPolicy that adds the
    accuracy contract (front ends pass it through unchanged)."""
    from . import _core
    from .accuracy import unpack

    fp32, accuracy = unpack(fp32_math)
    return _core.analyze(graph, arch, fp32, cache_aware, core_session(), accuracy)
