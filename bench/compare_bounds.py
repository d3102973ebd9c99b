r"""Every change in a bound between two `solar batch` results files, with its cause.

    .venv/bin/python bench/compare_bounds.py before.jsonl after.jsonl [--tolerance 1e-9]

Both files come from `solar batch` over the same workloads (for example `workloads/level1`
`workloads/level2` `workloads/level3` and `workloads/jax`) at two revisions of Solar; the
before-revision is run from a worktree:

    git worktree add /tmp/solar-base REV
    cmake -S /tmp/solar-base -B /tmp/solar-base-build -G Ninja -DCMAKE_BUILD_TYPE=Release
    ninja -C /tmp/solar-base-build
    cp /tmp/solar-base-build/_core*.so /tmp/solar-base/python/solar/
    PYTHONPATH=/tmp/solar-base/python python -m solar.cli batch workloads/level1 ... \
        --out before.jsonl

A workload's bound (unfused, fused, cache-aware seconds) counts as changed when it moves by
more than `--tolerance` relative. Each change names its causes, read from the two results:
the math modes priced (format and reason), the matrix and vector FLOPs, the bytes of each
mode, the platform's peaks, or the status (a workload that analyses now, or no longer).
Prints one line per changed workload and the count per cause; exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

FIDELITIES = ("unfused", "fused", "cache_aware")


def read(path: str) -> dict[str, dict]:
    """source -> result (the last one of each source)."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            if isinstance(r, dict) and "source" in r:
                out[r["source"]] = r
    return out


def _get(r: dict, *keys):
    for k in keys:
        r = r.get(k) if isinstance(r, dict) else None
    return r


def _seconds(r: dict, mode: str) -> str:
    """A bound as printed: seconds, or "none" where the result has none (a revision that did
    not compute the cache-aware bound writes null)."""
    s = _get(r, "totals", "seconds", mode)
    return "none" if s is None else f"{s:.4g} s"


def _modes(r: dict) -> str:
    groups = r.get("math_modes") or []
    return "; ".join(f"{g.get('mode')} ({g.get('reason') or 'data format'})" for g in groups)


def _changed(x, y, tol: float) -> bool:
    if x is None or y is None:
        return x != y
    x, y = float(x), float(y)
    return abs(x - y) > tol * max(abs(x), abs(y), 1e-300)


def causes(before: dict, after: dict, tol: float) -> list[tuple[str, str]]:
    """(kind, detail) of why the bounds of one workload differ between two results."""
    sb, sa = before.get("status"), after.get("status")
    if sb != "ok" or sa != "ok":
        if sb == sa:
            return []
        if sa == "ok":
            return [("analyses now", f"was: {str(before.get('error', sb))[:80]}")]
        return [("no longer analyses", str(after.get("error", sa))[:80])]
    out = []
    if _modes(before) != _modes(after):
        out.append(("math modes", f"{_modes(before) or 'none'} -> {_modes(after) or 'none'}"))
    for key in ("matrix_flops", "vector_flops"):
        b, a = _get(before, "totals", key), _get(after, "totals", key)
        if _changed(b, a, tol):
            out.append((key.replace("_", " "), f"{b:.4g} -> {a:.4g}"))
    for mode in FIDELITIES:
        b, a = _get(before, "totals", "bytes", mode), _get(after, "totals", "bytes", mode)
        if b is None and a is not None:
            # The before-revision wrote no such bound (null): the cache-aware bound on a spec
            # that listed no on-chip level then.
            out.append((f"{mode} bound now computed", ""))
        elif _changed(b, a, tol):
            out.append((f"{mode} bytes", f"{b} -> {a}"))
    # The peaks a result prints include the matrix rate of the format priced: a change of
    # math modes changes them too, and is the cause named.
    if before.get("peaks") != after.get("peaks") and _modes(before) == _modes(after):
        out.append(("platform peaks", ""))
    return out or [("other", "no counted quantity changed (a schedule or a rate)")]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--tolerance", type=float, default=1e-9)
    args = p.parse_args()
    before, after = read(args.before), read(args.after)
    counts: Counter = Counter()
    changed = 0
    for source in sorted(set(before) | set(after)):
        if source not in before or source not in after:
            print(f"{source}: only in {'after' if source in after else 'before'}")
            counts["only in one file"] += 1
            continue
        b, a = before[source], after[source]
        moved = [
            f"{m} {_seconds(b, m)} -> {_seconds(a, m)}"
            for m in FIDELITIES
            if b.get("status") == a.get("status") == "ok"
            and _changed(
                _get(b, "totals", "seconds", m), _get(a, "totals", "seconds", m), args.tolerance
            )
        ]
        why = causes(b, a, args.tolerance)
        if not moved and not (why and b.get("status") != a.get("status")):
            continue
        changed += 1
        print(f"{source}: {', '.join(moved) or 'status'}")
        for kind, detail in why:
            print(f"    {kind}: {detail}" if detail else f"    {kind}")
            counts[kind] += 1
    print(f"\n{changed} of {len(set(before) | set(after))} workload(s) changed")
    for cause, n in counts.most_common():
        print(f"  {n:5d}  {cause}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
