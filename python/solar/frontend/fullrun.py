"""A full validation run of a lowered PyTorch program: PyTorch's reference outputs (the
real model built and run, random draws recorded, dropout at its expectation), the IR's
inputs, the budget such a run needs, and the comparison of every output. Scaled and
per-kernel validation (validate.py, per_kernel.py) run it at other sizes or per operator.
"""

from __future__ import annotations

import contextlib
import re

from .. import _core
from ..errors import UserError
from ..tolerance import compare_all, output_budgets, perturb, perturbation_unit
from .capture import Capture, frontend_error, is_fake
from .lower import LoweredProgram, ir_dtype
from .validation import (
    COMPARE_BYTES_PER_ELEMENT,
    RealModelError,
    Validation,
    compared,
)


def validation_bytes(graph, capture: Capture, backend: str) -> tuple[int, str]:
    """(bytes, what) a full validation of `graph` holds at its peak: the real model's tensors
    (built for real, read by forward or not), PyTorch's inputs and the copies forward gets,
    PyTorch's intermediates and outputs, the IR's own arrays (estimated alike; the IR reads
    inputs and weights in place) with the native GEMM path's packed operands, and the
    comparison of the largest output."""
    from ..execution import estimate_bytes, storage_bytes_of

    peak = estimate_bytes(graph, backend)
    tensors = graph.tensors
    ir_inputs = sum(storage_bytes_of(tensors[t]) for t in graph.inputs)
    outputs = [tensors[t] for t in graph.outputs]
    largest = max((_elements(t.shape) for t in outputs), default=0)
    arrays = 2 * max(peak - ir_inputs, 0)
    total = capture.model_bytes + 2 * capture.input_bytes + arrays
    total += COMPARE_BYTES_PER_ELEMENT * largest
    parts = []
    if capture.model_bytes:
        parts.append(f"{capture.model_bytes / 2**30:.2f} GiB of model parameters and buffers")
    parts.append(f"{2 * capture.input_bytes / 2**30:.2f} GiB of inputs and their copies")
    parts.append(f"{arrays / 2**30:.2f} GiB of PyTorch's and the IR's arrays")
    parts.append(f"{COMPARE_BYTES_PER_ELEMENT * largest / 2**30:.2f} GiB to compare outputs")
    return total, ", ".join(parts)


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def check_validation_budget(graph, capture: Capture, backend: str, max_bytes, max_seconds):
    """Refuses (kind `budget`) a full validation that would not fit: memory as
    validation_bytes counts it, time as the IR's estimate at the backend's rate."""
    from ..execution import budget_error, estimate_seconds

    total, what = validation_bytes(graph, capture, backend)
    seconds = estimate_seconds(graph, backend)
    over = []
    if total > max_bytes:
        over.append(f"{total / 2**30:.2f} GiB ({what}; budget {max_bytes / 2**30:.2f} GiB)")
    if seconds > max_seconds:
        over.append(
            f"about {seconds:.0f} s with the {backend} backend (budget {max_seconds:.0f} s)"
        )
    if over:
        raise budget_error(over, graph, capture.source)
    return total, seconds


