"""Size templates (frontend/size_template.py): a lowered text's numbers as formulas over a
definition's var axes, fitted from two captures. The texts here are shaped like lowered
programs (a DIMS line, reshapes, dims named after their size, a float 1/S, a comment naming
the problem file); the module reads only their tokens."""

from __future__ import annotations

import re

from solar.frontend.size_template import SizeTemplate, seeds

H = 64  # a const axis


def lowered(b: int, s: int, branch: bool = False) -> str:
    """The text a capture at batch b, sequence s would give: T = b s tokens, a mean over the
    sequence (1/s), a dim named after T; `branch` adds the line a reference's `if` adds."""
    t = b * s
    text = (
        f'DIMS = {{"batch": {b}, "seq": {s}, "hidden": {H}, "d{t}": {t}}}\n'
        f'def model(x: Tensor("d{t},hidden", role="input", dtype="bf16")):\n'
        f'    t1 = reshape(x, "a0,a1,a2", a0={b}, a1={s}, a2={H})  # problem-{b}x{s}.py:3\n'
        f"    t2 = mul_bf16(t1, {1 / s!r})  # problem-{b}x{s}.py:4\n"
    )
    if branch:
        text += "    t2 = mul_bf16(t2, 2.0)\n"
    return text + "    return t2\n"


def strip_comments(text: str) -> str:
    return re.sub(r"  # .*", "", text)


def fitted(p1=(4, 6), p2=(5, 9)) -> SizeTemplate:
    t = SizeTemplate.fit(
        lowered(*p1),
        {"batch": p1[0], "seq": p1[1]},
        lowered(*p2),
        {"batch": p2[0], "seq": p2[1]},
        ["batch", "seq"],
    )
    assert isinstance(t, SizeTemplate), t
    return t


def test_the_template_gives_the_text_of_other_sizes():
    # From (4, 6) and (5, 9): T = batch·seq (24, 45), d24 → d45, 1/6 → 1/9. At (3, 13): T = 39,
    # the float 1/13 as repr prints it, and the first capture's comments.
    t = fitted()
    text, why = t.text_at({"batch": 3, "seq": 13})
    assert why == ""
    assert strip_comments(text) == strip_comments(lowered(3, 13))
    assert '"d39": 39' in text and repr(1 / 13) in text
    assert "problem-4x6.py" in text  # comments are the first capture's
    assert t.agrees({"batch": 3, "seq": 13}, lowered(3, 13))


def test_a_capture_of_another_structure_disagrees():
    # The reference branches at these sizes: one line more than the template's text.
    assert not fitted().agrees({"batch": 3, "seq": 13}, lowered(3, 13, branch=True))
    why = SizeTemplate.fit(
        lowered(4, 6),
        {"batch": 4, "seq": 6},
        lowered(5, 9, True),
        {"batch": 5, "seq": 9},
        ["batch", "seq"],
    )
    assert why == "the two captures differ in structure, not only in sizes"


def test_sizes_the_template_cannot_speak_for():
    t = fitted()
    # batch 1: where captures specialise.
    assert t.text_at({"batch": 1, "seq": 11}) == (None, "batch = 1: sizes below 2 are captured")
    # (8, 8): T = 64 equals hidden, which no capture's sizes did (24, 45 against 64).
    assert t.text_at({"batch": 8, "seq": 8})[1] == "its sizes repeat where the captures' did not"
    # (10, 7): T = 70 passes hidden; the order of sizes is no condition (DIMS lists dims in
    # the order the program names them, not by size).
    assert t.text_at({"batch": 10, "seq": 7})[1] == ""


def test_a_number_no_formula_fits_refuses_the_template():
    # A number 2 → 7 between (4, 6) and (5, 9): 7/2 is no product of (5/4)^i (9/6)^j with i, j
    # in -1..2 (the nearest, (9/6)^2 (5/4)^2, is 3.52).
    a = lowered(4, 6).replace("a2=64", "a2=64, n=2")
    b = lowered(5, 9).replace("a2=64", "a2=64, n=7")
    why = SizeTemplate.fit(a, {"batch": 4, "seq": 6}, b, {"batch": 5, "seq": 9}, ["batch", "seq"])
    assert why == "no formula over batch, seq gives 2 and 7"


def test_ambiguous_pairs_are_not_chosen_and_ambiguous_numbers_refuse():
    # (16, 512) and (4, 2048) have the same batch·seq: a constant and batch·seq fit alike.
    workloads = [{"b": 16, "s": 512}, {"b": 4, "s": 2048}, {"b": 8, "s": 100}, {"b": 1, "s": 9}]
    assert seeds(workloads, ["b", "s"]) == [0, 2, 1]
    t = SizeTemplate.fit(
        lowered(16, 512),
        {"batch": 16, "seq": 512},
        lowered(4, 2048),
        {"batch": 4, "seq": 2048},
        ["batch", "seq"],
    )
    # batch: 16 → 4 is b, and also (1/8192)·b²·s: 8 or 0.78 at (8, 100).
    assert (
        t.text_at({"batch": 8, "seq": 100})[1] == "the number 16 has no single integer value here"
    )
