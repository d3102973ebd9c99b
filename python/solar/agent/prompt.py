"""The prompt, in the paper's two parts: a fixed **target-IR part** generated from the
language reference (docs/ir.md, §1-5 and §8) and example programs of examples/ir/, so it
never drifts from the language the checker accepts, and one **adapter** per source language
(adapters/<lang>.md). Then the task: the source, the reference where there is one, and the
contract model() must meet (its parameters and outputs, from the golden run).

IR_SPEC_VERSION hashes the target-IR part: cached translations are keyed by it, so a change
of the language reference retires them."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from ..errors import InternalError

# The sections of docs/ir.md the model needs to write programs (not the counting rules).
_SECTIONS = ("1.", "2.", "3.", "4.", "5.", "8.")
# Example programs shown whole, chosen to cover reductions, contractions with a bias,
# normalisation, builtins in model() and pooling windows.
EXAMPLES = ("softmax.py", "linear_bias_matmul.py", "layer_norm.py", "reductions.py", "pooling.py")


def _spec_dir() -> Path:
    """Where docs/ir.md and examples/ir/ are: the installed copy (solar/spec, CMake
    installs it) or the source tree."""
    here = Path(__file__).resolve().parent.parent
    for root in (here / "spec", here.parents[1]):
        if (root / "docs" / "ir.md").is_file():
            return root
    raise InternalError(
        f"the IR reference docs/ir.md is missing (looked in {here / 'spec'} and {here.parents[1]})"
    )


def _sections(text: str) -> str:
    """The level-2 sections of docs/ir.md whose numbers are in _SECTIONS, in order."""
    parts = re.split(r"(?m)^(?=## )", text)
    keep = [p for p in parts if p.startswith("## ") and p[3:].lstrip().startswith(_SECTIONS)]
    if len(keep) != len(_SECTIONS):
        raise InternalError(
            f"docs/ir.md has {len(keep)} of the sections {', '.join(_SECTIONS)} the prompt uses"
        )
    return "".join(keep).strip()


@functools.lru_cache(maxsize=1)
def ir_spec() -> str:
    """The target-IR part of the system prompt."""
    root = _spec_dir()
    reference = _sections((root / "docs" / "ir.md").read_text())
    examples = []
    for name in EXAMPLES:
        text = (root / "examples" / "ir" / name).read_text().strip()
        examples.append(f"### examples/ir/{name}\n```python\n{text}\n```")
    return (
        "You translate programs into the Affine Loop IR, a small language of Python syntax that "
        "Solar's C++ checker parses and its own executor runs. It is never run by Python: "
        "only the constructs below exist. Your program is checked, executed on seeded inputs "
        "and compared with the source program's outputs; you will be told what failed.\n\n"
        "# The Affine Loop IR (from docs/ir.md)\n\n"
        + reference
        + "\n\n# Example programs\n\n"
        + "\n\n".join(examples)
        + "\n\n# How to answer\n\n"
        "Reply with exactly one complete IR program in a single ```python fenced block: the "
        "import line `from solar.ir import kernel, Tensor, Dim`, kernels, DIMS and model(). "
        "Import nothing else, and write nothing but IR: no Python outside the language above, "
        "no placeholders, no ellipses."
    )


@functools.lru_cache(maxsize=1)
def ir_spec_version() -> str:
    return hashlib.sha256(ir_spec().encode()).hexdigest()[:12]


def _shape(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def contract(signature, sizes: dict, where: str) -> str:
    """The lines stating what model() takes and returns (from a golden run's Signature)."""
    lines = [f"model() must take these tensor parameters, in this order ({where}):"]
    for name, shape, dtype in signature.params:
        lines.append(f"  - {name}: shape {_shape(shape)}, dtype {dtype}")
    lines.append("and return, in this order:")
    for i, (shape, dtype) in enumerate(signature.outputs):
        lines.append(f"  - output {i}: shape {_shape(shape)}, dtype {dtype}")
    if sizes:
        lines.append(
            "The source's size constants are "
            + ", ".join(f"{k} = {v}" for k, v in sizes.items())
            + "; DIMS must give every model() dim its size at these values."
        )
    return "\n".join(lines)


def task(source, reference, signature, sizes: dict, where: str) -> str:
    """The first user message: the source, its reference and the contract."""
    parts = [
        f"Translate this {source.language.title} program ({source.name}) into one Affine Loop "
        f"IR program that computes the same outputs.\n\n```{source.language.fence}\n"
        f"{source.text.rstrip()}\n```"
    ]
    if reference is not None:
        parts.append(
            f"Its reference ({reference.name}) computes the same thing in a language Solar "
            f"runs; the golden outputs come from it, and model()'s parameters are its inputs:"
            f"\n\n```python\n{reference.text.rstrip()}\n```"
        )
    if signature is not None:
        parts.append(contract(signature, sizes, where))
    parts.append("Reply with the whole IR program in one ```python block.")
    return "\n\n".join(parts)


def system(language) -> str:
    return ir_spec() + f"\n\n# Source language: {language.title}\n\n" + language.adapter().strip()


def feedback(iteration: int, problems: list[str]) -> str:
    """The user message after a failed attempt: every problem found, then the request."""
    body = "\n".join(f"- {p}" for p in problems)
    return (
        f"Attempt {iteration} was not accepted:\n{body}\n\n"
        "Fix these and reply with the whole corrected IR program in one ```python block."
    )
