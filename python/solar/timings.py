"""Reading the timing files users bring (`solar score`, `solar headroom`): CSV, a JSON
document or JSON lines, and one time given in seconds, milliseconds, microseconds or
nanoseconds (docs/measure.md, docs/reports.md)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from .errors import argument_error

# Key suffix -> seconds per unit ("" with a prefix: the bare prefix, in seconds).
UNITS = (("seconds", 1.0), ("s", 1.0), ("time", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def time_of(entry, where: str, prefix: str = "") -> float:
    """The positive time in `entry`: with `prefix` ("kernel"), the key `kernel_ms` (any unit
    of UNITS) or `kernel` in seconds; without, `ms` (any unit) or a bare number of seconds."""
    if not prefix and isinstance(entry, (int, float)) and not isinstance(entry, bool):
        key, raw, scale = "time", entry, 1.0
    elif isinstance(entry, dict):
        keys = [(f"{prefix}_{u}" if prefix else u, s) for u, s in UNITS]
        keys += [(prefix, 1.0)] if prefix else []
        found = [(k, entry[k], s) for k, s in keys if entry.get(k) not in (None, "")]
        if not found:
            what = f"{prefix} time" if prefix else "time"
            stem = f"{prefix}_" if prefix else ""
            raise argument_error(f"{where}: no {what}", f"give {stem}seconds, {stem}ms or {stem}us")
        key, raw, scale = found[0]
    else:
        raise argument_error(f"{where}: {entry!r} is not a time")
    try:
        value = float(raw) * scale
    except (TypeError, ValueError):
        raise argument_error(f"{where}: {key} = {raw!r} is not a number") from None
    if not value > 0 or math.isinf(value):
        raise argument_error(f"{where}: {key} = {raw!r}: the time must be positive")
    return value


def read(path: str):
    """A timings file's content: a list of dicts for CSV, else the JSON document, else a
    list of the JSON-lines objects."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise argument_error(f"cannot read the timings {path}: {e}") from None
    if path.endswith(".csv"):
        return list(csv.DictReader(text.splitlines()))
    try:
        return json.loads(text)
    except ValueError:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise argument_error(f"{path}:{n}: not a JSON object") from None
        return rows


def named(data, path: str) -> list[dict]:
    """Entries with a `name` from a list, a single entry, or an object name -> entry (a
    bare number: seconds)."""
    if isinstance(data, dict) and "name" in data:
        data = [data]  # JSON lines of one entry
    elif isinstance(data, dict):
        data = [
            {"name": k, **v} if isinstance(v, dict) else {"name": k, "seconds": v}
            for k, v in data.items()
        ]
    if not isinstance(data, list):
        raise argument_error(f"{path}: not a timings file (docs/reports.md, Suite report)")
    for n, row in enumerate(data, 1):
        if not isinstance(row, dict) or not row.get("name"):
            raise argument_error(
                f"{path}: entry {n}: no name", "each entry names its workload: name=..."
            )
    return data
