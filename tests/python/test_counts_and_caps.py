"""Counts are exact or refused, the tracer's caps stop runaway unrolling, and builtins whose
inputs disagree in dtype are rejected: through the command line, as a user meets them (exit
code 1, the error on stderr, never a traceback, never a crash).

Each case is one the reliability probe of issue 10 reported: a 2^21 x 2^20 x 2^21 matmul that
printed -9.22 EFLOP; `--dim N=2**62` on an elementwise add that printed 0 B; `--dim
L=2097152` on examples/ir/transformer.py, which grew past 6 GB; concat of fp16 and fp32, which
corrupted the heap in both backends. The C++ side (tests/cpp/test_counts.cpp,
test_tracer.cpp's TracerCaps, test_builtin_dtypes.cpp) checks the numbers and messages in
detail.
"""

from __future__ import annotations

import json
import pathlib
import resource
import subprocess
import sys

import numpy as np
import pytest
import solar

ROOT = pathlib.Path(__file__).parents[2]
ERRORS = ROOT / "tests" / "errors"
TRANSFORMER = ROOT / "examples" / "ir" / "transformer.py"
MEMORY_LIMIT = 4 << 30  # the child gets 4 GiB of address space: a runaway fails, not the host


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        preexec_fn=_limit_memory,
    )


def assert_user_error(proc: subprocess.CompletedProcess, kind: str, *parts: str) -> None:
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert proc.returncode == 1, f"exit code {proc.returncode}\n{out}"
    assert f"error[{kind}]" in proc.stderr, proc.stderr
    for part in parts:
        assert part in proc.stderr, proc.stderr


def test_matmul_whose_flops_exceed_int64_is_refused():
    # 2^21 x 2^20 x 2^21 = 2^62 MACs; 2 x 2^62 = 2^63 matrix FLOPs > 2^63 - 1.
    proc = run_cli("analyze", ERRORS / "overflow_matmul_flops.py", "--arch", "H100_PCIe_paper")
    assert_user_error(proc, "overflow", "node 'mm#0': matrix FLOPs (2 x MACs)")
    assert "EFLOP" not in proc.stdout


def test_tensor_of_two_to_the_62_fp32_values_is_refused():
    # --dim N=2^62 on an fp32 add: x has 4 x 2^62 = 2^64 bytes (once printed as 0 B).
    # (The corpus program's DIMS already say N = 2^62; --dim first sets N = 4, which runs.)
    program = ERRORS / "overflow_tensor_bytes.py"
    ok = run_cli("analyze", program, "--arch", "H100_PCIe_paper", "--dim", "N=4")
    assert ok.returncode == 0, ok.stderr
    proc = run_cli("analyze", program, "--arch", "H100_PCIe_paper", "--dim", f"N={2**62}")
    assert_user_error(
        proc, "overflow", "model() parameter 'x': bytes (4611686018427387904 elements of fp32)"
    )


def test_counts_just_below_the_limit_are_exact_in_the_json(tmp_path):
    # The same matmul with N = 2^20: MACs = 2^61, matrix FLOPs = 2^62 exactly (no double
    # rounding on the way to JSON): 4,611,686,018,427,387,904. The cache-aware search
    # refuses 2^61 iterations (error[overflow], test_cache_aware.py), so it is left out.
    out = tmp_path / "a.json"
    proc = run_cli(
        "analyze",
        ERRORS / "overflow_matmul_flops.py",
        "--no-cache-aware",
        "--arch",
        "H100_PCIe_paper",
        "--dim",
        f"N={2**20}",
        "--json",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["totals"]["macs"] == 2**61
    assert doc["totals"]["matrix_flops"] == 2**62


def test_transformer_with_two_million_layers_stops_at_once():
    # range() of 2,097,152 values exceeds the 1,048,576 one list may hold: refused before a
    # single layer is built, naming the loop's line and the dim to lower.
    proc = run_cli("analyze", TRANSFORMER, "--arch", "H100_PCIe_paper", "--dim", "L=2097152")
    assert_user_error(proc, "budget", "transformer.py:139:", "range() of 2097152 values", "--dim L")


def test_transformer_past_the_node_cap_names_the_loop_and_the_dim():
    # 20,000 layers x 30 nodes = 600,000 nodes > the cap of 524,288 (2^19): the trace stops in
    # layer 17,477 (17,476 x 30 = 524,280 nodes, the 9th node of the next layer passes the cap).
    proc = run_cli("analyze", TRANSFORMER, "--arch", "H100_PCIe_paper", "--dim", "L=20000")
    assert_user_error(
        proc,
        "budget",
        "transformer.py:139:5:",
        "builds more than 524,288 nodes",
        "'for l in range(wq.shape[0])' (20,000 iterations, stopped in iteration 17,477)",
        "lower --dim L",
    )


def test_the_largest_benchmark_programs_trace_under_the_default_caps(tmp_path):
    # bench/run_bench.py's largest size: 40,000 nodes asked for, in both styles (one call per
    # line, and a loop over stacked weights); whole layers of 22 (flat) or 30 (loop) nodes give
    # 1,818 x 22 = 39,996 and 1,333 x 30 = 39,990 nodes, far below the cap of 524,288.
    for style in ("flat", "loop"):
        path = tmp_path / f"p_{style}.py"
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "gen_program.py"),
                "--nodes",
                "40000",
                "--style",
                style,
                "--out",
                str(path),
            ],
            check=True,
        )
        assert len(solar.trace(path).nodes) >= 39990


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_concat_of_two_dtypes_is_an_error_in_both_backends(tmp_path, backend):
    # Once: the output took fp16 and the fp32 copy overran it (SIGABRT, SIGSEGV).
    program = ERRORS / "dtype_concat_mismatch.py"
    inputs = tmp_path / "in.npz"
    np.savez(
        inputs,
        x=np.ones((4, 8), dtype=np.float16),
        y=np.ones((4, 8), dtype=np.float32),
    )
    proc = run_cli("run", program, "--inputs", inputs, "--backend", backend)
    assert_user_error(proc, "type", "concat(): the tensors must have one dtype")
