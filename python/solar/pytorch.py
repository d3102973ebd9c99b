"""PyTorch programs end to end: capture -> IR -> validation -> SOL (docs/pytorch.md)."""

from __future__ import annotations

from dataclasses import dataclass

from . import _core
from .session import analyze_graph


@dataclass
class ProgramResult:
    """Everything `solar analyze` derives from a program of a front end (PyTorch, JAX)."""

    source: str
    ir_text: str
    program: object  # _core.Program of the emitted IR
    graph: object  # _core.Graph
    analyses: list  # _core.Analysis per architecture
    archs: list
    validation: object  # frontend.validation.Validation
    ops: dict
    notes: list

    @property
    def analysis(self):
        return self.analyses[0]

    @property
    def fused(self):
        return self.analysis.fused

    @property
    def unfused(self):
        return self.analysis.unfused


PyTorchResult = ProgramResult


def analyse_lowered(lowered, archs, fp32_math, cache_aware, emit_ir, step):
    """(program, graph, specs, analyses) of a lowered program of any front end: its text
    written to `emit_ir` when given, checked, traced (diagnostics point into the lowered
    text) and analysed on each architecture; `step(stage)` reports progress."""
    from .api import load_arch
    from .frontend.validation import in_lowered_text, load_lowered

    if emit_ir:
        with open(emit_ir, "w") as f:
            f.write(lowered.text)
    program = load_lowered(lowered)
    with in_lowered_text(lowered.source):
        graph = _core.trace(program, [])
    specs = [a if isinstance(a, _core.ArchSpec) else load_arch(a) for a in archs]
    step(
        f"analysing {len(graph.nodes)} IR nodes" + (" (cache-aware search)" if cache_aware else "")
    )
    return program, graph, specs, [analyze_graph(graph, a, fp32_math, cache_aware) for a in specs]


def program_result(capture, lowered, analysed, notes, validator, language, step):
    """The ProgramResult of a front end's analysed program (analyse_lowered's tuple),
    validated by validator(capture, lowered, program, graph) unless it is None."""
    from .frontend.validation import Validation

    program, graph, specs, analyses = analysed
    if validator is not None:
        step(f"validating against {language}")
        validation = validator(capture, lowered, program, graph)
    else:
        validation = Validation("none", "validation skipped (--no-validate)")
    step("")
    return ProgramResult(
        capture.source,
        lowered.text,
        program,
        graph,
        analyses,
        specs,
        validation,
        lowered.ops,
        notes,
    )


def lower_pytorch(
    source,
    example_inputs=None,
    overrides=None,
    mode=None,
    output_caches=True,
    training=False,
    fallback=None,
    progress=None,
):
    """(capture, lowered) for a problem file path or an nn.Module with example inputs (a list
    of positional arguments, a dict of keyword arguments, or {"args": [...], "kwargs": {...}}).
    `overrides` ({constant: value}) replaces a problem file's module-level integer constants
    before it runs (`--dim` on a PyTorch program); `mode` "train" or "eval" sets the module's
    mode (None: the one it has; a problem file's Model is built in training mode).
    `progress(stage)`, when given, is told the layers a problem file's capture reaches and
    the lowering's start."""
    from .frontend import capture_module, capture_problem, lower

    step = progress or (lambda stage: None)
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        if overrides:
            check_overrides(str(source), overrides)
        capture = capture_problem(str(source), overrides or None, mode, training, progress)
    else:
        if example_inputs is None:
            from .errors import argument_error

            raise argument_error(
                "analyzing a module needs example inputs: "
                "solar.analyze(model, example_inputs, arch=...)"
            )
        if not isinstance(example_inputs, dict):
            example_inputs = list(example_inputs)
        capture = capture_module(source, example_inputs, mode, output_caches, training)
    capture.fallback = fallback  # --llm-fallback: agent/fallback.py
    step("lowering to the IR")
    return capture, lower(capture)


