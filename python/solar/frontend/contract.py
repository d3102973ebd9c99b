"""Contractions in any form, as one generated kernel each: `C[out] += A[lhs] * B[rhs]`.

Shared by the front ends: JAX's `dot_general` (jax/rules.py), PyTorch's `torch.einsum` and
`sum(mul(a, b))` over a dim both operands span (rules.py). A kernel names its dims by role
(B batch: in both operands and the output; M: the first operand and the output only; N: the
second operand and the output only; K: both operands, summed) and reads each operand in its
own layout, so a transposed or broadcast operand is read in place: no permute or copy sits
between consecutive contractions, and the analysis counts B·M·N·K MACs for each.

What this module needs of its host: a Builder (builder.py) with `add_kernel`, `call_kernel`,
`reshape`, `fresh` and `emit`.
"""

from __future__ import annotations

from .builder import Value


def dot_kernel(lhs, rhs, out, dtype: str, bias: str = "") -> str:
    """A kernel for one contraction: dims named by role (B batch, M/N free, K contracted)
    in each operand's own order, so a transposed operand is read in place."""
    allocs = []
    for d in out:
        src, names = ("A", lhs) if d in lhs else ("B", rhs)
        allocs.append(f"{d}={src}.shape[{names.index(d)}]")
    contracted = [d for d in lhs if d not in out]
    sig = f'A: Tensor("{",".join(lhs)}"), B: Tensor("{",".join(rhs)}")'
    if bias:
        sig += f', Bias: Tensor("{bias}")'
    lines = [
        "@kernel",
        f'def {{name}}({sig}) -> Tensor("{",".join(out)}", dtype="{dtype}"):',
        f'    C = Tensor({", ".join(allocs)}, dtype="{dtype}")',
    ]
    idx = lambda names: ", ".join(n.lower() for n in names)  # noqa: E731
    if bias:
        for depth, d in enumerate(out):
            lines.append("    " * (depth + 1) + f'for {d.lower()} in Dim("{d}", parallel=True):')
        lines.append("    " * (len(out) + 1) + f"C[{idx(out)}] = Bias[{bias.lower()}]")
    depth = 1
    for d in out:
        lines.append("    " * depth + f'for {d.lower()} in Dim("{d}", parallel=True):')
        depth += 1
    for d in contracted:
        lines.append("    " * depth + f'for {d.lower()} in Dim("{d}"):')
        depth += 1
    # Without a contracted dim (an outer or elementwise product, `bld,dn->bldn`) each output
    # is one product, written once: no sum, so no add counted (1 FLOP an element, as eager's
    # mul), unless a bias starts it.
    write = "+=" if contracted or bias else "="
    lines.append("    " * depth + f"C[{idx(out)}] {write} A[{idx(lhs)}] * B[{idx(rhs)}]")
    lines.append("    return C")
    return "\n".join(lines)


def _sum_kernel(names, kept, dtype: str) -> str:
    """A kernel summing an operand over its dims not in `kept` (a dim only one operand of a
    contraction has and the result has not: summed before the product, as torch.einsum
    does, so the product does not multiply it)."""
    lines = [
        "@kernel",
        f'def {{name}}(A: Tensor("{",".join(names)}")) -> Tensor("{",".join(kept)}", '
        f'dtype="{dtype}"):',
        "    C = Tensor("
        + ", ".join(f"{d}=A.shape[{names.index(d)}]" for d in kept)
        + f', dtype="{dtype}")',
    ]
    depth = 1
    for d in kept:
        lines.append("    " * depth + f'for {d.lower()} in Dim("{d}", parallel=True):')
        depth += 1
    for d in names:
        if d not in kept:
            lines.append("    " * depth + f'for {d.lower()} in Dim("{d}"):')
            depth += 1
    idx = lambda ns: ", ".join(n.lower() for n in ns)  # noqa: E731
    lines.append("    " * depth + f"C[{idx(kept)}] += A[{idx(names)}]")
    lines.append("    return C")
    return "\n".join(lines)


