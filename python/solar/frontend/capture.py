"""Capture: a PyTorch problem file or module -> an exported ATen graph, on fake tensors."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from .builder import frontend_error
from .flat import flat_module, signature
from .problem import _user_line, call_user, import_program
from .rnn import patch_recurrent


@dataclass
class Problem:
    """A program in the problem convention (docs/pytorch.md, "Programs")."""

    path: str
    module: object
    model_class: type
    get_inputs: object
    get_init_inputs: object


@dataclass
class Capture:
    """An exported program and what is needed to run the original."""

    exported: object  # torch.export.ExportedProgram (core ATen after decompositions)
    source: str  # file the program came from ("" for an in-memory module)
    problem: Problem | None = None
    module: object = None  # an in-memory module and its real example inputs (validation)
    example_inputs: list = field(default_factory=list)
    # Bytes that building the real model allocates (its parameters, buffers and tensor
    # attributes, all of them, read by forward or not) and that get_inputs() allocates,
    # measured on the meta device: validation checks them against its budget first.
    model_bytes: int = 0
    input_bytes: int = 0
    # How the flat tensor inputs rebuild the program's call (frontend/flat.py), the names of
    # its flat outputs (paths in the returned structure) and the mode it was captured in
    # (None: the module's own).
    signature: object = None
    output_names: list = field(default_factory=list)
    mode: str | None = None
    # False: key-value caches the program returns are not outputs (an inference step).
    output_caches: bool = True
    # A training step: forward + backward of sum(floating outputs) (frontend/flat.py);
    # the lowered program returns the loss, then the gradients of these parameters and
    # inputs (qualified names; inputs as "input:<index>"), in this order.
    training: bool = False
    gradient_targets: list = field(default_factory=list)
    # Names of sizes from the module (a Hugging Face config's hidden_size as "hidden", token
    # ids' batch and sequence dims): size -> name, for the lowered program's dims.
    dim_names: dict = field(default_factory=dict)
    # --llm-fallback (agent/fallback.py): lowers operators that have no rule; None: they fail.
    fallback: object = None
    # What the report says of the capture (a value-specialised capture: frontend/specialise.py).
    notes: list = field(default_factory=list)
    # The forward pass runs autograd itself (`y.backward(dy)`): it runs with autograd on.
    autograd: bool = False


def tensor_bytes(values) -> int:
    """Bytes of the distinct tensors among `values`."""
    import torch

    seen, total = set(), 0
    for t in values:
        if isinstance(t, torch.Tensor) and id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


def model_tensors(model) -> list:
    """Every tensor a module holds: parameters, buffers and plain tensor attributes."""
    import torch

    out = [*model.parameters(), *model.buffers()]
    for m in model.modules():
        out += [v for v in vars(m).values() if isinstance(v, torch.Tensor)]
    return out


def is_pytorch_program(path: str) -> bool:
    """A PyTorch program imports torch; an IR program has @kernel functions or a
    `def model(`."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return False  # the IR reader reports it
    from .imports import imported_packages, is_ir_text

    return "torch" in imported_packages(text) and not is_ir_text(text)


def program_text(path: str) -> str:
    """The text of a PyTorch program; unreadable or non-UTF-8 files are a `capture` error
    naming the file."""
    try:
        return Path(path).read_text()
    except (OSError, ValueError) as e:
        raise frontend_error("capture", f"cannot read the program: {e}", file=path) from None


def load_problem(path: str, overrides: dict | None = None) -> Problem:
    """Imports a problem file (problem.import_program) and finds its Model, get_inputs and
    get_init_inputs."""
    module = import_program(path, overrides)
    missing = [n for n in ("Model", "get_inputs") if not hasattr(module, n)]
    if missing:
        raise frontend_error(
            "capture",
            f"the program defines no {' or '.join(missing)}",
            "a problem file defines class Model(nn.Module), get_inputs() and optionally "
            "get_init_inputs() (docs/pytorch.md)",
            path,
        )
    get_init = getattr(module, "get_init_inputs", lambda: [])
    return Problem(path, module, module.Model, module.get_inputs, get_init)


def _call_user(fn, what: str, path: str):
    return call_user(fn, what, path, "PyTorch")


def _as_list(value, what: str, path: str) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    raise frontend_error(
        "capture",
        f"{what} must return a list or tuple, got "
        f"{'Tensor' if is_fake(value) else type(value).__name__}",
        f"write: def {what}(): return [...]",
        path,
    )


