"""Cross-check with PyTorch's own FlopCounterMode: on every workload whose MACs all come
from matmul, convolution and attention operators, 2 x Solar's MACs equals PyTorch's FLOP
count. (Where they count differently is in docs/pytorch.md: FlopCounterMode gives
elementwise operators, softmax and normalisations zero FLOPs; Solar counts them as vector
FLOPs. A normalisation's sum of squares is vector work, not MACs (docs/ir.md §7.2), so the
programs with batch, group, layer and instance norms are checked too.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import solar  # noqa: E402
from dense import dense_macs  # noqa: E402
from solar.errors import UserError  # noqa: E402
from solar.frontend import capture_problem, lower  # noqa: E402
from solar.frontend.capture import build_problem  # noqa: E402
from solar.frontend.validation import load_lowered  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Candidates by name (a capture takes seconds; recurrent models take minutes), then the test
# itself keeps only those whose MACs all come from the operators FlopCounterMode counts.
CANDIDATE = re.compile(
    r"^(matmul|linear|einsum|conv|bmm|scaled_dot|causal_attention|"
    r"multihead|gemm_swish|swiglu|deep_mlp|lenet|alexnet|vgg|gpt|vit)"
)
# The PyTorch suite only (the JAX programs are checked against XLA:
# bench/jax_cost_analysis.py; the agent's NumPy, CUDA and Triton programs are not PyTorch).
WORKLOADS = sorted(
    p
    for level in ("level1", "level2", "level3")
    for p in (ROOT / "workloads" / level).rglob("*.py")
    if CANDIDATE.match(p.name)
)
# IR kernels of the front end whose MACs are matrix products, convolutions or attention.
CONTRACTIONS = {
    "mm",
    "mm_nt",
    "mm_tn",
    "mm_tt",
    "linear",
    "linear_nt",
    "addmm",
    "addmm_nt",
    "bmm",
    "bmm_nt",
    "bmm_tn",
    "bmm_tt",
    "bmm_band",
    "bmm_band_nt",
    "bmm_kband",
    "bmm_kband_nt",
    "conv2d",
    "conv3d",
    "conv_transpose2d",
    "conv_transpose3d",
    "contract",  # generated per contraction: torch.einsum (frontend/contract.py)
}


def flop_counter_total(capture) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    # On the meta device: FlopCounterMode counts no attention on CPU tensors (CPU SDPA runs
    # _scaled_dot_product_flash_attention_for_cpu, which has no formula; docs/pytorch.md).
    with torch.device("meta"):
        model, inputs = build_problem(capture.problem, None)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    return counter.get_total_flops()


def live_flops(capture) -> int:
    """FlopCounterMode's formulas applied to the operators the outputs depend on: Solar drops
    dead code (an unused result costs nothing), which eager PyTorch still runs and counts."""
    from torch.export.graph_signature import OutputKind
    from torch.utils.flop_counter import flop_registry

    ep = capture.exported
    live = {s.arg.name for s in ep.graph_signature.output_specs if s.kind == OutputKind.USER_OUTPUT}
    for node in reversed(list(ep.graph.nodes)):
        if node.name in live:
            live |= {n.name for n in node.all_input_nodes}
    total = 0
    for node in ep.graph.nodes:
        packet = getattr(node.target, "overloadpacket", None)
        if node.op == "call_function" and node.name in live and packet == torch.ops.aten.einsum:
            # Kept whole by the capture: PyTorch's count of the products its einsum runs.
            from torch.utils.flop_counter import FlopCounterMode

            operands = [torch.empty(n.meta["val"].shape, device="meta") for n in node.args[1]]
            with FlopCounterMode(display=False) as counter:
                torch.einsum(node.args[0], *operands)
            total += counter.get_total_flops()
        elif node.op == "call_function" and node.name in live and packet in flop_registry:
            args = torch.fx.node.map_arg(node.args, lambda n: n.meta["val"])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: n.meta["val"])
            total += flop_registry[packet](*args, **kwargs, out_val=node.meta["val"])
    return total


@pytest.mark.parametrize("path", WORKLOADS, ids=[str(p.relative_to(ROOT)) for p in WORKLOADS])
def test_macs_match_flop_counter_mode(path):
    try:
        capture = capture_problem(str(path))
        lowered = lower(capture)
    except UserError as e:
        pytest.skip(f"not lowered yet: {e.diagnostics[0].message[:120]}")
    graph = solar._core.trace(load_lowered(lowered), [])
    mac_ops = {
        "contract"
        if n.op.startswith("contract_")
        else n.op.rsplit("_", 1)[0]
        if n.op.endswith(("_bf16", "_fp16"))
        else n.op
        for n in graph.nodes
        if n.macs
    }
    if not mac_ops or not mac_ops <= CONTRACTIONS:
        pytest.skip(f"MACs outside matmul/conv/attention: {sorted(mac_ops - CONTRACTIONS)}")
    einsum = torch.ops.aten.einsum.default
    if "contract" in mac_ops and not any(n.target is einsum for n in capture.exported.graph.nodes):
        # A product sum (core ATen's mv is a mul and a sum): no formula counts those nodes.
        pytest.skip("MACs of a product and a sum, which PyTorch's formulas do not count")
    # PyTorch's formulas count the dense iteration space; Solar's guarded products count
    # only the points their guard lets through (the taps outside a padded input, a causal
    # band: docs/ir.md §7.1). Over the dense space the two agree exactly, and Solar's count
    # is at most it.
    dense = dense_macs(graph)
    assert graph.total_macs <= dense
    # PyTorch's formulas over the live graph: equal. FlopCounterMode on the eager forward
    # pass also counts work whose result is never used (torch.export drops it; e.g. the last
    # residual projection of workloads/level3/wavenet_stack.py), so it can only be larger.
    # An einsum step with no free dim (a batched dot, "bj,bj->b") is vector work in Solar
    # (2 FLOPs a point) and a bmm of 1x1 outputs in PyTorch (2 FLOPs a MAC): the same FLOPs.
    dots = sum(n.vector_flops for n in graph.nodes if n.op.startswith("contract_") and not n.macs)
    assert 2 * dense + dots == live_flops(capture)
    assert 2 * dense + dots <= flop_counter_total(capture)