@contextlib.contextmanager
def dropout_at_expectation():
    """Runs PyTorch with every dropout replaced by its expectation (the identity), as the
    lowered program does (docs/pytorch.md)."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    names = [
        "dropout",
        "dropout1d",
        "dropout2d",
        "dropout3d",
        "alpha_dropout",
        "feature_alpha_dropout",
    ]
    saved = {n: getattr(F, n) for n in names if hasattr(F, n)}
    saved_torch = torch.dropout
    sdpa = F.scaled_dot_product_attention

    def sdpa_without_dropout(*args, **kwargs):
        # dropout_p is the fifth parameter; the tensors may come by keyword (query=, key=,
        # value=, as diffusers passes them), so only the dropout argument is replaced
        if len(args) > 4:
            args = (*args[:4], 0.0, *args[5:])
        else:
            kwargs["dropout_p"] = 0.0
        return sdpa(*args, **kwargs)

    saved_bernoulli = torch.Tensor.bernoulli_, torch.bernoulli

    def bernoulli_(self, p=0.5, *args, **kwargs):  # stochastic depth's mask: its expectation
        return self.fill_(p) if isinstance(p, (int, float)) else self.copy_(p)

    def bernoulli(x, p=None, *args, **kwargs):
        return torch.full_like(x, p) if isinstance(p, (int, float)) else x.clone()

    try:
        torch.Tensor.bernoulli_, torch.bernoulli = bernoulli_, bernoulli
        for n in saved:
            setattr(F, n, lambda x, *a, **k: x)
        torch.dropout = lambda x, *a, **k: x
        F.scaled_dot_product_attention = sdpa_without_dropout  # attention-weight dropout
        yield
    finally:
        for n, fn in saved.items():
            setattr(F, n, fn)
        torch.dropout = saved_torch
        torch.Tensor.bernoulli_, torch.bernoulli = saved_bernoulli
        F.scaled_dot_product_attention = sdpa


# The packets of frontend/lower.py's RANDOM_OPS, plus the in-place forms eager code calls.
_RANDOM_PACKETS = (
    "multinomial",
    "randn",
    "rand",
    "randn_like",
    "rand_like",
    "normal",
    "uniform",
    "normal_functional",
)


RANDOM_KEY = "random:"  # `before` entries of the draws: RANDOM_KEY + their number


def random_tape(replay=None):
    """A TorchDispatchMode that records every random tensor forward() draws, in call order
    (`values`), or with `replay` returns those values again in the same order: the IR's
    generated inputs (Lowerer.generated_input) take what PyTorch drew."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class RandomTape(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.values = list(replay or [])
            self.next = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = func.overloadpacket.__name__.rstrip("_")
            if name not in _RANDOM_PACKETS:
                return func(*args, **kwargs)
            if replay is None:
                out = func(*args, **kwargs)
                self.values.append(out.detach().clone())
                return out
            value = self.values[self.next]
            self.next += 1
            if func.overloadpacket.__name__.endswith("_"):  # in place: into its tensor
                with torch.no_grad():
                    return args[0].copy_(value)
            return value.clone()

    return RandomTape()


