"""JAX programs end to end: capture -> IR -> validation -> SOL (docs/jax.md)."""

from __future__ import annotations

from .pytorch import ProgramResult, analyse_lowered, check_overrides


def lower_jax(source, example_args=None, params=None, overrides=None):
    """(capture, lowered) for a JAX problem file path, or for a function / Flax module
    with example arguments (arrays or jax.ShapeDtypeStruct) and, for a linen module or a
    function of parameters, `params`."""
    from .frontend.jax.capture import capture_function, capture_problem
    from .frontend.jax.lower import lower

    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        if overrides:
            check_overrides(str(source), overrides)
        capture = capture_problem(str(source), overrides or None)
    else:
        if example_args is None:
            from .errors import argument_error

            raise argument_error(
                "analyzing a JAX function needs example arguments: "
                "solar.analyze(fn, example_args, params=..., arch=...)"
            )
        capture = capture_function(source, example_args, params)
    return capture, lower(capture)


def analyze_jax(
    source,
    example_args=None,
    params=None,
    archs=("H100_PCIe",),
    fp32_math="default",
    validate=True,
    backend="native",
    emit_ir=None,
    seed=0,
    overrides=None,
    cache_aware=True,
    progress=None,
) -> ProgramResult:
    """As solar.pytorch.analyze_pytorch, for JAX: `progress(stage)` is called as each stage
    starts."""
    from .frontend.jax.validate import validate as run_validation
    from .frontend.validation import Validation

    step = progress or (lambda stage: None)
    step("tracing with jax.make_jaxpr and lowering to the IR")
    capture, lowered = lower_jax(source, example_args, params, overrides)
    program, graph, specs, analyses = analyse_lowered(
        lowered, archs, fp32_math, cache_aware, emit_ir, step
    )
    if validate:
        step("validating against JAX")
        validation = run_validation(capture, lowered, program, graph, seed=seed, backend=backend)
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
        list(lowered.notes),
    )
