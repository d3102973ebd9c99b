"""One capture, many sizes: a lowered program as a template over a definition's var axes
(docs/definitions.md, "Workloads from one template").

The text a lowering emits for one workload differs from another workload's only in numbers
where its structure is the same: sizes in reshapes and `DIMS`, dims named after their size
(`d7680`), and floats derived from sizes (a mean's 1/n). Two captures whose var axes all
differ give each number a formula c·Π aᵢ^eᵢ over those axes (c rational; eᵢ in -1, 0, 1, 2
for integers, -1, -½, 0, ½, 1 for floats), every formula that fits both being kept; a third
capture checks the template's text for its sizes. A workload then takes the template's text
at its sizes when:

- the var axes the two captures share keep their values (the template knows nothing of how
  the text depends on them);
- every var axis is at least 2 (a size of 0 or 1 is where captures specialise: squeezed dims,
  broadcasts);
- every number has one value: all its fitted formulas agree, and an integer's is an integer;
- its integer literals repeat exactly where the captures' did (a lowering may decide on equal
  sizes: a reshape that keeps a shape, two dims named alike).

Anything else is captured. The template does not see control flow in the reference that
depends on a size between the captured values; the third capture is the check that a
definition's sizes do not change the program's structure.
"""

from __future__ import annotations

import io
import math
import re
import tokenize
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

_INT_EXPONENTS = (-1, 0, 1, 2)
_FLOAT_EXPONENTS = (-1.0, -0.5, 0.0, 0.5, 1.0)
_FLOAT_RTOL = 1e-12  # floats a lowering derives from sizes, printed with repr
# Digits after a letter in a name or a string: a dim named after its size (d7680, in
# Tensor("d8192,d7680") and DIMS), and names that are no size (bf16, t12, a0).
_NAME_DIGITS = re.compile(r"(?<=[A-Za-z_])\d+")
_FLOAT = re.compile(r"\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")  # others stay tokens


@dataclass(frozen=True)
class _Number:
    start: int  # offsets into the text
    end: int
    value: int | float
    literal: bool = True  # False: digits after a letter in a name or a string


