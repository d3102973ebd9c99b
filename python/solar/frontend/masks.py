"""Attention masks that remove work (docs/pytorch.md, "Masked attention").

A causal or sliding-window mask applied to a product of queries and keys makes part of the
work unnecessary: the scores it overwrites with -inf are never needed, and the
probabilities there are exactly 0, so the product with the values may skip them. FlashAttention
and every fused attention kernel skip the masked tiles; a bound that counted them would sit
above such a kernel (2x for a long causal prefill).

This pass finds, in the exported graph, the two matrix products of such an attention and the
band of (query row m, key column n) pairs the mask keeps, `lo <= n - m <= hi` within the
keys `c0 <= n <= c1`:

    S = bmm(Q, K^T)   -> [view, scale, cast]* -> where(M, -inf, S) | S + B (B in {0, -inf})
                      |  masked_fill(S, M, -inf)
    P = softmax(., -1) -> [where(c, 0, P), cast, view, dropout]* -> bmm(P, V)

The mask must not depend on the program's inputs (torch.triu/tril, arange comparisons,
SDPA's is_causal, Hugging Face's mask functions, a buffer the model registers): it is
evaluated here on real tensors, with broadcast dims kept at size 1, and must equal a band
over the scores' row and column dims exactly (the product's, followed through views,
permutes and dims of size one: an einsum's `qhk` layout). The first
product then runs only inside the band (its other outputs are overwritten, whatever they
are); the second contracts only inside it when every row keeps at least one column (a row
masked entirely has no zero probabilities to skip). The lowering emits both as guarded
kernels (stdlib/linalg.py, `bmm_band*`), which execution validates against PyTorch like any
other kernel, and which the analysis counts at the points their guard keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

# The largest mask evaluated (query rows x key columns, and any intermediate of its
# computation): 2^28 booleans, 256 MiB. A larger mask is not examined and its attention is
# counted dense (an upper bound).
MAX_MASK_ELEMENTS = 1 << 28

_SHAPE_ONLY = {  # their values do not depend on their tensor argument's values
    "aten.full_like.default",
    "aten.zeros_like.default",
    "aten.ones_like.default",
    "aten.empty_like.default",
}
_SOURCES = {  # tensors made from scalars alone
    "aten.full.default",
    "aten.zeros.default",
    "aten.ones.default",
    "aten.scalar_tensor.default",
    "aten.arange.default",
    "aten.arange.start",
    "aten.arange.start_step",
}
_VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}
_COPIES = {"aten._to_copy.default", "aten.clone.default", "aten.alias.default"}
_SCALINGS = {"aten.mul.Scalar", "aten.div.Scalar", "aten.mul.Tensor", "aten.div.Tensor"}
_DIM_ONE = {
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.squeeze.default",
}
_SOFTMAX = {"aten._softmax.default", "aten._safe_softmax.default", "aten.softmax.int"}
_BMM = "aten.bmm.default"


@dataclass(frozen=True)
class Band:
    """Keep the (m, n) pairs with lo <= n - m <= hi and c0 <= n <= c1; `axis` says which
    ranks the guard relates: "out" (a product's output rows and columns: the scores), "k"
    (its output rows and the contraction: the probabilities times the values) or "softmax"
    (the rows and the keys of the softmax)."""

    axis: str
    lo: int
    hi: int
    c0: int
    c1: int

    def args(self) -> list[int]:
        return [self.lo, self.hi, self.c0, self.c1]


def _shape(node):
    """The sizes of a node's value; None when it has none, or when a size is not a number (an
    unbacked size a data-dependent operator leaves, `u0` of a `nonzero`: reading it as an int
    raised inside the capture's shape environment; SOL-ExecBench task 106)."""
    val = node.meta.get("val") if hasattr(node, "meta") else None
    if not hasattr(val, "shape"):
        return None
    sizes = []
    for s in val.shape:
        if not isinstance(s, int):
            s = s.node.maybe_as_int() if hasattr(s, "node") else None
            if s is None:
                return None
        sizes.append(int(s))
    return tuple(sizes)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class _Constants:
    """Values of the input-independent nodes, each as a real tensor broadcastable to the
    node's shape (broadcast dims kept at size 1), or None."""

    def __init__(self, buffer_value=None):
        self.memo: dict = {}
        # A placeholder's real value (a buffer or constant of the model: nanoGPT's
        # `register_buffer("bias", torch.tril(...))`), or None.
        self.buffer_value = buffer_value

    def value(self, node):
        import torch.fx

        if isinstance(node, (list, tuple)):
            return type(node)(self.value(v) for v in node)
        if not isinstance(node, torch.fx.Node):
            return node
        if node.name not in self.memo:
            self.memo[node.name] = None  # cycles cannot happen; unknown while computing
            try:
                self.memo[node.name] = self._compute(node)
            except Exception:  # an operator this evaluation cannot run: not constant
                self.memo[node.name] = None
        return self.memo[node.name]

    def _compute(self, node):
        import torch
        import torch.fx

        if node.op == "placeholder":
            value = self.buffer_value(node.name) if self.buffer_value else None
            ok = isinstance(value, torch.Tensor) and value.numel() <= MAX_MASK_ELEMENTS
            return value if ok and tuple(value.shape) == _shape(node) else None
        if node.op != "call_function":
            return None
        shape = _shape(node)
        if shape is None:
            return None
        val = node.meta["val"]
        op = str(node.target)
        if op in _SHAPE_ONLY:
            fill = {"aten.zeros_like.default": 0, "aten.ones_like.default": 1}.get(op)
            if fill is None:
                fill = node.args[1] if op == "aten.full_like.default" else 0
            return torch.full([1] * len(shape), fill, dtype=val.dtype)
        if op in ("aten.full.default", "aten.zeros.default", "aten.ones.default"):
            fill = {"aten.zeros.default": 0, "aten.ones.default": 1}.get(op, None)
            if fill is None:
                fill = node.args[1]
            return torch.full([1] * len(shape), fill, dtype=val.dtype)
        if _numel(shape) > MAX_MASK_ELEMENTS and not (
            op == "aten.expand.default" or _pointwise(node)
        ):
            return None
        args = [self.value(a) for a in node.args]
        kwargs = {k: self.value(v) for k, v in node.kwargs.items()}
        computed = _flat([*args, *kwargs.values()])
        given = _flat([*node.args, *node.kwargs.values()])
        if any(
            isinstance(g, torch.fx.Node) and c is None for c, g in zip(computed, given, strict=True)
        ):
            return None  # depends on an input
        if op in _SOURCES:
            return node.target(*args, **kwargs)
        if op == "aten.expand.default":
            x = args[0]
            return x.reshape([1] * (len(shape) - x.dim()) + list(x.shape))
        if op == "aten.unsqueeze.default":
            return torch.unsqueeze(args[0], args[1])
        if op == "aten.permute.default":
            return args[0].permute(args[1])
        if op in _VIEWS:
            x = args[0]
            if tuple(x.shape) == shape:
                return x
            if _numel(x.shape) == _numel(shape):
                return x.reshape(shape)
            if _numel(shape) > MAX_MASK_ELEMENTS:
                return None
            return x.expand(_shape(node.args[0])).reshape(shape)
        if _pointwise(node):
            out = node.target(*args, **kwargs)
            return out.reshape([1] * (len(shape) - out.dim()) + list(out.shape))
        # Anything else (triu, index, gather, cumsum, ...): at full size, when it is small.
        if _numel(shape) > MAX_MASK_ELEMENTS:
            return None
        full = [
            a.expand(_shape(o)) if isinstance(o, torch.fx.Node) and hasattr(a, "expand") else a
            for a, o in zip(args, node.args, strict=True)
        ]
        out = node.target(*full, **kwargs)
        return out if isinstance(out, torch.Tensor) else None


def _flat(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _pointwise(node) -> bool:
    import torch

    return torch.Tag.pointwise in getattr(node.target, "tags", ())


def _band(masked) -> tuple[int, int, int, int, bool] | None:
    """(lo, hi, c0, c1, every row keeps a column) when the kept pairs of a [S, T] mask (True:
    masked) are exactly {lo <= n - m <= hi and c0 <= n <= c1}: a causal or sliding-window
    band, a window over the last keys, or both; None otherwise."""
    import torch

    rows, cols = masked.shape
    keep = ~masked
    count = keep.sum(1)
    kept = count > 0
    if not bool(kept.any()):
        return None
    first = keep.to(torch.uint8).argmax(1)
    last = cols - 1 - keep.flip(1).to(torch.uint8).argmax(1)
    m = torch.arange(rows)
    c0, c1 = int(first[kept].min()), int(last[kept].max())
    # The diagonals that bound the rows the key interval does not clip (none: unbounded).
    inner = kept & (first > c0)
    lo = int((first - m)[inner].min()) if bool(inner.any()) else c0 - (rows - 1)
    inner = kept & (last < c1)
    hi = int((last - m)[inner].max()) if bool(inner.any()) else c1
    want_first = (m + lo).clamp(min=c0)
    want_last = (m + hi).clamp(max=c1)
    want_count = (want_last - want_first + 1).clamp(min=0)
    if not bool((count == want_count).all()):
        return None
    if not bool(((first == want_first) | ~kept).all() and ((last == want_last) | ~kept).all()):
        return None
    return lo, hi, c0, c1, bool(kept.all())


def _value_users(node) -> list:
    """The users that read `node`'s values (full_like(x) reads only its shape)."""
    return [u for u in node.users if str(u.target) not in _SHAPE_ONLY]


def _is_const_scalar(consts: _Constants, arg, value: float) -> bool:
    import torch

    v = consts.value(arg)
    if isinstance(v, (int, float)):
        return v == value
    return isinstance(v, torch.Tensor) and v.numel() == 1 and float(v.reshape(())) == value


def _masked_positions(consts: _Constants, node, chain):
    """The positions (True) where the masking operator `node` writes -inf whatever `chain`
    holds there, as a tensor broadcastable to its output; None when it is no such operator."""
    import torch

    op = str(node.target)
    ninf = float("-inf")
    if op == "aten.where.self" and len(node.args) == 3:
        cond, a, b = node.args
        c = consts.value(cond)
        if not isinstance(c, torch.Tensor) or cond is chain:
            return None
        if b is chain and a is not chain and _is_const_scalar(consts, a, ninf):
            return c.bool()
        if a is chain and b is not chain and _is_const_scalar(consts, b, ninf):
            return ~c.bool()
        return None
    if op == "aten.masked_fill.Scalar" and node.args[0] is chain:
        c = consts.value(node.args[1])
        if isinstance(c, torch.Tensor) and float(node.args[2]) == ninf:
            return c.bool()
        return None
    if op == "aten.add.Tensor" and len(node.args) == 2 and not node.kwargs.get("alpha", 1) != 1:
        other = node.args[1] if node.args[0] is chain else node.args[0]
        if other is chain:
            return None
        bias = consts.value(other)
        if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
            return None
        neg = bias == ninf
        if not bool((neg | (bias == 0)).all()):
            return None  # other bias values change the kept scores: not only a mask
        return neg
    return None


def _mask_2d(masked, shape, pos):
    """The [S, T] mask over the dims `pos` (rows, cols) of a mask broadcastable to `shape`
    that does not vary over the other dims; None when it does or is too large."""
    if masked.dim() > len(shape):
        return None
    full = masked.reshape((1,) * (len(shape) - masked.dim()) + tuple(masked.shape))
    if any(full.shape[d] != 1 for d in range(len(shape)) if d not in pos):
        return None
    rows, cols = shape[pos[0]], shape[pos[1]]
    if rows * cols > MAX_MASK_ELEMENTS:
        return None
    order = [*pos, *(d for d in range(len(shape)) if d not in pos)]
    m = full.permute(order).reshape(full.shape[pos[0]], full.shape[pos[1]])
    return m.expand(rows, cols)


def _moved(node, user, pos):
    """Where the scores' (rows, cols) dims `pos` of `node` are in `user`'s result when
    `user` only copies, scales, moves dims or adds and removes dims of size 1 (an einsum's
    bmm is viewed and permuted back to the program's layout); None otherwise."""
    src, dst = _shape(node), _shape(user)
    if src is None or dst is None or not user.args or user.args[0] is not node:
        return None
    op = str(user.target)
    if op in _COPIES or (
        op in _SCALINGS and not _is_tensor_node(user.args[1]) and len(user.args) == 2
    ):
        return pos if src == dst else None
    if op == "aten.permute.default":
        dims = [d % len(src) for d in user.args[1]]
        return tuple(dims.index(p) for p in pos)
    if op not in _VIEWS and op not in _DIM_ONE and op != "aten.expand.default":
        return None
    last = (len(src) - 2, len(src) - 1)
    if pos == last and dst[-2:] == src[-2:]:  # a view or expansion of the leading dims
        return (len(dst) - 2, len(dst) - 1)
    if op == "aten.expand.default":
        return None
    if any(src[p] == 1 for p in pos):
        return None  # a row or column of one: which dim it went to is ambiguous
    a = [i for i, n in enumerate(src) if n != 1]
    b = [i for i, n in enumerate(dst) if n != 1]
    if [src[i] for i in a] != [dst[i] for i in b]:
        return None
    return tuple(b[a.index(p)] for p in pos)


def _softmaxes(start, pos) -> list:
    """(softmax, positions of its rows and cols) of the masked scores `start` over their
    cols, directly or through copies and moves of dims (not scalings: a negative scale
    would make the masked -inf a +inf)."""
    out = []
    stack, seen = [(start, pos)], set()
    while stack:
        node, at = stack.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        for user in node.users:
            if str(user.target) in _SOFTMAX and user.args[0] is node:
                dim = user.args[1] if len(user.args) > 1 else user.kwargs.get("dim")
                shape = _shape(user)
                if shape is not None and isinstance(dim, int) and dim % len(shape) == at[1]:
                    out.append((user, at))
                continue
            moved = None if str(user.target) in _SCALINGS else _moved(node, user, at)
            if moved is not None:
                stack.append((user, moved))
    return out


def _probability_products(consts: _Constants, softmax, pos):
    """The bmm nodes whose first operand is `softmax`'s result (its rows and cols at `pos`),
    through operators that keep its zeros at their positions and move its dims."""
    out = []
    stack, seen = [(softmax, pos)], set()
    while stack:
        node, at = stack.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        for u in node.users:
            op = str(u.target)
            if op == _BMM and u.args[0] is node and at == (1, 2):
                out.append(u)
                continue
            moved = _moved(node, u, at)
            if moved is not None:
                stack.append((u, moved))
            elif (
                op in _SCALINGS
                and u.args[0] is node
                and _shape(u) == _shape(node)
                and not (op == "aten.div.Tensor" and _is_tensor_node(u.args[1]))
            ):
                stack.append((u, at))  # a scale or a dropout mask: 0 stays 0
            elif (
                op == "aten.where.self"
                and _shape(u) == _shape(node)
                and _zero_branch(consts, u, node)
            ):
                stack.append((u, at))
            elif op == "aten.native_dropout.default" and u.args[0] is node:
                stack.append((u, at))  # dropout: its result, getitem 0, keeps the zeros
            elif op == "<built-in function getitem>" and str(node.target) == (
                "aten.native_dropout.default"
            ):
                if u.args[1] == 0:
                    stack.append((u, at))
    return out


def _zero_branch(consts: _Constants, where, node) -> bool:
    """where(c, 0, P) or where(c, P, 0) with a constant 0: the zeros of P stay."""
    import torch

    _, a, b = where.args
    other = b if a is node else a if b is node else None
    if other is None or other is node:
        return False
    v = consts.value(other)
    if isinstance(v, (int, float)):
        return v == 0
    return isinstance(v, torch.Tensor) and bool((v == 0).all())


def attention_bands(graph, buffer_value=None) -> dict[str, Band]:
    """{node name: Band} for the masked attentions of an exported graph (module doc): their
    products and softmax. `buffer_value(placeholder name)` gives the real value of a buffer
    or constant a mask may be built from (None: unknown, like an input)."""
    consts = _Constants(buffer_value)
    out: dict[str, Band] = {}
    for node in graph.nodes:
        if node.op != "call_function" or str(node.target) != _BMM:
            continue
        shape = _shape(node)
        if shape is None or len(shape) != 3:
            continue
        chain, pos = node, (1, 2)  # the scores' rows and cols
        while len(_value_users(chain)) == 1:
            user = _value_users(chain)[0]
            moved = _moved(chain, user, pos)
            if moved is None:
                break
            chain, pos = user, moved
        if len(_value_users(chain)) != 1:
            continue
        masking = _value_users(chain)[0]
        if _shape(masking) != _shape(chain):
            continue
        masked = _masked_positions(consts, masking, chain)
        if masked is None:
            continue
        m2 = _mask_2d(masked, _shape(masking), pos)
        band = _band(m2) if m2 is not None else None
        if band is None:
            continue
        lo, hi, c0, c1, every_row = band
        out[node.name] = Band("out", lo, hi, c0, c1)
        if every_row:
            for softmax, at in _softmaxes(masking, pos):
                # The banded softmax kernel takes its rows and keys as the last two dims.
                dims = len(_shape(softmax))
                if str(softmax.target) == "aten._softmax.default" and at == (dims - 2, dims - 1):
                    out[softmax.name] = Band("softmax", lo, hi, c0, c1)
                for product in _probability_products(consts, softmax, at):
                    out[product.name] = Band("k", lo, hi, c0, c1)
    return out


def _is_tensor_node(arg) -> bool:
    import torch.fx

    if not isinstance(arg, torch.fx.Node):
        return False
    shape = _shape(arg)
    return shape is not None and _numel(shape) > 1
