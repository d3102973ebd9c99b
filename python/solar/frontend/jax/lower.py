"""Deterministic lowering of a jaxpr to an Affine Loop IR program (docs/jax.md).

Each equation maps to a rule of rules.py (keyed by the primitive's name) that emits stdlib
kernels, kernels generated for the equation (dot_general's contraction) or builtins through
the language-neutral Builder. Nested jaxprs (jit, custom_jvp_call, custom_vjp_call, remat,
closed_call) are inlined; `scan` is unrolled (a static trip count); `cond` takes the branch a
static index picks. Rank-0 values computed only from literals are folded (a loop counter).

Units: the equations one user-level call produced (the same innermost user frame: file,
line and column span, as `jax._src.source_info_util.user_frame` gives it) form one source
operator, `with unit(...)`: the unfused mode runs each call of jnp / jax.nn / lax as one
kernel, as op-by-op dispatch does.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .. import ops
from ..builder import NUMPY_DTYPES, Builder, LoweredProgram, Value, frontend_error
from ..problem import constant_dim_names
from .capture import JaxCapture
from .rules import EMPTY, RULES, Splat, _python, fold, lower_pattern

# Calls whose jaxpr is inlined: the parameter holding it.
NESTED = {
    "pjit": "jaxpr",
    "jit": "jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
    "remat": "jaxpr",
    "checkpoint": "jaxpr",
    "custom_lin": None,
}
# Equations whose body opens units of its own (a scan's steps are separate kernels; nested
# calls, NESTED, too).
OWN_UNITS = {"scan"}


def ir_dtype(dtype, where: str = "", source: str = "") -> str:
    name = np.dtype(dtype).name
    if name not in NUMPY_DTYPES:
        raise frontend_error("lower", f"dtype {name} has no IR equivalent{where}", file=source)
    return NUMPY_DTYPES[name]


class JaxLowerer(Builder):
    def __init__(self, capture: JaxCapture):
        super().__init__(capture.source)
        self.capture = capture
        self.ops: dict[str, int] = {}
        self.sequence: list[str] = []
        self.consumers: dict = {}  # jaxpr Var -> equations reading it (current jaxpr)
        self.done: set = set()  # ids of equations a rule absorbed (a bias add, a divisor)
        self.env: dict = {}
        self._override = None  # out_meta while a rule lowers in another layout
        self.producers: dict = {}  # jaxpr Var -> the equation defining it (current jaxpr)
        self.grouping = True  # whether the jaxpr being lowered opens units itself
        # The fp32 math mode of the current unit's contractions ("fp32" where JAX asks for
        # full precision: precision=HIGHEST or jax_default_matmul_precision; "" otherwise:
        # the platform default, TF32 where the spec has it, as XLA's DEFAULT precision).
        self.unit_mode = ""

    # ---------------------------------------------------------------- language hooks
    def _find_where(self) -> tuple[str, int, str]:
        eqn = self.node
        if eqn is None:
            return self.source, 0, ""
        tb = eqn.source_info.traceback
        frames = list(tb.frames) if tb is not None else []
        for f in frames:  # innermost first
            if self.source and Path(f.file_name).resolve() == Path(self.source).resolve():
                return f.file_name, int(f.line_num), _code(f.file_name, int(f.line_num))
        if self.source:
            return self.source, 0, ""
        # An in-memory function: its innermost user frame (the function's own file).
        from jax._src import source_info_util

        frame = source_info_util.user_frame(tb) if tb is not None else None
        if frame is None:
            return "", 0, ""
        return frame.file_name, int(frame.start_line), _code(frame.file_name, frame.start_line)

    def library_frame(self) -> str:
        """`path:line` of the model library's line (a Flax layer's) that emitted the current
        equation when it is not the program's own; "" otherwise."""
        eqn = self.node
        if eqn is None or eqn.source_info.traceback is None or not self.source:
            return ""
        from jax._src import source_info_util

        frame = source_info_util.user_frame(eqn.source_info.traceback)
        if frame is None or (
            self.source and Path(frame.file_name).resolve() == Path(self.source).resolve()
        ):
            return ""
        parts = Path(frame.file_name).parts
        short = (
            "/".join(parts[parts.index("site-packages") + 1 :])
            if "site-packages" in parts
            else frame.file_name
        )
        return f"{short}:{frame.start_line}"

    def out_meta(self):
        if self._override is not None:
            return self._override
        outs = [v.aval for v in self.node.outvars]
        return outs[0] if len(outs) == 1 else outs

    def ir_dtype(self, dtype, where: str = "") -> str:
        name = self.node.primitive.name if self.node is not None else ""
        return ir_dtype(dtype, f" (a result of {name})", self.source)

    @contextmanager
    def result_as(self, shape, dtype):
        """Rules of another layout (a convolution in NCHW) see this result shape."""
        from types import SimpleNamespace

        old = self._override
        self._override = SimpleNamespace(shape=tuple(shape), dtype=dtype)
        try:
            yield
        finally:
            self._override = old

    # ---------------------------------------------------------------- values
    def read(self, atom):
        from jax.extend.core import Literal

        if isinstance(atom, Literal):
            return _python(atom.val)
        return self.env[atom]

    def sole_consumer(self, var):
        """The one equation reading `var`, if exactly one does and var is no output."""
        users = self.consumers.get(var, [])
        return users[0] if len(users) == 1 else None

    def absorb(self, eqn, value) -> None:
        """A rule lowered `eqn` as part of the current one: its result is `value`."""
        self.done.add(id(eqn))
        self.env[eqn.outvars[0]] = value

    # ---------------------------------------------------------------- the walk
    def run(self) -> LoweredProgram:
        capture = self.capture
        closed = capture.jaxpr
        jaxpr = closed.jaxpr
        self.size_names_ = self.size_names()
        read = [k for k, u in enumerate(capture.used or [True] * len(capture.leaves)) if u]
        for k, var in zip(read, jaxpr.invars, strict=True):
            name, role, shape, dtype = capture.leaves[k]
            irt = ir_dtype(dtype, f" (argument '{name}')", self.source)
            if 0 in shape:
                self.env[var] = Value("", shape, irt)
                continue
            self.env[var] = self.parameter(name, shape, irt, role, "input", k)
        for k, (var, value) in enumerate(zip(jaxpr.constvars, closed.consts, strict=True)):
            arr = np.asarray(value)
            if arr.ndim == 0:
                self.env[var] = _python(arr)
                continue
            irt = ir_dtype(arr.dtype, f" (constant {k})", self.source)
            self.env[var] = self.parameter(f"const_{k}", arr.shape, irt, "weight", "const", k)
        outs = self.lower_jaxpr(jaxpr, None)
        self.node = None
        names = []
        for i, (v, var) in enumerate(zip(outs, jaxpr.outvars, strict=True)):
            if not isinstance(v, Value):  # a constant the program returns: written once
                self.node = None
                shape, dtype = tuple(var.aval.shape), ir_dtype(var.aval.dtype, "", self.source)
                value = v.value if isinstance(v, Splat) else v
                if not isinstance(value, (bool, int, float)):
                    raise frontend_error(
                        "lower", f"output {i} of the program is not an array", file=self.source
                    )
                v = ops.const_typed(self, float(value), shape, dtype)
            if not v.var:
                raise frontend_error("lower", f"output {i} is an empty array", file=self.source)
            # JAX returns new arrays: an output that is a parameter, a view of one (a
            # broadcast_to, a reshape: XLA writes its result), or an output already returned
            # is a copy.
            if v.var in names or self.viewed(v.var) in {p[0] for p in self.params}:
                copied = self.call("copy", [self.flat(v).var], (v.numel,), v.dtype)
                v = self.reshape(copied, v.shape) if len(v.shape) != 1 else copied
            names.append(v.var)
        if not names:
            raise frontend_error(
                "capture",
                "the program returns no array",
                "return the arrays it computes",
                self.source,
            )
        header = [
            f"# Generated by Solar from {self.source or 'an in-memory JAX function'} "
            "(jax.make_jaxpr); do not edit.",
            "# Each statement is one jaxpr equation; its comment gives the source line.",
        ]
        return LoweredProgram(
            self.program_text(header, names),
            self.source,
            self.params,
            self.ops,
            list(dict.fromkeys(self.notes)),
            self.sequence,
            [],
        )

    def size_names(self) -> dict[int, str]:
        """A problem file's module-level size constants name the dims of their value, as for
        PyTorch (problem.constant_dim_names)."""
        return constant_dim_names(self.source) if self.source else {}

    def lower_jaxpr(self, jaxpr, args, group: bool = True) -> list:
        """Lowers the equations of `jaxpr` with its invars bound to `args` (None: already
        bound) and returns the values of its outvars."""
        if args is not None:
            for var, a in zip(jaxpr.invars, args, strict=True):
                self.env[var] = a
        saved = self.consumers, self.producers, self.grouping
        consumers: dict = {}
        producers: dict = {}
        for eqn in jaxpr.eqns:
            for v in eqn.invars:
                if not _is_literal(v):
                    consumers.setdefault(v, []).append(eqn)
            for v in eqn.outvars:
                producers[v] = eqn
        for v in jaxpr.outvars:
            if not _is_literal(v):
                consumers.setdefault(v, []).extend([None, None])  # an output: never absorbed
        self.consumers, self.producers, self.grouping = consumers, producers, group
        unit = {"key": None, "start": 0, "label": ""}
        eqns = list(jaxpr.eqns)
        keys = [
            None
            if e.primitive.name in OWN_UNITS or (e.primitive.name in NESTED and not _library(e))
            else _unit_key(e)
            for e in eqns
        ]
        for i, eqn in enumerate(eqns):
            if id(eqn) in self.done:
                continue
            if group:
                key = keys[i]
                if key != unit["key"] or key is None:
                    if unit["key"] is not None:
                        self.close_unit(unit["start"], unit["label"], self.unit_mode)
                    self.unit_mode = ""
                    unit = {"key": key, "start": len(self.lines), "label": _label(eqn)}
                    j = i + 1
                    while key is not None and j < len(eqns) and keys[j] == key:
                        j += 1
                    label = lower_pattern(self, eqns[i:j])  # a known library function
                    if label:
                        unit["label"] = label
                        continue
            self.lower_eqn(eqn)
        if group and unit["key"] is not None:
            self.close_unit(unit["start"], unit["label"], self.unit_mode)
            self.unit_mode = ""
        self.consumers, self.producers, self.grouping = saved
        return [self.read(v) for v in jaxpr.outvars]

    def lower_eqn(self, eqn) -> None:
        name = eqn.primitive.name
        self.node = eqn
        self.ops[name] = self.ops.get(name, 0) + 1
        self.sequence.append(name)
        args = [self.read(v) for v in eqn.invars]
        if name in NESTED:
            key = NESTED[name]
            sub = eqn.params.get(key) if key else None
            if sub is None:
                self.fail(f"primitive {name} has no lowering to the IR")
            # A user's jitted function is several operators: its equations form units by
            # their own user frames. A library function's (jax.nn.gelu) is one, in the
            # unit of the call (its equations may carry the frames of the call that first
            # traced it: JAX caches the jaxpr of a jitted function).
            outs = self.inline(sub, args, group=self.grouping and not _library(eqn))
        elif all(isinstance(a, (bool, int, float)) for a in args) and _rank0(eqn):
            outs = fold(self, eqn, args)
        elif name != "concatenate" and all(_empty(v) for v in eqn.outvars):
            # Arrays with no elements (associative_scan slices some for even lengths): no
            # node; a concatenate leaves them out, any other use of one is an error.
            outs = [EMPTY] * len(eqn.outvars)
        else:
            rule = RULES.get(name)
            fallback = getattr(self.capture, "fallback", None)
            if rule is None and fallback is not None:  # --llm-fallback (agent/fallback.py)
                rule = fallback.rule
            if rule is None:
                self.fail(
                    f"primitive {name} has no lowering to the IR",
                    "docs/jax.md lists the supported primitives; the IR can express it by hand "
                    "(docs/ir.md) - add a rule in python/solar/frontend/jax/rules.py",
                )
            outs = rule(self, eqn, *args)
            if len(eqn.outvars) == 1 and not isinstance(outs, (tuple, list)):
                outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            self.env[var] = value

    def inline(self, closed_or_open, args, group: bool = False) -> list:
        """Lowers a nested jaxpr (closed or open) on `args`, as part of the current unit
        (group=True: its equations open units of their own; a scan's body)."""
        jaxpr = getattr(closed_or_open, "jaxpr", closed_or_open)
        consts = list(getattr(closed_or_open, "consts", []) or [])
        for k, (var, value) in enumerate(zip(jaxpr.constvars, consts, strict=True)):
            arr = np.asarray(value)
            if arr.ndim != 0:
                self.fail(
                    f"a nested jaxpr closes over a constant array of shape {arr.shape} "
                    f"(constant {k}); pass it as an argument"
                )
            self.env[var] = _python(arr)
        node = self.node
        outs = self.lower_jaxpr(jaxpr, args, group=group)
        self.node = node
        return outs


