"""JSON read from users' files (definitions, workloads, timings) without a traceback.

Python's `json` recurses once per nesting level and raises RecursionError on deep input
(100,000 nested brackets), and keeps the last of two equal keys without a word. `loads`
measures the nesting first, in one linear pass over the text, and refuses more than
MAX_DEPTH levels with a user error; `unique_keys` refuses an object that names a key twice.
Malformed JSON still raises `json.JSONDecodeError` (a ValueError), for the caller to word.
"""

from __future__ import annotations

import json
import re

from .errors import argument_error

# No file Solar reads nests deeper than a handful of levels (docs/definitions.md).
MAX_DEPTH = 200

# A string (to its closing quote, or to the end of an unterminated one) or one bracket: the
# string alternative is the unrolled loop "[^"\\]*(\\.[^"\\]*)*", whose parts cannot
# overlap, so a scan never backtracks and stays linear in the text's length.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|[\[\]{}]', re.DOTALL)


def depth(text: str) -> int:
    """The deepest nesting of brackets outside strings."""
    level = deepest = 0
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token in ("[", "{"):
            level += 1
            deepest = max(deepest, level)
        elif token in ("]", "}"):
            level -= 1
    return deepest


def loads(text: str, where: str, unique_keys: bool = False):
    """The JSON document `text` of `where` (a file, or file:line for one JSON line)."""
    if depth(text) > MAX_DEPTH:
        raise _too_deep(where)

    def unique(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise argument_error(
                    f"{where}: key {key!r} appears twice in one object",
                    "give each key once: JSON keeps only the last, silently",
                )
            seen.add(key)
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique if unique_keys else None)
    except RecursionError:  # a deep value within MAX_DEPTH on an already deep stack
        raise _too_deep(where) from None


def _too_deep(where: str):
    return argument_error(
        f"{where}: the JSON is nested deeper than {MAX_DEPTH} levels",
        "Solar's JSON inputs nest a few levels (docs/definitions.md)",
    )
