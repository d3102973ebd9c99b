"""Reduced sizes for a program that does not fit a budget at its own sizes: which
module-level constants are sizes, and the one search over them that scaled validation (every
language) and measurement share. Nothing here imports a framework."""

from __future__ import annotations

import ast
import re

from .problem import int_constants

# Constants that are hyperparameters of a window, or counts of layers (they change how many
# operators the program has, not their sizes): never scaled.
_NOT_SIZES = re.compile(r"kernel|stride|pad|dilation|window|layer|depth", re.IGNORECASE)
# Sequence lengths are sizes, but recurrent modules unroll over them: tried unscaled when
# scaling everything changes the program's operators.
_SEQUENCE = re.compile(r"seq|len|step|time|^t$", re.IGNORECASE)
# Image sizes shrink through pooling stages: tried unscaled when small images fail.
_SPATIAL = re.compile(r"height|width|image|img|resolution|spatial|^h$|^w$|^hw$", re.IGNORECASE)
SCALE_MIN = 16  # constants below this (kernel sizes, small channel counts) keep their value
SCALE_FLOOR = 8  # a scaled constant never drops below this


def _loop_bounds(text: str) -> set[str]:
    """Names used as range() bounds in the program (loop counts, not sizes)."""
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "range":
            names |= {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}
    return names


def scalable_sizes(text: str) -> dict[str, int]:
    """The module-level integer constants of a problem file that reduced sizes may divide:
    at least SCALE_MIN, not named like a window hyperparameter or a layer count, and not a
    range() bound (a loop count)."""
    loops = _loop_bounds(text)
    return {
        k: v
        for k, v in int_constants(text).items()
        if v >= SCALE_MIN and not _NOT_SIZES.search(k) and k not in loops
    }


def start_factor(seconds: float, budget: float) -> int:
    """The first power-of-two divisor to try: run time falls at least as the cube of the
    sizes (a matrix product), so the smallest 2^k with seconds / 8^k within the budget."""
    start = 2
    while start < 2**20 and seconds / start**3 > budget:
        start *= 2
    return start


def size_search(sizes: dict, start: int, tries: int, base: dict | None = None):
    """A generator of candidate overrides: `sizes` divided by a power of two (at least
    SCALE_FLOOR each), first all of them, then all but sequence lengths, all but image
    sizes, all but both (recurrent unrolling and pooling stages change a program's
    operators). It yields (overrides, the constants this attempt scales) and takes back,
    through send(), what the caller found:

      "smaller": too small to capture (pooling stages): divide by less, from now on down;
      "larger": over the budget: divide by more (unless already going down: next attempt);
      "next": this attempt cannot work (the program's structure changes): the next one.

    Overrides seen before (every constant at its floor) are not yielded again."""
    base = dict(base or {})
    fixed_sequence = {k: v for k, v in sizes.items() if not _SEQUENCE.search(k)}
    fixed_spatial = {k: v for k, v in sizes.items() if not _SPATIAL.search(k)}
    fixed_both = {k: v for k, v in fixed_sequence.items() if k in fixed_spatial}
    tried: list[dict] = []
    for attempt in (sizes, fixed_sequence, fixed_spatial, fixed_both):
        if not attempt:
            continue
        factor, going_down = start, False
        for _ in range(tries):
            if factor < 2:
                break
            overrides = {**base, **{k: max(SCALE_FLOOR, v // factor) for k, v in attempt.items()}}
            if overrides in tried:
                break
            tried.append(overrides)
            verdict = yield overrides, attempt
            if verdict == "smaller":
                factor, going_down = factor // 2, True
            elif verdict == "larger" and not going_down:
                factor *= 2
            else:
                break


def run_search(search, step):
    """Drives a size_search: step(overrides, attempt) returns a verdict string or a
    result (anything else), which ends the search. None when every candidate failed."""
    verdict = None
    try:
        while True:
            overrides, attempt = search.send(verdict)
            out = step(overrides, attempt)
            if isinstance(out, str):
                verdict = out
            else:
                return out
    except StopIteration:
        return None


def scaled_run(text: str, graph, backend: str, max_seconds, step):
    """The reduced-size search of scaled validation (every front end): the size constants of
    the problem file's `text`, the first divisor from the full-size `graph`'s estimated run
    time against a quarter of the time budget, then step(overrides, sizes) per candidate (a
    verdict for size_search, or the result). Returns (result or None, sizes); sizes is {}
    when the file has no constants to scale."""
    from ..execution import DEFAULT_MAX_SECONDS, estimate_seconds

    sizes = scalable_sizes(text)
    if not sizes:
        return None, sizes
    seconds = estimate_seconds(graph, backend)
    start = start_factor(seconds, (max_seconds or DEFAULT_MAX_SECONDS) * 0.25)
    return run_search(size_search(sizes, start, 8), lambda o, a: step(o, sizes)), sizes
