"""The bound against NVIDIA's measured PyTorch baselines on SOL-ExecBench (issue 42).

    .venv/bin/python bench/execbench_margins.py ../shared/benchmarks/sol-execbench/problems \
        --arch B200 [--per-definition 1] [--jobs 2] [--accuracy TOL] [--out margins.jsonl]
    .venv/bin/python bench/execbench_margins.py PROBLEMS --summarise a.jsonl b.jsonl

For each definition, N workloads (`--per-definition`) from index `--start` are analysed with
`solar analyze definition.json --workload UUID --no-validate --json` and the fused and
cache-aware bounds compared with the workload's `baseline_latency_ms` (metadata.json, in
workload order) and NVIDIA's `sol_ms`. Prints per subset: workloads analysed, failures,
violations (baseline faster than the bound), the smallest margin baseline / bound, and the
geomean of baseline / bound beside NVIDIA's baseline / sol_ms; then `solar headroom`'s report
of the same rows (docs/reports.md): the workloads whose bound and NVIDIA's sol_ms differ by
more than 2x, each with the reason read from the bound's terms. `--html` writes its suite
report, the paper's Figure 12. `--validate` validates each workload too and counts the
validation statuses per subset. The benchmark's files are read
as they come; nothing of them is copied.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from solar.suite_report import fused_terms


def workloads(problem: Path, n: int, start: int = 0):
    meta = json.loads((problem / "metadata.json").read_text())
    per = meta.get("sol", {}).get("per_workload", [])
    lines = [ln for ln in (problem / "workload.jsonl").read_text().splitlines() if ln.strip()]
    for i, line in list(enumerate(lines))[start : start + n]:
        w = json.loads(line)
        m = per[i] if i < len(per) else {}
        yield meta.get("subset", "?"), meta.get("name", problem.name), w["uuid"], m


def run_one(
    problem: Path, uuid: str, arch: str, accuracy: str | None, timeout: float, validate: bool
):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "solar.cli", "analyze", str(problem / "definition.json")]
        cmd += ["--workload", uuid, "--arch", arch, "--json", str(out)]
        cmd += [] if validate else ["--no-validate"]
        cmd += ["--accuracy", accuracy] if accuracy else []
        start = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout:g} s"}, timeout
        seconds = time.perf_counter() - start
        if out.exists():  # exit 1 with a report: the validation failed, which the row says
            return json.loads(out.read_text()), seconds
        lines = (r.stderr or r.stdout).strip().splitlines()
        errors = [ln for ln in lines if "error" in ln and not ln.lstrip().startswith("hint:")]
        # Solar's own errors (`file: error[kind]: ...`) before a progress line that names
        # a file with "error" in it.
        errors = [ln for ln in errors if "error[" in ln] or errors
        why = (errors or lines)[-1] if lines else f"exit {r.returncode}"
        return {"error": why}, seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("problems")
    p.add_argument("--arch", default="B200")
    p.add_argument("--per-definition", type=int, default=1)
    p.add_argument("--start", type=int, default=0, help="the first workload's index")
    p.add_argument(
        "--validate", action="store_true", help="validate each workload (counts per status)"
    )
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--accuracy")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--only", help="comma-separated task ids")
    p.add_argument("--out", default="margins.jsonl")
    p.add_argument(
        "--summarise", nargs="+", metavar="JSONL", help="summarise earlier --out files instead"
    )
    p.add_argument("--html", help="also write the suite report (the paper's Figure 12) here")
    args = p.parse_args()
    if args.summarise:
        rows = []
        for path in args.summarise:
            rows += [json.loads(ln) for ln in Path(path).read_text().splitlines() if ln.strip()]
        summarise(rows)
        write_html(rows, args.html)
        return 0
    dirs = sorted(
        (d for d in Path(args.problems).iterdir() if d.is_dir()), key=lambda d: int(d.name)
    )
    if args.only:
        keep = set(args.only.split(","))
        dirs = [d for d in dirs if d.name in keep]
    jobs = [(d, *w) for d in dirs for w in workloads(d, args.per_definition, args.start)]

    def work(job):
        d, subset, name, uuid, meta = job
        doc, seconds = run_one(d, uuid, args.arch, args.accuracy, args.timeout, args.validate)
        row = {
            "task": d.name,
            "subset": subset,
            "name": name,
            "workload": uuid,
            "seconds": round(seconds, 2),
            "baseline_ms": meta.get("baseline_latency_ms"),
            "nvidia_sol_ms": meta.get("sol_ms"),
        }
        if "error" in doc:
            row["error"] = doc["error"]
        else:
            secs = doc["totals"]["seconds"]
            row["unfused_ms"] = secs["unfused"] * 1e3
            row["fused_ms"] = secs["fused"] * 1e3
            row["cache_aware_ms"] = (secs.get("cache_aware") or secs["fused"]) * 1e3
            row["math_mode"] = doc.get("math_mode", "")
            row["terms"] = fused_terms(doc)
            row["validation"] = doc.get("validation", {})
        print(json.dumps(row), flush=True)
        return row

    with ThreadPoolExecutor(args.jobs) as pool, open(args.out, "w") as f:
        rows = []
        for row in pool.map(work, jobs):
            f.write(json.dumps(row) + "\n")
            rows.append(row)
    summarise(rows)
    write_html(rows, args.html)
    return 0


def report_rows(rows):
    """The rows as `solar headroom` reads a batch joined with the benchmark's metadata."""
    from solar.suite_report import Row

    return [
        Row(
            name=f"task {r['task']} {r['workload'][:8]}",
            group=r["subset"],
            measured=r["baseline_ms"] * 1e-3,
            bounds={
                "unfused": r["unfused_ms"] * 1e-3,
                "fused": r["fused_ms"] * 1e-3,
                "cache_aware": r["cache_aware_ms"] * 1e-3,
            },
            reference=(r.get("nvidia_sol_ms") or 0.0) * 1e-3,
            terms=r.get("terms") or {},
        )
        for r in rows
        if "error" not in r and r.get("baseline_ms") and "unfused_ms" in r
    ]


