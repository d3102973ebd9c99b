"""`solar headroom` (solar/suite_report.py): runtimes in every supported layout joined with
a batch's bounds, per-group geomeans derived by hand, violations flagged, and the HTML
suite report checked in headless chromium."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from solar.suite_report import geomean, groups, join, load_runtimes


def _results(path, rows):
    """A batch results file: (source, unfused, fused, cache_aware seconds) per workload."""
    path.write_text(
        "".join(
            json.dumps(
                {
                    "source": s,
                    "status": "ok",
                    "totals": {"seconds": {"unfused": u, "fused": f, "cache_aware": c}},
                }
            )
            + "\n"
            for s, u, f, c in rows
        )
    )


RESULTS = [
    ("suite/level1/gemm.py", 2e-3, 1e-3, 1e-3),
    ("suite/level1/norm.py", 4e-6, 2e-6, 2e-6),
    ("suite/level2/block.py", 8e-5, 1e-5, 2e-5),
]


def test_kernelbench_timing_json_and_group_geomeans(tmp_path):
    """KernelBench's {level: {file: {mean, ...}}} in ms. gemm 4 ms over a 1 ms fused bound
    is 4x and norm 8 us over 2 us is 4x, so level1's fused geomean is 4x; level2's block
    is 40 us over 10 us, 4x fused and 0.5x unfused: under its 80 us unfused bound, which
    only eager execution must respect, so no violation."""
    timings = tmp_path / "kb.json"
    timings.write_text(
        json.dumps(
            {
                "level1": {
                    "gemm.py": {"mean": 4.0, "std": 0.1, "min": 3.9, "max": 4.2},
                    "norm.py": {"mean": 0.008, "std": 0, "min": 0.008, "max": 0.008},
                },
                "level2": {"block.py": {"mean": 0.04, "std": 0, "min": 0.04, "max": 0.04}},
            }
        )
    )
    runtimes = load_runtimes(str(timings))
    assert runtimes["gemm.py"].seconds == pytest.approx(4e-3)
    assert runtimes["gemm.py"].group == "level1"
    rows, unmatched = join(
        [
            {
                "source": s,
                "status": "ok",
                "totals": {"seconds": {"unfused": u, "fused": f, "cache_aware": c}},
            }
            for s, u, f, c in RESULTS
        ],
        runtimes,
    )
    assert unmatched == [] and len(rows) == 3
    stats = groups(rows)
    assert stats["level1"]["fused"] == pytest.approx(4.0)
    # level1 unfused: gemm 4 ms / 2 ms = 2x, norm 8 us / 4 us = 2x.
    assert stats["level1"]["unfused"] == pytest.approx(2.0)
    assert stats["level2"]["unfused"] == pytest.approx(0.5)
    assert stats["level2"]["violations"] == 0
    assert [r.violated for r in rows] == [[], [], []]
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)


def test_csv_json_and_profiler_traces(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("name,ms\ngemm,3\nnorm.py,0.004\n")
    assert {k: v.seconds for k, v in load_runtimes(str(csv)).items()} == {
        "gemm": pytest.approx(3e-3),
        "norm.py": pytest.approx(4e-6),
    }
    plain = tmp_path / "t.json"
    plain.write_text(json.dumps({"gemm": 0.002, "block": {"us": 30}}))
    assert load_runtimes(str(plain))["block"].seconds == pytest.approx(3e-5)
    traces = tmp_path / "traces"
    traces.mkdir()
    # Two kernels of 30 and 12 us and one CPU op (not counted): 42 us.
    (traces / "gemm.json").write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"ph": "X", "cat": "kernel", "name": "sgemm", "dur": 30},
                    {"ph": "X", "cat": "kernel", "name": "bias", "dur": 12},
                    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "dur": 100},
                ]
            }
        )
    )
    assert load_runtimes(str(traces))["gemm"].seconds == pytest.approx(42e-6)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"gemm": -1}))
    with pytest.raises(Exception, match="the time must be positive"):
        load_runtimes(str(bad))


def headroom(tmp_path, timings_csv: str, html: bool = True):
    """`solar headroom` on RESULTS and these runtimes: (the process, the HTML path)."""
    results, timings = tmp_path / "r.jsonl", tmp_path / "t.csv"
    _results(results, RESULTS)
    timings.write_text(timings_csv)
    out = tmp_path / "suite.html"
    cmd = [sys.executable, "-m", "solar.cli", "headroom", str(results), "--timings", str(timings)]
    r = subprocess.run(cmd + (["--html", str(out)] if html else []), capture_output=True, text=True)
    return r, out


def test_no_matching_runtime_is_one_clear_error(tmp_path):
    r, _ = headroom(tmp_path, "name,us\nghost,1\n", html=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "has a runtime in" in r.stderr and "by its source path, file name or stem" in r.stderr


def test_the_command_flags_violations_and_writes_the_report(tmp_path):
    """norm measured at 1 us under its 2 us fused bound: a VIOLATION line, exit status 1,
    and the HTML report lists it."""
    r, html = headroom(tmp_path, "name,us\ngemm,4000\nnorm,1\nblock,40\nghost,1\n")
    assert r.returncode == 1, r.stderr
    assert "VIOLATION: suite/level1/norm.py: measured 1 µs is below the fused, cache_aware " in (
        r.stdout
    )
    assert "VIOLATION: suite/level2/block.py" not in r.stdout  # 40 us: under unfused only
    assert "no result for 1 timing(s): ghost" in r.stdout
    text = html.read_text()
    assert (
        text.count("<svg") == 2
        and "Violations" in text
        and "http" not in text.replace("http-equiv", "").split("<svg")[0]
    )


def test_the_suite_report_renders_in_a_browser(tmp_path):
    """The report in headless chromium: no script errors, both plots laid out, nothing
    fetched (name resolution is off)."""
    from test_html_report import _html_attr, _page_errors

    r, html = headroom(tmp_path, "name,us\ngemm,4000\nnorm,8\nblock,40\n")
    assert r.returncode == 0, r.stderr
    dom, errors = _page_errors(tmp_path, html.as_uri() + "?sort=headroom&dir=asc")
    assert errors == []
    assert _html_attr(dom, "data-solar-ready") == "1"
    layout = json.loads(_html_attr(dom, "data-solar-layout"))
    assert set(layout) == {"fig-scatter", "fig-groups"}
    assert all(w > 200 and h > 150 for _, _, w, h in layout.values())


def _execbench_problem(root, name, subset, workloads, with_jsonl=True):
    """A SOL-ExecBench problem folder: metadata.json as the benchmark publishes it (per
    workload: axes, sol_ms, baseline_latency_ms in ms) and its workload.jsonl."""
    d = root / name
    d.mkdir()
    per = [
        {"index": i, "axes": {"n": 1}, "sol_ms": sol, "baseline_latency_ms": base}
        for i, (_, sol, base) in enumerate(workloads)
    ]
    meta = {"task_id": 1, "subset": subset, "name": name, "sol": {"per_workload": per}}
    (d / "metadata.json").write_text(json.dumps(meta))
    if with_jsonl:
        (d / "workload.jsonl").write_text(
            "".join(json.dumps({"uuid": u, "axes": {"n": 1}}) + "\n" for u, _, _ in workloads)
        )
    return d


def _terms_result(source, fused, bytes_, macs=0.0, rate=1.0, vector_flops=0.0):
    """A batch result carrying the fused bound's terms: B200-like peaks (8e12 B/s DRAM,
    8e13 FLOP/s fp32 vector) and one bf16 math-mode group at `rate`."""
    modes = [{"mode": "bf16", "macs": macs, "matrix_flops_per_second": rate}] if macs else []
    return {
        "source": source,
        "status": "ok",
        "totals": {
            "seconds": {"unfused": fused, "fused": fused, "cache_aware": fused},
            "bytes": {"fused": bytes_},
            "matrix_flops": 2 * macs,
            "vector_flops": vector_flops,
        },
        "peaks": {"dram_bytes_per_second": 8e12, "vector_flops_per_second": 8e13},
        "math_modes": modes,
    }


def test_sol_execbench_metadata_and_the_reference_bound(tmp_path):
    """SOL-ExecBench's metadata.json read as it comes: baselines in ms named by the uuid of
    the same line of workload.jsonl, grouped by subset, sol_ms as the reference bound.
    Three workloads whose fused bound and sol_ms differ by more than 2x, derived by hand:
    - u0 memory-bound: 8e8 B / 8e12 B/s = 0.1 ms against sol_ms 0.04 ms (2.5x); at 8e12 B/s
      0.04 ms moves 3.2e8 B, 0.4x Solar's bytes;
    - u1 matrix-bound: 2 * 5e11 MACs / 2.5e15 FLOP/s = 0.4 ms against 0.1 ms (4x); 1e12
      FLOP in 0.1 ms is 1e16 FLOP/s, 4x Solar's rate;
    - u2 vector-bound: 8e9 FLOP / 8e13 FLOP/s = 0.1 ms against 0.3 ms (0.333x); 8e9 FLOP in
      0.3 ms is 2.667e13 FLOP/s, 0.333x Solar's rate.
    Ordered by |log ratio|: u1 (4), u2 (3), u0 (2.5). L1's geomean headroom: baselines 0.2
    and 0.5 ms over bounds 0.1 and 0.4 ms, sqrt(2 * 1.25) = 1.581x."""
    from solar.suite_report import disagreements, reference_reason, text_report

    _execbench_problem(tmp_path, "001_a", "L1", [("u0", 0.04, 0.2), ("u1", 0.1, 0.5)])
    _execbench_problem(tmp_path, "002_b", "Quant", [("u2", 0.3, 0.25)])
    _execbench_problem(tmp_path, "003_c", "L2", [("u9", 0.1, 0.1)], with_jsonl=False)
    runtimes = load_runtimes(str(tmp_path))
    assert sorted(runtimes) == ["003_c#0", "u0", "u1", "u2"]
    assert runtimes["u1"].seconds == pytest.approx(5e-4)
    assert runtimes["u1"].reference == pytest.approx(1e-4)
    assert runtimes["u2"].group == "Quant"
    # One problem's metadata.json alone reads the same.
    assert sorted(load_runtimes(str(tmp_path / "001_a" / "metadata.json"))) == ["u0", "u1"]

    results = [
        _terms_result("p/001_a/definition.json#u0", 1e-4, 8e8),
        _terms_result("p/001_a/definition.json#u1", 4e-4, 1e6, macs=5e11, rate=2.5e15),
        _terms_result("p/002_b/definition.json#u2", 1e-4, 1e6, vector_flops=8e9),
    ]
    rows, unmatched = join(results, runtimes)
    assert unmatched == ["003_c#0"]
    assert groups(rows)["L1"]["fused"] == pytest.approx(1.5811, rel=1e-4)
    far = disagreements(rows)
    assert [r.name.rpartition("#")[2] for r in far] == ["u1", "u2", "u0"]
    assert "3.2e+08 B at that bandwidth (0.4x Solar's bytes)" in reference_reason(far[2])
    assert "implies 1e+16 FLOP/s (4x Solar's rate)" in reference_reason(far[0])
    assert "implies 2.667e+13 FLOP/s (0.333x Solar's rate)" in reference_reason(far[1])
    text = text_report(rows, unmatched)
    assert "3 workload(s) where the fused bound and the reference differ >2x" in text


def test_a_metadata_directory_without_baselines_is_one_clear_error(tmp_path):
    d = tmp_path / "001_a"
    d.mkdir()
    (d / "metadata.json").write_text(json.dumps({"name": "x", "sol": {"per_workload": []}}))
    with pytest.raises(Exception, match="no metadata.json with sol.per_workload baselines"):
        load_runtimes(str(tmp_path))
