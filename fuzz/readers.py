"""Property fuzzing of Solar's file readers (issue 41): a mutated input gives a result or a
UserError, never another exception, in time linear in its size.

`READERS` maps a reader's name to `fn(path, context)`, which reads `path` the way the
commands do (context: the definition a workloads file belongs to). `mutate` derives one
input from a valid one. tests/python/test_readers_fuzz.py runs both on the project's own
inputs with a fixed seed; run this file on a directory of SOL-ExecBench definitions
(`problems/*/definition.json` with their `workload.jsonl`) for the same properties there:

    .venv/bin/python fuzz/readers.py ../shared/benchmarks/sol-execbench --cases 20

It prints, per reader, the inputs tried, how many gave a user error, the tracebacks (other
exceptions, each listed with its input), and the longest time one input took.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

# Values that stand in for a JSON value: other types, negative, huge, non-finite.
_VALUES = (b'"four"', b"-3", b"[]", b"{}", b"null", b"true", b"1e999", b'"x"', b"0", b"1" * 400)
# Bytes that make or break structure.
_PUNCTUATION = b'[]{}",:\\\n0-e.'


def mutate(rng: random.Random, data: bytes) -> bytes:
    """`data` after one to three random edits."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(("flip", "truncate", "insert", "duplicate", "delete", "value", "nest"))
        at = rng.randrange(len(out) + 1)
        if op == "flip" and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif op == "truncate":
            del out[at:]
        elif op == "insert":
            pick = _PUNCTUATION if rng.random() < 0.7 else bytes(range(256))
            out[at:at] = bytes(rng.choice(pick) for _ in range(rng.randint(1, 8)))
        elif op == "duplicate" and out:
            start = rng.randrange(len(out))
            chunk = out[start : start + rng.randint(1, 200)]
            out[at:at] = chunk * rng.randint(1, 3)
        elif op == "delete":
            del out[at : at + rng.randint(1, 50)]
        elif op == "value":
            # Replace the value after a random ": " by another kind of value.
            colon = out.find(b": ", at)
            if colon >= 0:
                end = colon + 2
                while end < len(out) and out[end] not in b",}]\n":
                    end += 1
                out[colon + 2 : end] = rng.choice(_VALUES)
        elif op == "nest":
            depth = rng.choice((250, 1_000, 20_000))
            if rng.random() < 0.5:
                out = bytearray(b"[" * depth + bytes(out) + b"]" * depth)
            else:
                out[at:at] = b'{"a": ' * depth + b"1" + b"}" * depth
    return bytes(out)


def _definition(path: str, context=None) -> None:
    """`solar analyze def.json` without a workloads file: every var axis at 1."""
    from solar.definitions import Workload, load_definition, problem_text, resolve_axes

    d = load_definition(path)
    given = {k: 1 for k, a in d.axes.items() if a["type"] == "var"}
    problem_text(d, Workload("default"), resolve_axes(d, given))


def _workloads(path: str, context) -> None:
    """Every workload of `path` for the definition `context`, to its problem file."""
    from solar.definitions import load_definition, load_workloads, problem_text, resolve_axes

    d = load_definition(str(context))
    for w in load_workloads(path, d):
        problem_text(d, w, resolve_axes(d, w.axes))


def _timings(path: str, context=None) -> None:
    from solar.score import load_timings

    load_timings(path)


def _runtimes(path: str, context=None) -> None:
    from solar.suite_report import load_runtimes

    load_runtimes(path)


def _npz_reference(path: str, context=None) -> None:
    from solar.agent.languages import golden_npz

    golden_npz(path)


def _npz_inputs(path: str, context=None) -> None:
    from solar.cli import _loadz

    _loadz(path)


def _imports(path: str, context=None) -> None:
    from solar.agent.languages import detect

    detect(path, Path(path).read_bytes().decode("utf-8", "replace"))


READERS = {
    "definition": _definition,
    "definition+workloads": _workloads,
    "timings": _timings,
    "runtimes": _runtimes,
    "npz-reference": _npz_reference,
    "npz-inputs": _npz_inputs,
    "imports": _imports,
}


def run(root: Path, cases: int, seed: int) -> dict:
    """{reader: {tried, errors, tracebacks: [(input, exception)], longest_s}} over the
    definitions under `root`: each read as it is, then `cases` mutated copies of it."""
    from solar.errors import UserError

    rng = random.Random(seed)
    stats = {n: {"tried": 0, "errors": 0, "tracebacks": [], "longest_s": 0.0} for n in READERS}
    with tempfile.TemporaryDirectory() as tmp:
        for k, definition in enumerate(sorted(root.rglob("definition.json"))):
            workloads = definition.parent / "workload.jsonl"
            jobs = [("definition", definition, None)]
            if workloads.is_file():
                jobs.append(("definition+workloads", workloads, definition))
            for name, source, context in jobs:
                data = source.read_bytes()
                for case in range(cases + 1):  # case 0: the file as it is
                    path = Path(tmp) / f"{k}-{case}{source.suffix}"
                    path.write_bytes(data if case == 0 else mutate(rng, data))
                    s = stats[name]
                    s["tried"] += 1
                    start = time.perf_counter()
                    try:
                        READERS[name](str(path), context)
                    except UserError:
                        s["errors"] += 1
                    except Exception as e:  # noqa: BLE001 - a finding, reported
                        s["tracebacks"].append((f"{source} case {case}", repr(e)[:200]))
                    s["longest_s"] = max(s["longest_s"], time.perf_counter() - start)
    return {n: s for n, s in stats.items() if s["tried"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", help="a directory holding */definition.json (and workload.jsonl)")
    p.add_argument("--cases", type=int, default=20, help="mutated copies per file")
    p.add_argument("--seed", type=int, default=41)
    args = p.parse_args(argv)
    stats = run(Path(args.root), args.cases, args.seed)
    print(f"{'reader':22s} {'tried':>7s} {'errors':>7s} {'tracebacks':>10s} {'longest':>9s}")
    for name, s in stats.items():
        print(
            f"{name:22s} {s['tried']:7d} {s['errors']:7d} {len(s['tracebacks']):10d} "
            f"{s['longest_s'] * 1e3:7.1f}ms"
        )
        for where, what in s["tracebacks"]:
            print(f"  {where}: {what}")
    return 1 if any(s["tracebacks"] for s in stats.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
