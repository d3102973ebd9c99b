"""Solar: validated speed-of-light bounds for deep-learning programs.

The C++ core parses and checks Affine Loop IR programs, traces them into einsum graphs and
computes SOL bounds; this package is the thin Python layer over it::

    import solar
    graph = solar.trace("examples/ir/linear_bias_matmul.py")
    result = solar.analyze(graph, arch="H100_PCIe")
    print(result.fused.seconds, result.fused.bottleneck.kind)
"""

from __future__ import annotations

import os

from . import _core
from .errors import Diagnostic, InternalError, UserError
from .session import analyze_graph

__all__ = [
    "Diagnostic",
    "make_inputs",
    "run",
    "InternalError",
    "UserError",
    "analyze",
    "arch_dir",
    "chains",
    "cache_aware_curve",
    "cache_aware_node_curves",
    "check",
    "fake_tensors",
    "format_source",
    "graph_yaml",
    "inverse_roofline",
    "list_archs",
    "load_arch",
    "sweep",
    "trace",
    "translate",
]

from .api import (  # noqa: F401 (re-exported)
    __version__,
    arch_dir,
    check,
    dim_overrides,
    list_archs,
    load_arch,
    refuse_source_program,
    trace,
)


def analyze(
    graph,
    example_inputs=None,
    arch="H100_PCIe",
    fp32_math: str = "default",
    dims=None,
    validate: bool = True,
    cache_aware: bool = True,
    mode: str | None = None,
    training: bool = False,
    params=None,
    accuracy: str | None = None,
    warm: bool = False,
    quantize: str | None = None,
    kv_cache: str | None = None,
):
    """SOL analysis (unfused, fused and, unless cache_aware=False, cache-aware) on one
    architecture of: an einsum graph, an IR file, a PyTorch problem file, or an nn.Module with
    example inputs. For PyTorch the result also carries the emitted IR and its validation
    (solar.pytorch.PyTorchResult). cache_aware=False skips the cache-aware bound and the
    tiling search; the result's cache_aware is then None and cache.reason says why. For
    PyTorch, example_inputs is a list of positional arguments, a dict of keyword arguments
    (a Hugging Face model's input_ids=...) or {"args": [...], "kwargs": {...}}; mode "train" or
    "eval" sets the module's mode for the analysis (default: the module's own mode; a
    problem file's Model is built in training mode, the KernelBench convention); training=True
    analyses a training step: forward and backward of the sum of the floating outputs, with
    the gradients of every parameter (docs/pytorch.md, "Training steps"). A JAX function, a
    jitted one, a Flax module or a JAX problem file is analysed the same way (docs/jax.md):
    example_inputs are its positional arguments (arrays or jax.ShapeDtypeStruct), `params`
    a linen module's variables or a function's first argument (fn(params, *inputs)).
    `dims` overrides sizes as `--dim` does: DIMS entries of an IR program, module-level size
    constants of a PyTorch or JAX problem file. `accuracy` is the accuracy contract, as
    `solar analyze --accuracy` (docs/sol-modes.md, "The accuracy contract"): None takes
    KernelBench's 1e-2 for PyTorch and JAX and no contract for an IR program or graph;
    "framework" keeps the framework's settings.
    `warm` is `solar analyze --warm` (docs/sol-modes.md, "Starting state"): a kernel repeated
    without flushing, the last-level cache serving up to its capacity of the fused and
    cache-aware bounds' DRAM bytes; the default, False, starts inputs and weights in DRAM.
    `quantize` is `solar analyze --quantize` (docs/sol-modes.md, "Quantisation recipes"): a
    recipe ("w4a16", "w4a4", "fp8", ...) applied to the contractions that read a weight; the
    result's `quantization` (or each analysis's) says what it changed. `kv_cache` is
    `--kv-cache` (fp8, int8, nvfp4): the KV cache a decode step appends to is stored and
    multiplied in that format."""
    from .session import starting_state

    with starting_state(warm=warm):
        return _analyze(
            graph,
            example_inputs,
            arch,
            fp32_math,
            dims,
            validate,
            cache_aware,
            mode,
            training,
            params,
            accuracy,
            quantize,
            kv_cache,
        )


