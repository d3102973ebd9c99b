"""Validation of a lowered JAX program against the jitted JAX function, on the CPU.

The levels are those of the PyTorch front end (frontend/validate.py): `full` at the
program's own sizes when the run fits the validation budget, `scaled` at reduced size
constants (the same search, frontend/sizes.py; the same computing primitives in the same
order), `none` with the reason otherwise, `failed` when an output differs. Parameters come
from jax.random.key(seed), inputs from get_inputs(jax.random.key(seed + 1)) (docs/jax.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import _core
from ...errors import UserError
from ...tolerance import compare_all, output_budgets, perturb, perturbation_unit
from ..sizes import scaled_run
from ..validation import (
    COMPARE_BYTES_PER_ELEMENT,
    VALIDATION_MAX_BYTES,
    VALIDATION_MAX_SECONDS,
    RealModelError,
    Validation,
    compared,
    is_compile_error,
    load_lowered,
    on_best_backend,
)
from .capture import SEED, JaxCapture, capture_problem, real_arguments
from .lower import ir_dtype, lower

# Equations that only rename or view data: a size change may add or remove them.
_VIEW_PRIMITIVES = {
    "reshape",
    "squeeze",
    "expand_dims",
    "broadcast_in_dim",
    "convert_element_type",
    "slice",
    "transpose",
    "copy",
    "copy_p",
    "stop_gradient",
    "pjit",
    "jit",
}


def structure(lowered) -> list[str]:
    return [p for p in lowered.sequence if p not in _VIEW_PRIMITIVES]


def _check_budget(graph, capture: JaxCapture, backend: str, max_bytes, max_seconds) -> str:
    """Why a full validation would not fit ("" when it does): JAX's arguments and results
    and the IR's arrays, as for PyTorch (frontend/validate.py, validation_bytes)."""
    from ...execution import estimate_bytes, estimate_seconds, storage_bytes_of

    peak = estimate_bytes(graph, backend)
    tensors = graph.tensors
    ir_inputs = sum(storage_bytes_of(tensors[t]) for t in graph.inputs)
    largest = max((int(np.prod(tensors[t].shape)) for t in graph.outputs), default=0)
    total = capture.argument_bytes + 2 * max(peak - ir_inputs, 0)
    total += COMPARE_BYTES_PER_ELEMENT * largest
    seconds = estimate_seconds(graph, backend)
    over = []
    if total > max_bytes:
        over.append(f"{total / 2**30:.2f} GiB (budget {max_bytes / 2**30:.2f} GiB)")
    if seconds > max_seconds:
        over.append(
            f"about {seconds:.0f} s with the {backend} backend (budget {max_seconds:.0f} s)"
        )
    return " and ".join(over)


def validate(
    capture: JaxCapture,
    lowered,
    program,
    graph,
    seed: int = SEED,
    backend: str = "native",
    max_bytes=None,
    max_seconds=None,
) -> Validation:
    max_bytes = VALIDATION_MAX_BYTES if max_bytes is None else max_bytes
    max_seconds = VALIDATION_MAX_SECONDS if max_seconds is None else max_seconds
    return on_best_backend(
        lambda b: _validate(capture, lowered, program, graph, seed, b, max_bytes, max_seconds),
        backend,
    )


