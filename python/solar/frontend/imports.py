"""What a source file imports, read from its text alone (no framework is imported): the
front-end dispatch (kind.py) and each front end's own test of its files share it."""

from __future__ import annotations

import ast
import io
import re
import tokenize

# Fallback for a file Python cannot parse: an import statement at the start of a line.
_IMPORT_LINE = re.compile(
    r"^\s*(?:import|from)\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)", re.MULTILINE
)


def imported_packages(text: str) -> set[str]:
    """The top-level packages a source text imports (`import math, torch`,
    `from torch import nn`, `import torch.nn as nn` and imports inside functions all
    count). Relative imports name no package."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {
            name.strip().split(".")[0]
            for m in _IMPORT_LINE.finditer(text)
            for name in m.group(1).split(",")
        }
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


_IR_FALLBACK = re.compile(r"@\s*kernel\b|\bdef\s+model\s*\(")


def is_ir_text(text: str) -> bool:
    """An IR program: a text Python's tokens show to hold a `@kernel` decorator or a
    `def model(` (whatever the spacing, comments or line continuations between them), or one
    the C++ IR reader (parser and checker) accepts. Such a file is never imported as Python
    (problem.import_program refuses it): the IR is read by Solar's own reader only."""
    return _ir_tokens(text) or _ir_reader_accepts(text)


def _ir_tokens(text: str) -> bool:
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return bool(_IR_FALLBACK.search(text))  # not Python either: the IR reader reports it
    for i, t in enumerate(tokens[:-1]):
        after = tokens[i + 1]
        if t.type == tokenize.OP and t.string == "@" and after.string == "kernel":
            return True
        if (
            t.string == "def"
            and after.string == "model"
            and i + 2 < len(tokens)
            and tokens[i + 2].string == "("
        ):
            return True
    return False


def _ir_reader_accepts(text: str) -> bool:
    from solar import _core

    try:
        _core.load_program_source(text, "<program>")
    except Exception:  # the reader's refusal, whichever error type: not IR
        return False
    return True