def has_recurrent(model) -> bool:
    import torch.nn as nn

    return any(isinstance(m, nn.RNNBase) for m in model.modules())


MODES = ("train", "eval")


def set_mode(model, mode: str | None) -> None:
    """`mode` "train" or "eval" sets the module's mode; None keeps the one it has."""
    if mode is None:
        return
    if mode not in MODES:
        from ..errors import argument_error

        raise argument_error(f"mode must be 'train' or 'eval', got {mode!r}")
    model.train(mode == "train")


def module_modes(model) -> list:
    """(submodule, training) of every submodule: what restore_modes puts back (a module with
    some submodules frozen in eval mode keeps them so)."""
    return [(m, m.training) for m in model.modules()]


def restore_modes(modes) -> None:
    for m, training in modes:
        m.training = training


def _cuda_as_cpu():
    """A TorchFunctionMode under which tensors a program asks for on a CUDA device are made
    on the CPU (as fake tensors while capturing: nothing is allocated), so a KernelBench-style
    `get_inputs()` that writes `device="cuda"` or `.cuda()` runs on a machine without a GPU.
    (Made by a function: torch is imported only when it is used.)"""
    import torch
    from torch.overrides import TorchFunctionMode

    def is_cuda(d) -> bool:
        return (isinstance(d, str) and d.startswith("cuda")) or (
            isinstance(d, torch.device) and d.type == "cuda"
        )

    class Mode(TorchFunctionMode):
        solar_cuda_as_cpu = True

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0]
            if is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func in (torch.Tensor.to, torch.Tensor.type):
                args = tuple("cpu" if is_cuda(a) else a for a in args)
            return func(*args, **kwargs)

    return Mode()