def check_overrides(path: str, overrides: dict) -> None:
    """Every overridden name must be a module-level integer constant of the problem file."""
    from pathlib import Path

    from .errors import argument_error
    from .frontend.problem import int_constants

    try:
        known = int_constants(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return  # capture reports an unreadable program
    unknown = [k for k in overrides if k not in known]
    if unknown:
        raise argument_error(
            f"--dim {unknown[0]}=...: '{unknown[0]}' is not a module-level integer constant "
            f"of {path}",
            "its constants are: " + (", ".join(f"{k}={v}" for k, v in known.items()) or "none"),
        )


def analyze_pytorch(
    source,
    example_inputs=None,
    archs=("H100_PCIe",),
    fp32_math="default",
    validate=True,
    backend="native",
    emit_ir=None,
    seed=0,
    overrides=None,
    cache_aware=True,
    mode=None,
    progress=None,
    output_caches=True,
    training=False,
    llm_fallback=None,
) -> PyTorchResult:
    """`progress(stage)`, when given, is called as each stage starts ("capture and lower",
    "analyse", "validate"): the CLI shows it on a terminal; library code prints nothing.
    `llm_fallback` (an agent.fallback.Fallback) lowers operators without a rule through the
    LLM agent (docs/agent.md); without it they are `lower` errors."""
    from .frontend.validate import validate as run_validation

    step = progress or (lambda stage: None)
    step("capturing with torch.export")
    capture, lowered = lower_pytorch(
        source, example_inputs, overrides, mode, output_caches, training, llm_fallback, step
    )
    analysed = analyse_lowered(lowered, archs, fp32_math, cache_aware, emit_ir, step)
    _, graph, specs, analyses = analysed
    notes = list(lowered.notes)
    upper = routing_upper_end(graph, analyses[0])
    if upper:
        notes.append(upper_end_note(upper, specs[0].name))
    validator = (lambda *a: run_validation(*a, seed=seed, backend=backend)) if validate else None
    return program_result(capture, lowered, analysed, notes, validator, "PyTorch", step)


@dataclass
class RoutingUpperEnd:
    """The gathers of routed experts (`gather(..., distinct=k)`: a mixture of experts' weights
    fetched by top-k indices). The bound takes the best-case routing, every token of a layer
    on the same k experts; the dense upper end is a routing that spreads the tokens over
    min(tokens x k, experts) experts (the most a gather can fetch), every weight capped at its
    size as in the fused mode (docs/llm.md, "Mixture of experts")."""

    gathers: int
    best_bytes: int  # the routed weights' fetched bytes in the bound
    dense_bytes: int  # the same at the dense upper end
    fused_seconds: float  # the fused bound with the dense upper end's bytes


def routing_upper_end(graph, analysis) -> RoutingUpperEnd | None:
    best, dense, sizes = {}, {}, {}
    gathers = 0
    tensors = graph.tensors
    for node in graph.nodes:
        if node.op != "gather" or node.attributes["distinct"] <= 0:
            continue
        attributes = node.attributes  # GatherAttrs (graph/attrs.h)
        gathers += 1
        table = tensors[node.inputs[0]]
        index = tensors[node.inputs[1]]
        rows = table.shape[attributes["axis"]]
        storage = table.storage
        sizes[storage] = tensors[storage].bytes
        row_bytes = table.bytes // rows
        best[storage] = best.get(storage, 0) + attributes["distinct"] * row_bytes  # as the tracer
        dense[storage] = dense.get(storage, 0) + min(index.elements, rows) * row_bytes
    if not gathers:
        return None
    best_bytes = sum(min(b, sizes[t]) for t, b in best.items())
    dense_bytes = sum(min(b, sizes[t]) for t, b in dense.items())
    fused = analysis.fused
    memory = fused.memory_seconds * (fused.bytes + dense_bytes - best_bytes) / max(fused.bytes, 1)
    return RoutingUpperEnd(gathers, best_bytes, dense_bytes, max(fused.seconds, memory))


def upper_end_note(upper: RoutingUpperEnd, arch: str) -> str:
    from .report import seconds, si

    return (
        f"mixture of experts: the bound takes the best-case routing, every token of a layer on "
        f"the same k experts ({upper.gathers} routed-expert gathers, "
        f"{si(upper.best_bytes, 'B')} of expert weights); a routing that spreads the tokens "
        f"over min(tokens x k, experts) experts fetches {si(upper.dense_bytes, 'B')}: fused "
        f"{seconds(upper.fused_seconds)} on {arch} (the dense upper end)"
    )
