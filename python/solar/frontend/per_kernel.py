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


def _random(slot: _Slot, generator) -> torch.Tensor:
    """Random values for floats, zeros for integer tensors (always valid indices), random
    booleans."""
    if slot.dtype.is_floating_point:
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
    cannot run here. Over the budget, the inputs whose leading dim equals the output's
    (the batch) are halved, the output's leading dim with them."""
    from .. import _core
    from ..execution import check_budget
    from .capture import capture_module
    from .lower import lower
    from .validate import load_lowered, validate_full

    target = _resolve(key)
    last = ""
    for _ in range(24):
        slots = _slots(args) + _slots(kwargs)
        gen = torch.Generator().manual_seed(seed)
        inputs = [_random(s, gen) for s in slots]
        module = OneOp(target, args, kwargs, outputs)
        shapes = ", ".join(repr(s) for s in slots)
        try:
            capture = capture_module(module, inputs)
            lowered = lower(capture)
            program = load_lowered(lowered)
            graph = _core.trace(program, [])
            check_budget(graph, backend, max_bytes, max_seconds, "", bounds_check=False)
        except UserError as e:
            last = e.diagnostics[0].message
            smaller = _halve(key, args, kwargs, lead) if lead > 1 else None
            if smaller is None:
                break
            args, kwargs = smaller
            lead = (lead + 1) // 2
            continue
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
    from .validate import _VIEW_OPS, Validation

    needed = {op for op in lowered.sequence if op not in _VIEW_OPS}
    ops = distinct_operators(capture.exported, needed)
    passed, skipped = 0, []
    for key, args, kwargs, outputs, lead, _count in ops:
        if any(r in key.split(".")[1] for r in _RANDOM):
            skipped.append(f"{key} (random)")
            continue
        try:
            v, shapes = check_operator(
                key, args, kwargs, outputs, lead, seed, backend, max_bytes, max_seconds
            )
        except Exception as e:  # noqa: BLE001 - PyTorch refusing an operator alone
            v, shapes = None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if v is None:
            skipped.append(f"{key} ({shapes})")
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
    return Validation(
        "per-kernel",
        f"{passed} distinct operators ({sum(o[5] for o in ops)} instances) each match PyTorch "
        f"on random inputs, with the program's attributes ({why})",
    )
