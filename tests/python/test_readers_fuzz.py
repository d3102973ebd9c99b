"""A property per reader (issue 41): fed mutated copies of the project's own inputs, every
reader gives a result or a UserError (a one-line `error[...]`), never another exception.

The mutations (byte flips, truncations, insertions of random bytes or JSON punctuation,
duplicated slices, deep nesting) come from `random.Random(SEED)`, a fixed number per reader
(CASES), so a run is the same every time. The seeds: the definitions and workloads in
workloads/definitions/, small timings and an .npz written here, and the example programs.
`fuzz/readers.py` runs the same properties over a directory of definitions (the
SOL-ExecBench set) when given its path."""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))

from readers import READERS, mutate  # noqa: E402

SEED = 41
CASES = 300
DEFINITIONS = sorted((ROOT / "workloads" / "definitions").glob("*/*.json"))

TIMINGS = {
    ".csv": b"name,kernel_ms,baseline_ms,ms,group\ngemm,3,5,3,g\nnorm.py,1,5,1,g\n"
    b"other,1e-3,2,1,\n",
    ".jsonl": b'{"name": "gemm", "kernel_us": 3, "baseline_us": 5, "us": 3}\n'
    b'{"name": "norm", "kernel_seconds": 0.5, "baseline": 1, "ms": 2}\n',
    ".json": b'{"gemm": {"kernel_ms": 3, "baseline_ms": 5, "ms": 1},'
    b' "norm": {"kernel": 1, "baseline": 2, "seconds": 1.5}}',
}


def _npz_bytes() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, in0=np.arange(6.0).reshape(2, 3), out0=np.ones(3, np.float32))
    return buf.getvalue()


def _seeds(reader: str) -> list[tuple[str, bytes]]:
    """(file suffix, bytes) to mutate for `reader`. The timings carry both a `solar score`
    entry (kernel and baseline) and a `solar headroom` one (a bare time)."""
    if reader in ("definition", "definition+workloads"):
        suffix = ".json" if reader == "definition" else ".jsonl"
        return [(suffix, p.with_suffix(suffix).read_bytes()) for p in DEFINITIONS]
    if reader in ("timings", "runtimes"):
        return list(TIMINGS.items())
    if reader in ("npz-reference", "npz-inputs"):
        return [(".npz", _npz_bytes())]
    assert reader == "imports"
    return [(".py", p.read_bytes()) for p in sorted((ROOT / "examples" / "ir").glob("*.py"))]


def test_the_seeds_are_read_cleanly_before_mutation(tmp_path):
    """The properties start from valid inputs: every seed gives a result (no error)."""
    assert len(DEFINITIONS) >= 10
    for name, reader in READERS.items():
        for i, (suffix, data) in enumerate(_seeds(name)):
            path = tmp_path / f"{name}{i}{suffix}"
            path.write_bytes(data)
            context = DEFINITIONS[i] if name == "definition+workloads" else None
            reader(str(path), context)


@pytest.mark.parametrize("name", sorted(READERS))
def test_mutated_inputs_give_a_result_or_a_user_error(tmp_path, name):
    """CASES mutated inputs per reader: each returns, or raises UserError; the first other
    exception fails the test with the case that raised it."""
    from solar.errors import UserError

    rng = random.Random(f"{SEED}:{name}")
    seeds, reader = _seeds(name), READERS[name]
    errors = 0
    for case in range(CASES):
        i = rng.randrange(len(seeds))
        suffix, data = seeds[i]
        path = tmp_path / f"case{case}{suffix}"
        path.write_bytes(mutate(rng, data))
        context = DEFINITIONS[i] if name == "definition+workloads" else None
        try:
            reader(str(path), context)
        except UserError:
            errors += 1
        except Exception as e:  # noqa: BLE001 - the property: nothing but a UserError
            pytest.fail(f"{name} case {case} ({path}): {type(e).__name__}: {e}")
    # Most mutations break the input; a property that saw no error tested nothing.
    assert errors > 0 or name == "imports"
