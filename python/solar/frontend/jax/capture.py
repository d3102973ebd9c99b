"""Capture of a JAX program: a jaxpr traced over abstract values (docs/jax.md).

Nothing is allocated at full size: inputs come from `jax.eval_shape(get_inputs)`, Flax
parameters from `jax.eval_shape` of `init` (linen) or `nnx.eval_shape` of the constructor
(nnx), and the function is traced with `jax.make_jaxpr` over those `ShapeDtypeStruct`s.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UserError
from ..builder import frontend_error
from ..problem import _user_line, call_user, import_program

# The seed of the keys a problem's get_inputs(key) and parameters are made with, in
# validation (docs/jax.md, "Random keys"): parameters from jax.random.key(SEED), inputs
# from jax.random.key(SEED + 1).
SEED = 0


def is_jax_program(path: str) -> bool:
    """A file in the JAX problem convention: it imports jax or flax (and not torch), and it
    is no IR program (no @kernel, no `def model(`)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return False
    from ..imports import imported_packages, is_ir_text

    packages = imported_packages(text)
    return bool(packages & {"jax", "flax"}) and "torch" not in packages and not is_ir_text(text)


@dataclass
class JaxProgram:
    """A JAX program ready to trace: `fn(params, *inputs)` and how to make its arguments.
    `make_params(key)` and `make_inputs(key)` build them (called under jax.eval_shape for
    capture, for real for validation)."""

    fn: object
    make_params: object  # key -> pytree ({} when the function takes no parameters)
    make_inputs: object  # key -> list of arrays
    kind: str  # "function", "linen" or "nnx"
    mutable: tuple = ()  # linen collections apply() updates (batch_stats)


@dataclass
class JaxCapture:
    """A traced JAX program and what is needed to run it again."""

    jaxpr: object  # jax.core.ClosedJaxpr
    source: str  # the problem file ("" for an in-memory function)
    program: JaxProgram
    # Per flattened argument leaf (the jaxpr's invars, in order): (name, role, shape, dtype).
    leaves: list = field(default_factory=list)
    output_names: list = field(default_factory=list)
    overrides: dict = field(default_factory=dict)  # size constants replaced (scaled runs)
    # For an in-memory function: the example arguments it was captured with (real arrays
    # or ShapeDtypeStructs) and its parameters.
    example_args: list | None = None
    example_params: object = None
    argument_bytes: int = 0  # bytes of the parameters and inputs at this size
    # Per leaf: whether the program reads it (the jaxpr's invars are the leaves it reads,
    # in order; dead code removed).
    used: list = field(default_factory=list)
    # --llm-fallback (agent/fallback.py): lowers primitives that have no rule; None: they fail.
    fallback: object = None


def _takes_key(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in params
    )


def _call_user(fn, what: str, path: str):
    return call_user(fn, what, path, "JAX")


def _module_kind(cls) -> str:
    """ "linen" or "nnx" for a Flax module class, "" otherwise."""
    try:
        from flax import linen, nnx
    except ImportError:  # pragma: no cover - flax is a dependency of the JAX front end
        return ""
    if isinstance(cls, type) and issubclass(cls, linen.Module):
        return "linen"
    if isinstance(cls, type) and issubclass(cls, nnx.Module):
        return "nnx"
    return ""


