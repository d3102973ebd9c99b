"""Capture: a PyTorch problem file or module -> an exported ATen graph, on the meta device."""

from __future__ import annotations

import ast
import sys
import types
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Diagnostic, UserError
from .rnn import patch_recurrent


def frontend_error(kind: str, message: str, hint: str = "", file: str = "", line: int = 0):
    d = Diagnostic(kind, file, line, 1 if line else 0, message, hint)
    return UserError(str(d), [d])


@dataclass
class Problem:
    """A program in the problem convention (REFERENCE.md §5)."""

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
    return "import torch" in text and "@kernel" not in text and "def model(" not in text


def program_text(path: str) -> str:
    """The text of a PyTorch program; unreadable or non-UTF-8 files are a `capture` error
    naming the file."""
    try:
        return Path(path).read_text()
    except (OSError, ValueError) as e:
        raise frontend_error("capture", f"cannot read the program: {e}", file=path) from None


def load_problem(path: str, overrides: dict | None = None) -> Problem:
    """Imports a problem file (a fresh module each time; its module-level code runs). With
    `overrides`, module-level integer constants are replaced before it runs, so constants
    derived from them and the constructor arguments follow (scaled validation)."""
    name = f"solar_problem_{uuid.uuid4().hex}"
    module = types.ModuleType(name)
    module.__file__ = path
    try:
        text = Path(path).read_text()
        if overrides:
            text = override_constants(text, overrides)
        code = compile(text, path, "exec")
    except (OSError, SyntaxError, ValueError) as e:
        raise frontend_error(
            "capture", f"cannot read the program: {e}", file=path, line=getattr(e, "lineno", 0) or 0
        ) from None
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:  # the user's program failed: report it, never a traceback
        raise frontend_error(
            "capture",
            f"importing the program failed: {type(e).__name__}: {e}",
            "run the file with python to see the error",
            path,
            _user_line(e, path),
        ) from None
    finally:
        sys.modules.pop(name, None)
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


def int_constants(text: str) -> dict[str, int]:
    """Module-level `NAME = <int literal>` assignments of a problem file (its sizes)."""
    out = {}
    for node in ast.parse(text).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) is int
        ):
            out[node.targets[0].id] = node.value.value
    return out


def override_constants(text: str, overrides: dict) -> str:
    """`text` with the literal values of the named module-level constants replaced."""
    lines = text.splitlines(keepends=True)
    for node in reversed(ast.parse(text).body):  # right to left: offsets stay valid
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in overrides
            and isinstance(node.value, ast.Constant)
        ):
            v = node.value
            line = lines[v.lineno - 1]
            lines[v.lineno - 1] = (
                line[: v.col_offset] + str(overrides[node.targets[0].id]) + line[v.end_col_offset :]
            )
    return "".join(lines)


def _user_line(exc: BaseException, path: str) -> int:
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == Path(path).resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _call_user(fn, what: str, path: str):
    try:
        return fn()
    except UserError:
        raise
    except Exception as e:
        raise frontend_error(
            "capture",
            f"{what} failed: {type(e).__name__}: {e}",
            "the PyTorch program itself raised this error",
            path,
            _user_line(e, path),
        ) from None


def _as_list(value, what: str, path: str) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    raise frontend_error(
        "capture",
        f"{what} must return a list or tuple, got {type(value).__name__}",
        f"write: def {what}(): return [...]",
        path,
    )


def has_recurrent(model) -> bool:
    import torch.nn as nn

    return any(isinstance(m, nn.RNNBase) for m in model.modules())


def build_on_meta(problem: Problem):
    """Model and inputs on the meta device: shapes and dtypes only, nothing allocated."""
    import torch

    with torch.device("meta"):
        init = _as_list(
            _call_user(problem.get_init_inputs, "get_init_inputs()", problem.path),
            "get_init_inputs",
            problem.path,
        )
        model = _call_user(lambda: problem.model_class(*init), "Model(...)", problem.path)
        patch_recurrent(model)
        inputs = _as_list(
            _call_user(problem.get_inputs, "get_inputs()", problem.path), "get_inputs", problem.path
        )
    return model, inputs


def export_module(model, inputs: list, source: str):
    """torch.export in training mode (no .eval(): batch norm uses batch statistics, dropout
    is live), then decomposition to core ATen operators."""
    import contextlib
    import logging
    import warnings

    import torch

    args = tuple(inputs)
    try:
        # torch.export's warnings and logged tracebacks are not the user's concern: a failure
        # is reported once, below.
        logging.disable(logging.CRITICAL)
        # Tensors the forward pass creates without a device (torch.ones(n), torch.arange(n))
        # must land on the model's device: meta while capturing, the CPU when validation
        # re-exports the real program to read constants (frontend/validate.py).
        on_meta = any(
            t.device.type == "meta"
            for t in [*model.parameters(), *model.buffers(), *args]
            if isinstance(t, torch.Tensor)
        )
        device = torch.device("meta") if on_meta else contextlib.nullcontext()
        with torch.no_grad(), warnings.catch_warnings(), device:
            warnings.simplefilter("ignore")
            exported = torch.export.export(model, args)
            exported = exported.run_decompositions()
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise frontend_error(
            "capture",
            f"torch.export could not capture the program: {type(e).__name__}: {first}",
            "check that the program runs with PyTorch; torch.export also needs a forward pass "
            "without data-dependent Python control flow",
            source,
            _user_line(e, source) if source else 0,
        ) from None
    finally:
        logging.disable(logging.NOTSET)
    return exported


def capture_problem(path: str, overrides: dict | None = None) -> Capture:
    problem = load_problem(path, overrides)
    model, inputs = build_on_meta(problem)
    model_bytes, input_bytes = tensor_bytes(model_tensors(model)), tensor_bytes(inputs)
    exported = export_module(model, inputs, path)
    return Capture(exported, path, problem, model_bytes=model_bytes, input_bytes=input_bytes)


def capture_module(model, example_inputs) -> Capture:
    """Captures a module already in memory (its parameters may be real or meta)."""
    import torch

    inputs = [
        torch.empty(t.shape, dtype=t.dtype, device="meta") if isinstance(t, torch.Tensor) else t
        for t in example_inputs
    ]
    import copy

    original = model
    if not all(t.device.type == "meta" for t in [*model.parameters(), *model.buffers()]):
        model = copy.deepcopy(model).to("meta")  # shapes only from here on
    elif has_recurrent(model):
        model = copy.deepcopy(model)  # patch_recurrent changes the module it is given
    patch_recurrent(model)
    exported = export_module(model, inputs, "")
    real = all(not isinstance(t, torch.Tensor) or t.device.type != "meta" for t in example_inputs)
    # The module's own tensors exist already (validation allocates none of them); its inputs
    # are cloned for the forward pass.
    return Capture(
        exported,
        "",
        module=original if real else None,
        example_inputs=list(example_inputs) if real else [],
        input_bytes=tensor_bytes(example_inputs),
    )
