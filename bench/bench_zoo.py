"""Model-zoo benchmark: capture + lower + analyse (no validation) at published sizes, on fake
tensors, with peak memory; and validation of the small-config zoo (tests/python/hf_zoo.py).

Published sizes (Hugging Face configs written out here; nothing is downloaded):
- GPT-2 small: 12 layers, 768 hidden, 12 heads, 50,257 vocab, 1,024 tokens;
- Llama-3-8B: 32 layers, 4,096 hidden, 14,336 FFN, 32 heads, 8 KV heads, 128,256 vocab,
  4,096 tokens (LlamaForCausalLM: logits for every position);
- ResNet-50 (transformers' ResNetModel with its default config, the ResNet-50 layout),
  batch 64 at 224 x 224.

One fresh process per model, so each peak RSS is its own. Targets (issue 11): Llama-3-8B
under 30 s and under 1 GB peak; each small model's validation under 60 s.

    .venv/bin/python bench/bench_zoo.py [--no-small]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PUBLISHED = r"""
import json, resource, sys, time
import torch, transformers, solar
transformers.logging.set_verbosity_error()
name = sys.argv[1]
t0 = time.perf_counter()
with solar.fake_tensors():
    if name == "gpt2-small":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
        example = {"input_ids": torch.zeros(1, 1024, dtype=torch.long)}
    elif name == "llama-3-8b":
        cfg = transformers.LlamaConfig(
            hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
            num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
            max_position_embeddings=8192, rope_theta=500000.0)
        model = transformers.LlamaForCausalLM(cfg)
        example = {"input_ids": torch.zeros(1, 4096, dtype=torch.long)}
    else:
        model = transformers.ResNetModel(transformers.ResNetConfig())
        example = {"pixel_values": torch.zeros(64, 3, 224, 224)}
r = solar.analyze(model, example, validate=False, mode="eval")
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"model": name, "seconds": seconds, "peak_mb": peak,
                  "nodes": len(r.graph.nodes), "gmacs": r.graph.total_macs / 1e9,
                  "fused_ms": r.fused.seconds * 1e3}))
"""

SMALL = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
import hf_zoo, solar
t0 = time.perf_counter()
model, example = hf_zoo.build(sys.argv[1])
r = solar.analyze(model, example, mode="eval")
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"model": sys.argv[1], "seconds": seconds, "peak_mb": peak,
                  "validation": r.validation.status, "macs": r.graph.total_macs}))
"""


def run(script: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"model": args[0], "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-small", action="store_true", help="skip the small-config validations")
    args = ap.parse_args()
    print(
        f"{'published size':<14} {'time s':>8} {'peak MB':>8} {'nodes':>7} {'GMACs':>10} "
        f"{'fused ms (H100 PCIe)':>21}"
    )
    for name in ("gpt2-small", "llama-3-8b", "resnet-50-b64"):
        r = run(PUBLISHED, name)
        if "error" in r:
            print(f"{name:<14} error: {r['error']}")
            continue
        print(
            f"{name:<14} {r['seconds']:>8.1f} {r['peak_mb']:>8.0f} {r['nodes']:>7} "
            f"{r['gmacs']:>10.1f} {r['fused_ms']:>21.3f}"
        )
    if args.no_small:
        return 0
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import hf_zoo

    print(f"\n{'small config':<14} {'time s':>8} {'peak MB':>8} {'validation':>11} {'MACs':>12}")
    for name in hf_zoo.ZOO:
        r = run(SMALL, name, str(ROOT / "tests" / "python"))
        if "error" in r:
            print(f"{name:<14} error: {r['error']}")
            continue
        print(
            f"{name:<14} {r['seconds']:>8.1f} {r['peak_mb']:>8.0f} {r['validation']:>11} "
            f"{r['macs']:>12,}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
