"""Value-specialised capture: a program whose Python control flow reads the values of its
integer inputs (`int(kv_indptr[b].item())` in a paged-attention reference, a loop over the
pages of each request) has no graph torch.export can write for every value. For one set of
values it has one: the loop runs with those values and the graph records the slices and
gathers they select. This module traces that graph.

The inputs are built for real (get_inputs() with the seed validation uses, so the
validated run sees the same values); the integer and boolean ones stay real and the
floating ones become fake, and the trace (make_fx in real mode, which reads a real tensor's
value where the program asks for it) never computes on them. A program that also reads a
floating value (a routing weight read with `.item()`) is traced on all its inputs for real
where they are small enough (SPECIALISE_REAL_BYTES). The traced graph no longer reads
values, so torch.export captures it as any program. The bound holds for these values, and
the report says which inputs decided the control flow (docs/pytorch.md, "Data-dependent
control flow")."""

from __future__ import annotations

import contextlib
import inspect
import logging
import warnings

from ..errors import UserError
from .builder import frontend_error

# The real inputs a specialised capture builds (the floating ones are freed once their fake
# copies exist) may take at most this many bytes.
SPECIALISE_MAX_BYTES = 2 << 30
# A program whose control flow also reads floating values is traced on all its inputs, for
# real (computing it), when they take at most this many bytes.
SPECIALISE_REAL_BYTES = 1 << 30
# The traced graph may have at most this many nodes (a loop over requests and heads unrolls).
SPECIALISE_MAX_NODES = 200_000


def specialised_capture(problem, mode, source: str, model_bytes: int, input_bytes: int, why):
    """The Capture of a problem file's program for the values its get_inputs() draws (seed
    0). `why` is the data-dependent error of the ordinary capture (None: it succeeded but
    kept a value read): it is raised again, with the reason, where this capture cannot be
    made (the model has tensors of its own, the inputs are above the budget, the trace
    fails)."""
    from .capture import Capture, build_problem, export_module, is_fake, model_tensors
    from .flat import flat_module, signature

    def refuse(reason: str) -> UserError:
        if why is None:  # no error to extend (a capture that kept a value read)
            return frontend_error("capture", reason, "", source)
        d = why.diagnostics[0]
        return frontend_error("capture", f"{d.message}; {reason}", d.hint, d.file, d.line)

    if model_bytes:
        raise refuse("a program with parameters or buffers is not specialised on its values")
    if input_bytes > SPECIALISE_MAX_BYTES:
        raise refuse(
            f"capturing it for its inputs' values builds them for real: {input_bytes:,} bytes, "
            f"above the {SPECIALISE_MAX_BYTES:,} allowed; lower the sizes with --dim"
        )
    model, example = build_problem(problem, mode, seed=0)
    if model_tensors(model):
        raise refuse("a program with parameters or buffers is not specialised on its values")
    sig, tensors = signature(example)
    flat = flat_module(model, sig, True, loss=False)
    from torch._subclasses.fake_tensor import FakeTensorMode

    fake = FakeTensorMode(allow_non_fake_inputs=True)
    mixed = [t if _decides(t) else fake.from_tensor(t) for t in tensors]
    try:
        gm = _trace(flat, mixed)
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure of the trace is the program's
        # It reads floating values too (a routing weight read with .item()): traced on the
        # real inputs, which computes the program for real, where they are small enough.
        first = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        if input_bytes > SPECIALISE_REAL_BYTES:
            raise refuse(
                "capturing it for the values of its integer and boolean inputs failed too "
                f"({first[:200]}), and its inputs ({input_bytes:,} bytes) are above the "
                f"{SPECIALISE_REAL_BYTES:,} within which it is traced on all its values"
            ) from None
        mixed = tensors
        try:
            gm = _trace(flat, mixed)
        except UserError:
            raise
        except Exception as e:  # noqa: BLE001
            first = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            raise refuse(f"capturing it for its inputs' values failed too: {first[:200]}") from None
    del example, tensors  # the real inputs (those control flow reads stay in `mixed`)
    nodes = len(gm.graph.nodes)
    if nodes > SPECIALISE_MAX_NODES:
        raise refuse(
            f"for its inputs' values it unrolls to {nodes:,} operators, above the "
            f"{SPECIALISE_MAX_NODES:,} allowed; lower the sizes with --dim"
        )
    read = _values_read(gm)
    names = _input_names(model, len(mixed))
    fakes = [t if is_fake(t) else fake.from_tensor(t) for t in mixed]
    exported = export_module(gm, fakes, source)
    # A read outside the dispatcher (`.tolist()`) leaves no node: then every input kept real
    # may have decided.
    read = read or [i for i, t in enumerate(mixed) if not is_fake(t)]
    decided = ", ".join(names[i] for i in read)
    note = (
        f"the program's control flow reads the values of its inputs ({decided}): it was "
        "captured for the values get_inputs() gives with seed 0, and the bound holds for "
        'those values (docs/pytorch.md, "Data-dependent control flow")'
    )
    return Capture(
        exported,
        source,
        problem=problem,
        model_bytes=model_bytes,
        input_bytes=input_bytes,
        signature=sig,
        output_names=list(getattr(flat, "solar_output_names", [])),
        mode=mode,
        notes=[note],
    )


def _decides(t) -> bool:
    """Inputs kept real: integers and booleans, the values control flow and indexing read."""
    return not (t.is_floating_point() or t.is_complex())


def _trace(flat, mixed):
    """make_fx in real mode: a real tensor's value is read where the program asks for it
    (`.item()`, `bool(...)`, a slice bound), and burnt into the graph."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from .capture import _cuda_as_cpu

    try:
        logging.disable(logging.CRITICAL)
        with torch.no_grad(), warnings.catch_warnings(), _cuda_as_cpu():
            warnings.simplefilter("ignore")
            gm = make_fx(flat, tracing_mode="real", _error_on_data_dependent_ops=False)(*mixed)
    finally:
        logging.disable(logging.NOTSET)
    return gm


# The read-backs a specialised trace leaves in the graph: their values are burnt in, so
# nothing uses their results.
def _read_backs():
    import torch

    aten = torch.ops.aten
    return {aten._local_scalar_dense.default, aten.is_nonzero.default}


def reads_values(graph) -> bool:
    """Whether an exported graph reads a tensor's value back as a number (`.item()`,
    `.tolist()`): no IR operator computes one."""
    targets = _read_backs()
    return any(n.op == "call_function" and n.target in targets for n in graph.nodes)


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
    gm.graph.eliminate_dead_code(is_impure_node=_keeps)
    gm.recompile()
    return sorted(read)


def _keeps(node) -> bool:
    """Dead-code elimination keeps in-place writes (`output[b, h] = ...`) and placeholders."""
    if node.op == "placeholder" or node.op == "output":
        return True
    schema = getattr(node.target, "_schema", None)
    return bool(schema is not None and schema.is_mutable)


def _input_names(model, count: int) -> list[str]:
    """The forward's parameter names by position (`input <i>` past them)."""
    with contextlib.suppress(TypeError, ValueError):
        params = list(inspect.signature(model.forward).parameters)
        return [params[i] if i < len(params) else f"input {i}" for i in range(count)]
    return [f"input {i}" for i in range(count)]