def _drop_ones(lw, v: Value, labels: list) -> tuple[Value, list]:
    """v without its dims of size 1 (a view) and their labels."""
    keep = [i for i, n in enumerate(v.shape) if n != 1]
    if len(keep) == len(v.shape):
        return v, list(labels)
    return lw.reshape(v, tuple(v.shape[i] for i in keep)), [labels[i] for i in keep]


def _pre_sum(lw, v: Value, labels: list, needed: set, dtype: str) -> tuple[Value, list]:
    """v summed over its labels not in `needed` (one generated kernel), or v as it is."""
    kept = [x for x in labels if x in needed]
    if len(kept) == len(labels):
        return v, labels
    if not kept:  # everything summed: keep one dim of size 1 to hold the sum
        v = lw.reshape(v, (1, *v.shape))
        labels = ["_one", *labels]
        kept = ["_one"]
    names = [f"I{i}" for i in range(len(labels))]
    kept_names = [names[labels.index(x)] for x in kept]
    kernel = lw.add_kernel(_sum_kernel(names, kept_names, dtype), "sum_over")
    shape = tuple(v.shape[labels.index(x)] for x in kept)
    return lw.call_kernel(kernel, [v.var], shape, dtype), kept


def contract(lw, a: Value, a_labels, b: Value, b_labels, out_labels, dtype: str) -> Value:
    """sum over the labels not in `out_labels` of a[a_labels] * b[b_labels], as one
    generated kernel (plus a sum over any label only one operand has and the output has not),
    returned with its dims in `out_labels`' order. Labels are any hashables, each at most once
    per operand; a label both operands have must have the same size in both."""
    a, a_labels = _drop_ones(lw, a, list(a_labels))
    b, b_labels = _drop_ones(lw, b, list(b_labels))
    out_labels = list(out_labels)
    size = dict(zip(a_labels, a.shape, strict=True)) | dict(zip(b_labels, b.shape, strict=True))
    a, a_labels = _pre_sum(lw, a, a_labels, set(b_labels) | set(out_labels), dtype)
    b, b_labels = _pre_sum(lw, b, b_labels, set(a_labels) | set(out_labels), dtype)
    role: dict = {}
    counts = {"B": 0, "M": 0, "N": 0, "K": 0}

    def name(label, kind: str) -> str:
        if label not in role:
            role[label] = f"{kind}{counts[kind]}"
            counts[kind] += 1
        return role[label]

    for x in out_labels:
        if x in a_labels and x in b_labels:
            name(x, "B")
    for x in out_labels:
        if x in a_labels and x not in b_labels:
            name(x, "M")
    for x in out_labels:
        if x in b_labels and x not in a_labels:
            name(x, "N")
    for x in a_labels:
        if x in b_labels and x not in out_labels:
            name(x, "K")
    kept = [x for x in out_labels if x in role]  # an output label of size 1 is in neither
    out = [role[x] for x in kept]
    lhs = [role[x] for x in a_labels]
    rhs = [role[x] for x in b_labels]
    if not out:  # a scalar result: one output element named M0, as JAX's vector dot
        a = lw.reshape(a, (1, *a.shape))
        lhs = ["M0", *lhs]
        out = ["M0"]
    kernel = lw.add_kernel(dot_kernel(lhs, rhs, out, dtype), "contract")
    shape = tuple(size[x] for x in kept) or (1,)
    y = lw.call_kernel(kernel, [a.var, b.var], shape, dtype)
    return lw.reshape(y, tuple(size.get(x, 1) for x in out_labels))