def write_html(rows, path):
    """The suite report of `solar headroom` (docs/reports.md) over these rows: measured
    against bound per workload and the geomean headroom per subset (the paper's Appendix B,
    Figure 12), with NVIDIA's sol_ms as the reference bound."""
    if not path:
        return
    from solar.suite_report import html_report

    report = report_rows(rows)
    title = "SOL-ExecBench: NVIDIA's measured B200 baselines against Solar's bounds"
    Path(path).write_text(html_report(report, [], "fused", title))
    print(f"wrote {path} ({len(report)} workloads)")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summarise(rows):
    by = defaultdict(list)
    for r in rows:
        by[r["subset"]].append(r)
    print(
        f"\n{'subset':10s} {'analysed':>8s} {'failed':>6s} {'violations':>10s} "
        f"{'min margin':>10s} {'geomean b/bound':>15s} {'geomean b/nv':>12s} {'s/workload':>10s}"
    )
    for subset, rs in sorted(by.items()):
        ok = [r for r in rs if "error" not in r and r.get("baseline_ms")]
        bad = [r for r in rs if "error" in r]
        margins = [
            r["baseline_ms"] / max(r["fused_ms"], r["cache_aware_ms"])
            for r in ok
            if max(r["fused_ms"], r["cache_aware_ms"]) > 0
        ]
        nv = [r["baseline_ms"] / r["nvidia_sol_ms"] for r in ok if r.get("nvidia_sol_ms")]
        viol = sum(1 for m in margins if m < 1)
        secs = sum(r["seconds"] for r in rs) / max(len(rs), 1)
        print(
            f"{subset:10s} {len(ok):8d} {len(bad):6d} {viol:10d} "
            f"{min(margins, default=float('nan')):10.3f} {geomean(margins):15.2f} "
            f"{geomean(nv):12.2f} "
            f"{secs:10.1f}"
        )
    statuses = defaultdict(lambda: defaultdict(int))
    for r in rows:
        if r.get("validation"):
            statuses[r["subset"]][r["validation"].get("status", "?")] += 1
    if statuses:
        print("\nvalidation status per subset:")
        for subset, counts in sorted(statuses.items()):
            print(f"  {subset:10s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    # The violations, the tightest workloads and those whose bound and NVIDIA's sol_ms
    # differ by more than 2x, with the reason read from the bound's terms: `solar
    # headroom`'s report (docs/reports.md).
    from solar.suite_report import text_report

    print()
    print(text_report(report_rows(rows), [], "fused"))


if __name__ == "__main__":
    sys.exit(main())