@contextlib.contextmanager
def fake_tensors():
    """Everything built inside is a fake tensor on the CPU device: shapes, dtypes and devices
    are real (so `torch.autocast(device_type=x.device.type)` and device checks behave as on a
    CPU), storage is never allocated."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode, _cuda_as_cpu(), _small_ranges_known(mode), _fake_initialisation():
        with _fake_module_conversion():
            yield mode


@contextlib.contextmanager
def _fake_module_conversion():
    """`module.to(torch.bfloat16)`, `.half()`, `.double()` on fake parameters. PyTorch's
    Module._apply swaps a fake parameter in place (torch.utils.swap_tensors), which refuses
    one the fake mode holds a weak reference to: every fake Parameter, so a Model whose
    __init__ converts itself failed to build. A fake module's parameters are replaced by new
    Parameters instead (as torch.__future__.set_overwrite_module_params_on_conversion does
    for real ones); a parameter two modules share (tied weights) stays shared, converted once
    per call."""
    import torch

    original = torch.nn.Module._apply
    call = {"depth": 0, "converted": {}}

    def apply(module, fn, recurse=True):
        params = [p for p in module._parameters.values() if p is not None]
        if not any(is_fake(p) for p in params):
            return original(module, fn, recurse)
        call["depth"] += 1
        try:
            if recurse:
                for child in module.children():
                    child._apply(fn)
            converted = call["converted"]
            for key, param in module._parameters.items():
                if param is None:
                    continue
                if id(param) not in converted:
                    with torch.no_grad():
                        new = torch.nn.Parameter(fn(param), param.requires_grad)
                    converted[id(param)] = (param, new)  # the old one kept: ids stay unique
                module._parameters[key] = converted[id(param)][1]
            for key, buf in module._buffers.items():
                if buf is not None:
                    module._buffers[key] = fn(buf)
            return module
        finally:
            call["depth"] -= 1
            if call["depth"] == 0:
                call["converted"] = {}

    torch.nn.Module._apply = apply
    try:
        yield
    finally:
        torch.nn.Module._apply = original


@contextlib.contextmanager
def _fake_initialisation():
    """torch.nn.init.trunc_normal_ (ViT's and DINOv2's position embeddings) samples by
    rejection: it reads values back (`.item()`, `mask.any()`), which a fake tensor has not.
    Initial values do not matter to a capture (only shapes do; validation builds the model for
    real), so on a fake tensor it draws a plain normal instead. The module attribute is the
    one `trunc_normal_` calls, so references taken at import (transformers') see it too."""
    import torch
    import torch.nn.init as init

    original = init._no_grad_trunc_normal_

    def trunc_normal(tensor, mean, std, a, b, generator=None):
        if not is_fake(tensor):
            return original(tensor, mean, std, a, b, generator=generator)
        with torch.no_grad():
            return tensor.normal_(mean, std)

    init._no_grad_trunc_normal_ = trunc_normal
    try:
        yield
    finally:
        init._no_grad_trunc_normal_ = original


# Ranges and tensors of Python data a constructor may read back with .item() (Swin's and
# torchvision's per-block stochastic-depth rates: `[x.item() for x in torch.linspace(0, rate,
# depth)]`), up to this many elements, are computed for real and kept as fake tensors that
# know their values.
SMALL_RANGE = 4096


def _small_ranges_known(fake_mode):
    """A TorchFunctionMode that makes such ranges fake tensors knowing their values, and
    computes what a constructor derives from them on those values: arithmetic, rounding,
    pieces (`split`), read-backs (`.tolist()`, `.item()`, `bool(...)`): ConvNeXt's
    `[x.tolist() for x in rates.split(depths)]`, torchvision RegNet's block widths
    (`torch.round(w_0 * torch.pow(w_m, ...)).int().tolist()`). A result of more than
    SMALL_RANGE elements is an ordinary fake tensor again; in-place calls are left alone."""
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.overrides import TorchFunctionMode
    from torch.utils import _pytree as pytree

    # Small tensors made from numbers: ranges, and Python data (`torch.tensor([...])`).
    ranges = (torch.linspace, torch.logspace, torch.arange, torch.tensor, torch.as_tensor)

    def known(t):
        return getattr(t, "constant", None)

    def as_fake(value):
        if not isinstance(value, torch.Tensor):
            return value
        if value.numel() > SMALL_RANGE:
            return fake_mode.from_tensor(value)
        return fake_mode.fake_tensor_converter.from_real_tensor(
            fake_mode, value.clone(), make_constant=True
        )

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            tensors = [a for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
            in_place = getattr(func, "__name__", "").endswith("_")
            if tensors and not in_place and all(known(t) is not None for t in tensors):
                real = pytree.tree_map(
                    lambda a: known(a) if isinstance(a, torch.Tensor) else a, (args, kwargs)
                )
                with unset_fake_temporarily():
                    out = func(*real[0], **real[1])
                    return pytree.tree_map(as_fake, out)
            if func not in ranges:
                return func(*args, **kwargs)
            out = func(*args, **kwargs)
            if out.numel() > SMALL_RANGE or out.device.type != "cpu":
                return out
            with unset_fake_temporarily():
                return as_fake(func(*args, **kwargs))

    return Mode()


def is_fake(t) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor) or getattr(getattr(t, "device", None), "type", "") == "meta"


def build_problem(problem: Problem, mode: str | None, seed: int | None = None):
    """(model, example) of a problem file: its Model(*get_init_inputs()) in `mode` and
    get_inputs(). Inside `fake_tensors()` nothing is allocated; with `seed`, both are seeded
    as the harness seeds them (docs/pytorch.md)."""
    import torch

    if not torch.cuda.is_available() and not any(
        getattr(m, "solar_cuda_as_cpu", False)
        for m in torch.overrides._get_current_function_mode_stack()
    ):
        with _cuda_as_cpu():
            return build_problem(problem, mode, seed)
    if seed is not None:
        torch.manual_seed(seed)
    init = _as_list(
        _call_user(problem.get_init_inputs, "get_init_inputs()", problem.path),
        "get_init_inputs",
        problem.path,
    )
    model = _call_user(lambda: problem.model_class(*init), "Model(...)", problem.path)
    tensor_attributes_as_buffers(model)
    set_mode(model, mode)
    if seed is not None:
        torch.manual_seed(seed)
    inputs = _as_list(
        _call_user(problem.get_inputs, "get_inputs()", problem.path), "get_inputs", problem.path
    )
    return model, inputs


def tensor_attributes_as_buffers(model) -> None:
    """Plain tensor attributes of a problem file's modules (`self.h = torch.zeros(...)`)
    become non-persistent buffers: torch.export refuses a constant that forward mutates
    ("Constant ... is mutated ... register it as buffer"), and as a buffer its update is
    counted as eager makes it. The same happens to the real model validation builds, so the
    qualified names agree."""
    import torch

    for module in model.modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)