def _validate(capture, lowered, program, graph, seed, backend, max_bytes, max_seconds):
    over = _check_budget(graph, capture, backend, max_bytes, max_seconds)
    if not over:
        return validate_full(
            capture, lowered, program, seed, backend, max_seconds, "at the program's own sizes"
        )
    if not capture.source:
        return validate_per_kernel(
            capture,
            f"a full run needs {over}; an in-memory function has no size constants",
            seed,
            backend,
            max_bytes,
            max_seconds,
        )
    last = ""

    def step(overrides, sizes):
        nonlocal last
        try:
            cap = capture_problem(capture.source, overrides)
            cap.fallback = capture.fallback
            low = lower(cap)
        except UserError as e:
            last = e.diagnostics[0].message
            return "smaller"
        if structure(low) != structure(lowered):
            last = "the program's primitives change at these sizes"
            return "next"
        small_program = load_lowered(low)
        small = _core.trace(small_program, [])
        why = _check_budget(small, cap, backend, max_bytes, max_seconds)
        if why:
            last = why
            return "larger"
        scaled = ", ".join(f"{k} {sizes[k]}->{overrides[k]}" for k in overrides)
        v = validate_full(
            cap,
            low,
            small_program,
            seed,
            backend,
            max_seconds,
            f"at reduced sizes ({scaled}; the same {len(structure(low))} computing "
            "primitives as at full size)",
        )
        status = {"full": "scaled", "inconclusive": "inconclusive"}.get(v.status, "failed")
        return Validation(status, v.detail, v.outputs)

    text = Path(capture.source).read_text()
    found, sizes = scaled_run(text, graph, backend, max_seconds, step)
    if found is not None:
        return found
    if not sizes:
        return validate_per_kernel(
            capture,
            f"a full run needs {over}; no module-level size constants",
            seed,
            backend,
            max_bytes,
            max_seconds,
        )
    return validate_per_kernel(
        capture,
        f"a full run needs {over}; no reduced size kept the program's structure within the "
        f"budget ({last})",
        seed,
        backend,
        max_bytes,
        max_seconds,
    )


def distinct_equations(jaxpr) -> list:
    """The top-level equations that compute (not views), one per distinct primitive,
    parameters and operand shapes, with their number of instances."""
    seen: dict = {}
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _VIEW_PRIMITIVES:
            continue
        key = (
            eqn.primitive.name,
            repr(sorted((k, repr(v)) for k, v in eqn.params.items())),
            tuple(str(v.aval) for v in eqn.invars),
        )
        if key in seen:
            seen[key][1] += 1
        else:
            seen[key] = [eqn, 1]
    return list(seen.values())


def _operands(eqn, key):
    """Random operands for one equation: floats normal, integers 0 (a valid index and
    start for every gather and slice), booleans random."""
    import jax
    import jax.numpy as jnp

    from .lower import _is_literal

    args = []
    for i, v in enumerate(eqn.invars):
        if _is_literal(v):
            continue
        k = jax.random.fold_in(key, i)
        dt = v.aval.dtype
        if jnp.issubdtype(dt, jnp.floating):
            args.append(jax.random.normal(k, v.aval.shape, dtype=dt))
        elif dt == jnp.bool_:
            args.append(jax.random.bernoulli(k, 0.5, v.aval.shape))
        else:
            args.append(jnp.zeros(v.aval.shape, dt))
    return args


def validate_per_kernel(capture, why: str, seed, backend, max_bytes, max_seconds) -> Validation:
    """Each distinct computing equation alone (its primitive bound on random operands of
    the program's shapes) lowered and validated fully against JAX; `none` with the reason
    when some cannot run within the budget."""
    import jax

    from .capture import capture_function
    from .lower import _is_literal

    eqns = distinct_equations(capture.jaxpr.jaxpr)
    passed, skipped, undecided = 0, [], []
    for eqn, _count in eqns:
        name = eqn.primitive.name
        literals = {i: v.val for i, v in enumerate(eqn.invars) if _is_literal(v)}

        def fn(*xs, eqn=eqn, literals=literals):
            it = iter(xs)
            vals = [literals[i] if i in literals else next(it) for i in range(len(eqn.invars))]
            out = eqn.primitive.bind(*vals, **eqn.params)
            return list(out) if eqn.primitive.multiple_results else out

        try:
            args = _operands(eqn, jax.random.key(seed))
            cap = capture_function(fn, args)
            cap.fallback = capture.fallback
            low = lower(cap)
            prog = load_lowered(low)
            graph = _core.trace(prog, [])
            over = _check_budget(graph, cap, backend, max_bytes, max_seconds)
            if over:
                skipped.append(f"{name} (needs {over})")
                continue
            v = validate_full(cap, low, prog, seed, backend, max_seconds, "on random inputs")
        except UserError as e:
            if is_compile_error(e):
                raise
            skipped.append(f"{name} ({e.diagnostics[0].message.splitlines()[0]})")
            continue
        shapes = ", ".join(str(x.aval) for x in eqn.invars)
        if v.status == "inconclusive":
            undecided.append(f"{name} on {shapes}: {v.detail}")
            continue
        if v.status != "full":
            return Validation("failed", f"per-kernel: {name} on {shapes}: {v.detail}", v.outputs)
        passed += 1
    if skipped:
        return Validation(
            "none",
            f"not executed here ({why}); per-kernel: {passed} of {len(eqns)} distinct "
            f"equations match JAX, {len(skipped)} could not run here: " + "; ".join(skipped[:5]),
        )
    if undecided:  # every equation passed, some by a comparison that cannot decide
        return Validation(
            "inconclusive",
            f"per-kernel ({why}): {passed} of {len(eqns)} distinct equations match JAX; "
            "undecided: " + "; ".join(undecided[:3]),
        )
    return Validation(
        "per-kernel",
        f"{passed} distinct equations ({sum(c for _, c in eqns)} instances) each match JAX on "
        f"random inputs, with the program's shapes ({why})",
    )


