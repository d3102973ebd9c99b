"""Errors raised by Solar. The C++ core's user errors arrive as :class:`UserError`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    """One problem in one place of the input."""

    kind: str  # "syntax", "non-affine", "dim-mismatch", ... (docs/ir.md, "Errors")
    file: str
    line: int
    col: int
    message: str
    hint: str

    def __str__(self) -> str:
        # One formatter for both languages: the core's (base/error.h, format_diagnostic).
        from . import _core

        return _core.format_diagnostic(
            self.kind, self.file, self.line, self.col, self.message, self.hint
        )


class UserError(Exception):
    """The input is wrong (a program, a spec, an option). Holds every problem found."""

    def __init__(self, message: str, diagnostics=()):
        super().__init__(message)
        self.diagnostics = [d if isinstance(d, Diagnostic) else Diagnostic(*d) for d in diagnostics]

    @property
    def kind(self) -> str:
        return self.diagnostics[0].kind if self.diagnostics else "argument"


def argument_error(message: str, hint: str = "") -> UserError:
    """A bad option or argument value (kind "argument", no source location)."""
    d = Diagnostic("argument", "", 0, 0, message, hint)
    return UserError(str(d), [d])


class InternalError(Exception):
    """Solar itself is wrong: please report it."""