def export_module(model, tensors: list, source: str, training: bool = False):
    """torch.export of a flat module (frontend/flat.py) in the module's mode (a problem file's
    model is in training mode unless --mode eval: batch norm uses batch statistics, dropout is
    live), then decomposition to core ATen operators. Fake inputs are exported in their fake
    mode, real ones for real."""
    import logging
    import warnings

    import torch
    from torch._guards import detect_fake_mode

    args = tuple(tensors)
    try:
        # torch.export's warnings and logged tracebacks are not the user's concern: a failure
        # is reported once, below.
        logging.disable(logging.CRITICAL)
        # Captures are fake CPU tensors (capture_module moves a meta module there), so
        # tensors forward creates without a device (torch.ones(n)) are fake CPU tensors too.
        fake = detect_fake_mode(args) or contextlib.nullcontext()
        grad = torch.enable_grad() if training else torch.no_grad()
        # A failed trace also writes its graph to stderr.
        quiet = contextlib.redirect_stderr(io.StringIO())
        with grad, warnings.catch_warnings(), fake, quiet:
            warnings.simplefilter("ignore")
            exported = torch.export.export(model, args)
            if not training:
                exported = exported.run_decompositions(_decompositions())
                _decompose_einsums(exported)
        if training:
            # The joint forward-backward graph AOTAutograd builds (core ATen): the loss and
            # the gradients of every parameter and floating input that needs one. It makes
            # its own fake mode.
            from torch.export.experimental import _export_forward_backward

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exported = _export_forward_backward(exported)
    except UserError:
        raise
    except Exception as e:
        raise export_error(e, source) from None
    finally:
        logging.disable(logging.NOTSET)
    return exported


_DATA_DEPENDENT = (
    "GuardOnDataDependentSymNode",
    "DataDependentOutputException",
    "DynamicOutputShapeException",
    "UserError",
)
# What a value read outside the dispatcher says on a fake tensor: `counts.cpu().numpy()`
# (SOL-ExecBench task 142 loops over the experts by the counts it reads so).
_VALUE_READS = (
    "data-dependent",
    "data dependent",
    ".numpy() is not supported for tensor subclasses",
)


def export_error(e: BaseException, source: str) -> UserError:
    """One line for a failed export: data-dependent control flow gets its own message and a
    hint, never the graph dump torch.export appends."""
    first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
    name = type(e).__name__
    if name in _DATA_DEPENDENT or any(read in str(e) for read in _VALUE_READS):
        error = frontend_error(
            "capture",
            "the program's control flow or output shapes depend on tensor values "
            f"({name}: {first[:200]})",
            "Solar analyses programs whose operators are fixed by shapes alone; models whose "
            "work depends on the data (detection post-processing, dynamic routing by value) "
            "need a static variant: capture the part before the data-dependent step",
            source,
            _user_line(e, source) if source else 0,
        )
        error.data_dependent = True  # capture_problem may specialise on the values
        return error
    error = frontend_error(
        "capture",
        f"torch.export could not capture the program: {name}: {first[:300]}",
        "check that the program runs with PyTorch; torch.export also needs a forward pass "
        "without data-dependent Python control flow",
        source,
        _user_line(e, source) if source else 0,
    )
    # A forward pass that runs autograd itself (`y.backward(dy)`, a backward kernel's
    # reference) fails under the export's no_grad: capture_problem traces it with autograd on.
    error.autograd = AUTOGRAD_IN_FORWARD in str(e)
    return error


# What autograd says when a forward pass that runs `.backward()` itself runs under no_grad.
AUTOGRAD_IN_FORWARD = "does not require grad and does not have a grad_fn"


STATIC_EXPERTS = "batched_mm"


@contextlib.contextmanager
def static_experts(model):
    """Hugging Face mixture-of-experts models run their experts through an implementation
    chosen on the config: "eager" loops over the experts a routing hit (a loop whose length
    depends on the data) and "grouped_mm" sorts the tokens by expert (a data-dependent
    order). Inside this block every such model uses "batched_mm" instead: each token's k
    chosen experts gathered and applied as one batched product, the same arithmetic with
    static shapes, which torch.export traces and the IR expresses (docs/llm.md, "Mixture of
    experts"). The implementation in use before is put back after."""
    changed = []
    for m in model.modules():
        config = getattr(m, "config", None)
        current = getattr(config, "_experts_implementation", None)
        if current is None or current == STATIC_EXPERTS:
            continue
        if not hasattr(m, "set_experts_implementation"):
            continue
        if not m._can_set_experts_implementation():
            continue
        m.set_experts_implementation(STATIC_EXPERTS)
        changed.append((m, current))
    try:
        yield bool(changed)
    finally:
        for m, previous in reversed(changed):
            m.set_experts_implementation(previous)


