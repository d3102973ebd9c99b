"""Problem files of any language: importing one (a fresh module, its size constants
optionally replaced), and its module-level integer size constants (what `--dim` overrides
and scaled validation divides). Nothing here imports a framework."""

from __future__ import annotations

import ast
import contextlib
import sys
import types
import uuid
from pathlib import Path

from .builder import frontend_error


def _refuse_ir(text: str, path: str) -> None:
    """The last guard before a user's file runs as Python: a file the IR reader accepts, or
    whose tokens show a @kernel or a `def model(`, is IR and is never executed (an accepted
    translation stays IR whatever its spacing; docs/agent.md, "Safety")."""
    from .imports import is_ir_text

    if is_ir_text(text):
        raise frontend_error(
            "capture",
            "the file is an IR program (it has a @kernel or a def model(): Solar reads it "
            "with its IR reader and never imports it as Python",
            "analyze it as IR (solar analyze FILE); a PyTorch or JAX problem file defines "
            "Model and get_inputs, not model() or @kernel functions",
            path,
            0,
        )


def import_program(path: str, overrides: dict | None = None):
    """Imports a problem file as a fresh module (its module-level code runs). With
    `overrides`, module-level integer constants are replaced before it runs, so constants
    derived from them and the constructor arguments follow (scaled validation). Errors of
    the program are `capture` errors at its line, never a traceback."""
    name = f"solar_problem_{uuid.uuid4().hex}"
    module = types.ModuleType(name)
    module.__file__ = path
    try:
        text = Path(path).read_text()
        _refuse_ir(text, path)
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
    except ModuleNotFoundError as e:  # name the package, not a traceback
        package = (e.name or "").split(".")[0]
        raise frontend_error(
            "capture",
            f"the program imports '{package}', which is not installed here",
            f"install it into Solar's environment (pip install {package}) and run again",
            path,
            _user_line(e, path),
        ) from None
    except MemoryError:  # over the memory limit: reported as such (solar/contain.py)
        raise
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
    return module


@contextlib.contextmanager
def importable(module):
    """`module` (an imported problem file) registered in sys.modules under its name for the
    duration. import_program registers it only while it runs: torch.compile (dynamo) imports
    the module of every function it inlines by that name, and the problem's forward is
    inlined into Solar's flat wrapper (frontend/flat.py), so `--measure --compile` compiles
    and times within this."""
    sys.modules[module.__name__] = module
    try:
        yield
    finally:
        sys.modules.pop(module.__name__, None)


def _literal_int(node) -> int | None:
    """The value of an integer literal or of arithmetic on integer literals (`256 * 8`,
    `2**20`); None for anything else (a name: a derived size follows what it names)."""
    import operator

    ops = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv,
        ast.Pow: operator.pow,
        ast.LShift: operator.lshift,
    }
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal_int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        left, right = _literal_int(node.left), _literal_int(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Pow) and right > 64):
            return None
        if isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        return ops[type(node.op)](left, right)
    return None


def _constant_sites(text: str) -> list[tuple[str, int, object]]:
    """(name, value, value node) of every module-level size constant: `NAME = <int>`,
    `NAME = <integer literal arithmetic>` and each name of `A, B = <int>, <int>`."""
    out = []
    for node in ast.parse(text).body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
        ):
            pairs = list(zip(target.elts, value.elts, strict=True))
        else:
            continue
        for t, v in pairs:
            n = _literal_int(v)
            if isinstance(t, ast.Name) and n is not None:
                out.append((t.id, n, v))
    return out


def int_constants(text: str) -> dict[str, int]:
    """Module-level integer size constants of a problem file (its sizes): literals, integer
    literal arithmetic (`M = 256 * 8`) and tuple assignments (`M, K, N = 64, 32, 16`)."""
    return {name: value for name, value, _ in _constant_sites(text)}


def override_constants(text: str, overrides: dict) -> str:
    """`text` with the values of the named module-level constants replaced by literals."""
    lines = text.splitlines(keepends=True)
    sites = [(n, v) for n, _, v in _constant_sites(text) if n in overrides]
    # Right to left, bottom to top: earlier offsets stay valid.
    for name, v in sorted(sites, key=lambda s: (s[1].lineno, s[1].col_offset), reverse=True):
        if v.lineno != v.end_lineno:
            first, last = lines[v.lineno - 1], lines[v.end_lineno - 1]
            lines[v.lineno - 1] = (
                first[: v.col_offset] + str(overrides[name]) + last[v.end_col_offset :]
            )
            for k in range(v.lineno, v.end_lineno):
                lines[k] = ""
            continue
        line = lines[v.lineno - 1]
        lines[v.lineno - 1] = line[: v.col_offset] + str(overrides[name]) + line[v.end_col_offset :]
    return "".join(lines)


def _user_line(exc: BaseException, path: str) -> int:
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == Path(path).resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def constant_dim_names(path: str) -> dict[int, str]:
    """Names for a program's dims from its problem file: a module-level size constant whose
    value no other constant has names the dim of that size (`N = 4096` names 4,096); other
    sizes are named after their value (`d64`) by the builder. {} for an unreadable file."""
    import re

    try:
        constants = int_constants(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    by_value: dict[int, list[str]] = {}
    for name, value in constants.items():
        by_value.setdefault(value, []).append(name)
    return {
        v: names[0]
        for v, names in by_value.items()
        if len(names) == 1 and v > 1 and re.fullmatch(r"[A-Za-z_]\w*", names[0])
    }


def call_user(fn, what: str, path: str, language: str):
    """fn() of the user's program; what it raises is a `capture` error at its line in
    `path` ("{what} failed: ..."), a UserError as it is."""
    from ..errors import UserError

    try:
        return fn()
    except UserError:
        raise
    except Exception as e:
        raise frontend_error(
            "capture",
            f"{what} failed: {type(e).__name__}: {e}",
            f"the {language} program itself raised this error",
            path,
            _user_line(e, path),
        ) from None