# ---------------------------------------------------------------------------- einsum
def parse_einsum(equation: str, ranks) -> tuple[list[list[str]], list[str]] | str:
    """([labels of each operand], output labels) of an einsum equation for operands of
    `ranks`, with an ellipsis spelt out as labels `...0`, `...1` (counted from the right, so
    that they align as broadcasting does); or a string saying why the contraction kernels
    cannot compute it (a label twice in one operand: a diagonal)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        return f"{len(terms)} operand terms for {len(ranks)} operands"
    inputs = []
    widest = 0
    for term, rank in zip(terms, ranks, strict=True):
        if "..." in term:
            head, _, tail = term.partition("...")
            n = rank - len(head) - len(tail)
            if n < 0 or "." in head + tail:
                return f"the term '{term}' does not fit an operand of rank {rank}"
            widest = max(widest, n)
            labels = list(head) + [f"...{i}" for i in reversed(range(n))] + list(tail)
        else:
            labels = list(term)
        if len(labels) != rank:
            return f"the term '{term}' does not fit an operand of rank {rank}"
        if len(set(labels)) != len(labels):
            return f"the term '{term}' repeats a label (a diagonal)"
        inputs.append(labels)
    if arrow:
        if "..." in rhs:
            head, _, tail = rhs.partition("...")
            out = list(head) + [f"...{i}" for i in reversed(range(widest))] + list(tail)
        else:
            out = list(rhs)
    else:  # implicit output: the ellipsis, then the labels used once, in alphabetical order
        flat = [x for labels in inputs for x in labels if not x.startswith("...")]
        out = [f"...{i}" for i in reversed(range(widest))]
        out += sorted(x for x in set(flat) if flat.count(x) == 1)
    if len(set(out)) != len(out):
        return "the output repeats a label"
    used = {x for labels in inputs for x in labels}
    if any(x not in used for x in out):
        return "the output has a label no operand has"
    return inputs, out


def einsum_refusal(equation: str, shapes) -> str:
    """Why `lower_einsum` cannot compute this einsum ("" when it can): a diagonal (a label
    twice in one operand). A label of size 1 in one operand and larger in another is a
    broadcast, which `contract` reads in place (it drops dims of size 1)."""
    parsed = parse_einsum(equation, [len(s) for s in shapes])
    return parsed if isinstance(parsed, str) else ""


def lower_einsum(lw, equation: str, operands: list[Value], dtype: str, path=None) -> Value:
    """An einsum as contraction kernels reading the operands in place: one for two operands;
    for more, pairwise in `path`'s order (opt_einsum's: each step contracts the operands at
    two positions and appends the result; aten.einsum's `path` lists the positions
    flat) or else left to right (torch.einsum's order
    without opt_einsum), each intermediate a tensor keeping the labels a later operand or the
    output uses. The caller has checked `einsum_refusal`."""
    inputs, out = parse_einsum(equation, [len(v.shape) for v in operands])
    if len(operands) == 1:  # a permute and/or sum of one operand
        v, labels = operands[0], inputs[0]
        v, labels = _pre_sum(lw, v, labels, set(out), dtype)
        if not out:
            return lw.reshape(v, ())
        if labels != out:
            v = lw.permute(v, [labels.index(x) for x in out])
        return v
    items = list(zip(operands, inputs, strict=True))
    flat = [int(i) for i in path] if path else []  # aten.einsum's path: i0, j0, i1, j1, ...
    steps = list(zip(flat[0::2], flat[1::2], strict=False))
    in_order = len(flat) != 2 * (len(items) - 1)
    if in_order:
        steps = [(0, 1)] * (len(items) - 1)
    for i, j in steps:
        (a, a_labels), (b, b_labels) = items[i], items[j]
        rest = [x for k, x in enumerate(items) if k not in (i, j)]
        if not rest:
            keep = out
        else:
            later = {x for _, labels in rest for x in labels} | set(out)
            seen = a_labels + [x for x in b_labels if x not in a_labels]
            keep = [x for x in seen if x in later]
        step = (contract(lw, a, a_labels, b, b_labels, keep, dtype), list(keep))
        items = [step, *rest] if in_order else [*rest, step]
    return items[0][0]
