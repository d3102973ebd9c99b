"""JAX programs end to end: capture -> IR -> validation -> SOL (docs/jax.md)."""

from __future__ import annotations

from .pytorch import ProgramResult, analyse_lowered, check_overrides, program_result


def lower_jax(source, example_args=None, params=None, overrides=None, fallback=None):
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
    capture.fallback = fallback  # --llm-fallback: agent/fallback.py
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
    llm_fallback=None,
) -> ProgramResult:
    """As solar.pytorch.analyze_pytorch, for JAX: `progress(stage)` is called as each stage
    starts; `llm_fallback` (an agent.fallback.Fallback) lowers primitives without a rule."""
    from .frontend.jax.validate import validate as run_validation

    step = progress or (lambda stage: None)
    step("tracing with jax.make_jaxpr and lowering to the IR")
    capture, lowered = lower_jax(source, example_args, params, overrides, llm_fallback)
    analysed = analyse_lowered(lowered, archs, fp32_math, cache_aware, emit_ir, step)
    validator = (lambda *a: run_validation(*a, seed=seed, backend=backend)) if validate else None
    return program_result(capture, lowered, analysed, list(lowered.notes), validator, "JAX", step)