def _analyze(
    graph,
    example_inputs,
    arch,
    fp32_math,
    dims,
    validate,
    cache_aware,
    mode,
    training,
    params,
    accuracy,
    quantize,
    kv_cache,
):
    from . import accuracy as contract

    def policy(kind: str):
        if accuracy is not None:
            chosen = contract.parse(accuracy, fp32_math)
        else:
            chosen = contract.default_policy(kind, fp32_math)
        return contract.with_quantize(chosen, quantize, kv_cache)

    if _is_jax_callable(graph) or (isinstance(graph, (str, os.PathLike)) and _is_jax_file(graph)):
        from .jax import analyze_jax

        return analyze_jax(
            graph,
            example_inputs,
            params,
            archs=(arch,),
            fp32_math=policy("jax"),
            validate=validate,
            cache_aware=cache_aware,
            overrides=dict(dim_overrides(dims)) or None,
        )
    if _is_torch_module(graph) or (
        isinstance(graph, (str, os.PathLike)) and _is_pytorch_file(graph)
    ):
        from .pytorch import analyze_pytorch

        return analyze_pytorch(
            graph,
            example_inputs,
            archs=(arch,),
            fp32_math=policy("pytorch"),
            validate=validate,
            cache_aware=cache_aware,
            mode=mode,
            training=training,
            overrides=dict(dim_overrides(dims)) or None,
        )
    if not isinstance(graph, _core.Graph):
        graph = trace(graph, dims)
    if not isinstance(arch, _core.ArchSpec):
        arch = load_arch(arch)
    return analyze_graph(graph, arch, policy("ir"), cache_aware)


def cache_aware_curve(graph, arch="H100_PCIe") -> list[dict]:
    """The graph's cache-aware DRAM traffic versus on-chip capacity, as plain data:
    [{"capacity_bytes": float, "dram_bytes": int, "schedule_bytes": int or None}, ...]
    ascending in capacity; dram_bytes is the proven lower bound, schedule_bytes the best
    schedule found (achievable, not a bound). Capacities: powers of two from 1 KiB up to past
    the sum of all tensor bytes, plus the capacity of the arch's cache level (if it has one).
    `graph` is a Graph or an IR file; `arch` a name or spec."""
    from .curve import curves

    return curves(*_graph_and_arch(graph, arch))[0]


def cache_aware_node_curves(graph, arch="H100_PCIe") -> list[dict]:
    """The same curve for every node alone: [{"node": name, "points": [{"capacity_bytes",
    "dram_bytes", "schedule_bytes"}, ...]}, ...] in execution order, at the same capacities."""
    from .curve import curves

    return curves(*_graph_and_arch(graph, arch), per_node=True)[1]


def fake_tensors():
    """A context in which PyTorch tensors are fake (shapes, dtypes and a CPU device; no
    storage): build a model at its published size inside it and pass it to solar.analyze
    with validate=False, nothing is allocated.

        with solar.fake_tensors():
            model = LlamaForCausalLM(config)
            ids = torch.zeros(1, 4096, dtype=torch.long)
        solar.analyze(model, {"input_ids": ids}, validate=False)
    """
    from .frontend.capture import fake_tensors as fake

    return fake()


def _graph_and_arch(graph, arch):
    if not isinstance(graph, _core.Graph):
        graph = trace(graph)
    if not isinstance(arch, _core.ArchSpec):
        arch = load_arch(arch)
    return graph, arch


def _is_torch_module(obj) -> bool:
    return type(obj).__module__ != "builtins" and any(
        c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(obj).__mro__
    )


