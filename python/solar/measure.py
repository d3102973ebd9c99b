"""Measured headroom: time a PyTorch program on this machine and compare it with its SOL
bound at the sizes it ran (`solar analyze FILE --measure [--compile]`, docs/measure.md).

The program runs as the harness runs it (seeded, training mode, no .eval(), under
torch.no_grad()) on the local device (CUDA when available, else the CPU): warm-up runs, then
`repeats` timed runs, each on fresh copies of the inputs and after flushing the caches
(writing then reading a buffer of twice the last-level cache). The median and the minimum
are reported; `headroom = measured median / SOL`. A run faster than the fused bound is a
**SOL violation**: the bound is wrong (a peak or a bandwidth too low, or a byte or FLOP
counted that the program need not move or compute).

Sizes: at full size when the program fits the measurement budget (memory of its arrays and
an estimated run time), else with its module-level size constants divided by a power of two
as scaled validation does (`solar.frontend.validate.validate_scaled`); the SOL compared
against is always computed at the measured sizes.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import _core
from .errors import UserError, argument_error
from .session import analyze_graph

# Per timed run: the estimated IR execution time (solar.execution.estimate_seconds, about 4x
# slower than PyTorch here) and the peak bytes of live arrays. Above either, sizes shrink.
MEASURE_MAX_SECONDS = float(os.environ.get("SOLAR_MEASURE_MAX_SECONDS", 1.0))
MEASURE_MAX_BYTES = int(os.environ.get("SOLAR_MEASURE_MAX_BYTES", 1 << 30))
DEFAULT_REPEATS = 5
DEFAULT_WARMUP = 2


@dataclass
class Timing:
    """Seconds of each timed run of one variant (eager or compiled)."""

    seconds: list

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def min(self) -> float:
        return min(self.seconds)

    def to_json(self) -> dict:
        return {
            "median_seconds": self.median,
            "min_seconds": self.min,
            "seconds": list(self.seconds),
        }


@dataclass
class ArchSol:
    """The SOL bound of the measured sizes on one architecture."""

    arch: str
    unfused_seconds: float
    fused_seconds: float
    flops: int
    fused_bytes: int
    cache_aware_seconds: float | None = None  # None: the arch has no cache level


@dataclass
class Measurement:
    source: str
    device: str  # "cpu" | "cuda"
    device_name: str
    sizes: dict  # constant -> value the program ran with ({} at its own sizes)
    full_size: bool
    sizes_detail: str
    repeats: int
    warmup: int
    flush_bytes: int
    eager: Timing
    compiled: Timing | None = None
    compile_seconds: float = 0.0
    compile_error: str = ""
    sols: list = field(default_factory=list)  # ArchSol per architecture, in order
    notes: list = field(default_factory=list)  # e.g. a local bandwidth raised by a probe

    def headroom(self, i: int = 0) -> dict:
        """measured median / SOL per run and mode; None where the bound is 0 (a program that
        only returns views of its inputs has nothing to compute or move)."""
        s = self.sols[i]

        def ratio(t: float, sol: float) -> float | None:
            return t / sol if sol > 0 else None

        out = {
            "eager_fused": ratio(self.eager.median, s.fused_seconds),
            "eager_unfused": ratio(self.eager.median, s.unfused_seconds),
        }
        if self.compiled is not None:
            out["compile_fused"] = ratio(self.compiled.median, s.fused_seconds)
            out["compile_unfused"] = ratio(self.compiled.median, s.unfused_seconds)
        return out

    def margin(self, i: int = 0) -> float | None:
        """Fastest run / fused bound (< 1 is a violation); None when the bound is 0."""
        return self.margins(i)["fused"]

    def _checks(self, i: int) -> list[tuple[str, str, float | None]]:
        """(mode, run, bound seconds) pairs each run must not beat: every run against the
        fused and cache-aware bounds; eager, which runs each source operator as at least one
        kernel, also against the unfused bound (torch.compile fuses, so it may beat it)."""
        s = self.sols[i]
        runs = [("eager", self.eager)] + (
            [("torch.compile", self.compiled)] if self.compiled is not None else []
        )
        out = []
        for name, t in runs:
            out.append(("fused", name, t, s.fused_seconds))
            out.append(("cache-aware", name, t, s.cache_aware_seconds))
        out.append(("unfused", "eager", self.eager, s.unfused_seconds))
        return out

    def margins(self, i: int = 0) -> dict:
        """Per mode, the fastest checked run / the bound (< 1 is a violation): "fused" and
        "cache_aware" over eager and torch.compile, "unfused" over eager; None where the
        bound is 0 or absent (no cache level)."""
        out: dict = {"fused": None, "cache_aware": None, "unfused": None}
        for mode, _, t, sol in self._checks(i):
            if not sol:
                continue
            key = mode.replace("-", "_")
            r = t.min / sol
            out[key] = r if out[key] is None else min(out[key], r)
        return out

    def violations(self, i: int = 0) -> list[str]:
        out = []
        for mode, name, t, sol in self._checks(i):
            if sol and t.min < sol:
                out.append(
                    f"SOL VIOLATION: {name} ran in {t.min:.4g} s, faster than the {mode} bound "
                    f"{sol:.4g} s on {self.sols[i].arch} ({t.min / sol:.3f}x): "
                    "the bound or its spec is wrong (docs/measure.md)"
                )
        return out

    def to_json(self, i: int = 0) -> dict:
        s = self.sols[i]
        compiled = None
        if self.compiled is not None:
            compiled = {**self.compiled.to_json(), "compile_seconds": self.compile_seconds}
        elif self.compile_error:
            compiled = {"error": self.compile_error}
        return {
            "device": self.device,
            "device_name": self.device_name,
            "sizes": dict(self.sizes),
            "full_size": self.full_size,
            "sizes_detail": self.sizes_detail,
            "repeats": self.repeats,
            "warmup": self.warmup,
            "cache_flush_bytes": self.flush_bytes,
            "eager": self.eager.to_json(),
            "compile": compiled,
            "sol": {
                "arch": s.arch,
                "unfused_seconds": s.unfused_seconds,
                "fused_seconds": s.fused_seconds,
                "cache_aware_seconds": s.cache_aware_seconds,
                "flops": s.flops,
                "fused_bytes": s.fused_bytes,
            },
            "headroom": self.headroom(i),
            "margin": self.margin(i),
            "margins": self.margins(i),
            "violations": self.violations(i),
            "notes": list(self.notes),
        }


# --- sizes -----------------------------------------------------------------------------


def _measure_error(message: str, hint: str) -> UserError:
    """A user error of kind `measure` (the batch reports its stage as `measure`)."""
    from .frontend.capture import frontend_error

    return frontend_error("measure", message, hint)


def _over_budget(graph, max_bytes: int, max_seconds: float) -> str:
    """Why running `graph` does not fit one timed run's budget ("" when it fits)."""
    from .execution import estimate_seconds

    peak, _, _ = _core.estimate_cost(graph)
    seconds = estimate_seconds(graph, "native")
    why = []
    if peak > max_bytes:
        why.append(f"{peak / 2**30:.2f} GiB of arrays (budget {max_bytes / 2**30:.2f} GiB)")
    if seconds > max_seconds:
        why.append(f"an estimated {seconds:.2g} s a run (budget {max_seconds:g} s)")
    return " and ".join(why)


