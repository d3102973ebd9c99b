"""Per-kernel validation: the level used when a program neither fits the execution budget at
its own sizes nor keeps its structure at reduced sizes (docs/pytorch.md, Validation).

Each distinct computing operator of the captured graph (operator, argument shapes, dtypes and
attributes: stride, padding, groups, dims, ...) becomes a one-operator module. It is captured
and lowered exactly like a whole program, and validated fully against PyTorch on random inputs
— at its own shapes when it fits the budget, else with the leading (batch) dim of the inputs
that share the output's leading dim halved until it fits. The attributes are never changed.

The level is `per-kernel` when every distinct operator passed; `failed` names the first that
did not; `none` names those that could not be run here.
"""

from __future__ import annotations

import torch

from ..errors import UserError

# Operators that draw random numbers: validated at their expectation by the whole-program
# levels; alone they have nothing deterministic to compare.
_RANDOM = ("rand", "randn", "randint", "bernoulli", "normal", "uniform", "native_dropout")


class OneOp(torch.nn.Module):
    """Calls one ATen operator; tensor arguments come from forward()'s inputs in order."""

    def __init__(self, target, args, kwargs, outputs):
        super().__init__()
        self.target, self.args, self.kwargs, self.outputs = target, args, kwargs, outputs

    def forward(self, *tensors):
        it = iter(tensors)

        def fill(a):
            if isinstance(a, _Slot):
                return next(it)
            if isinstance(a, (list, tuple)):
                return type(a)(fill(x) for x in a)
            return a

        out = self.target(*fill(self.args), **{k: fill(v) for k, v in self.kwargs.items()})
        if self.outputs is None:
            return out
        return tuple(out[i] for i in self.outputs)


