"""What a source file imports, read from its text alone (no framework is imported): the
front-end dispatch (kind.py) and each front end's own test of its files share it."""

from __future__ import annotations

import ast
import re

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


def is_ir_text(text: str) -> bool:
    """An IR program has @kernel functions or a `def model(`."""
    return "@kernel" in text or "def model(" in text
