"""Reading the timing files users bring (`solar score`, `solar headroom`): CSV, a JSON
document or JSON lines, and one time given in seconds, milliseconds, microseconds or
nanoseconds (docs/measure.md, docs/reports.md); which result a timing names (match_source)
and which runs the timings must come from (timings_line)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from .errors import argument_error
from .json_input import loads

# Key suffix -> seconds per unit ("" with a prefix: the bare prefix, in seconds).
UNITS = (("seconds", 1.0), ("s", 1.0), ("time", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def _shown(raw) -> str:
    """A value as the user wrote it, cut to 40 characters (a time of 400 digits)."""
    text = repr(raw)
    return text if len(text) <= 40 else text[:40] + "..."


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
    except (TypeError, ValueError, OverflowError):
        raise argument_error(f"{where}: {key} = {_shown(raw)} is not a number") from None
    if not value > 0 or math.isinf(value):
        raise argument_error(f"{where}: {key} = {_shown(raw)}: the time must be positive")
    return value


class Rows(list):
    """A timings file's entries, with the line each starts on (0: not known, one JSON
    document) in `lines`."""

    def __init__(self, rows=(), lines=()):
        super().__init__(rows)
        self.lines = list(lines) or [0] * len(self)


def read(path: str):
    """A timings file's content: a list of dicts for CSV, else the JSON document, else a
    list of the JSON-lines objects (Rows, with their lines, for CSV and JSON lines)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise argument_error(f"cannot read the timings {path}: {e}") from None
    if path.endswith(".csv"):
        return _csv_rows(path, text)
    try:
        return loads(text, path, unique_keys=True)
    except ValueError:
        rows, lines = [], []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(loads(line, f"{path}:{n}", unique_keys=True))
                    lines.append(n)
                except ValueError:
                    raise argument_error(f"{path}:{n}: not a JSON object") from None
        return Rows(rows, lines)


def _csv_rows(path: str, text: str) -> Rows:
    """The rows of a CSV file. A field longer than the csv module's limit (128 KiB) is a user
    error with its line; the limit, process-wide state, is left as it is."""
    reader = csv.DictReader(text.splitlines())
    rows, lines = [], []
    try:
        for row in reader:
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as e:
        raise argument_error(
            f"{path}:{reader.line_num + 1}: {e}", "a timings CSV holds a name and times per row"
        ) from None
    return Rows(rows, lines)


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
    lines = getattr(data, "lines", [0] * len(data))
    first = {}
    for n, row in enumerate(data, 1):
        if not isinstance(row, dict) or not row.get("name"):
            raise argument_error(
                f"{path}: entry {n}: no name", "each entry names its workload: name=..."
            )
        name = str(row["name"])
        if name in first:
            m = first[name]
            raise argument_error(
                f"{path}: {_entry(n, lines)} names {name[:80]!r} again "
                f"(first at {_entry(m, lines)})",
                "give each workload one timing",
            )
        first[name] = n
    return data


def _entry(n: int, lines: list) -> str:
    return f"entry {n}, line {lines[n - 1]}" if lines[n - 1] else f"entry {n}"


def match_source(source: str, runtimes: dict):
    """The key of `runtimes` naming a result's source: its path, file name or stem, or a
    definition's workload uuid (`def.json#uuid`); None if none does."""
    p = Path(source.partition("#")[0])
    workload = source.partition("#")[2]
    for key in (source, p.name, p.stem, workload, f"{p.stem}#{workload}" if workload else ""):
        if key and key in runtimes:
            return key
    return None


def timings_line(warm: bool) -> str:
    """Which runs the imported timings must come from, given the bounds' starting state."""
    if warm:
        return (
            "timings: the bounds are --warm (inputs, weights and outputs in the last-level "
            "cache up to its capacity): they hold for a kernel repeated without flushing"
        )
    return (
        "timings: the bounds assume inputs and weights start in DRAM: time with caches flushed "
        "between runs (SOL-ExecBench's protocol); for runs without flushing, batch with --warm"
    )