def without_gradient(flat, tensors) -> list[str]:
    """The qualified names of the parameters that get no gradient in a training step: the
    loss does not depend on them (a layer forward never calls, a weight used only under
    no_grad or through an integer result). Found by autograd on fake copies of the state
    (nothing is computed, the module's own tensors are untouched); [] when that cannot run
    (the export then reports why)."""
    import torch
    from torch._guards import detect_fake_mode
    from torch.func import functional_call

    fake = detect_fake_mode(tuple(tensors))
    wanted = [n for n, p in flat.named_parameters() if p.requires_grad]
    if fake is None or not wanted:
        return []
    try:
        with fake, torch.enable_grad():
            state = {
                n: t if is_fake(t) else fake.from_tensor(t)
                for n, t in [*flat.named_parameters(), *flat.named_buffers()]
            }
            (loss,) = functional_call(flat, state, tuple(tensors))
            leaves = [state[n] for n in wanted]
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    except Exception:  # noqa: BLE001 - the export that follows reports the program's error
        return []
    return [n for n, g in zip(wanted, grads, strict=True) if g is None]


@contextlib.contextmanager
def frozen(model, names: list[str]):
    """The named parameters with requires_grad off for the duration (put back after)."""
    params = dict(model.named_parameters())
    for n in names:
        params[n].requires_grad_(False)
    try:
        yield
    finally:
        for n in names:
            params[n].requires_grad_(True)


def no_gradient_note(names: list[str], total: int) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (
        f"training step: {len(names)} of {total} parameters had no gradient (the loss does "
        f"not depend on them: {shown}); their gradients are zero, so they are not computed, "
        "counted or returned"
    )


def _flat_capture(model, example, source: str, **fields) -> Capture:
    sig, tensors = signature(example)
    training = fields.get("training", False)
    flat = flat_module(model, sig, fields.get("output_caches", True), loss=training)
    # AOTAutograd's joint graph refuses a parameter without a gradient ("Found a parameter
    # that did not receive a gradient"): such parameters are frozen while it is built, their
    # zero gradients left out and named in a note.
    with static_experts(model):
        unused = without_gradient(flat, tensors) if training else []
        with frozen(flat, unused):
            exported = export_module(flat, tensors, source, training)
    if unused:
        total = sum(1 for p in flat.parameters() if p.requires_grad)
        notes = fields.get("notes", [])
        fields["notes"] = [*notes, no_gradient_note(unused, total)]
    targets = []
    if training:
        from torch.export.graph_signature import OutputKind

        for spec in exported.graph_signature.output_specs:
            if spec.kind == OutputKind.GRADIENT_TO_PARAMETER:
                targets.append(spec.target)
            elif spec.kind == OutputKind.GRADIENT_TO_USER_INPUT:
                # The target names the joint graph's placeholder: `arg<k>_1` is input spec k.
                inputs = exported.graph_signature.input_specs
                users = [i for i, s in enumerate(inputs) if s.kind.name == "USER_INPUT"]
                k = next(
                    (i for i, s in enumerate(inputs) if s.arg.name == spec.target),
                    int(spec.target[3:].split("_")[0]) if spec.target.startswith("arg") else -1,
                )
                targets.append(f"input:{users.index(k)}")
    names = list(getattr(flat, "solar_output_names", []))
    if training:
        names = ["loss"] + [f"gradient of {t}" for t in targets]
    return Capture(
        exported,
        source,
        signature=sig,
        output_names=names,
        gradient_targets=targets,
        **fields,
    )


# A Hugging Face config's sizes and the dim names they give, most telling first.
CONFIG_DIMS = (
    ("hidden_size", "hidden"),
    ("d_model", "hidden"),
    ("intermediate_size", "ffn"),
    ("moe_intermediate_size", "expert_ffn"),
    ("vocab_size", "vocab"),
    ("num_attention_heads", "heads"),
    ("num_key_value_heads", "kv_heads"),
    ("head_dim", "head_dim"),
    ("num_local_experts", "experts"),
    ("num_experts", "experts"),
    ("n_routed_experts", "experts"),
    ("num_experts_per_tok", "top_k"),
    ("kv_lora_rank", "kv_rank"),
    ("q_lora_rank", "q_rank"),
    ("image_size", "image"),
    ("patch_size", "patch"),
)


