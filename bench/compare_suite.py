"""Every number of the own suite, before and after a change (issue 15: a refactor changes no
number Solar prints).

    .venv/bin/python bench/compare_suite.py run OUT.jsonl [--jobs 2] [--no-validate]
    .venv/bin/python bench/compare_suite.py compare BEFORE.jsonl AFTER.jsonl

`run` writes the `solar batch` results of the whole own suite (workloads/level1-3, the JAX
problems in workloads/jax, the SOL-ExecBench definitions in workloads/definitions and the
IR examples in examples/ir) on H100_PCIe, validated unless --no-validate. `compare` matches
the two files' rows by source and compares every field of each row except those that time
the run itself (names ending in `seconds_wall`, `seconds`, `elapsed`, and the path of the
temporary JSON): it prints the number of workloads compared and each difference, and exits
1 when there is one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ["workloads/level1", "workloads/level2", "workloads/level3", "workloads/jax"]
SUITE += ["workloads/definitions", "examples/ir"]
# Fields that time the run, not the program: they differ between any two runs.
TIMING = ("seconds_wall", "seconds", "elapsed", "wall", "cpu_seconds")


def run(out: str, jobs: int, validate: bool) -> int:
    cmd = [sys.executable, "-m", "solar.cli", "batch", *(str(ROOT / s) for s in SUITE)]
    cmd += ["--out", out, "--jobs", str(jobs), "--arch", "H100_PCIe"]
    Path(out).unlink(missing_ok=True)  # a batch resumes from its results file: start afresh
    cmd += [] if validate else ["--no-validate"]
    return subprocess.run(cmd).returncode


def _strip(value):
    """`value` without the fields that time the run (recursively)."""
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if not any(k == t or k.endswith("_" + t) for t in TIMING)
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _diff(a, b, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'after' if k in b else 'before'}")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")


def _rows(path: str) -> dict[str, dict]:
    rows = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            rows[r["source"]] = _strip(r)
    return rows


def compare(before: str, after: str) -> int:
    a, b = _rows(before), _rows(after)
    diffs: list[str] = []
    for source in sorted(set(a) | set(b)):
        if source not in a or source not in b:
            diffs.append(f"{source}: only in {'after' if source in b else 'before'}")
        else:
            _diff(a[source], b[source], source, diffs)
    both = len(set(a) & set(b))
    errors = sum(1 for s in set(a) & set(b) if a[s].get("status") == "error")
    for d in diffs:
        print(d)
    print(f"{both} workloads compared ({errors} of them errors in both), {len(diffs)} differences")
    return 1 if diffs else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--no-validate", dest="validate", action="store_false")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.cmd == "run":
        return run(args.out, args.jobs, args.validate)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
