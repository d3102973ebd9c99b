"""torchvision's classification zoo: capture + lower + analyse + validate each model (random
weights, eval mode, one image at the weights' published size), from the Python API and from a
problem file wrapping it, with time, peak memory, the
validation level, Solar's MACs, FlopCounterMode's and torchvision's published figure (the
weights entry's GFLOPS, read from its metadata: nothing is downloaded).

This project's environment has no torchvision (docs/pytorch.md, "Model zoos": the wheels
that import beside the CPU torch are a CUDA build of several GB), so this runs in a separate
virtual environment that has one, with Solar on its path:

    python -m venv /tmp/tvenv
    /tmp/tvenv/bin/pip install torch==2.14.1 torchvision==0.29.1 numpy ml_dtypes PyYAML
    PYTHONPATH=<a directory holding the solar package and its built _core> \\
        /tmp/tvenv/bin/python bench/bench_torchvision.py [model ...]

One fresh process per model, so each peak RSS is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys

MODELS = {
    # name: (builder, weights enum, image side)
    "resnet50": ("resnet50", "ResNet50_Weights", 224),
    "mobilenet_v3_large": ("mobilenet_v3_large", "MobileNet_V3_Large_Weights", 224),
    "efficientnet_b0": ("efficientnet_b0", "EfficientNet_B0_Weights", 224),
    "regnet_y_400mf": ("regnet_y_400mf", "RegNet_Y_400MF_Weights", 224),
    "convnext_tiny": ("convnext_tiny", "ConvNeXt_Tiny_Weights", 224),
    "swin_t": ("swin_t", "Swin_T_Weights", 224),
    "vit_b_16": ("vit_b_16", "ViT_B_16_Weights", 224),
    "maxvit_t": ("maxvit_t", "MaxVit_T_Weights", 224),
    "densenet121": ("densenet121", "DenseNet121_Weights", 224),
    "inception_v3": ("inception_v3", "Inception_V3_Weights", 299),
}

ONE = r"""
import json, os, resource, sys, tempfile, time
import torch, torchvision, solar
from torch.utils.flop_counter import FlopCounterMode
builder, weights, side, how = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
published = getattr(torchvision.models, weights).DEFAULT.meta.get("_ops")
torch.manual_seed(0)
kwargs = {"aux_logits": False, "init_weights": False} if builder == "inception_v3" else {}
model = getattr(torchvision.models, builder)(weights=None, **kwargs).eval()
x = torch.randn(1, 3, side, side)
t0 = time.perf_counter()
if how == "module":
    r = solar.analyze(model, [x])
else:  # the same model from a problem file, in eval mode (docs/pytorch.md, Programs)
    path = os.path.join(tempfile.mkdtemp(), builder + ".py")
    with open(path, "w") as f:
        f.write(PROBLEM.format(builder=builder, kwargs=kwargs, side=side))
    r = solar.analyze(path, mode="eval")
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with torch.no_grad(), FlopCounterMode(display=False) as c:
    model(x)
print(json.dumps({"model": sys.argv[1], "how": how, "seconds": seconds, "peak_mb": peak,
                  "validation": r.validation.status, "macs": r.graph.total_macs,
                  "flop_counter_macs": c.get_total_flops() // 2, "published_gmacs": published}))
"""


PROBLEM = """import torch
import torchvision


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.{builder}(weights=None, **{kwargs!r})

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(1, 3, {side}, {side})]
"""


def main() -> int:
    names = sys.argv[1:] or list(MODELS)
    print(
        f"{'model':<20} {'from':<8} {'time s':>7} {'peak MB':>8} {'validation':>11} "
        f"{'GMACs':>9} {'FlopCounter':>11} {'published':>9}"
    )
    script = ONE.replace("PROBLEM", repr(PROBLEM))
    for name in names:
        builder, weights, side = MODELS[name]
        for how in ("module", "problem"):
            out = subprocess.run(
                [sys.executable, "-c", script, name, builder, weights, str(side), how],
                capture_output=True,
                text=True,
                check=False,
            )
            lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            if out.returncode != 0 or not lines:
                print(
                    f"{name:<20} {how:<8} error: {(out.stderr.strip().splitlines() or ['?'])[-1]}"
                )
                continue
            r = json.loads(lines[-1])
            print(
                f"{name:<20} {how:<8} {r['seconds']:>7.1f} {r['peak_mb']:>8.0f} "
                f"{r['validation']:>11} {r['macs'] / 1e9:>9.3f} "
                f"{r['flop_counter_macs'] / 1e9:>11.3f} {r['published_gmacs']:>9}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
