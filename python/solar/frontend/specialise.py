"""Value-specialised capture: a program whose Python control flow reads the values of its
integer inputs (`int(kv_indptr[b].item())` in a paged-attention reference, a loop over the
pages of each request) has no graph torch.export can write for every value. For one set of
values it has one: the loop runs with those values and the graph records the slices and
gathers they select. This module traces that graph.

The inputs are built for real (get_inputs() with the seed validation uses, so the
validated run sees the same values); the integer and boolean ones stay real and the
floating ones become fake, and the trace (make_fx in real mode, which reads a real tensor's
value where the program asks for it) never computes on them. Inputs above the budget
(SPECIALISE_MAX_BYTES) are built with their large floating ones fake from the start
(floating_fake). A program that also reads a floating value (a routing weight read with
`.item()`, a router's top-k) is traced on all its inputs for real where they are small
enough (SPECIALISE_REAL_BYTES), else on its small floating ones for real and the large ones
fake (_real_within). The traced graph no longer reads
values, so torch.export captures it as any program. The bound holds for these values, and
the report says which inputs decided the control flow (docs/pytorch.md, "Data-dependent
control flow")."""

from __future__ import annotations

import contextlib
import inspect
import logging
import math
import warnings

from ..errors import UserError

# The caps below are set from measured peaks (resident set of the capture process, torch's
# ~0.35 GB included; 2-core development machine shared with three other jobs):
# - building the inputs for real and tracing with the floating ones fake: 1,073,741,832 B of
#   inputs (a [16384, 16384] fp32 weight and an index) peaked at 1.41 GB, 26 s;
# - tracing on all inputs for real (computing the program): SOL-ExecBench task 102 (MoE
#   routing, 1,212,678,144 B) peaked at 1.65 GB in 301 s; task 103 (a decoder layer,
#   2,524,463,904 B) at 3.69 GB in 392 s.
# So the peak is under 0.35 GB + 1.33 x the inputs, and the time grows by about 70 s per GB
# above a fixed ~215 s. Under the 16 GiB memory limit of an analysis (solar/contain.py) the
# inputs could reach ~11.7 GiB; the caps leave a third of that for larger intermediates, and
# the real trace is capped where it would pass the 600 s timeout of a batch entry.
# The real inputs a specialised capture builds (the floating ones are freed once their fake
# copies exist) may take at most this many bytes.
SPECIALISE_MAX_BYTES = 8 << 30
# A program whose control flow also reads floating values is traced on all its inputs, for
# real (computing it), when they take at most this many bytes.
SPECIALISE_REAL_BYTES = 4 << 30
# Above SPECIALISE_REAL_BYTES, the floating inputs of at most this many bytes each are
# still traced for real (smallest first, within SPECIALISE_REAL_BYTES together), the larger
# ones fake: a router's logits or hidden states (SOL-ExecBench task 123: 2048 tokens x 7,168
# bf16, 29 MB) decide a MoE's routing, its expert weights (256 x 2,048 x 7,168 x 3 bf16,
# 22.5 GB) only its arithmetic.
SPECIALISE_REAL_TENSOR_BYTES = 256 << 20
# The traced graph may have at most this many nodes (a loop over requests and heads unrolls).
# Exporting and decomposing it is the slow part: on a 2-core machine the ragged decode over
# 32 requests x 8 heads (9,670 core ATen operators) takes 2 minutes.
SPECIALISE_MAX_NODES = 20_000


class Refused(Exception):
    """The specialised trace cannot be made; the message says why."""