def is_jax(path: str) -> bool:
    from .frontend.jax.capture import is_jax_program

    return is_jax_program(path)


def _lowered_graph(path: str, overrides: dict, mode: str | None = None):
    """(graph, lowered) of the problem (PyTorch or JAX) at the given constant overrides."""
    from .frontend.validation import in_lowered_text, load_lowered

    if is_jax(path):
        from .jax import lower_jax

        _, lowered = lower_jax(path, overrides=overrides or None)
    else:
        from .pytorch import lower_pytorch

        _, lowered = lower_pytorch(path, overrides=overrides or None, mode=mode)
    with in_lowered_text(lowered.source):
        return _core.trace(load_lowered(lowered), []), lowered


def choose_sizes(
    path: str,
    graph,
    base: dict | None = None,
    max_bytes: int = MEASURE_MAX_BYTES,
    max_seconds: float = MEASURE_MAX_SECONDS,
    mode: str | None = None,
):
    """(overrides, graph at those sizes, detail): the program's own sizes (after `base`,
    the user's --dim overrides) when they fit the budget, else its size constants divided by
    the smallest power of two that fits, with the rules and helpers of scaled validation."""
    from .execution import estimate_seconds
    from .frontend.problem import override_constants
    from .frontend.sizes import run_search, scalable_sizes, size_search, start_factor

    base = dict(base or {})
    why = _over_budget(graph, max_bytes, max_seconds)
    if not why:
        return base, graph, "at the program's own sizes" + (" (--dim)" if base else "")
    text = Path(path).read_text()
    if base:
        text = override_constants(text, base)
    sizes = scalable_sizes(text)
    if not sizes:
        raise _measure_error(
            f"cannot measure {path}: it needs {why} and has no module-level size constants "
            "to reduce",
            "raise the budget ($SOLAR_MEASURE_MAX_SECONDS, $SOLAR_MEASURE_MAX_BYTES) or "
            "give smaller sizes with --dim NAME=VALUE",
        )
    start = start_factor(estimate_seconds(graph, "native"), max_seconds)
    last = why
    slow: list[tuple] = []  # (estimate, overrides, graph, scaled): within memory, over time

    def step(overrides, attempt):
        nonlocal last
        try:
            small, _ = _lowered_graph(path, overrides, mode)
        except UserError as e:  # too small to capture (pooling stages): less reduction
            last = e.diagnostics[0].message if e.diagnostics else str(e)
            return "smaller"
        over = _over_budget(small, max_bytes, max_seconds)
        scaled = ", ".join(f"{k} {sizes[k]}->{overrides[k]}" for k in attempt)
        if over and _core.estimate_cost(small)[0] <= max_bytes:  # over time only
            estimate = estimate_seconds(small, "native")
            slow.append((estimate, overrides, small, scaled))
        if over:
            last = over
            return "larger"
        return overrides, small, f"at reduced sizes ({scaled}): full size needs {why}"

    found = run_search(size_search(sizes, start, 10, base), step)
    if found is not None:
        return found
    if slow:
        # The estimate is the IR executor's conservative rate, often far slower than PyTorch
        # (vgg_block_stack: 27 s estimated, 0.7 s measured): one timed run at the smallest
        # reduced size decides.
        estimate, overrides, small, scaled = min(slow, key=lambda c: c[0])
        trial = trial_seconds(path, overrides, mode)
        if trial <= max_seconds:
            return (
                overrides,
                small,
                f"at reduced sizes ({scaled}): full size needs {why}; at these sizes the "
                f"estimate is {estimate:.2g} s a run, a trial run took {trial:.2g} s",
            )
        last = f"{last}; a trial run at the smallest ({scaled}) took {trial:.2g} s"
    raise _measure_error(
        f"cannot measure {path}: it needs {why} and no reduced size fits ({last})",
        "raise the budget ($SOLAR_MEASURE_MAX_SECONDS, $SOLAR_MEASURE_MAX_BYTES) or give "
        "sizes with --dim NAME=VALUE",
    )


