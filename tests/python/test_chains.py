"""Chain reordering (`solar chains`, `solar.chains`): the classic matrix chain, DeepSeek MLA's
absorbed attention (the paper's Figure 4b), and a PyTorch einsum. Every number is derived by
hand beside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import solar

ROOT = Path(__file__).resolve().parents[2]
MLA = ROOT / "examples" / "ir" / "mla_absorbed_attention.py"
EINSUM3 = ROOT / "workloads" / "level1" / "einsum_chain_three.py"

# CLRS 15.2's A1 10x100, A2 100x5, A3 5x50 plus A4 50x20, as one 4-operand nest.
CLRS_NEST = """
from solar.ir import kernel, Tensor, Dim

@kernel
def chain4(A: Tensor("I,J"), B: Tensor("J,K"), C: Tensor("K,L"), D: Tensor("L,M")) -> Tensor("I,M"):
    Y = Tensor(I=A.shape[0], M=D.shape[1], fill=0)
    for i in Dim("I", parallel=True):
        for m in Dim("M", parallel=True):
            for j in Dim("J"):
                for k in Dim("K"):
                    for l in Dim("L"):
                        Y[i, m] += A[i, j] * B[j, k] * C[k, l] * D[l, m]
    return Y

DIMS = {"I": 10, "J": 100, "K": 5, "L": 50, "M": 20}

def model(a: Tensor("I,J", role="input"), b: Tensor("J,K", role="input"),
          c: Tensor("K,L", role="input"), d: Tensor("L,M", role="input")):
    return chain4(a, b, c, d)
"""


def solar_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_clrs_nest(tmp_path):
    path = tmp_path / "clrs.py"
    path.write_text(CLRS_NEST)
    out = tmp_path / "c.json"
    r = solar_cli("chains", str(path), "--json", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "solar.chains/1"
    (c,) = doc["chains"]
    assert c["kind"] == "nest" and c["einsum"] == "IJ,JK,KL,LM->IM"
    # MACs of the five orders: ((AB)C)D 5,000 + 2,500 + 10,000 = 17,500; (A(BC))D 25,000 +
    # 50,000 + 10,000 = 85,000; (AB)(CD) 5,000 + 5,000 + 1,000 = 11,000; A((BC)D) 25,000 +
    # 100,000 + 20,000 = 145,000; A(B(CD)) 5,000 + 10,000 + 20,000 = 35,000.
    assert sorted(o["macs"] for o in c["orders"]) == [11_000, 17_500, 35_000, 85_000, 145_000]
    assert c["orders"][c["left_to_right"]]["expression"] == "((A*B)*C)*D"
    assert c["orders"][c["best"]]["expression"] == "(A*B)*(C*D)"
    assert c["orders"][c["worst"]]["macs"] == 145_000
    assert c["best_vs_left_to_right"] == pytest.approx(17_500 / 11_000)  # 1.59x
    assert c["range"] == pytest.approx(145_000 / 11_000)  # 13.2x
    # As written: one nest over 10·100·5·50·20 = 5,000,000 points, 5,000,000 MACs plus two
    # multiplies a point: 20,000,000 FLOPs.
    assert c["direct"]["macs"] == 5_000_000 and c["direct"]["flops"] == 20_000_000
    assert c["as_written"] is None
    assert "best vs left to right: 1.59x fewer FLOPs; range (worst / best): 13.2x" in r.stdout


def test_mla_absorbed_attention(tmp_path):
    out = tmp_path / "c.json"
    r = solar_cli("chains", str(MLA), "--json", str(out))
    assert r.returncode == 0, r.stderr
    score, value = json.loads(out.read_text())["chains"]
    # Score chain (B=1 drops out): (q_nope w_uk) c_kv = S·H·N·C + H·S·T·C = 32·2^30 +
    # 1024·2^30 = 1056·2^30 MACs; q_nope (w_uk c_kv) = T·H·N·C + H·S·T·N = 32·2^30 +
    # 256·2^30 = 288·2^30: 1056 / 288 = 3.67x.
    g30 = 2**30
    assert score["nodes"] == ["absorb_q#0", "latent_scores#0"]
    assert score["orders"][0]["macs"] == 1056 * g30
    assert score["orders"][score["best"]]["macs"] == 288 * g30
    assert score["best_vs_left_to_right"] == pytest.approx(1056 / 288)
    # Value chain (the paper's Figure 4b, "2.04x", "22x range"): left to right
    # ((P c_kv) w_uv) w_o = H·S·T·C + H·S·C·V + S·H·V·D = 1024 + 32 + 448 = 1504 (·2^30);
    # best (P (c_kv w_uv)) w_o = T·H·C·V + H·S·T·V + S·H·V·D = 32 + 256 + 448 = 736;
    # worst P (c_kv (w_uv w_o)) = H·C·V·D + T·H·C·D + H·S·T·D = 56 + 1792 + 14336 = 16184.
    assert len(value["orders"]) == 5
    assert value["as_written"] == value["left_to_right"] == 0
    assert value["orders"][0]["macs"] == 1504 * g30
    assert value["orders"][value["best"]]["macs"] == 736 * g30
    assert value["orders"][value["worst"]]["macs"] == 16184 * g30
    assert value["best_vs_left_to_right"] == pytest.approx(1504 / 736)  # 2.04x
    assert value["range"] == pytest.approx(16184 / 736)  # 22.0x
    assert "best vs left to right: 2.04x fewer FLOPs; range (worst / best): 22x" in r.stdout


def test_pytorch_einsum_chain():
    # torch.einsum("ij,jk,kl->il") with i=2048, j=4096, k=1024, l=2048 is captured as two bmm
    # (through reshapes and permutes): (AB)C = i·j·k + i·k·l = 8,589,934,592 + 4,294,967,296
    # = 12,884,901,888 MACs, as written and best; A(BC) = j·k·l + i·j·l = 8,589,934,592 +
    # 17,179,869,184 = 25,769,803,776: range 2x. Left to right as written: PyTorch's own
    # order when opt_einsum is off (with it installed, as JAX brings it, torch.einsum picks
    # an order itself: test_pytorch_einsum_chain_with_opt_einsum).
    import torch

    with torch.backends.opt_einsum.flags(enabled=False):
        (c,) = solar.chains(str(EINSUM3))
    assert c.kind == "graph"
    assert c.einsum == "ab,bc,cd->ad"
    assert [o.name for o in c.operands] == ["a", "b", "c"]  # forward(A, B, C), lowered names
    assert [o.macs for o in c.orders] == [12_884_901_888, 25_769_803_776]
    assert c.as_written == c.best == 0
    assert c.orders[c.worst].flops / c.orders[c.best].flops == pytest.approx(2.0)


def test_pytorch_einsum_chain_with_opt_einsum():
    # With opt_einsum on, torch.einsum contracts in the order it finds best, (AB)C here:
    # 12,884,901,888 MACs as written (derived above), the best of the orders listed.
    import torch

    if not torch.backends.opt_einsum.is_available():
        pytest.skip("opt_einsum is not installed")
    with torch.backends.opt_einsum.flags(enabled=True, strategy="auto"):
        (c,) = solar.chains(str(EINSUM3))
    assert c.as_written == c.best
    assert c.orders[c.best].macs == 12_884_901_888


def test_no_chains_message():
    # linear (with its bias) then matmul: the bias breaks the association, no chain.
    r = solar_cli("chains", str(ROOT / "examples" / "ir" / "linear_bias_matmul.py"))
    assert r.returncode == 0, r.stderr
    assert "no chains" in r.stdout