def specialise(flat, tensors: list, input_bytes: int, grad: bool = False, fake=None):
    """(graph, positions of the inputs whose values decided, the inputs to export it with)
    of the flat module `flat` traced for the values of the real `tensors` (the module doc).
    `grad`: traced with autograd on, for a forward pass that computes gradients itself
    (`y.backward(dy)` in a backward kernel's reference): the graph holds the operators the
    backward pass ran. `fake`: the FakeTensorMode of the inputs built fake already
    (`floating_fake`); they are never computed on. Raises Refused with the reason where it
    cannot be made."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    fake = fake or FakeTensorMode(allow_non_fake_inputs=True)
    mixed = [
        t if _decides(t) or isinstance(t, FakeTensor) else fake.from_tensor(t) for t in tensors
    ]
    try:
        gm = _trace(flat, mixed, fake, grad)
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the trace is the program's
        # It reads floating values too (a router's logits, a routing weight read with
        # .item()): traced again on its floating inputs for real, which computes the program
        # on them, where they are small enough (_real_within).
        mixed = _real_within(tensors, fake)
        try:
            gm = _trace(flat, mixed, fake, grad)
        except UserError:
            raise
        except Exception as again:  # noqa: BLE001
            if any(isinstance(t, FakeTensor) and not _decides(t) for t in mixed):
                raise Refused(
                    "capturing it for the values of its integer and boolean inputs failed too "
                    f"({_first_line(e)}), and so did a trace on its floating inputs of at most "
                    f"{SPECIALISE_REAL_TENSOR_BYTES:,} bytes each with the larger ones fake "
                    f"({_first_line(again)}); its inputs ({input_bytes:,} bytes) are above the "
                    f"{SPECIALISE_REAL_BYTES:,} within which it is traced on all its values"
                ) from None
            raise Refused(
                f"capturing it for its inputs' values failed too: {_first_line(again)}"
            ) from None
    nodes = len(gm.graph.nodes)
    if nodes > SPECIALISE_MAX_NODES:
        raise Refused(
            f"for its inputs' values it unrolls to {nodes:,} operators, above the "
            f"{SPECIALISE_MAX_NODES:,} allowed; lower the sizes with --dim"
        )
    real = [i for i, t in enumerate(mixed) if not isinstance(t, FakeTensor)]
    _select_positions(gm, mixed, fake)
    # A read outside the dispatcher (`.tolist()`) leaves no node: then every input kept real
    # may have decided.
    read = _values_read(gm) or real
    _static_bincounts(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    _merge_gathers(gm, {placeholders[i]: mixed[i] for i in real})
    fakes = [fake.from_tensor(t) if i in real else t for i, t in enumerate(mixed)]
    return gm, read, fakes


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def _real_within(tensors: list, fake) -> list:
    """The inputs of a trace on real floating values: all as they are where the real ones
    take at most SPECIALISE_REAL_BYTES; else the floating ones of at most
    SPECIALISE_REAL_TENSOR_BYTES each stay real, smallest first while their total stays
    within SPECIALISE_REAL_BYTES, and the others become fake (integers and booleans stay
    real)."""
    from torch._subclasses.fake_tensor import FakeTensor

    real = [t for t in tensors if not isinstance(t, FakeTensor)]
    if sum(_nbytes(t) for t in real) <= SPECIALISE_REAL_BYTES:
        return list(tensors)
    out, total = list(tensors), 0
    for i in sorted(range(len(tensors)), key=lambda i: _nbytes(tensors[i])):
        t = tensors[i]
        if isinstance(t, FakeTensor) or _decides(t):
            continue
        if _nbytes(t) <= SPECIALISE_REAL_TENSOR_BYTES and total + _nbytes(t) <= (
            SPECIALISE_REAL_BYTES
        ):
            total += _nbytes(t)
        else:
            out[i] = fake.from_tensor(t)
    return out


@contextlib.contextmanager
def floating_fake(fake):
    """Inside, a floating or complex tensor made from no tensor (`torch.randn`, `zeros`,
    `empty` of a float dtype) is a fake tensor of the FakeTensorMode `fake` where it is
    larger than SPECIALISE_REAL_TENSOR_BYTES or the real ones made so far would pass
    SPECIALISE_REAL_BYTES, and so is everything computed from a fake one; integer and
    boolean tensors made from real ones are real. An input generator run inside builds its
    integer inputs (expert ids, lengths, indices) and its small floating ones (a router's
    hidden states) for real and never allocates its large ones: a MoE's 22 GB of expert
    weights (SOL-ExecBench task 44) cost nothing, while the routing the program's control
    flow reads has values. Two differences from a real run, said where this is used: a fake
    random tensor draws nothing from the generator, so random values drawn after one differ
    from those a real run with the same seed draws (same distribution, other values); and a
    value computed from a fake tensor is fake, so the program cannot read it (the trace then
    fails and says so). A real tensor that an operator would overwrite with values computed
    from a fake one raises Refused rather than keep stale values."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    def floating(out) -> bool:
        return any(
            isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex())
            for o in tree_leaves(out)
        )

    class FloatingFake(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            tensors = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
            if any(isinstance(t, FakeTensor) for t in tensors):
                written = [
                    a
                    for a, spec in zip(args, func._schema.arguments, strict=False)
                    if spec.alias_info is not None and spec.alias_info.is_write
                ]
                if any(
                    isinstance(w, torch.Tensor) and not isinstance(w, FakeTensor) for w in written
                ):
                    raise Refused(
                        f"its input generator writes values computed from a floating tensor "
                        f"into a real one ({func}), which is built only where the inputs fit"
                    )
                with fake:
                    return func(*args, **kwargs)
            if not tensors:
                with fake:
                    out = func(*args, **kwargs)  # shapes and dtypes only: nothing allocated
                size = sum(_nbytes(o) for o in tree_leaves(out) if isinstance(o, torch.Tensor))
                if floating(out):
                    if size > SPECIALISE_REAL_TENSOR_BYTES or built[0] + size > (
                        SPECIALISE_REAL_BYTES
                    ):
                        return out
                    built[0] += size
            return func(*args, **kwargs)

    built = [0]  # bytes of the floating tensors made for real
    with FloatingFake():
        yield fake


def _static_bincounts(gm) -> None:
    """`bincount(x, weights, minlength)` has max(x) + 1 (or minlength) entries, a size its
    values decide: traced for real values the size is known, and the node becomes what it
    computes at that size, `scatter_add` of ones (or the weights) into zeros, which torch.export
    captures with static shapes (a MoE's tokens per expert, SOL-ExecBench tasks 58 and 106)."""
    import torch

    aten = torch.ops.aten
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not aten.bincount.default:
            continue
        val, x = node.meta.get("val"), node.args[0]
        if not isinstance(val, torch.Tensor) or type(val.shape[0]) is not int:
            continue  # its size unknown (computed from fake inputs): the export names it
        weights = node.args[1] if len(node.args) > 1 else node.kwargs.get("weights")
        graph = gm.graph
        with graph.inserting_before(node):
            zeros = graph.call_function(
                aten.zeros.default, ([int(val.shape[0])],), {"dtype": val.dtype}
            )
            if weights is None:
                src = graph.call_function(aten.ones_like.default, (x,), {"dtype": val.dtype})
            else:
                src = graph.call_function(aten._to_copy.default, (weights,), {"dtype": val.dtype})
            new = graph.call_function(aten.scatter_add.default, (zeros, 0, x, src))
        new.meta["val"] = val
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        gm.recompile()


def _first_line(e: BaseException) -> str:
    return next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)[:200]


