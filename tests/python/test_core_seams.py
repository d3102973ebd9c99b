"""The seams of issue 15 as a user meets them: `solar check --dump`, the core's session, one
diagnostic formatter, the analysis JSON's measurement written by the core, and the GEMM MACs
the budget uses coming from the core."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import solar
from solar import _core
from solar.errors import Diagnostic, argument_error
from solar.session import core_session

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "examples" / "ir" / "linear_bias_matmul.py"


def _solar(*args):
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)], capture_output=True, text=True
    )


def test_check_dumps_the_program_after_each_pass():
    r = _solar("check", PAPER, "--dump", "all")
    assert r.returncode == 0, r.stderr
    passes = [line[len("## after ") :] for line in r.stdout.splitlines() if line.startswith("##")]
    assert passes == ["check_and_lower", "lower_scalars", "count_flops", "derive_einsums"]
    # The MAC of linear's second nest, Y[b, m, n] += X[b, m, k] * W[n, k], is found by
    # count_flops: not in the dump before it, in the dump after it.
    dumps = r.stdout.split("## after ")
    assert "MAC X[b, m, k] x W[n, k]" not in dumps[2]  # after lower_scalars
    assert "MAC X[b, m, k] x W[n, k]" in dumps[3]  # after count_flops
    # The einsum strings come last: linear's node string BMK,NK,N->BMN.
    assert "einsum BMK,NK,N->BMN" not in dumps[3]
    assert "einsum BMK,NK,N->BMN" in dumps[4]


def test_check_dumps_the_typed_scalar_ir():
    r = _solar("check", PAPER, "--dump", "kernel-ir")
    assert r.returncode == 0, r.stderr
    # Y[b, m, n] += X[b, m, k] * W[n, k]: two fp32 loads and their product.
    assert "%0 = load fp32 X[b, m, k]" in r.stdout
    assert "%1 = load fp32 W[n, k]" in r.stdout
    assert "%2 = mul fp32 %0, %1" in r.stdout


def test_an_unknown_pass_is_named_with_the_known_ones():
    r = _solar("check", PAPER, "--dump", "lift")
    assert r.returncode == 1
    assert "error[argument]: no checker pass named 'lift' (passes: check_and_lower" in r.stderr


def test_a_session_keeps_tiling_searches_between_analyses():
    graph = solar.trace(str(PAPER))
    arch = solar.load_arch("H100_PCIe")
    own = _core.Session()
    assert own.tiling_memo_stats == (0, 0)
    _core.analyze(graph, arch, "default", True, own)
    hits1, misses1 = own.tiling_memo_stats
    assert misses1 > 0  # the first analysis searched
    _core.analyze(graph, arch, "default", True, own)
    hits2, misses2 = own.tiling_memo_stats
    # The second searches nothing again: only hits, at least one per search of the first.
    assert misses2 == misses1
    assert hits2 - hits1 >= misses1
    # Without a session an analysis has a memo of its own: the session is untouched.
    _core.analyze(graph, arch, "default", True)
    assert own.tiling_memo_stats == (hits2, misses2)


def test_solar_analyze_uses_the_process_session():
    # The process's session serves every analysis of solar.analyze: its lookups grow by at
    # least one per nest searched (earlier tests may have filled it: hits or misses).
    graph = solar.trace(str(PAPER))
    before = sum(core_session().tiling_memo_stats)
    solar.analyze(graph, arch="H100_PCIe")
    assert sum(core_session().tiling_memo_stats) > before


def test_diagnostics_print_alike_in_both_languages():
    # One formatter (base/error.h): a Python-made diagnostic and the core's own agree.
    d = Diagnostic("shape", "t.py", 3, 7, "bad size", "use 4")
    assert str(d) == _core.format_diagnostic("shape", "t.py", 3, 7, "bad size", "use 4")
    assert str(d) == "t.py:3:7: error[shape]: bad size\n  hint: use 4"
    assert str(argument_error("no such file")) == "error[argument]: no such file"
    with pytest.raises(solar.UserError) as e:
        _core.load_program_source("def model(:\n", "bad.py")
    assert str(e.value).startswith("bad.py:1:")
    assert str(e.value.diagnostics[0]) == str(e.value)


def test_the_core_writes_the_measurement_into_the_analysis_json():
    graph = solar.trace(str(PAPER))
    arch = solar.load_arch("H100_PCIe")
    a = solar.analyze(graph, arch=arch)
    m = json.dumps({"eager": {"median": 1.5e-6}, "margin": 2.0})
    doc = json.loads(_core.analysis_json(graph, [arch], [a], "none", "", [m]))
    assert list(doc)[-1] == "measurement"  # after nodes and units
    assert doc["measurement"] == {"eager": {"median": 1.5e-6}, "margin": 2.0}
    assert "measurement" not in json.loads(_core.analysis_json(graph, [arch], [a]))


def test_the_budget_takes_the_gemm_macs_from_the_core():
    # linear_bias_matmul: B*M*N*K + B*M*P*N = 2*128*512*256 + 2*128*64*512 = 41,943,040 MACs,
    # every one in a contraction nest the native GEMM path takes.
    graph = solar.trace(str(PAPER))
    _, _, gemm_macs = _core.estimate_cost(graph)
    assert gemm_macs == 41_943_040
    # A transposed convolution's scatter-form nest writes its output at (H+R): no GEMM.
    scatter = solar.trace(str(ROOT / "examples" / "ir" / "conv_transpose2d.py"))
    macs = sum(e.macs for n in scatter.nodes for e in (n.einsums or []))
    assert macs > 0 and _core.estimate_cost(scatter)[2] == 0


def test_the_core_has_no_mutable_static_state():
    # Every `static` or `thread_local` variable of the core (src/, include/) is a constant
    # (const or constexpr): state lives in a Session the caller owns (pipeline/session.h).
    # A mutable one, as the tiling memo was (`static Memo m;` in sol/cache_aware.cpp), fails.
    # The binding too: its SIGINT flag (`std::atomic<bool> g_interrupted{false};`, set by a
    # signal handler) gave way to a token per call, set by a thread watching Python's wakeup fd.
    import re

    mutable = re.compile(
        r"^\s*(?:static|thread_local)\s+(?!const\b|constexpr\b|inline\b|volatile const\b)"
        r"(?:volatile\s+)?[\w:<>, *&]+?\s+\*?(\w+)\s*(?:=|;|\{)",
        re.M,
    )
    atomic_global = re.compile(r"^std::atomic<[^>]+>\s+\w+", re.M)
    found = []
    for d in ("src", "include", "bindings"):
        for path in sorted((ROOT / d).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            text = path.read_text()
            found += [
                f"{path.relative_to(ROOT)}: {m.group(0).strip()}" for m in mutable.finditer(text)
            ]
            found += [
                f"{path.relative_to(ROOT)}: {m.group(0)}" for m in atomic_global.finditer(text)
            ]
    assert found == []
    assert mutable.search("  static Memo m;\n") and mutable.search(
        "thread_local std::vector<int> v;"
    )
    assert not mutable.search("  static const std::vector<CheckPass> kPasses = {")
    assert atomic_global.search("std::atomic<bool> g_interrupted{false};\n")


def test_python_reads_the_builtins_from_the_cores_registry():
    from solar.frontend.builder import VIEW_BUILTINS
    from solar.tolerance import _PASS_THROUGH

    rows = {b["name"]: b for b in _core.builtins()}
    # docs/ir.md lists 22 builtins; 8 of them are views ("view: 0" in its table: reshape,
    # permute_view, slice, select, split, broadcast, unfold, bitcast; update shares its base's
    # memory but writes, so it is no view) and 6 make new values (cast rounds; scatter_add
    # adds; constant and iota write values of their own; bitcast reads bits as other values;
    # fft transforms).
    assert len(rows) == 22
    assert VIEW_BUILTINS == {"reshape", "permute_view", "slice", "select", "split"} | {
        "broadcast",
        "unfold",
        "bitcast",
    }
    assert set(rows) - _PASS_THROUGH == {
        "cast",
        "scatter_add",
        "constant",
        "iota",
        "bitcast",
        "fft",
    }
    assert rows["topk"]["attributes"] == "TopkAttrs"


def test_graph_nodes_expose_typed_attributes():
    # x [T=4, E=8]: slice of E (dim 1) from 1 by 2; topk of 3 along E, smallest first; pad
    # of T (dim 0) by 1 and 2 with -1.5.
    src = (
        'DIMS = {"T": 4, "E": 8}\n'
        'def model(x: Tensor("T,E")):\n'
        '    a = slice(x, dim="E", start=1, stop=7, step=2)\n'
        '    v, j = topk(x, k=3, dim="E", largest=0)\n'
        '    c = pad(x, dim="T", before=1, after=2, value=-1.5)\n'
        "    return a, v, j, c\n"
    )
    graph = _core.trace(_core.load_program_source(src, "t.py"))
    assert [n.attributes for n in graph.nodes] == [
        {"axis": 1, "start": 1, "step": 2},
        {"axis": 1, "k": 3, "largest": False},
        {"axis": 0, "before": 1, "after": 2, "fill": -1.5},
    ]


def test_graph_tensors_and_nodes_are_views_that_index_without_converting():
    # The paper's program: 4 parameters + linear's Y + matmul's Z = 6 tensors, in order of
    # creation; one node per kernel call = 2 nodes. The attributes are views (not lists
    # converted at each read, which made Python loops indexing them quadratic in the graph's
    # size): indexing, negative indices, slices, iteration and len behave as a list's.
    graph = solar.trace(solar.check(PAPER))
    tensors, nodes = graph.tensors, graph.nodes
    assert type(tensors).__name__ == "TensorList" and type(nodes).__name__ == "NodeList"
    names = ["x", "fc_weight", "fc_bias", "D", "linear#0.Y", "matmul#0.Z"]
    assert len(tensors) == 6 and [t.name for t in tensors] == names
    assert tensors[-1].name == "matmul#0.Z" and tensors[4].shape == tensors[-2].shape
    assert [t.name for t in tensors[1:5:2]] == ["fc_weight", "D"]
    assert [n.name for n in reversed(nodes)] == ["matmul#0", "linear#0"]
    assert repr(nodes) == "NodeList(2 items)"
    with pytest.raises(IndexError, match="index out of range"):
        tensors[6]
    with pytest.raises(IndexError, match="index out of range"):
        nodes[-3]
    # The analysis's per-node bounds too (the HTML report indexes them per node: at 2,992
    # nodes its table took 2.6 s, 0.06 s with the view).
    sols = _core.analyze(graph, solar.load_arch("H100_PCIe")).nodes
    assert type(sols).__name__ == "NodeSolList" and len(sols) == 2
    assert sols[-1].seconds == sols[1].seconds > 0
    # An element read through the view keeps the graph alive.
    z = graph.tensors[5]
    del graph, tensors, nodes
    assert z.name == "matmul#0.Z" and z.producer == 1