def program_of(module, path: str) -> JaxProgram:
    """The JaxProgram of an imported problem file: a Flax `Model` class (linen or nnx,
    constructed with get_init_inputs()), or a function `forward(*inputs)`, with
    `init_params(key)` when it takes parameters first: `forward(params, *inputs)`."""
    if not hasattr(module, "get_inputs"):
        raise frontend_error(
            "capture",
            "the program defines no get_inputs",
            "a JAX problem file defines get_inputs() (or get_inputs(key)) returning a list of "
            "arrays, and a Flax class Model or a function forward (docs/jax.md)",
            path,
        )
    get_inputs = module.get_inputs

    def make_inputs(key):
        value = get_inputs(key) if _takes_key(get_inputs) else get_inputs()
        if not isinstance(value, (list, tuple)):
            got = "one array" if hasattr(value, "shape") else type(value).__name__
            raise frontend_error(
                "capture",
                f"get_inputs must return a list or tuple, got {got}",
                "write: def get_inputs(key): return [...]",
                path,
            )
        return list(value)

    init_args = list(getattr(module, "get_init_inputs", lambda: [])())
    cls = getattr(module, "Model", None)
    kind = _module_kind(cls)
    if kind:
        return flax_program(
            cls(*init_args) if kind == "linen" else cls, kind, make_inputs, init_args
        )
    forward = getattr(module, "forward", None)
    if forward is None and callable(cls):
        forward = cls(*init_args) if isinstance(cls, type) else cls
    if forward is None:
        raise frontend_error(
            "capture",
            "the program defines no Model or forward",
            "a JAX problem file defines a function forward(*inputs) (with init_params(key): "
            "forward(params, *inputs)) or a Flax class Model (docs/jax.md)",
            path,
        )
    init_params = getattr(module, "init_params", None)
    if init_params is None:
        return JaxProgram(lambda params, *xs: forward(*xs), lambda key: {}, make_inputs, "function")
    return JaxProgram(
        forward,
        (lambda key: init_params(key)) if _takes_key(init_params) else (lambda key: init_params()),
        make_inputs,
        "function",
    )


def flax_program(model, kind: str, make_inputs, init_args=()) -> JaxProgram:
    """A Flax module as fn(variables, *inputs). linen: variables from model.init, applied
    with the collections it updates (batch statistics) mutable, their new values returned
    after the outputs; nnx: the module's state (nnx.split), merged back to call it."""
    import jax

    if kind == "linen":

        def make_params(key):
            return model.init(key, *make_inputs(jax.random.fold_in(key, 1)))

        def fn(variables, *xs):
            mutable = [c for c in variables if c != "params"]
            if not mutable:
                return model.apply(variables, *xs)
            out, updates = model.apply(variables, *xs, mutable=mutable)
            # Only collections the module wrote are results (training batch norm's
            # statistics); one it only read comes back as the same values (inference).
            changed = {c: u for c, u in updates.items() if _written(u, variables.get(c))}
            return (out, changed) if changed else out

        return JaxProgram(fn, make_params, make_inputs, "linen")
    from flax import nnx

    cls = model
    graphdef = nnx.graphdef(nnx.eval_shape(lambda: cls(*init_args, rngs=nnx.Rngs(SEED))))

    def make_params_nnx(key):
        return nnx.state(cls(*init_args, rngs=nnx.Rngs(key)))

    def fn_nnx(state, *xs):
        return nnx.merge(graphdef, state)(*xs)

    return JaxProgram(fn_nnx, make_params_nnx, make_inputs, "nnx")


def _written(new, old) -> bool:
    import jax

    a, b = jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(old)
    return len(a) != len(b) or any(x is not y for x, y in zip(a, b, strict=True))


def abstract_arguments(program: JaxProgram, path: str):
    """(params, inputs) as ShapeDtypeStructs: nothing allocated."""
    import jax

    def both():
        key = jax.random.key(SEED)
        return program.make_params(key), program.make_inputs(jax.random.key(SEED + 1))

    if program.kind == "nnx":
        from flax import nnx

        params = _call_user(
            lambda: nnx.eval_shape(lambda: program.make_params(jax.random.key(SEED))),
            "building the model's parameters",
            path,
        )
        inputs = _call_user(
            lambda: jax.eval_shape(lambda: program.make_inputs(jax.random.key(SEED + 1))),
            "get_inputs()",
            path,
        )
        return params, inputs
    return _call_user(lambda: jax.eval_shape(both), "get_inputs() and the parameters", path)


def real_arguments(program: JaxProgram, path: str, seed: int = SEED):
    """(params, inputs) with values, for validation: parameters from key(seed), inputs from
    key(seed + 1)."""
    import jax

    params = _call_user(
        lambda: program.make_params(jax.random.key(seed)), "building the parameters", path
    )
    inputs = _call_user(lambda: program.make_inputs(jax.random.key(seed + 1)), "get_inputs()", path)
    return params, inputs


