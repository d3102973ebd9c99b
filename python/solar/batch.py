"""`solar batch`: analyse many programs, one process each, into a JSON-lines file.

Each workload runs as `solar analyze FILE --json ...` in its own process (a crash or a hang
of one program never stops the others), `jobs` at a time, each under a timeout. By default
the processes are warm: forked from one zygote that imported torch (and JAX) once
(solar/zygote.py); `--workers cold` starts each from scratch. Every result
is appended to the output as soon as it is known, so an interrupted run resumes where it
stopped: programs already in the file are not run again.

The output file is locked while a batch writes it (a second batch on the same file refuses,
naming the file), a last line cut short by a crash or a full disk is removed before
appending (that workload runs again), no workload is written twice, and lines that are not
results are skipped (and counted) when the file is read back.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from .report import rate_line
from .workers import (  # noqa: F401 - Zygote, ZygoteGone, run_one: re-exported
    Zygote,
    ZygoteGone,
    _Children,
    frameworks_of,
    run_one,
)


def collect(paths: list[str]) -> list[Path]:
    """The programs to run, in order, each once (a file named twice, or also found in a
    directory, runs once)."""
    files: list[Path] = []
    seen: set[str] = set()
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = _programs_under(path)
        elif path.exists() and path.suffix == ".json":
            found = definition_entries(path, strict=True)
        elif path.exists():
            found = [path]
        else:
            from .errors import argument_error

            raise argument_error(f"no such file or directory: '{p}'")
        for f in found:
            key = _key(str(f))
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files


def _programs_under(root: Path) -> list[Path]:
    """The programs of a directory tree, symbolic links to directories followed (each real
    directory entered once, so a link cycle ends): its `.py` files (not `_private.py`) and its
    definitions' workloads (docs/definitions.md, "In a batch"). A folder that holds a
    definition is that problem: its `.py` files (SOL-ExecBench's `reference.py`, the
    definition's reference as a file) are not programs of their own."""
    import os

    programs, definitions, entered = [], [], set()
    for folder, subfolders, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in entered:
            subfolders[:] = []
            continue
        entered.add(real)
        subfolders.sort()
        here = Path(folder)
        found = [w for n in sorted(names) if n.endswith(".json") for w in _entries(here / n)]
        definitions += found
        if not found:
            programs += [here / n for n in names if n.endswith(".py") and not n.startswith("_")]
    return sorted(programs) + definitions


def _entries(path: Path) -> list[Path]:
    return definition_entries(path) if path.is_file() else []


def definition_entries(path: Path, strict: bool = False) -> list[Path]:
    """A SOL-ExecBench definition as batch entries, one per workload: `def.json#uuid`
    (docs/definitions.md); [] for a .json that is no definition (an error when `strict`)."""
    from .definitions import is_definition, load_definition, load_workloads, workloads_file

    if not is_definition(str(path)):
        if strict:
            from .errors import argument_error

            raise argument_error(f"{path} is not a problem definition (axes, inputs, outputs, run)")
        return []
    file = workloads_file(str(path))
    if not file:
        return [path]
    from .errors import UserError

    try:
        workloads = load_workloads(file, load_definition(str(path)))
    except UserError:
        if strict:
            raise
        return [path]  # analysed as one entry, whose record carries the error
    return [Path(f"{path}#{w.uuid}") for w in workloads]


def _named(paths: list[str]) -> set:
    return {Path(p) for p in paths if Path(p).is_file()}


def agent_language(path: Path) -> str:
    """ "NumPy", "Triton" or "TensorFlow" for a source file only the LLM agent translates
    (solar analyze --lang); "" for IR, PyTorch and JAX programs."""
    from .agent.languages import LANGUAGES, detect

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return ""
    lang = detect(str(path), text)
    if lang not in ("numpy", "triton", "tensorflow") or re.search(
        r"(?m)^\s*def\s+model\s*\(", text
    ):
        return ""  # an IR program may import numpy in a comment's example; model() decides
    return LANGUAGES[lang].title


def _key(source: str) -> str:
    """The identity of a workload: its resolved path (two spellings of one file agree), with
    a definition's workload after '#'."""
    file, hash_, workload = source.partition("#")
    try:
        return str(Path(file).resolve()) + hash_ + workload
    except (OSError, RuntimeError, ValueError):
        return source


def _is_result(obj) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("source"), str)