def _is_jax_file(path) -> bool:
    from .frontend.kind import program_kind

    return program_kind(path) == "jax"


def _is_jax_callable(obj) -> bool:
    """A Flax module, or a function that is no IR program (a jitted or plain function given
    with example arguments)."""
    module = type(obj).__module__
    if module.startswith("flax"):
        return True
    return any(c.__module__.startswith("flax") for c in type(obj).__mro__) or (
        callable(obj)
        and not isinstance(obj, (str, os.PathLike, _core.Program, _core.Graph))
        and not _is_torch_module(obj)
        and (module.startswith("jax") or type(obj).__name__ == "function")
    )


def _is_pytorch_file(path) -> bool:
    from .frontend.kind import program_kind

    return program_kind(path) == "pytorch"


def format_source(text: str, file: str = "<string>") -> str:
    """Parse IR source text and print it back in canonical layout."""
    return _core.format_source(text, file)


def graph_yaml(graph) -> str:
    """The einsum-graph sidecar (YAML) of a graph."""
    return graph.to_yaml()


def run(program, inputs, dims=None, backend: str = "native", bounds_check: bool = True, **budget):
    """Execute model() on concrete inputs; see solar.execution.run."""
    from .execution import run as _run

    return _run(program, inputs, dims=dims, backend=backend, bounds_check=bounds_check, **budget)


def make_inputs(program, seed: int = 0, dims=None, max_bytes=None):
    """Random inputs for model(); see solar.execution.make_inputs."""
    from .execution import make_inputs as _make_inputs

    return _make_inputs(program, seed=seed, dims=dims, max_bytes=max_bytes)


def sweep(
    program, axes, arch="H100_PCIe", grid: bool = False, fp32_math: str = "default", progress=None
):
    """SOL across sizes: a list of dicts {dims, axis, arch, flops, bytes: {unfused, fused},
    seconds: {unfused, fused}, bottleneck: {unfused, fused}}, one per configuration and arch.
    `axes` maps a DIMS name (IR) or a module-level size constant (PyTorch) to sizes or to a
    range 'A:B:xK' / 'A:B:+K'; `progress(done, total, dims, seconds)` is called as each
    configuration of a PyTorch or JAX program is captured and analysed; see
    solar.explore.sweep."""
    from .explore import sweep as _sweep

    return _sweep(program, axes, arch=arch, grid=grid, fp32_math=fp32_math, progress=progress)


def inverse_roofline(program, latency=None, rate=None, arch="H100_PCIe", fp32_math="default"):
    """The inverse roofline (Π_min, β_min and the improvement factors per SOL mode) of an IR or
    PyTorch program, or an einsum graph, for a target latency ('2ms') or rate ('500Hz'): one
    core Inverse per arch; see solar.explore.inverse."""
    from .explore import inverse

    return [inv for _, _, inv in inverse(program, latency, rate, arch, fp32_math)[1]]


def translate(source, lang=None, reference=None, out=None, endpoint=None, model=None, **options):
    """Translates a program of any language into a validated IR program through an LLM at an
    OpenAI-compatible endpoint (docs/agent.md); returns an agent.Translation whose `program`
    is the accepted IR text. `endpoint` is a base URL or an agent.Endpoint (default
    $SOLAR_LLM_BASE_URL, $SOLAR_LLM_MODEL); `options`: max_iters, max_seconds, max_tokens,
    cache, transcript, backend, seed, progress."""
    from .agent import Endpoint
    from .agent import translate as run

    if not isinstance(endpoint, Endpoint):
        endpoint = Endpoint.from_env(endpoint, model)
    return run(str(source), lang, reference, out, endpoint, **options)


def chains(program, dims=None):
    """Chain reordering: every association order of each multi-operand product and chain of
    contractions in an IR or PyTorch program (core Chain objects); see solar.explore.chains."""
    from .explore import chains as _chains

    return _chains(program, dims)[1]