def module_dim_names(model, sig, tensors) -> dict:
    """size -> name for the dims of a module's program: its Hugging Face config's sizes
    (CONFIG_DIMS) and the batch and sequence dims of its token ids (`input_ids` [batch,
    seq]); a size two names claim is left unnamed (it would mislabel one of them)."""
    claims: dict[int, set] = {}

    def claim(size, name):
        if isinstance(size, int) and not isinstance(size, bool) and size > 1:
            claims.setdefault(size, set()).add(name)

    config = getattr(model, "config", None)
    for attr, name in CONFIG_DIMS:
        claim(getattr(config, attr, None) if config is not None else None, name)
    for path, t in zip(sig.names, tensors, strict=False):
        if path.split(".")[-1] in ("input_ids", "decoder_input_ids") and t.dim() == 2:
            claim(int(t.shape[0]), "batch")
            claim(int(t.shape[1]), "dec_seq" if path.startswith("decoder") else "seq")
    return {size: names.pop() for size, names in claims.items() if len(names) == 1}


def capture_problem(
    path: str,
    overrides: dict | None = None,
    mode: str | None = None,
    training: bool = False,
    progress=None,
) -> Capture:
    """The capture of a problem file; `progress(stage)`, when given, is told each layer of
    the model's layer stack as the trace reaches it (frontend/layers.py)."""
    from .layers import layer_progress

    problem = load_problem(path, overrides)
    with fake_tensors():
        model, inputs = build_problem(problem, mode)
        patch_recurrent(model)
    model_bytes, input_bytes = tensor_bytes(model_tensors(model)), tensor_bytes(inputs)
    from .specialise import reads_values

    try:
        with layer_progress(model, progress, "capturing with torch.export"):
            capture = _flat_capture(
                model,
                inputs,
                path,
                problem=problem,
                model_bytes=model_bytes,
                input_bytes=input_bytes,
                mode=mode,
                training=training,
            )
    except UserError as e:
        if training:
            raise
        if getattr(e, "autograd", False):
            # Gradients computed in the forward pass: the operators autograd runs, traced.
            return specialised_capture(problem, mode, path, model_bytes, input_bytes, e, True)
        if not getattr(e, "data_dependent", False):
            raise
        # Control flow that reads input values: captured for the values get_inputs() gives.
        return specialised_capture(problem, mode, path, model_bytes, input_bytes, e)
    if training or not reads_values(capture.exported.graph):
        return capture
    # torch.export kept a value read (`lengths.tolist()` feeding torch.split), which no IR
    # operator computes: captured for the values get_inputs() gives where that can be done,
    # else as it is (the lowering names the read).
    try:
        return specialised_capture(problem, mode, path, model_bytes, input_bytes, None)
    except UserError:
        return capture


def specialised_capture(
    problem, mode, source: str, model_bytes: int, input_bytes: int, why, grad: bool = False
):
    """The Capture of a problem file's program for the values its get_inputs() gives (seed
    0; frontend/specialise.py). `why` is the data-dependent error of the ordinary capture
    (None: it succeeded but kept a value read): it is raised again, with the reason, where
    this capture cannot be made (the model has tensors of its own, the inputs are above the
    budget, the trace fails). `grad`: the forward pass runs autograd itself, and is traced
    with it on (the operators of its backward pass are then the graph's)."""
    from . import specialise as sp

    def refuse(reason: str) -> UserError:
        if why is None:  # no error to extend (a capture that kept a value read)
            return frontend_error("capture", reason, "", source)
        d = why.diagnostics[0]
        return frontend_error("capture", f"{d.message}; {reason}", d.hint, d.file, d.line)

    weights = "a program with parameters or buffers is not specialised on its values"
    if model_bytes:
        raise refuse(weights)
    # Inputs above the budget: only the integer and boolean ones, which control flow reads,
    # and the small floating ones are built for real (sp.floating_fake); together they must
    # fit the budget.
    fake = None
    try:
        if input_bytes > sp.SPECIALISE_MAX_BYTES:
            from torch._subclasses.fake_tensor import FakeTensorMode

            with sp.floating_fake(FakeTensorMode(allow_non_fake_inputs=True)) as fake:
                model, example = build_problem(problem, mode, seed=0)
            real_bytes = tensor_bytes([t for t in signature(example)[1] if not is_fake(t)])
            if real_bytes > sp.SPECIALISE_MAX_BYTES:
                raise sp.Refused(
                    f"capturing it for its inputs' values builds its integer, boolean and "
                    f"small floating inputs for real: {real_bytes:,} bytes, above the "
                    f"{sp.SPECIALISE_MAX_BYTES:,} allowed; lower the sizes with --dim"
                )
        else:
            model, example = build_problem(problem, mode, seed=0)
        if model_tensors(model):
            raise refuse(weights)
        sig, tensors = signature(example)
        flat = flat_module(model, sig, True, loss=False)
        with _cuda_as_cpu():
            gm, read, fakes = sp.specialise(flat, tensors, input_bytes, grad, fake)
    except sp.Refused as e:
        raise refuse(str(e)) from None
    del example, tensors  # the real inputs
    exported = export_module(gm, fakes, source)
    names = sp.input_names(model, len(fakes))
    notes = []
    if grad:
        notes.append(
            "the program runs autograd in its forward pass (`.backward()`): the operators of "
            'that backward pass were traced (docs/pytorch.md, "Gradients computed in '
            'forward")'
        )
    if read or not grad:
        notes.append(
            "the program's control flow or result sizes read the values of its inputs "
            f"({', '.join(names[i] for i in read)}): it was captured for the values "
            "get_inputs() gives with seed 0, and the bound holds for those values "
            '(docs/pytorch.md, "Data-dependent control flow and sizes")'
        )
    if fake is not None:
        notes.append(
            f"its inputs ({input_bytes:,} bytes) are above the {sp.SPECIALISE_MAX_BYTES:,} "
            "bytes built for real: its integer and boolean inputs were, and its floating ones "
            f"of at most {sp.SPECIALISE_REAL_TENSOR_BYTES:,} bytes; the others are fake, so "
            "random values drawn after one differ from a real run's "
            '(docs/pytorch.md, "Data-dependent control flow and sizes")'
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
        notes=notes,
        autograd=grad,
    )