def _parse(text: str) -> tuple[tuple, list]:
    """(skeleton, numbers) of a lowered program's text: the skeleton is every token but
    comments (which name the problem file) with each number replaced by its kind; numbers
    are the literals and the digits after a letter in names and strings, in order."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    skeleton, numbers = [], []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            continue
        start = starts[tok.start[0] - 1] + tok.start[1]
        s = tok.string
        if tok.type == tokenize.NUMBER and (s.isdigit() or _FLOAT.fullmatch(s)):
            is_int = s.isdigit()
            numbers.append(_Number(start, start + len(s), int(s) if is_int else float(s)))
            skeleton.append("<int>" if is_int else "<float>")
        elif tok.type in (tokenize.NAME, tokenize.STRING) and _NAME_DIGITS.search(tok.string):
            for m in _NAME_DIGITS.finditer(tok.string):
                at = start + m.start()
                numbers.append(_Number(at, at + len(m.group()), int(m.group()), literal=False))
            skeleton.append(_NAME_DIGITS.sub("<int>", tok.string))
        else:
            skeleton.append(tok.string)
    return tuple(skeleton), numbers


def _repeats(numbers: list, values: list) -> tuple:
    """Where the integer literals among `values` (of `numbers`) repeat: for each, the index of
    its first equal. Names are left out: `bf16` and `t12` name no size."""
    first: dict = {}
    return tuple(
        first.setdefault(v, i)
        for i, (n, v) in enumerate(zip(numbers, values, strict=True))
        if n.literal and isinstance(v, int)
    )


def _product(axes: list, exps: tuple, exact: bool):
    p = Fraction(1) if exact else 1.0
    for a, e in zip(axes, exps, strict=True):
        p *= Fraction(a) ** e if exact else float(a) ** e
    return p


def _fits(v1, v2, a1: list, a2: list) -> list:
    """Every (c, exponents) with c·Π a1^e = v1 and c·Π a2^e = v2."""
    exact = isinstance(v1, int)
    found = []
    for exps in product(_INT_EXPONENTS if exact else _FLOAT_EXPONENTS, repeat=len(a1)):
        p1, p2 = _product(a1, exps, exact), _product(a2, exps, exact)
        if p1 == 0 or p2 == 0:
            continue
        c = (Fraction(v1) if exact else v1) / p1
        got = c * p2
        if (got == v2) if exact else math.isclose(got, v2, rel_tol=_FLOAT_RTOL, abs_tol=0.0):
            found.append((c, exps))
    return found


@dataclass
class SizeTemplate:
    """A lowered text whose numbers are formulas over the var axes that differ between the
    two captures it was fitted from (`varying`); `fixed` holds the others' values."""

    text: str  # the first capture's text: its comments name that capture's problem file
    numbers: list  # _Number of the text
    formulas: list  # per number: [(c, exponents over `varying`)]
    varying: list
    fixed: dict
    repeats: tuple

    @classmethod
    def fit(cls, text1: str, axes1: dict, text2: str, axes2: dict, var_axes: list):
        """The template of two captures, or a str saying why there is none."""
        skeleton1, numbers1 = _parse(text1)
        skeleton2, numbers2 = _parse(text2)
        if skeleton1 != skeleton2:
            return "the two captures differ in structure, not only in sizes"
        values1 = [n.value for n in numbers1]
        values2 = [n.value for n in numbers2]
        if _repeats(numbers1, values1) != _repeats(numbers2, values2):
            return "the two captures repeat sizes in different places"
        varying = [a for a in var_axes if axes1[a] != axes2[a]]
        fixed = {a: axes1[a] for a in var_axes if axes1[a] == axes2[a]}
        a1 = [axes1[a] for a in varying]
        a2 = [axes2[a] for a in varying]
        memo: dict = {}
        formulas = []
        for v1, v2 in zip(values1, values2, strict=True):
            if isinstance(v1, int) != isinstance(v2, int):
                return "a number is an integer in one capture and a float in the other"
            key = (type(v1), v1, v2)
            if key not in memo:
                memo[key] = _fits(v1, v2, a1, a2)
            if not memo[key]:
                return f"no formula over {', '.join(varying) or 'no axis'} gives {v1} and {v2}"
            formulas.append(memo[key])
        return cls(text1, numbers1, formulas, varying, fixed, _repeats(numbers1, values1))

    def values_at(self, axes: dict) -> tuple[list | None, str]:
        """(the numbers at `axes`, "") or (None, why the template cannot give them)."""
        changed = [a for a, v in self.fixed.items() if axes[a] != v]
        if changed:
            return None, f"{changed[0]} differs from the captures' {self.fixed[changed[0]]}"
        small = [a for a in self.varying if axes[a] < 2]
        if small:
            return None, f"{small[0]} = {axes[small[0]]}: sizes below 2 are captured"
        at = [axes[a] for a in self.varying]
        memo: dict = {}
        values = []
        for number, formulas in zip(self.numbers, self.formulas, strict=True):
            exact = isinstance(number.value, int)
            key = id(formulas)
            if key not in memo:
                got = {c * _product(at, exps, exact) for c, exps in formulas}
                memo[key] = got
            got = memo[key]
            if exact:
                if len(got) != 1 or next(iter(got)).denominator != 1:
                    return None, f"the number {number.value} has no single integer value here"
                values.append(int(next(iter(got))))
            else:
                ref = next(iter(got))
                if any(not math.isclose(g, ref, rel_tol=_FLOAT_RTOL) for g in got):
                    return None, f"the number {number.value} has no single value here"
                values.append(float(ref))
        if _repeats(self.numbers, values) != self.repeats:
            return None, "its sizes repeat where the captures' did not"
        return values, ""

    def text_at(self, axes: dict) -> tuple[str | None, str]:
        """(the template's text at `axes`, "") or (None, why there is none)."""
        values, why = self.values_at(axes)
        if values is None:
            return None, why
        out, last = [], 0
        for number, v in zip(self.numbers, values, strict=True):
            out += [self.text[last : number.start], str(v) if isinstance(v, int) else repr(v)]
            last = number.end
        out.append(self.text[last:])
        return "".join(out), ""

    def agrees(self, axes: dict, captured: str) -> bool:
        """Whether a capture's text at `axes` is the template's there: the same structure,
        the same integers, floats within a relative 1e-12."""
        values, _ = self.values_at(axes)
        skeleton, numbers = _parse(captured)
        if values is None or skeleton != _parse(self.text)[0]:
            return False
        if len(numbers) != len(values):
            return False
        for n, v in zip(numbers, values, strict=True):
            if isinstance(v, int):
                if n.value != v:
                    return False
            elif not math.isclose(n.value, v, rel_tol=_FLOAT_RTOL):
                return False
        return True


def seeds(workload_axes: list, var_axes: list) -> list:
    """Indices of the workloads to capture first: a pair whose var axes all differ (at least
    2 each), with no product of their ratios equal to 1 (which would leave a constant and a
    size product alike to the fit: batch 16 → 4 with sequence 512 → 2048), the pair with the
    most distinct values first; then the first workload the pair's template would give, the
    check. Fewer than three where the workloads allow no such choice."""
    n = len(workload_axes)
    big = [i for i in range(n) if all(workload_axes[i][a] >= 2 for a in var_axes)]
    for i in big:
        for j in big:
            if j <= i:
                continue
            a1 = [workload_axes[i][a] for a in var_axes]
            a2 = [workload_axes[j][a] for a in var_axes]
            if any(x == y for x, y in zip(a1, a2, strict=True)):
                continue
            ratios = [Fraction(x, y) for x, y in zip(a1, a2, strict=True)]
            if any(
                _product_of(ratios, e) == 1
                for e in product(_INT_EXPONENTS, repeat=len(ratios))
                if any(e)
            ):
                continue
            third = next((k for k in big if k not in (i, j)), None)
            return [i, j] + ([third] if third is not None else [])
    return []


def _product_of(ratios: list, exps: tuple) -> Fraction:
    p = Fraction(1)
    for r, e in zip(ratios, exps, strict=True):
        p *= r**e
    return p