def _decides(t) -> bool:
    """Inputs kept real: integers and booleans, the values control flow and indexing read."""
    return not (t.is_floating_point() or t.is_complex())


def _trace(flat, mixed, fake, grad: bool = False):
    """make_fx in real mode: a real tensor's value is read where the program asks for it
    (`.item()`, `bool(...)`, a slice bound), and burnt into the graph. `fake`: the
    FakeTensorMode of the fake inputs."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def traced(*args):
        with _traceable(fake):
            return flat(*args)

    try:
        logging.disable(logging.CRITICAL)
        with torch.enable_grad() if grad else torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gm = make_fx(traced, tracing_mode="real", _error_on_data_dependent_ops=False)(*mixed)
    finally:
        logging.disable(logging.NOTSET)
    return gm


@contextlib.contextmanager
def _traceable(fake):
    """What the real-mode trace needs of operators that mix real and fake tensors. Inside, a
    fake tensor indexed by a real boolean mask (`weights[valid]`, where `valid`
    comes from the integer routing: SOL-ExecBench task 106's capacity mask) is indexed by the
    mask's true positions instead, `nonzero(mask)` computed for real: the same elements, a
    size the values give. Indexed by the mask itself, the fake mode would turn the mask fake
    and fail on a size it cannot know (aten.nonzero). The positions' `nonzero` stays in the
    graph, where _select_positions burns its value in. And an operator that may have no CPU
    kernel for its inputs (`torch._scaled_mm` on fp4 codes: SOL-ExecBench's NVFP4
    references) runs in the fake mode `fake` where the real call fails: its result's shape
    is known, its values are not (a program that reads them fails as on any fake value)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten
    indexing = {aten.index.Tensor, aten.index_put.default, aten.index_put_.default}
    no_cpu_kernel = {aten._scaled_mm.default}

    def real_mask(i) -> bool:
        return (
            isinstance(i, torch.Tensor) and not isinstance(i, FakeTensor) and i.dtype == torch.bool
        )

    class Traceable(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in no_cpu_kernel:
                try:
                    return func(*args, **kwargs)
                except (RuntimeError, ValueError):  # none: "Invalid scaling configuration"
                    with fake:
                        return func(*args, **kwargs)
            if func in indexing and isinstance(args[0], FakeTensor):
                if any(real_mask(i) for i in args[1]):
                    indices = []
                    for i in args[1]:
                        # A mask of k dims selects along k dims: k index tensors.
                        indices.extend(aten.nonzero.default(i).unbind(1) if real_mask(i) else [i])
                    args = (args[0], indices, *args[2:])
            return func(*args, **kwargs)

    with Traceable():
        yield


# The read-backs a specialised trace leaves in the graph: their values are burnt in, so
# nothing uses their results.
def _read_backs():
    import torch

    aten = torch.ops.aten
    return {aten._local_scalar_dense.default, aten.is_nonzero.default}


def reads_values(graph) -> bool:
    """Whether an exported graph reads a tensor's value back as a number (`.item()`,
    `.tolist()`) or has a result whose size a tensor's values decide (`x[x > 0]`, whose
    size torch.export leaves unknown): no IR operator computes either."""
    import torch

    targets = _read_backs()
    for n in graph.nodes:
        if n.op == "call_function" and n.target in targets:
            return True
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor) and not all(type(d) is int for d in val.shape):
            return True
    return False


def _values_read(gm) -> list[int]:
    """Erases the graph's read-backs; returns the positions of the inputs they read."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    read = set()
    targets = _read_backs()
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in targets:
            continue
        stack, seen = [node], set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n.op == "placeholder":
                read.add(placeholders.index(n))
            stack.extend(n.all_input_nodes)
        if not node.users:
            gm.graph.erase_node(node)
    # What only the read-backs used is dead now; the export drops it.
    gm.recompile()
    return sorted(read)


# Constants a specialised graph holds in place of what a boolean mask selects: the positions
# of its true elements (lowering: values known on chip, read for free; frontend/lower.py).
SELECTED_PREFIX = "_solar_selected"


def _select_positions(gm, mixed, fake) -> None:
    """Burns in what boolean masks select, where the mask's values are known (computed from
    real inputs): `x[mask]` becomes `x[positions]`, a gather of as many rows as the mask
    holds true elements, and `nonzero(mask)` its value. Their sizes depend on the mask's
    values, so no graph torch.export can write holds them for every value; for these values
    the positions are constants (a sparse attention's valid indices, a sampler's kept
    tokens, the tokens routed to an expert). A mask computed from fake inputs stays (and
    the export says the shape depends on the data)."""
    import torch

    aten = torch.ops.aten
    by_mask = (aten.nonzero.default, aten.argwhere.default)

    def is_mask(arg) -> bool:
        val = getattr(arg, "meta", {}).get("val")
        return isinstance(val, torch.Tensor) and val.dtype in (torch.bool, torch.uint8)

    masks = set()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target in by_mask:
            masks.add(node.args[0])
        elif node.target is aten.index.Tensor and isinstance(node.args[1], (list, tuple)):
            masks.update(i for i in node.args[1] if is_mask(i))
    if not masks:
        return
    values = {}

    class Record(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if n in masks and type(result) is torch.Tensor:  # real, not a FakeTensor
                values[n] = result.detach().clone()
            return result

    try:
        # Replayed as traced (_traceable: an fp4 `_scaled_mm` without a CPU kernel runs fake).
        with torch.no_grad(), warnings.catch_warnings(), _traceable(fake):
            warnings.simplefilter("ignore")
            Record(gm).run(*mixed)
    except Exception:  # noqa: BLE001 - no replay, no positions: the export names the size
        return
    if not values:
        return
    count = 0

    def constant(value, like):
        nonlocal count
        name = f"{SELECTED_PREFIX}{count}"
        count += 1
        setattr(gm, name, value)  # a plain tensor attribute: torch.export lifts it as a constant
        with gm.graph.inserting_before(like), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no underlying reference": not a parameter or buffer
            c = gm.graph.get_attr(name)
        c.meta["val"] = value
        return c

    def traced_numel(node):
        val = node.meta.get("val")
        return val.numel() if isinstance(val, torch.Tensor) else -1

    # The replay must select what the trace did (a mask drawn from random numbers would
    # not): each node is changed only where the sizes agree.
    for node in list(gm.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target in by_mask and node.args[0] in values:
            value = values[node.args[0]].nonzero()
            if value.numel() != traced_numel(node):
                continue
            node.replace_all_uses_with(constant(value, node))
            gm.graph.erase_node(node)
        elif node.target is aten.index.Tensor and isinstance(node.args[1], (list, tuple)):
            # `x[mask]`, `x[:, mask]`: masks and whole dims only (no integer index beside).
            indices = node.args[1]
            if not any(i in values for i in indices) or any(
                i is not None and i not in values for i in indices
            ):
                continue
            # The result holds `count` elements (the masks' true ones, as many in each) for
            # each element of the dims no mask covers.
            source = node.args[0].meta.get("val")
            counts, covered, at = set(), 1, 0
            for i in indices:
                if i is None:
                    at += 1
                    continue
                mask = values[i]
                counts.add(int(mask.bool().sum()))
                covered *= math.prod(source.shape[at : at + mask.dim()])
                at += mask.dim()
            if len(counts) != 1 or not covered:
                continue
            if traced_numel(node) != counts.pop() * (source.numel() // covered):
                continue
            new = []
            for i in indices:
                if i is None:
                    new.append(None)
                else:  # a k-dim mask: k index tensors over the dims it covers
                    positions = values[i].bool().nonzero().unbind(1)
                    new += [constant(p.clone(), node) for p in positions]
            node.args = (node.args[0], new)
    gm.graph.eliminate_dead_code()
    gm.recompile()


def _slice_of(node):
    """(source, start, end) of `node` when it is `source[start:end]` along dim 0 with step 1
    of a 1-D source; None otherwise."""
    import torch

    if getattr(node, "target", None) is not torch.ops.aten.slice.Tensor:
        return None
    args = list(node.args) + [None] * (5 - len(node.args))
    src, dim, start, end, step = args[:5]
    val = getattr(src, "meta", {}).get("val")
    if (dim or 0) != 0 or (step or 1) != 1 or val is None or val.dim() != 1:
        return None
    size = int(val.shape[0])
    start, end = start or 0, size if end is None else end
    if not isinstance(start, int) or not isinstance(end, int) or start < 0 or end < 0:
        return None  # a bound counted from the end (`idx[:-1]`): not followed
    end = max(start, min(end, size))
    outer = _slice_of(src)  # a slice of a slice (`pages[:n]` of `kv_indices[s:e]`)
    if outer is not None:
        return outer[0], outer[1] + start, outer[1] + end
    return src, start, end


def _merge_gathers(gm, values: dict) -> None:
    """Gathers of one table by consecutive slices of one index tensor (each request's rows of
    a KV cache: `k_cache[kv_indices[s:e].long()]`, once per request) become one gather by
    the slice they cover, and a slice of its result per request: the same values (a gather
    by idx[s:e] is rows s..e of the gather by idx), but one read the fused bound counts in
    full, where reads of one table by unknown rows count only their largest
    (docs/sol-modes.md). Only where the slices cover their span without a gap, so the one
    gather reads no row the program does not, and where the index is an input whose values
    (`values`: placeholder -> real tensor) in that span are distinct, so its rows are as
    many as the table rows read (a page two requests share is read once)."""
    import torch

    aten = torch.ops.aten
    groups: dict = {}
    for node in gm.graph.nodes:
        if node.target is not aten.index.Tensor or len(node.args) != 2:
            continue
        table, indices = node.args
        if not isinstance(indices, (list, tuple)) or len(indices) != 1 or indices[0] is None:
            continue
        idx, copy = indices[0], None
        if getattr(idx, "target", None) is aten._to_copy.default and len(idx.args) == 1:
            idx, copy = idx.args[0], idx
        val = (copy or idx).meta.get("val")
        sliced = _slice_of(idx)
        if sliced is None or val is None or val.dtype not in (torch.int32, torch.int64):
            continue
        src, start, end = sliced
        kwargs = tuple(sorted(copy.kwargs.items(), key=lambda kv: kv[0])) if copy else None
        groups.setdefault((table, src, kwargs), []).append((start, end, node, copy))
    for (table, src, _), members in groups.items():
        if len(members) < 2:
            continue
        spans = sorted((start, end) for start, end, _, _ in members)
        lo, reach = spans[0][0], spans[0][1]
        for start, end in spans[1:]:
            if start > reach:
                break  # a gap: the one gather would read rows nobody needs
            reach = max(reach, end)
        else:
            known = values.get(src)
            if known is None or int(known[lo:reach].unique().numel()) != reach - lo:
                continue
            first, copy = members[0][2], members[0][3]
            with gm.graph.inserting_before(first):
                whole = gm.graph.call_function(aten.slice.Tensor, (src, 0, lo, reach))
                if copy is not None:
                    whole = gm.graph.call_function(aten._to_copy.default, (whole,), copy.kwargs)
                rows = gm.graph.call_function(aten.index.Tensor, (table, [whole]))
            for start, end, node, _ in members:
                with gm.graph.inserting_before(node):
                    piece = gm.graph.call_function(
                        aten.slice.Tensor, (rows, 0, start - lo, end - lo)
                    )
                node.replace_all_uses_with(piece)
                gm.graph.erase_node(node)
    for node in reversed(list(gm.graph.nodes)):  # the old index slices, now unused
        if not node.users and node.target in (aten._to_copy.default, aten.slice.Tensor):
            gm.graph.erase_node(node)
    gm.recompile()


def input_names(model, count: int) -> list[str]:
    """The forward's parameter names by position (`input <i>` past them)."""
    with contextlib.suppress(TypeError, ValueError):
        params = list(inspect.signature(model.forward).parameters)
        return [params[i] if i < len(params) else f"input {i}" for i in range(count)]
    return [f"input {i}" for i in range(count)]
