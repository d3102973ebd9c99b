"""`solar batch`: analyse many programs, one process each, into a JSON-lines file.

Each workload runs as `solar analyze FILE --json ...` in its own process (a crash or a hang
of one program never stops the others), `jobs` at a time, each under a timeout. Every result
is appended to the output as soon as it is known, so an interrupted run resumes where it
stopped: programs already in the file are not run again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

# Error kinds -> the stage that failed.
_STAGES = {
    "capture": "capture",
    "lower": "lower",
    "validate": "validate",
    "input": "validate",
    "bounds": "validate",
    "budget": "validate",
    "validation": "validate",
    "measure": "measure",
}


def collect(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += sorted(f for f in path.rglob("*.py") if not f.name.startswith("_"))
        elif path.exists():
            files.append(path)
        else:
            from .errors import argument_error

            raise argument_error(f"no such file or directory: '{p}'")
    return files


def done_sources(out: Path) -> set[str]:
    if not out.exists():
        return set()
    done = set()
    for line in out.read_text().splitlines():
        try:
            done.add(json.loads(line)["source"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut by an interruption: run that workload again
    return done


def run_one(path: Path, arch: str, timeout: float, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            "-m",
            "solar.cli",
            "analyze",
            str(path),
            "--arch",
            arch,
            "--json",
            str(out),
            *extra,
        ]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {
                "source": str(path),
                "status": "error",
                "stage": "timeout",
                "message": f"timed out after {timeout:g} s",
                "seconds_wall": round(time.perf_counter() - start, 3),
            }
        wall = round(time.perf_counter() - start, 3)
        if out.exists():
            doc = json.loads(out.read_text())
            doc["source"] = str(path)
            doc["status"] = "ok"
            doc["seconds_wall"] = wall
            return doc
        err = proc.stderr.strip()
        m = re.search(r"error\[([\w-]+)\]", err)
        kind = m.group(1) if m else ""
        stage = _STAGES.get(kind, "lower" if kind else "analyze")
        message = next((ln for ln in err.splitlines() if "error[" in ln), err[-500:])
        return {
            "source": str(path),
            "status": "error",
            "stage": stage,
            "message": message,
            "seconds_wall": wall,
        }


def summary(results: list[dict]) -> str:
    ok = [r for r in results if r.get("status") == "ok"]
    errors = [r for r in results if r.get("status") != "ok"]
    levels: dict[str, int] = {}
    for r in ok:
        s = r.get("validation", {}).get("status", "none")
        levels[s] = levels.get(s, 0) + 1
    stages: dict[str, int] = {}
    for r in errors:
        stages[r["stage"]] = stages.get(r["stage"], 0) + 1
    lines = [f"analysed {len(ok)} of {len(results)} workloads"]
    lines.append("validation: " + ", ".join(f"{k} {v}" for k, v in sorted(levels.items())))
    if stages:
        lines.append(
            "failures by stage: " + ", ".join(f"{k} {v}" for k, v in sorted(stages.items()))
        )
    from .measure import batch_summary

    lines += batch_summary(ok)
    slow = sorted(results, key=lambda r: -r.get("seconds_wall", 0))[:5]
    lines.append(
        "slowest: "
        + ", ".join(f"{Path(r['source']).name} {r.get('seconds_wall', 0):.1f} s" for r in slow)
    )
    return "\n".join(lines)


def run_batch(
    paths: list[str],
    arch: str,
    out: str,
    jobs: int = 0,
    timeout: float = 600,
    extra: list[str] | None = None,
    stream=sys.stderr,
) -> list[dict]:
    files = collect(paths)
    out_path = Path(out)
    done = done_sources(out_path)
    todo = [f for f in files if str(f) not in done]
    jobs = jobs or os.cpu_count() or 1
    lock = threading.Lock()
    total = len(files)
    count = [len(files) - len(todo)]
    if count[0]:
        print(f"resuming: {count[0]} of {total} already in {out}", file=stream)
    results: list[dict] = []
    with out_path.open("a") as sink, ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_one, f, arch, timeout, extra or []): f for f in todo}
        for fut in as_completed(futures):
            r = fut.result()
            with lock:
                sink.write(json.dumps(r) + "\n")
                sink.flush()
                results.append(r)
                count[0] += 1
                status = (
                    r.get("validation", {}).get("status", "")
                    if r["status"] == "ok"
                    else f"{r['stage']} error"
                )
                print(
                    f"[{count[0]:4d}/{total}] {status:16s} {r.get('seconds_wall', 0):6.1f} s  "
                    f"{r['source']}",
                    file=stream,
                    flush=True,
                )
    every = [json.loads(ln) for ln in out_path.read_text().splitlines() if ln.strip()]
    return [r for r in every if r["source"] in {str(f) for f in files}]