def _decompositions():
    """Core ATen's decompositions, but `select_scatter` (`x[:, p] = v`) stays: decomposed it
    is a `where` over the whole of x, while eager PyTorch writes the selected elements in
    place, and its rule lowers it to the in-place `update` (rules.py, _in_place). `einsum`
    stays too: decomposed it is permute and reshape copies around a `bmm`, which sit between
    consecutive contractions; its rule lowers it to contraction kernels reading the operands
    in place (contract.py). `_decompose_einsums` then decomposes those it must not keep."""
    import torch

    table = torch.export.default_decompositions()
    table.pop(torch.ops.aten.select_scatter.default, None)
    table.pop(torch.ops.aten.einsum.default, None)
    return table


# Operators an attention's scores or probabilities pass through between an einsum, its mask
# and its softmax (copies, casts, views, dims moved, scaled by a number).
_ATTENTION_MOVES = {
    "aten.view.default",
    "aten._unsafe_view.default",
    "aten.reshape.default",
    "aten.permute.default",
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.squeeze.default",
    "aten.clone.default",
    "aten._to_copy.default",
    "aten.alias.default",
    "aten.expand.default",
    "aten.mul.Tensor",
    "aten.mul.Scalar",
    "aten.div.Tensor",
    "aten.div.Scalar",
}
_ATTENTION_MASKS = {
    "aten.masked_fill.Scalar",
    "aten.masked_fill.Tensor",
    "aten.where.self",
    "aten.add.Tensor",
}
_ATTENTION_SOFTMAX = {"aten._softmax.default", "aten._safe_softmax.default", "aten.softmax.int"}


def _reached(start, through, stop) -> list:
    """The nodes with a target in `stop` reached from `start` through users whose target is
    in `through`."""
    out, stack, seen = [], list(start.users), set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        target = str(node.target)
        if target in stop:
            out.append(node)
        elif target in through or node.target.__class__.__name__ == "builtin_function_or_method":
            stack.extend(node.users)
    return out


def _masked_attention_einsums(einsums) -> set:
    """The einsums of a masked attention: a product whose scores reach a mask and then a
    softmax, and the products that read that softmax. masks.py finds these as the bmm nodes
    of torch's decomposition and lowers them inside the mask's band; kept whole they would be
    counted dense."""
    names = {str(e.target) for e in einsums}
    out = set()
    for e in einsums:
        for mask in _reached(e, _ATTENTION_MOVES, _ATTENTION_MASKS):
            through = _ATTENTION_MOVES | _ATTENTION_MASKS
            for softmax in _reached(mask, through, _ATTENTION_SOFTMAX):
                out.add(e)
                dropout = {"aten.native_dropout.default", "aten.where.self"}
                out.update(_reached(softmax, _ATTENTION_MOVES | dropout, names))
    return out