def _leaf_name(path) -> str:
    parts = []
    for k in path:
        for attr in ("key", "name", "idx"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
    parts = [p for p in parts if p != "value"]
    return re.sub(r"\W", "_", "_".join(parts)) or "arg"


def trace(program: JaxProgram, params, inputs, source: str, overrides=None) -> JaxCapture:
    """Traces program.fn(params, *inputs) to a closed jaxpr (any of them abstract)."""
    import jax
    import numpy as np

    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if not hasattr(x, "shape") or not hasattr(x, "dtype"):
            raise frontend_error(
                "capture",
                f"get_inputs() item {i} is a {type(x).__name__}, not an array",
                "return JAX or NumPy arrays (a Python scalar: close over it as a constant)",
                source,
            )
    try:
        closed, out_shape = jax.make_jaxpr(program.fn, return_shape=True)(params, *inputs)
    except UserError:
        raise
    except Exception as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        hint = "the JAX program raised this error while it was traced"
        if any(k in type(e).__name__ for k in ("Concretization", "NonConcrete", "Tracer")):
            hint = (
                "Solar needs shapes and control flow that do not depend on array values "
                "(a data-dependent shape or branch cannot be analysed statically)"
            )
        raise frontend_error(
            "capture",
            f"tracing the program failed: {type(e).__name__}: {message}",
            hint,
            source,
            _user_line(e, source) if source else 0,
        ) from None
    flat, _ = jax.tree_util.tree_flatten_with_path((params, *inputs))
    leaves = []
    seen: dict[str, int] = {}
    for path, leaf in flat:
        role = "weight" if path and getattr(path[0], "idx", None) == 0 else "input"
        name = _leaf_name(path[1:]) if role == "weight" else f"x{path[0].idx - 1}"
        if role == "input" and len(path) > 1:
            name += "_" + _leaf_name(path[1:])
        name = ("p_" if role == "weight" else "") + name
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        seen.setdefault(name, 0)
        leaves.append((name, role, tuple(int(s) for s in leaf.shape), np.dtype(leaf.dtype)))
    out_flat, _ = jax.tree_util.tree_flatten_with_path(out_shape)
    names = [_leaf_name(p) if p else "output" for p, _ in out_flat]
    nbytes = sum(int(np.prod(shape)) * dtype.itemsize for _, _, shape, dtype in leaves)
    closed, used = _without_dead_code(closed)
    capture = JaxCapture(
        closed, source, program, leaves, names, dict(overrides or {}), argument_bytes=nbytes
    )
    capture.used = used
    return capture


def _without_dead_code(closed):
    """(closed jaxpr with only the equations the outputs depend on, which flattened
    arguments it still reads): what the program computes and never returns costs nothing,
    as in the compiled program (XLA removes it too). make_jaxpr keeps such equations."""
    from jax.extend.core import ClosedJaxpr

    try:
        from jax._src.interpreters import partial_eval as pe

        jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    except (ImportError, AttributeError, TypeError):  # an internal API of JAX: keep it all
        return closed, [True] * len(closed.jaxpr.invars)
    return ClosedJaxpr(jaxpr, closed.consts), list(used)


def capture_problem(path: str, overrides: dict | None = None) -> JaxCapture:
    """Imports a JAX problem file (size constants replaced by `overrides`) and traces it
    over abstract arguments."""
    module = import_program(path, overrides)
    program = _call_user(lambda: program_of(module, path), "building the model", path)
    params, inputs = abstract_arguments(program, path)  # make_inputs checks the list
    return trace(program, params, inputs, path, overrides)


def capture_function(fn, example_args, params=None) -> JaxCapture:
    """An in-memory JAX function or Flax module with example arguments (arrays or
    ShapeDtypeStructs). A linen module needs `params` (its variables, or their shapes); an
    nnx module carries its own; a function with `params` is called fn(params, *args)."""
    import jax
    from flax import linen, nnx

    args = list(example_args)
    if isinstance(fn, linen.Module):
        if params is None:
            params = jax.eval_shape(fn.init, jax.random.key(SEED), *args)
        program = flax_program(fn, "linen", lambda key: args)
    elif isinstance(fn, nnx.Module):
        graphdef, state = nnx.split(fn)
        program = JaxProgram(
            lambda st, *xs: nnx.merge(graphdef, st)(*xs), lambda key: state, lambda key: args, "nnx"
        )
        params = state
    elif params is None:
        program = JaxProgram(lambda p, *xs: fn(*xs), lambda key: {}, lambda key: args, "function")
        params = {}
    else:
        program = JaxProgram(fn, lambda key: params, lambda key: args, "function")
    capture = trace(program, params, args, "")
    capture.example_args = args
    capture.example_params = params
    return capture
