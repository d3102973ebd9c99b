"""From a model's reply to IR text, without running anything.

The reply's program is found (the last fenced block that defines model()), then screened:
the IR has no imports but `solar.ir`, no attribute but `.shape`, no dunder names and no
calls that would mean Python (`exec`, `eval`, `open`, `getattr`, `__import__`). The screen
only gives a clearer message: the program is parsed and checked by the C++ core and run by
Solar's own executor, so text that passes the screen and is not IR is still refused there,
and no reply is ever executed by a Python interpreter (docs/agent.md, "Safety").
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
    nothing is evaluated."""
    problems = []
    for lineno, line in enumerate(program.splitlines(), 1):
        m = re.match(r"\s*(import|from)\s+([\w.]+)", line)
        if m and m.group(2) not in ("solar.ir", "solar"):
            problems.append(
                f"line {lineno}: `{line.strip()}`: the IR imports nothing but solar.ir "
                "(`from solar.ir import kernel, Tensor, Dim`)"
            )
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(program).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return problems  # the C++ parser reports the syntax error with its position
    previous = None
    for tok in tokens:
        if tok.type == tokenize.NAME:
            where = f"line {tok.start[0]}:{tok.start[1] + 1}"
            if tok.string.startswith("__") and tok.string.endswith("__"):
                problems.append(f"{where}: `{tok.string}` is Python, not IR")
            elif previous is not None and previous.string == "." and previous.type == tokenize.OP:
                line = tok.line.lstrip()
                if tok.string not in _ALLOWED_ATTRIBUTES and not line.startswith(
                    ("from ", "import ")
                ):
                    problems.append(
                        f"{where}: attribute `.{tok.string}`: the IR has no attributes but "
                        '`.shape` (use size("D") or X.shape[i])'
                    )
            elif tok.string in _PYTHON_ONLY:
                problems.append(f"{where}: `{tok.string}` is Python, not IR")
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = tok
    return problems