def _empty(var) -> bool:
    shape = getattr(getattr(var, "aval", None), "shape", None)
    return shape is not None and 0 in tuple(shape)


def _is_literal(v) -> bool:
    from jax.extend.core import Literal

    return isinstance(v, Literal)


def _library(eqn) -> bool:
    """A nested call of a JAX library function (jax.nn.silu, jnp.where's `_where`,
    jnp.take_along_axis): its name is one of jax.nn, jax.numpy, jax.lax or
    jax.scipy.special (custom_jvp_call and custom_vjp_call are library rules too)."""
    import jax
    import jax.numpy as jnp
    import jax.scipy.special as special

    if eqn.primitive.name in ("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"):
        return True
    name = str(eqn.params.get("name", "")).lstrip("_")
    return bool(name) and any(hasattr(m, name) for m in (jax.nn, jnp, jax.lax, special))


def _rank0(eqn) -> bool:
    return all(getattr(v.aval, "shape", None) == () for v in eqn.outvars)


def _unit_key(eqn):
    """The user-level call an equation comes from: every user frame of its traceback (file,
    line and column span; the program's and a model library's, such as a Flax layer's line
    and the user's line that called the layer) and its name stack (the Flax module path).
    None when JAX recorded none: the equation is its own unit."""
    from jax._src import source_info_util

    tb = eqn.source_info.traceback
    if tb is None:
        return None
    frames = tuple(
        (f.file_name, f.start_line, f.start_column, f.end_line, f.end_column)
        for f in source_info_util.user_frames(tb)
    )
    if not frames:
        return None
    return frames, str(eqn.source_info.name_stack)


def _label(eqn) -> str:
    name = eqn.params.get("name") if isinstance(eqn.params.get("name"), str) else None
    return f"jax.{name or eqn.primitive.name}"


def _code(file: str, line: int) -> str:
    try:
        return Path(file).read_text().splitlines()[line - 1].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def lower(capture: JaxCapture) -> LoweredProgram:
    return JaxLowerer(capture).run()
