"""Every reply ends in a verdict, never a crash: mutations of a right program and arbitrary
text through the loop's evaluation of one reply (solar.agent.translate._evaluate), with no
server in between. A verdict is either acceptance or a list of problems with a category."""

from __future__ import annotations

import random
from pathlib import Path

from solar.agent.languages import language
from solar.agent.translate import SourceFile, _evaluate, _Goldens

DATA = Path(__file__).parent / "agent_data"
RIGHT = (DATA / "softmax_ir.py").read_text()
CATEGORIES = {"", "no-program", "unsafe", "check", "contract", "execution", "numeric"}
TOKENS = [
    "(",
    ")",
    "[",
    "]",
    ":",
    "=",
    "+=",
    "*",
    "i",
    "j",
    "X",
    "for",
    "in",
    'Dim("R")',
    "\n",
    "    ",
    "0",
    "-1",
    "exp(",
    "import os",
    "__class__",
    ".T",
    "'",
    '"',
    "#",
    "@",
]


def _goldens():
    path = str(DATA / "softmax_np.py")
    src = SourceFile(path, "softmax_np.py", Path(path).read_text(), language("numpy"))
    goldens = _Goldens(src, None, "", 0)
    return goldens, goldens.signature()


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text))
        kind = rng.randrange(3)
        if kind == 0:  # delete a span
            text = text[:at] + text[at + rng.randint(1, 12) :]
        elif kind == 1:  # insert a token
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        else:  # duplicate a line
            lines = text.splitlines(keepends=True)
            k = rng.randrange(len(lines))
            lines.insert(k, lines[k])
            text = "".join(lines)
    return text


def test_mutated_programs_always_get_a_verdict():
    """300 seeded mutations (deleted spans, inserted tokens, duplicated lines) of the right
    program, each fenced as a reply: every one is accepted or rejected with problems in a
    known category; the unmutated program is accepted."""
    goldens, signature = _goldens()
    problems, category, program, status, _ = _evaluate(
        f"```python\n{RIGHT}```", 1, goldens, signature, "interpreter"
    )
    assert (problems, category, status) == ([], "", "full") and "def model(" in program
    rng = random.Random(13)
    seen = set()
    for _ in range(300):
        text = f"```python\n{_mutate(rng, RIGHT)}```"
        problems, category, program, status, _ = _evaluate(
            text, 1, goldens, signature, "interpreter"
        )
        assert category in CATEGORIES
        assert bool(problems) == bool(category) and (program == "") == bool(problems)
        seen.add(category)
    # The mutations reach the checker, the contract and the numeric comparison.
    assert {"check", "numeric"} <= seen


def test_arbitrary_text_always_gets_a_verdict():
    """Random printable and binary-looking text, with and without fences: never accepted,
    never a crash."""
    goldens, signature = _goldens()
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(32, 127)] + ["\n", "\t", "\x00", "\u00e9", "```"]
    for n in range(100):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        text = body if n % 2 else f"```python\ndef model(\n{body}\n```"
        problems, category, program, _, _ = _evaluate(text, 1, goldens, signature, "interpreter")
        assert problems and category in CATEGORIES - {""} and program == ""
