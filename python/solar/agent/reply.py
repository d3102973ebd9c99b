"""From a model's reply to IR text, without running anything.

The reply's program is found (the last fenced block that defines model()), then screened on
Python's tokens (never line by line, so a line continuation or an import inside a function
hides nothing): the IR imports nothing but `solar.ir` (no other module, no `as` alias), has
no attribute but `.shape`, no dunder names and no calls that would mean Python (`exec`,
`eval`, `open`, `getattr`, `__import__`). The screen only gives a clearer message: the
program is then parsed and checked by the C++ core, whose grammar refuses the same imports,
calls in default values and any decorator but `kernel`; what Solar keeps is the checked AST
printed back by its own printer (translate.canonical), never the reply's text, and it is run
by Solar's own executor. No reply is ever executed by a Python interpreter (docs/agent.md,
"Safety").
"""

from __future__ import annotations

import io
import re
import tokenize

MAX_PROGRAM_CHARS = 256 * 1024  # far above any IR program a kernel or a model needs

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_ONLY = {
    "exec",
    "eval",
    "open",
    "getattr",
    "setattr",
    "compile",
    "globals",
    "locals",
    "vars",
}
_ALLOWED_ATTRIBUTES = {"shape"}


def extract(text: str) -> tuple[str, str]:
    """(program, "") or ("", why there is none) for a reply."""
    if not text.strip():
        return "", "the reply was empty"
    blocks = [body for _, body in _FENCE.findall(text)]
    with_model = [b for b in blocks if re.search(r"(?m)^def\s+model\s*\(", b)]
    if with_model:
        program = with_model[-1]
    elif re.search(r"(?m)^def\s+model\s*\(", text) and not blocks:
        program = text
    else:
        return "", (
            "the reply holds no IR program (no ```python block that defines model())"
            if not blocks
            else "the reply's code blocks define no model()"
        )
    if len(program) > MAX_PROGRAM_CHARS:
        return "", (
            f"the program is {len(program):,} characters, over the limit of "
            f"{MAX_PROGRAM_CHARS:,}: write loops and helpers instead of unrolled code"
        )
    return program.strip() + "\n", ""


def screen(program: str) -> list[str]:
    """What in `program` is Python rather than IR (empty: nothing found). Tokenising only:
    nothing is evaluated. Imports are found on Python's tokens, so a statement split by line
    continuations (`from \\` + newline + `os import system`) or written inside a function is
    seen whole."""
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(program).readline)
            if t.type not in (tokenize.NL, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # Not Python: the C++ parser reports the syntax error with its position. The line
        # screen still names an import it can see.
        return [
            f"line {n}: `{line.strip()}`: {_IMPORT_HINT}"
            for n, line in enumerate(program.splitlines(), 1)
            if re.match(r"\s*(import|from)\b", line) and not _ALLOWED_IMPORT.fullmatch(line.strip())
        ]
    problems = []
    previous = None
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.NAME:
            where = f"line {tok.start[0]}:{tok.start[1] + 1}"
            if tok.string in ("import", "from") and _starts_statement(previous):
                statement = _statement_text(tokens, i)
                if not _ALLOWED_IMPORT.fullmatch(statement):
                    problems.append(f"{where}: `{statement}`: {_IMPORT_HINT}")
            elif tok.string.startswith("__") and tok.string.endswith("__"):
                problems.append(f"{where}: `{tok.string}` is Python, not IR")
            elif previous is not None and previous.string == "." and previous.type == tokenize.OP:
                if tok.string not in _ALLOWED_ATTRIBUTES and not _in_import(tokens, i):
                    problems.append(
                        f"{where}: attribute `.{tok.string}`: the IR has no attributes but "
                        '`.shape` (use size("D") or X.shape[i])'
                    )
            elif tok.string in _PYTHON_ONLY:
                problems.append(f"{where}: `{tok.string}` is Python, not IR")
        if tok.type != tokenize.NEWLINE:
            previous = tok
        else:
            previous = None
    return problems


_IMPORT_HINT = (
    "the IR imports nothing but solar.ir (`from solar.ir import kernel, Tensor, Dim`, "
    "no other module, no `as` alias)"
)
_ALLOWED_IMPORT = re.compile(
    r"import solar\.ir|from solar\.ir import (?:kernel|Tensor|Dim)(?:, (?:kernel|Tensor|Dim))*"
)
_STATEMENT_STARTS = {tokenize.INDENT, tokenize.DEDENT}


def _starts_statement(previous) -> bool:
    """Whether a token after `previous` (None: a line's first) begins a statement."""
    return previous is None or previous.type in _STATEMENT_STARTS or previous.string in (";", ":")


def _statement_text(tokens: list, start: int) -> str:
    """The logical statement from tokens[start] to its end, its tokens joined canonically."""
    out = ""
    for tok in tokens[start:]:
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or tok.string == ";":
            break
        if tok.string in (".", ","):
            out += tok.string
        elif out and not out.endswith("."):
            out += " " + tok.string
        else:
            out += tok.string
    return out.replace(",", ", ").replace(",  ", ", ")


def _in_import(tokens: list, index: int) -> bool:
    """Whether tokens[index] is part of an import statement (its dotted module name)."""
    for tok in reversed(tokens[:index]):
        if tok.type == tokenize.NEWLINE or tok.string == ";":
            return False
        if tok.string in ("import", "from"):
            return True
    return False