class _Slot:
    """A tensor argument's place in the argument template."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    def __repr__(self):
        return f"T{list(self.shape)}:{str(self.dtype).replace('torch.', '')}"


def _template(a):
    import torch.fx

    if isinstance(a, torch.fx.Node):
        val = a.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise ValueError(f"argument {a.name} is not a tensor")
        return _Slot(val.shape, val.dtype)
    if isinstance(a, (list, tuple)):
        return type(a)(_template(x) for x in a)
    return a


def _slots(a) -> list[_Slot]:
    if isinstance(a, _Slot):
        return [a]
    if isinstance(a, (list, tuple)):
        return [s for x in a for s in _slots(x)]
    return []


# Operators that index a table with an integer tensor: argument position of the index ->
# (position of the table, position of the dim argument, or None for dim 0 / the list
# position for aten.index).
_INDEX_ARGS = {
    "aten.embedding.default": {1: (0, None)},
    "aten.index_select.default": {2: (0, 1)},
    "aten.gather.default": {2: (0, 1)},
    "aten.scatter.src": {2: (0, 1)},
    "aten.scatter.value": {2: (0, 1)},
    "aten.scatter_add.default": {2: (0, 1)},
    "aten.scatter_reduce.two": {2: (0, 1)},
    "aten.index.Tensor": {1: (0, "list")},
    "aten.index_put.default": {1: (0, "list")},
}
# Arguments that must be positive: running variances (eval-mode batch norm reads them under
# a square root) and the operand of operators defined only there.
_POSITIVE_ARGS = {
    "aten._native_batch_norm_legit_no_training.default": (4,),
    "aten._native_batch_norm_legit_functional.default": (4,),
    "aten._native_batch_norm_legit.default": (4,),
    "aten.native_batch_norm.default": (4,),
    "aten.log.default": (0,),
    "aten.log2.default": (0,),
    "aten.log10.default": (0,),
    "aten.log1p.default": (0,),
    "aten.sqrt.default": (0,),
    "aten.rsqrt.default": (0,),
    "aten.pow.Tensor_Scalar": (0,),
}
# Arguments that must lie in (-1, 1).
_UNIT_ARGS = {
    "aten.acos.default": (0,),
    "aten.asin.default": (0,),
    "aten.atanh.default": (0,),
}


def _draws(key: str, args) -> dict[int, tuple]:
    """id(slot) -> how to draw it, for the arguments that random normals or zeros would make
    invalid or meaningless: ("index", rows) for indices into a table, ("positive",),
    ("unit",)."""
    out: dict[int, tuple] = {}
    for pos, (table_pos, dim_pos) in _INDEX_ARGS.get(key, {}).items():
        if pos >= len(args) or table_pos >= len(args):
            continue
        table = args[table_pos]
        if not isinstance(table, _Slot) or not table.shape:
            continue
        if dim_pos == "list":
            for d, idx in enumerate(args[pos] if isinstance(args[pos], (list, tuple)) else []):
                if isinstance(idx, _Slot) and d < len(table.shape):
                    out[id(idx)] = ("index", table.shape[d])
            continue
        dim = args[dim_pos] if dim_pos is not None and dim_pos < len(args) else 0
        if isinstance(args[pos], _Slot) and isinstance(dim, int):
            out[id(args[pos])] = ("index", table.shape[dim % len(table.shape)])
    for table, kind in ((_POSITIVE_ARGS, "positive"), (_UNIT_ARGS, "unit")):
        for pos in table.get(key, ()):
            if pos < len(args) and isinstance(args[pos], _Slot):
                out[id(args[pos])] = (kind,)
    return out


def _random(slot: _Slot, generator, draw: tuple | None = None) -> torch.Tensor:
    """Random inputs valid for their role and dtype: normals for floats (in [0.5, 1.5) where
    the operator needs positive values, in (-0.9, 0.9) where it needs (-1, 1)); indices into
    a table uniform over its rows that the index dtype can hold; zeros for other integer
    tensors (always valid); random booleans."""
    if draw and draw[0] == "index":
        top = torch.iinfo(slot.dtype).max if slot.dtype != torch.bool else 1
        high = min(int(draw[1]), int(top) + 1)
        if high < 1:
            return torch.zeros(slot.shape, dtype=slot.dtype)
        return torch.randint(0, high, slot.shape, generator=generator).to(slot.dtype)
    if slot.dtype.is_floating_point:
        if draw and draw[0] == "positive":
            return (torch.rand(slot.shape, generator=generator) + 0.5).to(slot.dtype)
        if draw and draw[0] == "unit":
            return (torch.rand(slot.shape, generator=generator) * 1.8 - 0.9).to(slot.dtype)
        return torch.randn(slot.shape, generator=generator).to(slot.dtype)
    if slot.dtype == torch.bool:
        return torch.rand(slot.shape, generator=generator) > 0.5
    return torch.zeros(slot.shape, dtype=slot.dtype)


def distinct_operators(exported, needed_ops) -> list[list]:
    """[key, args template, kwargs template, used outputs, leading dim of the (first)
    output, count] per distinct computing operator, in first-use order."""
    import operator

    from torch.export.graph_signature import OutputKind

    # What the user's outputs depend on (outputs that only update buffers are not compared).
    sig = exported.graph_signature
    by_name = {n.name: n for n in exported.graph.nodes}
    stack = [s.arg.name for s in sig.output_specs if s.kind == OutputKind.USER_OUTPUT]
    needed: set[str] = set()
    while stack:
        name = stack.pop()
        if name in needed or name not in by_name:
            continue
        needed.add(name)
        stack += [i.name for i in by_name[name].all_input_nodes]
    seen: dict[str, list] = {}
    for node in exported.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if node.name not in needed:
            continue
        key = str(node.target)
        if key not in needed_ops:
            continue
        try:
            args = _template(tuple(node.args))
            kwargs = {k: _template(v) for k, v in node.kwargs.items()}
        except ValueError:
            continue  # a non-tensor node argument (a symbolic size): covered by its producer
        outputs = None
        if isinstance(node.meta.get("val"), (tuple, list)):
            outputs = sorted(
                {u.args[1] for u in node.users if u.target is operator.getitem and u.name in needed}
            ) or [0]
        val = node.meta.get("val")
        first = val[0] if isinstance(val, (tuple, list)) and val else val
        lead = int(first.shape[0]) if isinstance(first, torch.Tensor) and first.dim() else 0
        sig = f"{key}{args!r}{kwargs!r}{outputs}"
        if sig in seen:
            seen[sig][5] += 1
        else:
            seen[sig] = [key, args, kwargs, outputs, lead, 1]
    return list(seen.values())


# Operators whose output rows come from one operand only (the other's leading dim is the
# contraction): the argument position that carries the batch.
_ROWS_FROM = {"aten.mm.default": 0, "aten.addmm.default": 1}


def _halve(key, args, kwargs, lead: int):
    """The templates with the leading dim of every tensor whose leading dim is `lead` halved
    (None when nothing shrinks)."""
    changed = False
    if key in _ROWS_FROM:
        i = _ROWS_FROM[key]
        a = args[i]
        if not isinstance(a, _Slot) or not a.shape or a.shape[0] != lead or lead < 2:
            return None
        half = _Slot(((lead + 1) // 2, *a.shape[1:]), a.dtype)
        return (*args[:i], half, *args[i + 1 :]), kwargs

    def shrink(a):
        nonlocal changed
        if isinstance(a, _Slot):
            if a.shape and a.shape[0] == lead and lead > 1:
                changed = True
                return _Slot(((lead + 1) // 2, *a.shape[1:]), a.dtype)
            return a
        if isinstance(a, (list, tuple)):
            return type(a)(shrink(x) for x in a)
        return a

    new_args = shrink(args)
    new_kwargs = {k: shrink(v) for k, v in kwargs.items()}
    return (new_args, new_kwargs) if changed else None


def check_operator(key, args, kwargs, outputs, lead, seed, backend, max_bytes, max_seconds):
    """Validates one operator; returns (Validation, shapes text), or (None, why) when it
    cannot run here. The budget is checked on the meta device before any input is drawn;
    over it, the inputs whose leading dim equals the output's (the batch) are halved, the
    output's leading dim with them."""
    from .. import _core
    from .capture import capture_module
    from .fullrun import check_validation_budget, validate_full
    from .lower import lower
    from .validation import is_compile_error, load_lowered

    target = _resolve(key)
    last = ""
    for _ in range(24):
        slots = _slots(args) + _slots(kwargs)
        module = OneOp(target, args, kwargs, outputs)
        shapes = ", ".join(repr(s) for s in slots)
        meta = [torch.empty(s.shape, dtype=s.dtype, device="meta") for s in slots]
        try:
            capture = capture_module(module, meta)
            capture.input_bytes = sum(t.numel() * t.element_size() for t in meta)
            lowered = lower(capture)
            program = load_lowered(lowered)
            graph = _core.trace(program, [])
            check_validation_budget(graph, capture, backend, max_bytes, max_seconds)
        except UserError as e:
            if is_compile_error(e):
                raise
            last = e.diagnostics[0].message
            smaller = _halve(key, args, kwargs, lead) if lead > 1 else None
            if smaller is None:
                break
            args, kwargs = smaller
            lead = (lead + 1) // 2
            continue
        draws = _draws(key, args)
        gen = torch.Generator().manual_seed(seed)
        capture.module = module
        capture.example_inputs = [_random(s, gen, draws.get(id(s))) for s in slots]
        v = validate_full(
            capture, lowered, program, seed, backend, max_bytes, max_seconds, f"on {shapes}"
        )
        return v, shapes
    return None, last


