"""The docs state numbers; these tests hold the docs to the behaviour."""

from __future__ import annotations

import re
from pathlib import Path

import solar

ROOT = Path(__file__).resolve().parents[2]


def _section9_program(tmp_path) -> Path:
    text = (ROOT / "docs" / "ir.md").read_text()
    section = text[text.index("## 9. An example and its numbers") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    path = tmp_path / "doc_example.py"
    path.write_text(code)
    return path


def test_ir_reference_section_9_numbers(tmp_path):
    g = solar.trace(_section9_program(tmp_path))
    nodes = {n.name: n for n in g.nodes}
    # linear#0: M·N·K = 64·512·128; reads 4·(8,192 + 65,536 + 512), writes 4·32,768.
    assert nodes["linear#0"].einsum == "MK,NK,N->MN"
    assert nodes["linear#0"].macs == 4_194_304
    assert (nodes["linear#0"].bytes_read, nodes["linear#0"].bytes_written) == (296_960, 131_072)
    # gelu#0: 32,768 points · (3 mul + 1 add + 1 erf) = 163,840 vector FLOPs.
    assert nodes["gelu#0"].flops == {
        "add": 32_768,
        "mul": 98_304,
        "div": 0,
        "transcendental": 32_768,
        "compare": 0,
        "other": 0,
    }
    assert nodes["linear#1"].bytes_read == 393_728 and nodes["linear#1"].bytes_written == 32_768
    # Graph: 8,388,608 MACs, 16,941,056 FLOPs, unfused 1,116,672 B, fused 592,384 B.
    assert g.total_macs == 8_388_608
    assert g.total_flops == 16_941_056
    assert g.unfused_bytes == 1_116_672
    assert g.fused_bytes == 592_384


MAC_FACTORS = """
@kernel
def k(X: Tensor("M,K"), W: Tensor("N,K"), Z: Tensor("N,K"), s: float) -> Tensor("M,N"):
    Y = Tensor(M=X.shape[0], N=W.shape[0])
    for m in Dim("M"):
        for n in Dim("N"):
            for kk in Dim("K"):
                Y[m, n] += X[m, kk] * (W[n, kk] - Z[n, kk]) * s
    return Y
DIMS = {"M": 2, "N": 3, "K": 4}
def model(x: Tensor("M,K"), w: Tensor("N,K", role="weight"), z: Tensor("N,K", role="weight")):
    return k(x, w, z, 0.5)
"""


def test_mac_with_an_expression_factor_and_a_scale(tmp_path):
    # docs/ir.md §7.2: X[..] * (W[..] - Z[..]) * s is 1 MAC + 1 add + 1 mul per point;
    # points = M·N·K = 2·3·4 = 24.
    path = tmp_path / "mac.py"
    path.write_text(MAC_FACTORS)
    node = solar.trace(path).nodes[0]
    assert node.macs == 24
    assert node.flops["add"] == 24 and node.flops["mul"] == 24
    assert node.einsum == "MK,NK,NK->MN"


def test_readme_python_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(
        compile(code.replace("examples/", str(ROOT / "examples") + "/"), "README", "exec"),
        namespace,
    )
    assert namespace["graph"].total_flops > 0


def test_the_trace_readme_lists_every_builtin_of_the_registry_in_order():
    # src/trace/README.md names the builtins builtins.cpp implements; the registry
    # (include/solar/graph/ops.def, read through _core.builtins) is the list.
    text = (ROOT / "src" / "trace" / "README.md").read_text()
    listed = re.search(r"in its\s+order: (.*?);", text, re.S).group(1)
    names = [n.strip() for n in listed.replace("\n", " ").split(",")]
    assert names == [row["name"] for row in solar._core.builtins()]