def _arguments(capture: JaxCapture, seed: int):
    if capture.example_args is not None:
        import jax

        if any(isinstance(a, jax.ShapeDtypeStruct) for a in capture.example_args):
            raise RealModelError("the example arguments are shapes (ShapeDtypeStruct), not values")
        return capture.example_params, capture.example_args
    try:
        return real_arguments(capture.program, capture.source, seed)
    except (UserError, MemoryError, RuntimeError) as e:
        first = (e.diagnostics[0].message if isinstance(e, UserError) else str(e)).splitlines()
        raise RealModelError(
            f"building the arguments failed ({first[0] if first else type(e).__name__})"
        ) from None


def validate_full(capture, lowered, program, seed, backend, max_seconds, sizes: str):
    """Runs the jitted function and the IR on the same arguments; compares every output."""
    import jax

    from ...execution import run

    params, inputs = _arguments(capture, seed)
    leaves = jax.tree_util.tree_leaves((params, *inputs))
    try:
        golden = jax.tree_util.tree_leaves(jax.jit(capture.program.fn)(params, *inputs))
    except Exception as e:  # the user's function failed on real values
        raise RealModelError(
            f"running the JAX program {sizes} failed ({type(e).__name__}: {e})"
        ) from None
    consts = capture.jaxpr.consts
    feeds = {}
    for name, kind, target in lowered.params:
        value = leaves[target] if kind == "input" else consts[target]
        feeds[name] = np.array(value)  # writable, C-ordered: the executor reads it in place
    outs = run(
        program,
        feeds,
        backend=backend,
        bounds_check=False,
        max_seconds=max_seconds,
        max_bytes=1 << 62,
    )
    golden = [np.asarray(g) for g in golden]
    budgets = output_budgets(_core.trace(program, []))
    names = [
        f"out{i}" + (f" ({capture.output_names[i]})" if len(capture.output_names) > 1 else "")
        for i in range(len(golden))
    ]

    def perturbed():
        # JAX's outputs with every floating leaf moved by one ulp, as fullrun's
        # perturbed_golden does for PyTorch: an output that fails its a-priori budget is
        # compared again with the computation's measured response (a chaotic recurrence:
        # a lax.scan RNN whose own fp32 result differs from fp64 by 2e-3).
        rng = np.random.default_rng(seed)

        def move(leaf):
            try:
                return perturb(np.asarray(leaf), rng)
            except TypeError:  # a PRNG key: no NumPy value, passed as it is
                return leaf

        moved = [move(leaf) for leaf in leaves]
        tree = jax.tree_util.tree_structure((params, *inputs))
        args = jax.tree_util.tree_unflatten(tree, moved)
        try:
            out = jax.tree_util.tree_leaves(jax.jit(capture.program.fn)(*args))
        except Exception:  # noqa: BLE001 - the function rejects the moved values: one stage
            return None
        return [np.asarray(o) for o in out], perturbation_unit(
            [m for m in moved if isinstance(m, np.ndarray)]
        )

    results = compare_all(
        names,
        [outs[f"out{i}"] for i in range(len(golden))],
        golden,
        [ir_dtype(g.dtype) for g in golden],
        budgets,
        perturbed,
        "expected",
    )
    return compared(results, "JAX", sizes, backend)
