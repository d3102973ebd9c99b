"""The bound against NVIDIA's measured PyTorch baselines on SOL-ExecBench (issue 42).

    .venv/bin/python bench/execbench_margins.py ../shared/benchmarks/sol-execbench/problems \
        --arch B200 [--per-definition 1] [--jobs 2] [--accuracy TOL] [--out margins.jsonl]
    .venv/bin/python bench/execbench_margins.py PROBLEMS --summarise a.jsonl b.jsonl

For each definition, its first N workloads (`--per-definition`) are analysed with
`solar analyze definition.json --workload UUID --no-validate --json` and the fused and
cache-aware bounds compared with the workload's `baseline_latency_ms` (metadata.json, in
workload order) and NVIDIA's `sol_ms`. Prints per subset: workloads analysed, failures,
violations (baseline faster than the bound), the smallest margin baseline / bound, and the
geomean of baseline / bound beside NVIDIA's baseline / sol_ms; then the workloads whose
bound and NVIDIA's sol_ms differ by more than 2x, with Solar's fused bytes beside the bytes
NVIDIA's time carries at B200's DRAM bandwidth. The benchmark's files are read
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


def workloads(problem: Path, n: int):
    meta = json.loads((problem / "metadata.json").read_text())
    per = meta.get("sol", {}).get("per_workload", [])
    lines = [ln for ln in (problem / "workload.jsonl").read_text().splitlines() if ln.strip()]
    for i, line in enumerate(lines[:n]):
        w = json.loads(line)
        m = per[i] if i < len(per) else {}
        yield meta.get("subset", "?"), meta.get("name", problem.name), w["uuid"], m


def run_one(problem: Path, uuid: str, arch: str, accuracy: str | None, timeout: float):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, "-m", "solar.cli", "analyze", str(problem / "definition.json")]
        cmd += ["--workload", uuid, "--arch", arch, "--no-validate", "--json", str(out)]
        cmd += ["--accuracy", accuracy] if accuracy else []
        start = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout:g} s"}, timeout
        seconds = time.perf_counter() - start
        if r.returncode != 0 or not out.exists():
            lines = (r.stderr or r.stdout).strip().splitlines()
            errors = [ln for ln in lines if "error" in ln and not ln.lstrip().startswith("hint:")]
            why = (errors or lines)[-1] if lines else f"exit {r.returncode}"
            return {"error": why}, seconds
        return json.loads(out.read_text()), seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("problems")
    p.add_argument("--arch", default="B200")
    p.add_argument("--per-definition", type=int, default=1)
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
    jobs = [(d, *w) for d in dirs for w in workloads(d, args.per_definition)]

    def work(job):
        d, subset, name, uuid, meta = job
        doc, seconds = run_one(d, uuid, args.arch, args.accuracy, args.timeout)
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
            totals = doc["totals"]
            row["matrix_flops"] = totals.get("matrix_flops")
            row["vector_flops"] = totals.get("vector_flops")
            row["fused_bytes"] = totals["bytes"]["fused"]
            row["bottleneck"] = totals["bottleneck"]["fused"]
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


def write_html(rows, path):
    """The suite report of `solar headroom` (docs/reports.md) over these rows: measured
    against bound per workload and the geomean headroom per subset (the paper's Appendix B,
    Figure 12), with NVIDIA's sol_ms as the reference bound."""
    if not path:
        return
    from solar.suite_report import Row, html_report

    report_rows = [
        Row(
            name=f"{r['task']}/{r['workload']}",
            group=r["subset"],
            measured=r["baseline_ms"] * 1e-3,
            bounds={
                "unfused": r["unfused_ms"] * 1e-3,
                "fused": r["fused_ms"] * 1e-3,
                "cache_aware": r["cache_aware_ms"] * 1e-3,
            },
            reference=(r.get("nvidia_sol_ms") or 0.0) * 1e-3,
        )
        for r in rows
        if "error" not in r and r.get("baseline_ms") and "unfused_ms" in r
    ]
    title = "SOL-ExecBench: NVIDIA's measured B200 baselines against Solar's bounds"
    Path(path).write_text(html_report(report_rows, [], "fused", title))
    print(f"wrote {path} ({len(report_rows)} workloads)")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# A workload is listed where Solar's bound and NVIDIA's sol_ms differ by more than this.
DIFFER = 2.0
B200_DRAM = 8.0e12  # configs/arch/B200.yaml dram.bytes_per_second


def differences(rows):
    """The workloads whose bound and NVIDIA's sol_ms differ by more than DIFFER, with what
    Solar counts beside what NVIDIA's time would carry at B200's DRAM bandwidth: where the
    bytes differ by about the same ratio, the two count different traffic; where Solar is
    compute-bound, they price the arithmetic differently."""
    out = []
    for r in rows:
        if "error" in r or not r.get("nvidia_sol_ms") or not r.get("fused_ms"):
            continue
        bound = max(r["fused_ms"], r["cache_aware_ms"])
        ratio = bound / r["nvidia_sol_ms"]
        if ratio > DIFFER or ratio < 1 / DIFFER:
            out.append((ratio, r, bound))
    if not out:
        return
    print(f"\nbound / NVIDIA sol_ms beyond {DIFFER:g}x either way ({len(out)} workloads):")
    print(
        f"{'task':>4s} {'name':44s} {'bound ms':>10s} {'nv ms':>10s} {'ratio':>6s} "
        f"{'bottleneck':>10s} {'Solar MB':>9s} {'nv MB@8TB/s':>11s}  math mode"
    )
    for ratio, r, bound in sorted(out, key=lambda x: x[0]):
        nv_mb = r["nvidia_sol_ms"] * 1e-3 * B200_DRAM / 1e6
        mb = (r.get("fused_bytes") or 0) / 1e6
        print(
            f"{r['task']:>4s} {r['name'][:44]:44s} {bound:10.4g} {r['nvidia_sol_ms']:10.4g} "
            f"{ratio:6.2f} {r.get('bottleneck', ''):>10s} {mb:9.3g} {nv_mb:11.3g}  "
            f"{r.get('math_mode', '')}"
        )


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
    differences(rows)


if __name__ == "__main__":
    sys.exit(main())
