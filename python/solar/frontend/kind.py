"""Which front end takes a source file: the one dispatch the command line, `solar.analyze`
and `solar batch` share. It reads the file's text only (no framework is imported)."""

from __future__ import annotations

from pathlib import Path


def program_kind(path) -> str:
    """ "jax" (imports jax or flax and not torch), "pytorch" (imports torch), or "ir"
    (anything else, including a missing file, which the IR reader then reports). A file the
    C++ IR reader accepts, or whose Python tokens show a @kernel decorator or a
    `def model(` whatever the spacing (imports.is_ir_text), is always "ir": it is never
    imported as Python."""
    from .capture import is_pytorch_program
    from .jax.capture import is_jax_program

    p = str(path)
    if not Path(p).exists():
        return "ir"
    if is_jax_program(p):
        return "jax"
    if is_pytorch_program(p):
        return "pytorch"
    return "ir"