def sorted_topk():
    """A TorchDispatchMode that runs `topk(..., sorted=False)` sorted. The order of an
    unsorted top-k is unspecified (PyTorch's CPU kernel returns its own); the IR's `topk`
    returns the values in order, which is one valid order, and an output that depends on the
    order (the experts gathered in it) then compares element by element."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class SortedTopk(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.ops.aten.topk.default:
                if len(args) > 4:
                    args = (*args[:4], True, *args[5:])
                kwargs.pop("sorted", None)
            return func(*args, **kwargs)

    return SortedTopk()


def golden_run(capture: Capture, seed: int = 0, buffers=()):
    """Builds the model and inputs for real (seeded as the harness does) and runs it through
    the captured flat signature (frontend/flat.py). Returns (model, inputs, outputs, before):
    `model` is the flat module, `inputs` its flat tensor inputs; `before` holds the values the
    buffers named in `buffers` had before the forward pass (which updates them, as batch
    norm's running statistics); their updated values follow the forward's outputs in
    `outputs`; `before` also holds the random tensors the forward drew (RANDOM_KEY and their
    number), which the IR's generated inputs take."""
    import torch

    from .capture import _call_user, build_problem, module_modes, restore_modes, set_mode
    from .flat import flat_module, signature

    p = capture.problem
    if p is None:  # an in-memory module with real example inputs
        module = capture.module
        modes = module_modes(module)
        model = flat_module(module, capture.signature, capture.output_caches, loss=capture.training)
        set_mode(model, capture.mode)
        copies = [t.clone() if isinstance(t, torch.Tensor) else t for t in capture.example_inputs]
        before = _buffer_values(model, buffers)
        tape = random_tape()
        try:
            with tape, sorted_topk():
                outs = _forward(capture, model, copies)
        finally:
            restore_modes(modes)
        outs += list(_buffer_values(model, buffers).values())
        # The caller's module keeps its state: validation does not advance its statistics.
        with torch.no_grad():
            state = {**dict(model.named_buffers()), **model.state_dict()}
            for k, v in before.items():
                state[k].copy_(v)
        before.update(_drawn(tape))
        return model, capture.example_inputs, outs, before
    module, example = build_problem(p, capture.mode, seed)
    sig, inputs = signature(example)
    model = flat_module(module, sig, loss=capture.training)
    # The forward pass may update its inputs in place (x.add_(y)): it gets copies, and the IR
    # program the originals.
    copies = [t.clone() for t in inputs]
    before = _buffer_values(model, buffers)
    tape = random_tape()
    with tape, sorted_topk():
        outs = _call_user(lambda: _forward(capture, model, copies), "the forward pass", p.path)
    outs += list(_buffer_values(model, buffers).values())
    return model, inputs, outs, {**before, **_drawn(tape)}


def _drawn(tape) -> dict:
    return {f"{RANDOM_KEY}{i}": v for i, v in enumerate(tape.values)}


def _forward(capture: Capture, model, copies) -> list:
    """The flat module's outputs on `copies`; for a training step the loss, then autograd's
    gradients of capture.gradient_targets (parameters by name, inputs as "input:<i>")."""
    import torch

    if not capture.training:
        # A forward pass that computes gradients itself (capture.autograd) needs autograd on.
        with torch.enable_grad() if capture.autograd else torch.no_grad():
            with dropout_at_expectation():
                return [t.detach() if isinstance(t, torch.Tensor) else t for t in model(*copies)]
    params = dict(model.named_parameters())
    for t in params.values():
        t.grad = None
    inputs = {}
    for target in capture.gradient_targets:
        if target.startswith("input:"):
            i = int(target.split(":")[1])
            copies[i] = copies[i].detach().requires_grad_(True)
            inputs[target] = copies[i]
    with torch.enable_grad(), dropout_at_expectation():
        (loss,) = model(*copies)
        loss.backward()
    grads = []
    for target in capture.gradient_targets:
        leaf = inputs[target] if target in inputs else params[target]
        grads.append(leaf.grad.detach().clone())
        leaf.grad = None
    return [loss.detach(), *grads]


def perturbed_golden(capture: Capture, model, inputs, seed: int = 0, before=None, buffers=()):
    """PyTorch's outputs with every floating input, parameter and buffer moved by one ulp
    (up or down at random), and the perturbation's unit roundoff; None when the module cannot
    run that way. The module itself is left unchanged (torch.func.functional_call on
    perturbed copies). `before`: buffer values before the golden run's forward pass (it
    updated them), the state it started from; `buffers`: the updated buffers that follow the
    outputs, as in golden_run."""
    if capture.training:  # the second stage perturbs a forward pass only
        return None
    state = {k: v.detach() for k, v in model.named_parameters()}
    state.update({k: v.detach() for k, v in model.named_buffers()})
    before = before or {}
    drawn = [v for k, v in before.items() if k.startswith(RANDOM_KEY)]
    state.update({k: v.detach() for k, v in before.items() if not k.startswith(RANDOM_KEY)})
    return _perturbed_call(capture, model, state, drawn, inputs, seed, buffers)


def _perturbed_call(capture, model, state, drawn, inputs, seed, buffers, mode=None):
    """`model` run by functional_call on copies of `state`, its random draws `drawn` and
    `inputs` each moved by one ulp (up or down at random, from `seed`), inside `mode` when
    given (the widened run's _Widening): (outputs then the updated `buffers`, the
    perturbation's unit roundoff), or None when the module cannot run that way."""
    import numpy as np
    import torch
    from torch.func import functional_call

    rng = np.random.default_rng(seed)
    state = {k: perturb(v.clone(), rng) for k, v in state.items()}
    drawn = [perturb(v.clone(), rng) for v in drawn]
    moved = [perturb(t.clone(), rng) if isinstance(t, torch.Tensor) else t for t in inputs]
    try:
        grad = torch.enable_grad() if capture.autograd else torch.no_grad()
        with (
            grad,
            dropout_at_expectation(),
            random_tape(replay=drawn),
            mode or contextlib.nullcontext(),
        ):
            out = functional_call(model, state, tuple(moved))
    except Exception:  # noqa: BLE001 - a module functional_call cannot drive: no second stage
        return None
    outs = [
        t.detach() if isinstance(t, torch.Tensor) else t
        for t in (out if isinstance(out, (tuple, list)) else [out])
    ]
    outs += [state[k] for k in buffers if k in state]  # updated in place by the forward pass
    floating = [t for t in [*state.values(), *moved] if isinstance(t, torch.Tensor)]
    return outs, perturbation_unit(t for t in floating if t.is_floating_point())


def _buffer_values(model, names) -> dict:
    """Copies of the named state_dict entries (buffers the forward pass updates)."""
    state = {**dict(model.named_buffers()), **model.state_dict(keep_vars=True)}
    return {k: state[k].detach().clone() for k in names if k in state}


def _subclass_part(state: dict, target: str):
    """Inner tensor i of a tensor-subclass weight, which the capture names
    `<module>.parametrizations.<weight>.original<i>` (torch.export unwraps a subclass into
    its `__tensor_flatten__` parts: torchao's quantised weights, int8 codes and scales), or
    None."""
    import re

    m = re.fullmatch(r"(?:(.*)\.)?parametrizations\.(\w+)\.original(\d+)", target)
    if m is None:
        return None
    prefix, name, i = m.group(1), m.group(2), int(m.group(3))
    whole = state.get(f"{prefix}.{name}" if prefix else name)
    if whole is None or not hasattr(whole, "__tensor_flatten__"):
        return None
    names, _ = whole.__tensor_flatten__()
    return getattr(whole, names[i]) if i < len(names) else None


def ir_inputs(lowered: LoweredProgram, capture: Capture, model, inputs, before=None) -> dict:
    """The IR program's inputs by parameter name; `before` overrides state entries with the
    values they had before PyTorch's forward pass updated them."""
    import torch

    state = dict(model.state_dict(keep_vars=True))
    state.update(before or {})
    constants = getattr(capture.exported, "constants", {}) or {}
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    result = {}
    real_constants = None
    for name, kind, target in lowered.params:
        if kind == "input":
            value = tensors[target]
        elif kind == "random":
            key = f"{RANDOM_KEY}{target}"
            if key not in state:
                drew = sum(1 for k in state if str(k).startswith(RANDOM_KEY))
                raise frontend_error(
                    "validate",
                    f"the captured program draws random tensor {target + 1} in forward(), but "
                    f"PyTorch's run drew {drew}",
                    file=capture.source,
                )
            value = state[key]
        elif target in state:
            value = state[target]
        elif (part := _subclass_part(state, target)) is not None:
            value = part
        elif target in constants:
            value = constants[target]
            if is_fake(value):
                # A tensor built from Python data in forward() (torch.tensor([...])) was
                # captured on the meta device without its values: export the real program
                # once more (it fits, it is being validated) and take the constant from it.
                if real_constants is None:
                    real_constants = real_export_constants(capture, model, inputs)
                value = real_constants.get(target, value)
        else:
            raise frontend_error("validate", f"no value for weight '{target}'", file=capture.source)
        if value.is_complex():  # its pair form, as the lowering gives it (complex_pairs.py)
            value = torch.view_as_real(value)
        result[name] = value.detach()
    return result


def real_export_constants(capture: Capture, model, inputs) -> dict:
    """The lifted constants of the program exported with real tensors."""
    from .capture import export_module

    copies = [t.clone() if hasattr(t, "clone") else t for t in inputs]
    return dict(export_module(model, copies, capture.source).constants or {})


# Operators that only rename, view or copy data: a size change may add or remove them (a
# slice of the whole tensor disappears), so the structure check compares the others.
_VIEW_OPS = {
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
    "aten.expand.default",
    "aten.slice.Tensor",
    "aten.squeeze.dims",
    "aten.squeeze.dim",
    "aten.squeeze.default",
    "aten.unsqueeze.default",
    "aten.clone.default",
    "aten.alias.default",
    "aten.permute.default",
    "aten.t.default",
    "aten.transpose.int",
    "aten._to_copy.default",
    "aten.contiguous.default",
    "aten.detach.default",
    "<built-in function getitem>",
}


def structure(lowered: LoweredProgram) -> list[str]:
    """The operators that compute, in order (what must not change when sizes shrink)."""
    return [op for op in lowered.sequence if op not in _VIEW_OPS]


def validate_full(
    capture: Capture,
    lowered: LoweredProgram,
    program,
    seed: int,
    backend: str,
    max_bytes,
    max_seconds,
    sizes: str,
) -> Validation:
    """Runs PyTorch and the IR program on the same inputs and weights and compares every
    output. The caller checked the budget (check_validation_budget)."""
    from ..execution import run

    try:
        model, inputs, golden, before = golden_run(capture, seed, lowered.buffer_outputs)
    except (UserError, MemoryError, RuntimeError) as e:
        first = (e.diagnostics[0].message if isinstance(e, UserError) else str(e)).splitlines()
        raise RealModelError(
            f"running the real program {sizes} failed ({first[0] if first else type(e).__name__})"
        ) from None
    feeds = ir_inputs(lowered, capture, model, inputs, before)
    del model, inputs, before  # tensors the IR does not read (unused buffers) are freed here
    outs = run(
        program,
        feeds,
        backend=backend,
        bounds_check=False,
        max_seconds=max_seconds,
        max_bytes=1 << 62,  # checked with everything else by the caller
    )
    del feeds
    # Outputs are compared by the criterion of solar.tolerance (docs/execution.md): the allowed
    # error grows with the rounding the lowered graph accumulates on the way to each output,
    # and for an output that fails that, with PyTorch's response to one-ulp changes of the
    # inputs and weights (an ill-conditioned output). The real model was freed before the IR
    # ran (the budget counts one of them at a time); that second stage builds it again (the
    # same seed gives the same weights).
    budgets = output_budgets(_core.trace(program, []))

    # An empty output (a dim of 0) has no data: the lowered program does not return it
    # (lower.py), so the comparison is of the others, in order.
    kept = [i for i, g in enumerate(golden) if not _empty(g)]

    def perturbed():
        buffers = lowered.buffer_outputs
        again, again_inputs, _, start = golden_run(capture, seed, buffers)
        moved = perturbed_golden(capture, again, again_inputs, seed, start, buffers)
        if moved is None:
            return None
        values, unit = moved
        return [values[i] for i in kept], unit

    first_buffer = len(golden) - len(lowered.buffer_outputs)
    user_names = list(capture.output_names)
    named = len(user_names) > 1 or user_names[:1] not in ([], ["output"])
    names = [
        f"out{i}"
        + (f" ({user_names[i]})" if named and i < min(first_buffer, len(user_names)) else "")
        + (
            f" (updated buffer {lowered.buffer_outputs[i - first_buffer]})"
            if i >= first_buffer
            else ""
        )
        for i in range(len(golden))
    ]
    golden = [golden[i] for i in kept]
    results = compare_all(
        [names[i] for i in kept],
        [outs[f"out{n}"] for n in range(len(kept))],
        golden,
        [ir_dtype(w.dtype) for w in golden],
        budgets,
        perturbed,
        "expected",
        wide=lambda: widened_run(capture, lowered, seed, backend, max_seconds),
    )
    return compared(results, "PyTorch", sizes, backend)


def _empty(value) -> bool:
    return hasattr(value, "shape") and 0 in tuple(value.shape)


# Formats a widened run computes as fp32 (docs/execution.md, "When a comparison cannot
# decide"); a lowered program that names any of _KEPT is not widened (it reads a value's
# bits, which widening changes). fp8 and fp4 casts and codes stay as they are on both sides.
_WIDENED = ("bf16", "fp16")
_KEPT = ("bitcast",)


def widened_text(text: str) -> str:
    """The lowered IR text with every bf16 and fp16 format written fp32; "" when it names a
    format or builtin whose bits matter (_KEPT) or has nothing to widen."""
    if any(k in text for k in _KEPT):
        return ""
    wide = re.sub(r"([\"'])(" + "|".join(_WIDENED) + r")\1", r"\1fp32\1", text)
    return wide if wide != text else ""


def widened_run(capture: Capture, lowered: LoweredProgram, seed: int, backend: str, max_seconds):
    """The lowered program and the PyTorch program with every bf16 and fp16 value computed
    as fp32: (actuals, expecteds, dtypes, budgets, rerun) in validate_full's output order, or
    a string saying why they cannot run so; `rerun()` runs the widened PyTorch program again
    with its floating inputs, parameters and buffers moved by one ulp (decide_against_wide's
    measured response: perturbed outputs and the unit, or None). The IR's formats are
    rewritten (widened_text) and its bf16/fp16 inputs widened exactly; PyTorch runs on
    widened inputs, parameters and buffers under a mode that turns every bf16 or fp16 dtype
    its code names (`.to`, `dtype=`, `.half()`, `.bfloat16()`) into fp32. Both sides then
    compute the same function as the original, in fp32, where the comparison decides."""
    import torch
    from torch.func import functional_call

    from ..execution import run

    if capture.training:
        return "a training step is not widened"
    text = widened_text(lowered.text)
    if not text:
        return (
            "the lowered program has no bf16 or fp16 to widen"
            if not any(k in lowered.text for k in _KEPT)
            else "the lowered program reinterprets a value's bits (bitcast)"
        )
    try:
        program = _core.load_program_source(text, lowered.source or "<widened module>")
        model, inputs, _, before = golden_run(capture, seed, lowered.buffer_outputs)
        feeds = ir_inputs(lowered, capture, model, inputs, before)
        feeds = {k: _widen(v) for k, v in feeds.items()}
        outs = run(
            program,
            feeds,
            backend=backend,
            bounds_check=False,
            max_seconds=max_seconds,
            max_bytes=1 << 62,
        )
        del feeds
        state = {k: _widen(v) for k, v in model.named_parameters()}
        state.update({k: _widen(v) for k, v in model.named_buffers()})
        drawn = [_widen(v) for k, v in before.items() if k.startswith(RANDOM_KEY)]
        state.update({k: _widen(v) for k, v in before.items() if not k.startswith(RANDOM_KEY)})
        wide = [_widen(t.clone()) if isinstance(t, torch.Tensor) else t for t in inputs]
        grad = torch.enable_grad() if capture.autograd else torch.no_grad()
        with grad, dropout_at_expectation(), random_tape(replay=drawn), _Widening():
            out = functional_call(model, state, tuple(wide))
    except Exception as e:  # noqa: BLE001 - a program that cannot run widened: nothing decides
        first = str(e).splitlines()[0] if str(e) else ""
        return f"the widened run failed: {type(e).__name__}: {first}"[:300]
    expecteds = [
        t.detach() if isinstance(t, torch.Tensor) else t
        for t in (out if isinstance(out, (tuple, list)) else [out])
    ]
    expecteds += [state[k] for k in lowered.buffer_outputs if k in state]
    expecteds = [e for e in expecteds if not _empty(e)]  # as validate_full compares them
    graph = _core.trace(program, [])
    dtypes = [graph.tensors[t].dtype for t in graph.outputs]
    actuals = [outs[f"out{i}"] for i in range(min(len(expecteds), len(dtypes)))]

    def rerun():
        # As perturbed_golden, on the widened state and inputs (fresh copies: the forward
        # pass may have written its inputs in place).
        wide_inputs = [_widen(t.clone()) if isinstance(t, torch.Tensor) else t for t in inputs]
        moved = _perturbed_call(
            capture, model, state, drawn, wide_inputs, seed, lowered.buffer_outputs, _Widening()
        )
        if moved is None:
            return None
        outs, unit = moved
        return [o for o in outs if not _empty(o)], unit  # as the expecteds are kept

    return actuals, expecteds, dtypes, output_budgets(graph), rerun


def _widen(t):
    """A bf16 or fp16 tensor as fp32 (exactly), anything else detached as it is."""
    import torch

    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.float() if t.dtype in (torch.bfloat16, torch.float16) else t
    return t


def _wide_dtype(a):
    import torch

    if isinstance(a, torch.dtype) and a in (torch.bfloat16, torch.float16):
        return torch.float32
    return a


class _Widening:
    """A TorchFunctionMode (built on first use: torch is imported lazily) under which every
    bf16 or fp16 dtype an operator is given is fp32, and `.half()`/`.bfloat16()` are
    `.float()`."""

    def __new__(cls):
        from torch.overrides import TorchFunctionMode

        class Widening(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                import torch

                if func in (torch.Tensor.half, torch.Tensor.bfloat16):
                    func = torch.Tensor.float
                args = tuple(_wide_dtype(a) for a in args)
                kwargs = {k: _wide_dtype(v) for k, v in (kwargs or {}).items()}
                return func(*args, **kwargs)

        return Widening()