def _resolve(key: str):
    """torch.ops.aten.<name>.<overload> from its string form."""
    ns, name, overload = key.split(".")
    return getattr(getattr(getattr(torch.ops, ns), name), overload)


def validate_per_kernel(capture, lowered, why, seed, backend, max_bytes, max_seconds):
    from .fullrun import _VIEW_OPS
    from .validation import Validation, is_compile_error

    needed = {op for op in lowered.sequence if op not in _VIEW_OPS}
    ops = distinct_operators(capture.exported, needed)
    passed, skipped, undecided = 0, [], []
    for key, args, kwargs, outputs, lead, _count in ops:
        if any(r in key.split(".")[1] for r in _RANDOM):
            skipped.append(f"{key} (random)")
            continue
        try:
            v, shapes = check_operator(
                key, args, kwargs, outputs, lead, seed, backend, max_bytes, max_seconds
            )
        except Exception as e:  # noqa: BLE001 - PyTorch refusing an operator alone
            if is_compile_error(e):
                raise  # the native backend cannot run here: validate() switches backend
            v, shapes = None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if v is None:
            skipped.append(f"{key} ({shapes})")
        elif v.status == "inconclusive":
            undecided.append(f"{key} on {shapes}: {v.detail}")
        elif v.status != "full":
            return Validation("failed", f"per-kernel: {key} on {shapes}: {v.detail}", v.outputs)
        else:
            passed += 1
    if skipped:
        return Validation(
            "none",
            f"not executed here ({why}); per-kernel: {passed} of {len(ops)} distinct operators "
            f"match PyTorch, {len(skipped)} could not run here: " + "; ".join(skipped[:5]),
        )
    if undecided:  # every operator passed, some by a comparison that cannot decide
        return Validation(
            "inconclusive",
            f"per-kernel ({why}): {passed} of {len(ops)} distinct operators "
            f"match PyTorch; undecided: " + "; ".join(undecided[:3]),
        )
    return Validation(
        "per-kernel",
        f"{passed} distinct operators ({sum(o[5] for o in ops)} instances) each match PyTorch "
        f"on random inputs, with the program's attributes ({why})",
    )