# --- timing ----------------------------------------------------------------------------


def device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _device_name(dev: str) -> str:
    import torch

    if dev == "cuda":
        return torch.cuda.get_device_name(0)
    from .local_arch import parse_cpuinfo

    try:
        model = parse_cpuinfo(Path("/proc/cpuinfo").read_text()).model
    except OSError:
        model = ""
    return f"{model or 'CPU'} ({torch.get_num_threads()} threads)"


def flush_bytes(dev: str) -> int:
    """Bytes written then read between timed runs: twice the last-level cache (L2 of a GPU),
    at least 64 MiB."""
    import torch

    if dev == "cuda":
        llc = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)
    else:
        from .local_arch import last_level_cache

        llc = last_level_cache()[0]
    return max(2 * llc, 64 * 2**20)


def build(path: str, overrides: dict, seed: int, dev: str, mode: str | None = None):
    """(model, inputs, problem module) on `dev`, seeded as the harness seeds them
    (docs/pytorch.md): the problem's model seen through its flat signature (frontend/flat.py),
    its tensor inputs and the imported problem file (what torch.compile must be able to
    import: problem.importable)."""
    from .frontend.capture import build_problem, load_problem
    from .frontend.flat import flat_module, signature

    p = load_problem(path, overrides or None)
    module, example = build_problem(p, mode, seed)
    sig, inputs = signature(example)
    model = flat_module(module.to(dev), sig)
    return model, [t.to(dev) for t in inputs], p.module