def read_results(out: Path) -> tuple[list[dict], int]:
    """(results, lines skipped) of an output file: every line that is a JSON object with a
    source; the first result of each workload when one appears twice."""
    if not out.exists():
        return [], 0
    results, skipped, seen = [], 0, set()
    with out.open("rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                skipped += 1
                continue
            if not _is_result(obj):
                skipped += 1
                continue
            key = _key(obj["source"])
            if key in seen:
                continue
            seen.add(key)
            results.append(obj)
    return results, skipped


def done_sources(out: Path) -> set[str]:
    """Resolved paths of the workloads already in the output file."""
    return {_key(r["source"]) for r in read_results(out)[0]}


def repair_tail(f) -> str:
    """Removes a last line cut short (no newline, not a JSON object) from the open output
    file `f` (binary, read and write); adds the missing newline to a last line that is
    complete. Returns what it did ("" when nothing)."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    if size == 0:
        return ""
    f.seek(size - 1)
    if f.read(1) == b"\n":
        return ""
    # Find the start of the last line.
    start, block = size, 1 << 16
    while start > 0:
        lo = max(0, start - block)
        f.seek(lo)
        chunk = f.read(start - lo)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            start = lo + nl + 1
            break
        start = lo
    f.seek(start)
    tail = f.read(size - start)
    try:
        complete = _is_result(json.loads(tail))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        complete = False
    if complete:
        f.seek(0, os.SEEK_END)
        f.write(b"\n")
        return "added the missing newline at the end"
    f.truncate(start)
    return f"removed a last line cut short ({size - start} bytes); that workload runs again"


class _Lock:
    """An exclusive lock on the output file for the life of a batch (released when the
    process ends, however it ends)."""

    def __init__(self, out: Path):
        import fcntl

        from .errors import argument_error

        out.parent.mkdir(parents=True, exist_ok=True)
        self.file = out.open("a+b")
        try:
            fcntl.flock(self.file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise argument_error(
                f"another `solar batch` is writing '{out}'",
                "wait for it to finish, or give this batch another --out",
            ) from None

    def close(self):
        self.file.close()  # releases the lock


def _seconds(r: dict) -> float:
    v = r.get("seconds_wall", 0)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) else 0.0


def _text(v) -> str:
    return v if isinstance(v, str) else str(v)


def summary(results: list[dict]) -> str:
    """The closing summary. Never raises: records written by other versions or by hand are
    counted as they can be."""
    results = [r for r in results if _is_result(r)]
    ok = [r for r in results if r.get("status") == "ok"]
    errors = [r for r in results if r.get("status") != "ok"]
    levels: dict[str, int] = {}
    for r in ok:
        v = r.get("validation")
        s = _text(v.get("status", "none")) if isinstance(v, dict) else "none"
        levels[s] = levels.get(s, 0) + 1
    stages: dict[str, int] = {}
    for r in errors:
        s = _text(r.get("stage", "unknown"))
        stages[s] = stages.get(s, 0) + 1
    lines = [f"analysed {len(ok)} of {len(results)} workloads"]
    lines.append(
        "validation: " + (", ".join(f"{k} {v}" for k, v in sorted(levels.items())) or "none")
    )
    if stages:
        lines.append(
            "failures by stage: " + ", ".join(f"{k} {v}" for k, v in sorted(stages.items()))
        )
    from .measure import batch_summary

    try:
        lines += batch_summary(ok)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as e:
        lines.append(f"measured: no summary (a measurement record is malformed: {e!r})")
    slow = sorted(results, key=lambda r: -_seconds(r))[:5]
    if slow:
        lines.append(
            "slowest: " + ", ".join(f"{Path(r['source']).name} {_seconds(r):.1f} s" for r in slow)
        )
    return "\n".join(lines)


def local_results(todo, arch, timeout, extra, jobs, workers, stream):
    """The local engine: `jobs` threads, each workload in a warm child of one zygote (or a
    fresh process), results as they finish. Closing the generator (Ctrl-C) stops the
    running workloads; they are not yielded."""
    zygote = None
    if workers == "warm" and todo:
        try:
            zygote = Zygote(frameworks_of(todo))
        except (ZygoteGone, OSError) as e:
            print(f"warm workers unavailable ({e}); one process per workload", file=stream)
    children = _Children(zygote)
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(run_one, f, arch, timeout, extra, children) for f in todo]
        for fut in as_completed(futures):
            r = fut.result()
            if r is not None:
                yield r
    except BaseException:  # KeyboardInterrupt, or the consumer closing the generator
        children.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        if zygote is not None:
            zygote.close()
            if zygote.cold:
                print(
                    f"the warm workers ended during the batch: {zygote.cold} workload(s) "
                    "ran in processes of their own",
                    file=stream,
                )


def run_batch(
    paths: list[str],
    arch: str,
    out: str,
    jobs: int = 0,
    timeout: float = 600,
    extra: list[str] | None = None,
    stream=None,
    workers: str = "warm",
    engine: str = "local",
    address: str | None = None,
) -> list[dict]:
    """Runs every program not yet in `out` and returns the results of all of `paths` (this
    run's and earlier ones'). Ctrl-C stops the running workloads (they are not recorded)
    and raises KeyboardInterrupt. `workers`: "warm" (a zygote imports the frameworks once
    and forks a child per workload; solar/zygote.py) or "cold" (a fresh process each).
    `engine`: "local" (threads on this machine) or "ray" (Ray tasks on the cluster at
    `address`, a local one when None; solar/ray_engine.py), the same results either way.
    Progress goes to `stream`, by default the sys.stderr of the call (not of the import)."""
    stream = sys.stderr if stream is None else stream
    files = collect(paths)
    named_files = _named(paths)
    agent_only = {f: agent_language(f) for f in files if f not in named_files}
    agent_only = {f: lang for f, lang in agent_only.items() if lang}
    if agent_only:
        files = [f for f in files if f not in agent_only]
        print(
            f"skipping {len(agent_only)} program(s) in languages only the LLM agent translates "
            f"({', '.join(sorted(set(agent_only.values())))}): "
            "solar analyze FILE --lang LANG (docs/agent.md)",
            file=stream,
        )
    out_path = Path(out)
    lock = _Lock(out_path)
    try:
        repaired = repair_tail(lock.file)
        if repaired:
            print(f"{out}: {repaired}", file=stream)
        previous, skipped = read_results(out_path)
        if skipped:
            print(f"{out}: skipping {skipped} line(s) that are not results", file=stream)
        done = {_key(r["source"]) for r in previous}
        todo = [f for f in files if _key(str(f)) not in done]
        jobs = jobs or os.cpu_count() or 1
        total = len(files)
        count = total - len(todo)
        if count:
            print(f"resuming: {count} of {total} already in {out}", file=stream)
        sink = lock.file
        sink.seek(0, os.SEEK_END)
        if not todo:
            results = (r for r in ())  # nothing to run: no engine started
        elif engine == "ray":
            from .ray_engine import ray_results

            results = ray_results(todo, arch, timeout, extra or [], jobs, workers, address, stream)
        else:
            results = local_results(todo, arch, timeout, extra or [], jobs, workers, stream)
        started, ran = time.perf_counter(), 0
        try:
            for r in results:
                key = _key(r["source"])
                if key in done:
                    continue  # never twice
                done.add(key)
                sink.write((json.dumps(r) + "\n").encode())
                sink.flush()
                count += 1
                ran += 1
                status = (
                    _text(r.get("validation", {}).get("status", ""))
                    if r["status"] == "ok"
                    else f"{r['stage']} error"
                )
                pace = rate_line(ran, time.perf_counter() - started, total - count)
                print(
                    f"[{count:4d}/{total}] {status:16s} {_seconds(r):6.1f} s  {r['source']}"
                    f"  ({pace})",
                    file=stream,
                    flush=True,
                )
        finally:
            results.close()  # a Ctrl-C or an error: the engine stops what still runs
        os.fsync(sink.fileno())
    finally:
        lock.close()
    wanted = {_key(str(f)) for f in files}
    return [r for r in read_results(out_path)[0] if _key(r["source"]) in wanted]