def _decompose_einsums(exported) -> None:
    """Decomposes, in place, with torch's own decomposition, the einsums its rule does not
    lower (a label repeated in one operand: a diagonal; contract.py, `einsum_refusal`) and
    those of a masked attention (`_masked_attention_einsums`); the others stay whole."""
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.fx.experimental.proxy_tensor import make_fx

    from .contract import einsum_refusal

    graph = exported.graph
    einsum = torch.ops.aten.einsum.default
    einsums = [n for n in graph.nodes if n.op == "call_function" and n.target is einsum]
    if not einsums:
        return
    masked = _masked_attention_einsums(einsums)
    table = dict(torch.export.default_decompositions().items())
    changed = False
    for node in einsums:
        equation, operands = node.args[0], list(node.args[1])
        values = [o.meta["val"] for o in operands]
        if node not in masked and not einsum_refusal(equation, [v.shape for v in values]):
            continue
        path = node.kwargs.get("path")
        # Traced on tensors of the operands' shapes and dtypes (the lowering reads no more).
        shaped = [torch.empty(v.shape, dtype=v.dtype, device="meta") for v in values]
        with unset_fake_temporarily():
            sub = make_fx(
                lambda *ts, eq=equation, path=path: torch.ops.aten.einsum.default(
                    eq, list(ts), path=path
                ),
                decomposition_table=table,
                tracing_mode="fake",
            )(*shaped)
        env, result = {}, None
        placeholders = [p for p in sub.graph.nodes if p.op == "placeholder"]
        env.update(zip(placeholders, operands, strict=True))
        with graph.inserting_before(node):
            for sn in sub.graph.nodes:
                if sn.op == "call_function":
                    new = graph.node_copy(sn, env.__getitem__)
                    for key in ("stack_trace", "from_node", "nn_module_stack", "source_fn_stack"):
                        if key in node.meta:
                            new.meta[key] = node.meta[key]
                    env[sn] = new
                elif sn.op == "output":
                    result = sn.args[0]
                    result = env[result[0] if isinstance(result, (list, tuple)) else result]
        node.replace_all_uses_with(result)
        for spec in exported.graph_signature.output_specs:
            if getattr(spec.arg, "name", None) == node.name:
                spec.arg.name = result.name  # the signature names the returned node
        graph.erase_node(node)
        changed = True
    if changed:
        exported.graph_module.recompile()


def capture_module(
    model,
    example_inputs,
    mode: str | None = None,
    output_caches: bool = True,
    training: bool = False,
) -> Capture:
    """Captures a module already in memory with example inputs: a list of positional
    arguments, a dict of keyword arguments, or {"args": [...], "kwargs": {...}}. The module's
    tensors may be real, fake (built inside `solar.fake_tensors()`: a published-size model
    allocates nothing) or on the meta device (moved to fake CPU tensors, so device-dependent
    code such as `torch.autocast(device_type=x.device.type)` sees a CPU); inputs likewise.
    The module keeps its mode unless `mode` is given (and is left as it was)."""
    import copy

    import torch
    from torch._guards import detect_fake_mode

    sig, tensors = signature(example_inputs)
    state = [*model.parameters(), *model.buffers()]
    real = all(not is_fake(t) for t in [*tensors, *state])
    original = model
    fake = detect_fake_mode(tuple(state))
    on_meta = any(t.device.type == "meta" for t in state)
    if on_meta or has_recurrent(model):
        model = copy.deepcopy(model)  # to_empty and patch_recurrent change the module
    if fake is None:
        with fake_tensors() as fake:
            if on_meta:
                model.to_empty(device="cpu")  # fake CPU tensors of the same shapes
    modes = module_modes(model)
    try:
        set_mode(model, mode)
        patch_recurrent(model)
        with fake, _cuda_as_cpu():
            fakes = [
                torch.empty(t.shape, dtype=t.dtype)
                if t.device.type == "meta"
                else (t if is_fake(t) else fake.from_tensor(t))
                for t in tensors
            ]
        fake_args, fake_kwargs = sig.call_args(fakes)
        dim_names = module_dim_names(model, sig, tensors)
        capture = _flat_capture(
            model,
            {"args": fake_args, "kwargs": fake_kwargs},
            "",
            module=original if real else None,
            example_inputs=list(tensors) if real else [],
            input_bytes=tensor_bytes(tensors),
            mode=mode,
            output_caches=output_caches,
            training=training,
            dim_names=dim_names,
        )
    finally:
        restore_modes(modes)
    # Validation calls the original module through the same flat signature.
    capture.signature = sig
    return capture
