"""Size templates against a capture per workload, on SOL-ExecBench (issue 44, item 1).

    .venv/bin/python bench/template_reuse.py ../shared/benchmarks/sol-execbench/problems \
        [--every N] [--only 30,37] [--jobs 2] [--arch B200] [--out rows.jsonl]

For each definition (every N-th by folder name, or --only), in one run and side by side:
`solar analyze definition.json --no-validate --json` once as it runs by default (workloads
from a size template where it can, docs/definitions.md) and once with `--capture-each`. Prints
per mode the workloads analysed, the captures performed (each run's "captures: N of M" line)
and the wall time summed over definitions; then the workloads whose results differ between
the modes: the analysis JSON of each workload, without the IR locations of its nodes (they
name the problem file), compared exactly. The benchmark's files are read as they come.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CAPTURES = re.compile(r"^captures: (\d+) of (\d+) workloads", re.M)


def run(definition: Path, arch: str, capture_each: bool, timeout: float) -> dict:
    """One `solar analyze` of a definition's workloads: its rows by workload, captures,
    seconds, and the error's tail when it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "solar.cli", "analyze", str(definition), "--arch", arch]
        cmd += ["--no-validate", "--quiet", "--json", str(out)]
        cmd += ["--capture-each"] if capture_each else []
        start = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout:g} s", "seconds": timeout}
        seconds = time.perf_counter() - start
        m = CAPTURES.search(r.stdout)
        rows = {}
        if out.exists():
            for row in json.loads(out.read_text())["workloads"]:
                rows[row["workload"]] = row
        return {
            "seconds": seconds,
            "captures": int(m.group(1)) if m else None,
            "workloads": int(m.group(2)) if m else None,
            "rows": rows,
            "error": "" if r.returncode == 0 else (r.stderr or r.stdout)[-400:],
        }


def comparable(row: dict) -> dict:
    """A workload's analysis without what names files: the problem file, IR locations."""
    keep = {k: v for k, v in row.items() if k not in ("source", "ir_from")}
    keep["nodes"] = [{k: v for k, v in n.items() if k != "location"} for n in row.get("nodes", [])]
    return keep


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problems", type=Path)
    ap.add_argument("--every", type=int, default=1, help="every N-th definition (default 1)")
    ap.add_argument("--only", default="", help="comma-separated problem folder names")
    ap.add_argument("--arch", default="B200")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per definition run")
    ap.add_argument(
        "--out",
        default="",
        help="also write a JSON line per definition as both its runs finish (captures, "
        "seconds, workloads whose results agree)",
    )
    args = ap.parse_args()
    folders = sorted(
        (p for p in args.problems.iterdir() if (p / "definition.json").exists()),
        key=lambda p: (len(p.name), p.name),
    )
    if args.only:
        wanted = set(args.only.split(","))
        folders = [p for p in folders if p.name in wanted]
    else:
        folders = folders[:: args.every]
    jobs = [(p, mode) for p in folders for mode in (False, True)]
    started = time.perf_counter()

    def work(job):
        p, capture_each = job
        return (
            p.name,
            capture_each,
            run(p / "definition.json", args.arch, capture_each, args.timeout),
        )

    results: dict = {}
    out = open(args.out, "w") if args.out else None  # noqa: SIM115 - written as runs finish
    with ThreadPoolExecutor(args.jobs) as pool:
        for done, (name, capture_each, res) in enumerate(pool.map(work, jobs), 1):
            results.setdefault(name, {})["each" if capture_each else "template"] = res
            if out and len(results[name]) == 2:  # a line per definition, as soon as both ran
                modes = results[name]
                a, b = modes["template"].get("rows", {}), modes["each"].get("rows", {})
                same = [u for u in a if u in b and comparable(a[u]) == comparable(b[u])]
                line = {m: {k: v for k, v in r.items() if k != "rows"} for m, r in modes.items()}
                out.write(
                    json.dumps(
                        {
                            "definition": name,
                            **line,
                            "same": len(same),
                            "rows": len(set(a) | set(b)),
                        }
                    )
                    + "\n"
                )
                out.flush()
            print(
                f"[{done}/{len(jobs)}] {name} {'capture-each' if capture_each else 'template':12s}"
                f" {res['seconds']:7.1f} s  captures {res.get('captures')} of "
                f"{res.get('workloads')}"
                + (f"  ERROR {res['error'][-120:]!r}" if res["error"] else ""),
                file=sys.stderr,
                flush=True,
            )
    totals = {m: {"seconds": 0.0, "captures": 0, "workloads": 0} for m in ("template", "each")}
    differ, failed = [], []
    for name, modes in results.items():
        for m, res in modes.items():
            totals[m]["seconds"] += res["seconds"]
            totals[m]["captures"] += res.get("captures") or 0
            totals[m]["workloads"] += res.get("workloads") or 0
            if res["error"]:
                failed.append((name, m, res["error"][-200:]))
        a, b = modes["template"].get("rows", {}), modes["each"].get("rows", {})
        for uuid in sorted(set(a) | set(b)):
            if uuid not in a or uuid not in b:
                differ.append((name, uuid, "analysed in one mode only"))
            elif comparable(a[uuid]) != comparable(b[uuid]):
                differ.append((name, uuid, f"results differ (IR from {a[uuid].get('ir_from')})"))
    if out:
        out.close()
    print(f"{len(folders)} definitions, {args.arch}, --no-validate, {args.jobs} jobs")
    print(f"{'mode':14s} {'workloads':>9s} {'captures':>9s} {'seconds':>9s}")
    for m, label in (("template", "template"), ("each", "capture-each")):
        t = totals[m]
        print(f"{label:14s} {t['workloads']:9d} {t['captures']:9d} {t['seconds']:9.0f}")
    each, tmpl = totals["each"], totals["template"]
    if tmpl["captures"] and tmpl["seconds"]:
        print(
            f"captures {each['captures'] / tmpl['captures']:.2f}x fewer, time "
            f"{each['seconds'] / tmpl['seconds']:.2f}x shorter (sum over definitions)"
        )
    print(f"workloads whose results differ between the modes: {len(differ)}")
    for name, uuid, why in differ:
        print(f"  {name} {uuid}: {why}")
    print(f"runs that failed: {len(failed)}")
    for name, m, err in failed:
        print(f"  {name} ({m}): {err!r}")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
