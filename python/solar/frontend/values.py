"""Values a lowering rule passes around besides plain tensors, and the helpers every front
end's rules share to consume them: a folded transpose (read transposed by a matrix product,
copied by anyone else), an operator result the lowering does not produce, and
concatenation. Nothing here imports a framework."""

from __future__ import annotations

from dataclasses import dataclass

from .builder import Value


@dataclass
class Transposed(Value):
    """A permute of the last two dims that mm/bmm read directly (the `_nt` kernels); any
    other consumer materialises it as a copy."""

    base: Value = None
    order: tuple = ()


def tensor(lw, v) -> Value:
    """A concrete Value (materialising a folded transpose)."""
    if isinstance(v, Transposed):
        return lw.permute(v.base, v.order)
    if isinstance(v, _Unused):
        lw.fail(f"the {v.what} result of {v.op} is used, but the lowering does not produce it")
    if not isinstance(v, Value):
        lw.fail(f"expected a tensor argument, got {type(v).__name__}")
    return v


def is_tensor(v) -> bool:
    return isinstance(v, Value)


def _axis(axis: int, rank: int) -> int:
    return axis % rank if rank else 0


class _Unused:
    """An operator result the lowering does not produce (saved statistics for backward)."""

    def __init__(self, lw, what):
        self.what = what
        self.op = str(lw.node.target)


def _concat(lw, parts, axis: int) -> Value:
    parts = [p for p in parts if p is not None]
    parts = [p for p in parts if p.numel > 0] or parts[:1]
    if len(parts) == 1:
        return parts[0]
    var = lw.fresh()
    lw.emit(f"{var} = concat([{', '.join(p.var for p in parts)}], dim={axis})")
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    return Value(var, tuple(shape), parts[0].dtype)