def trial_seconds(path: str, overrides: dict, mode: str | None = None) -> float:
    """Seconds of one run (no warm-up) of the problem at `overrides`, for choosing sizes."""
    if is_jax(path):
        dev = jax_device()
        fn, inputs = build_jax(path, overrides, 0)
        return time_jax_runs(fn, inputs, dev, 1, 0, 0, path).min
    dev = device()
    model, inputs, _ = build(path, overrides, 0, dev, mode)
    return time_runs(model, inputs, dev, 1, 0, 0, path).min


def grad_mode(fn, inputs, path: str):
    """The autograd mode to run `fn` in: no_grad, or autograd on for a forward pass that
    computes gradients itself (`y.backward(dy)` in a backward kernel's reference, which
    fails under no_grad; docs/pytorch.md, "Gradients computed in forward"). Decided by one
    call, before any timing: measure() decides once for all its runs of the program."""
    import torch

    from .errors import UserError
    from .frontend.capture import AUTOGRAD_IN_FORWARD, _call_user

    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    try:
        with torch.no_grad():
            _call_user(lambda: fn(*args), "the forward pass", path)
    except UserError as e:
        if AUTOGRAD_IN_FORWARD in str(e):
            return torch.enable_grad
        raise
    return torch.no_grad


def time_runs(
    fn, inputs, dev: str, repeats: int, warmup: int, flush: int, path: str, grad=None
) -> Timing:
    """`repeats` timed calls of fn(*copies of inputs), each after a cache flush, in the
    autograd mode `grad` (None: grad_mode decides)."""
    import torch

    from .frontend.capture import _call_user

    buffer = torch.empty(flush // 4, dtype=torch.float32, device=dev)

    def fresh():
        return [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    seconds = []
    with (grad or grad_mode(fn, inputs, path))():
        for _ in range(warmup):
            _call_user(lambda: fn(*fresh()), "the forward pass", path)
        for i in range(repeats):
            args = fresh()
            buffer.fill_(float(i))  # write, then read: the inputs and weights leave the caches
            float(buffer.sum())
            sync()
            t0 = time.perf_counter()
            _call_user(lambda: fn(*args), "the forward pass", path)  # noqa: B023
            sync()
            seconds.append(time.perf_counter() - t0)
    return Timing(seconds)


# --- timing a JAX program -----------------------------------------------------------


def jax_device() -> str:
    import jax

    return "cuda" if jax.default_backend() == "gpu" else "cpu"


def _jax_device_name(dev: str) -> str:
    import jax

    if dev == "cuda":
        return jax.devices()[0].device_kind
    return _device_name("cpu").split(" (")[0] + " (XLA CPU)"


def build_jax(path: str, overrides: dict, seed: int):
    """(fn, inputs): the jitted function of a JAX problem at `overrides` with its
    parameters bound, and its inputs, made with the keys validation uses (docs/jax.md)."""
    import jax

    from .frontend.jax.capture import capture_problem, real_arguments

    program = capture_problem(path, overrides or None).program
    params, inputs = real_arguments(program, path, seed)
    params, inputs = jax.device_put((params, list(inputs)))
    jitted = jax.jit(program.fn)
    return (lambda *xs: jitted(params, *xs)), inputs


def time_jax_runs(fn, inputs, dev: str, repeats: int, warmup: int, flush: int, path: str):
    """As time_runs, for a jitted JAX function: the first call compiles and is never timed
    (one untimed call even with warmup 0); each timed call waits for its results
    (block_until_ready) after a flush of `flush` bytes written and read on the device."""
    import jax
    import jax.numpy as jnp

    from .frontend.jax.capture import _call_user

    buffer = jnp.zeros(max(flush // 4, 1), dtype=jnp.float32)
    touch = jax.jit(lambda b, v: (b + v).sum())
    jax.block_until_ready(touch(buffer, 0.0))
    for _ in range(max(warmup, 1)):
        _call_user(lambda: jax.block_until_ready(fn(*inputs)), "the JAX program", path)
    seconds = []
    for i in range(repeats):
        if flush:
            jax.block_until_ready(touch(buffer, float(i)))
        t0 = time.perf_counter()
        _call_user(lambda: jax.block_until_ready(fn(*inputs)), "the JAX program", path)
        seconds.append(time.perf_counter() - t0)
    return Timing(seconds)


def view_outputs(fn, inputs, path: str, graph=None, grad=None) -> list[str]:
    """Notes on outputs that are views of an input the forward pass left unchanged whose
    lowered program copies them (x.diagonal(): the lowering copies the diagonal): PyTorch
    moves no data for them, the bound counts that copy, so such a program can run faster
    than its bound. Outputs the lowering keeps as views (reshape, slice, expand, unfold, a
    returned permute, ...) alias an input in the graph too and cost nothing there: no note.
    `graph`: the graph of the measured sizes (None: note every aliasing output); `grad`:
    the autograd mode (None: grad_mode decides)."""
    import torch

    from .frontend.capture import _call_user

    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    with (grad or grad_mode(fn, inputs, path))():
        out = _call_user(lambda: fn(*args), "the forward pass", path)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    notes = []
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            continue
        if graph is not None and i < len(graph.outputs):
            storage = graph.tensors[graph.tensors[graph.outputs[i]].storage]
            if storage.producer < 0:  # the lowered output aliases an input: costs nothing
                continue
        for j, a in enumerate(args):
            if (
                isinstance(a, torch.Tensor)
                and o.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
                and torch.equal(a, inputs[j])
            ):
                notes.append(
                    f"output {i} is a view of input {j} that the program leaves unchanged: "
                    "PyTorch moves no data for it, but the lowered program copies it and the "
                    "bound counts that copy (a lowering artefact, not a measurement error)"
                )
                break
    return notes


def measure(
    path: str,
    graph,
    archs: list,
    fp32_math: str = "default",
    base: dict | None = None,
    repeats: int = DEFAULT_REPEATS,
    warmup: int = DEFAULT_WARMUP,
    compile: bool = False,
    seed: int = 0,
    mode: str | None = None,
) -> Measurement:
    """Times the problem file `path` (whose full-size graph, after the user's overrides
    `base`, is `graph`) and computes the SOL of the measured sizes on each of `archs`. A
    JAX program is timed jitted (its `eager` timing is the compiled function's)."""
    if repeats < 1 or warmup < 0:
        raise argument_error("--repeats must be at least 1 and --warmup at least 0")
    jax_program = is_jax(path)
    if jax_program and compile:
        raise argument_error(
            "--compile times torch.compile; a JAX program is always timed jitted (docs/jax.md)"
        )
    overrides, small, detail = choose_sizes(path, graph, base, mode=mode)
    from .local_arch import is_local, probe_bandwidth

    local = any(is_local(a) for a in archs)
    before = probe_bandwidth()[0] if local else 0.0
    if jax_program:
        dev = jax_device()
        flush = flush_bytes("cpu") if dev == "cpu" else 256 * 2**20
        fn, inputs = build_jax(path, overrides, seed)
        eager = time_jax_runs(fn, inputs, dev, repeats, warmup, flush, path)
        name = _jax_device_name(dev)
    else:
        dev = device()
        flush = flush_bytes(dev)
        model, inputs, problem = build(path, overrides, seed, dev, mode)
        grad = grad_mode(model, inputs, path)
        eager = time_runs(model, inputs, dev, repeats, warmup, flush, path, grad)
        name = _device_name(dev)
    m = Measurement(
        source=path,
        device=dev,
        device_name=name,
        sizes={k: v for k, v in overrides.items()},
        full_size=small is graph,
        sizes_detail=detail,
        repeats=repeats,
        warmup=warmup,
        flush_bytes=flush,
        eager=eager,
    )
    if jax_program:
        m.notes.append(
            "a JAX program is timed as jax.jit compiles it (the first call compiles and is "
            "not timed); its 'eager' row is the jitted function"
        )
    else:
        m.notes += view_outputs(model, inputs, path, small, grad)
    if compile:
        import torch

        from .frontend.problem import importable

        try:
            compiled = torch.compile(model)
            with importable(problem):  # dynamo imports the problem's module by its name
                t0 = time.perf_counter()
                with grad():
                    compiled(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])
                if dev == "cuda":
                    torch.cuda.synchronize()
                m.compile_seconds = time.perf_counter() - t0
                m.compiled = time_runs(compiled, inputs, dev, repeats, warmup, flush, path, grad)
        except UserError:
            raise
        except Exception as e:  # torch.compile's own failure: reported, eager still stands
            first = str(e).splitlines()[0] if str(e) else ""
            m.compile_error = f"torch.compile failed: {type(e).__name__}: {first}"[:300]
    if local:
        after = probe_bandwidth()[1]
        if after > before:
            m.notes.append(
                f"the local spec's DRAM bandwidth was raised from {before / 1e9:.3g} to "
                f"{after / 1e9:.3g} GB/s by STREAM probes around the timed runs; the SOL above "
                "the measurement uses the new rate"
            )
            archs = [
                _core.load_arch(a.file, str(Path(a.file).parent)) if is_local(a) else a
                for a in archs
            ]
    for arch in archs:
        a = analyze_graph(small, arch, fp32_math, True)  # every mode is checked against runs
        cached = a.cache_aware.seconds if a.cache_aware is not None else None
        m.sols.append(
            ArchSol(
                arch.name, a.unfused.seconds, a.fused.seconds, a.fused.flops, a.fused.bytes, cached
            )
        )
    return m


def report_text(m: Measurement, i: int = 0) -> str:
    """The lines `solar analyze --measure` prints under the SOL table of architecture i."""
    from .report import seconds

    s = m.sols[i]
    sizes = ", ".join(f"{k}={v}" for k, v in m.sizes.items()) or "the program's own"
    lines = [
        f"Measured on {m.device} ({m.device_name}): {m.warmup} warm-up + {m.repeats} timed "
        f"runs, caches flushed ({m.flush_bytes / 2**20:.0f} MiB) before each",
        f"  sizes: {sizes} — {m.sizes_detail}",
        f"  SOL at these sizes on {s.arch}: unfused {seconds(s.unfused_seconds)}, "
        f"fused {seconds(s.fused_seconds)}",
    ]
    h = m.headroom(i)
    rows = [("eager", m.eager, h["eager_fused"], h["eager_unfused"])]
    if m.compiled is not None:
        rows.append(("compile", m.compiled, h["compile_fused"], h["compile_unfused"]))
    for name, t, hf, hu in rows:
        head = (
            f"headroom {hf:.2f}x over fused SOL, {hu:.2f}x over unfused"
            if hf is not None and hu is not None
            else "no headroom: the bound is 0 (nothing to compute or move)"
        )
        lines.append(f"  {name:8s} median {seconds(t.median)}, min {seconds(t.min)}; {head}")
    if m.compiled is not None:
        lines.append(f"  torch.compile took {m.compile_seconds:.1f} s (not in the times above)")
    if m.compile_error:
        lines.append(f"  {m.compile_error}")
    lines += [f"  note: {n}" for n in m.notes]
    if m.device == "cuda" and "local" in s.arch.lower():
        lines.append("  note: the local spec describes this machine's CPU, not its GPU")
    for v in m.violations(i):
        lines.append("!" * 88)
        lines.append(f"  {v}")
        lines.append("!" * 88)
    return "\n".join(lines)


def measurement_json(m: Measurement) -> list[str]:
    """The `measurement` object of each architecture's analysis as JSON text, for the core's
    analysis JSON writer (`_core.analysis_json(..., measurements=...)`, docs/json-schema.md)."""
    import json

    return [json.dumps(m.to_json(i)) for i in range(len(m.sols))]


def batch_summary(results: list[dict]) -> list[str]:
    """Summary lines of the measured workloads of a batch (`solar batch --measure`): count,
    geometric-mean headroom over the fused bound (eager, torch.compile), the smallest margin
    (fastest run / fused bound) and every SOL violation."""
    import math

    measured = [(r["source"], r["measurement"]) for r in results if r.get("measurement")]
    if not measured:
        return []

    def geomean(values):
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0

    bounded = [(s, m) for s, m in measured if m["margin"] is not None]
    eager = [m["headroom"]["eager_fused"] for _, m in bounded]
    compiled = [
        m["headroom"]["compile_fused"]
        for _, m in bounded
        if m["headroom"].get("compile_fused") is not None
    ]
    lines = [
        f"measured: {len(measured)} workloads on {measured[0][1]['device']}; geomean headroom "
        f"over fused SOL: eager {geomean(eager):.2f}x"
        + (f", torch.compile {geomean(compiled):.2f}x ({len(compiled)})" if compiled else "")
    ]
    folders: dict[str, list[float]] = {}
    for s, m in bounded:
        folders.setdefault(Path(s).parent.name, []).append(m["headroom"]["eager_fused"])
    if len(folders) > 1:  # workloads/level1, level2, ...: eager geomean per folder
        lines.append(
            "  by folder: "
            + ", ".join(f"{f} {geomean(v):.2f}x ({len(v)})" for f, v in sorted(folders.items()))
        )
    if len(bounded) < len(measured):
        zero = [Path(s).name for s, m in measured if m["margin"] is None]
        lines.append(
            f"bound 0 (nothing to compute or move; no headroom): {len(zero)} ({', '.join(zero)})"
        )
    if bounded:
        source, tightest = min(bounded, key=lambda sm: sm[1]["margin"])
        lines.append(
            f"smallest margin (fastest run / fused SOL): {tightest['margin']:.3f}x "
            f"({Path(source).name})"
        )
    others = []
    for key, text in (("cache_aware", "cache-aware"), ("unfused", "unfused, eager")):
        with_mode = [(s, m["margins"][key]) for s, m in measured if m.get("margins", {}).get(key)]
        if with_mode:
            source, value = min(with_mode, key=lambda sv: sv[1])
            others.append(f"{text} {value:.3f}x ({Path(source).name}; {len(with_mode)} bounded)")
    if others:
        lines.append("smallest margins of the other modes: " + "; ".join(others))
    violations = [(s, v) for s, m in measured for v in m["violations"]]
    if violations:
        lines.append(f"SOL VIOLATIONS: {len(violations)}")
        lines += [f"  {Path(s).name}: {v}" for s, v in violations]
    else:
        lines.append("SOL violations: none")
    return lines
