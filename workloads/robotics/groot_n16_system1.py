"""A GR00T-N1.6-System-1-like action head: NVIDIA GR00T N1.6's flow-matching diffusion
transformer that turns the vision-language backbone's features into an action chunk, at its
published size. It is built here from plain PyTorch layers (GR00T's own code is not a
dependency), following the published architecture (NVIDIA Isaac-GR00T, `Gr00tN1d6ActionHead`):

- a 32-layer "AlternateVLDiT" of width 1536 (32 heads of 48), feed-forward 4 x 1536: odd
  layers self-attention over the state and action tokens, even layers cross-attention to the
  backbone's 2048-dim features, alternating between its text and its image tokens every two
  cross-attention blocks; each block's first norm modulated by the timestep (adaptive layer
  norm, shift and scale);
- a state encoder (29 -> 1024 -> 1536), an action encoder (29 -> 1536, with the timestep's
  sinusoidal embedding: 3072 -> 1536 -> 1536) and an action decoder (1536 -> 1024 -> 29);
- a chunk of 16 actions of 29 dims, 4 Euler steps of flow matching.

System 1 only: the backbone's features are inputs (System 2, Cosmos-Reason-2B, runs at its
own rate). Assumed here: 2 cameras of 256 image tokens and 32 text tokens. GR00T recomputes
the cross-attention keys and values of the features at every step, and so does this program.

    solar inverse workloads/robotics/groot_n16_system1.py --rate 500Hz --arch Jetson_Thor \\
        --quantize w4a4

Sizes are module-level constants (`--dim LAYERS=4 --dim WIDTH=64 ...` for a small copy that
validates; the published size is built on fake tensors with --no-validate).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

LAYERS = 32
WIDTH = 1536
HEADS = 32
BACKBONE = 2048
IMAGE_TOKENS = 512
TEXT_TOKENS = 32
HORIZON = 16
ACTION = 29
HIDDEN = 1024
STEPS = 4


def sinusoid(t: torch.Tensor, dim: int) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = t[:, None].float() * 1000.0 * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


class Block(nn.Module):
    def __init__(self, cross: bool):
        super().__init__()
        kv = BACKBONE if cross else WIDTH
        self.norm1 = nn.LayerNorm(WIDTH, elementwise_affine=False)
        self.ada = nn.Linear(WIDTH, 2 * WIDTH)
        self.q = nn.Linear(WIDTH, WIDTH)
        self.k = nn.Linear(kv, WIDTH)
        self.v = nn.Linear(kv, WIDTH)
        self.o = nn.Linear(WIDTH, WIDTH)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.up = nn.Linear(WIDTH, 4 * WIDTH)
        self.down = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x, temb, context=None):
        scale, shift = self.ada(F.silu(temb)).chunk(2, dim=-1)
        h = self.norm1(x) * (1 + scale[:, None]) + shift[:, None]
        kv = h if context is None else context
        b, n, _ = h.shape
        q = self.q(h).view(b, n, HEADS, -1).transpose(1, 2)
        k = self.k(kv).view(b, kv.shape[1], HEADS, -1).transpose(1, 2)
        v = self.v(kv).view(b, kv.shape[1], HEADS, -1).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, WIDTH)
        x = x + self.o(a)
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.state_encoder = nn.Sequential(
            nn.Linear(ACTION, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, WIDTH)
        )
        self.action_in = nn.Linear(ACTION, WIDTH)
        self.action_mix = nn.Linear(2 * WIDTH, WIDTH)
        self.action_out = nn.Linear(WIDTH, WIDTH)
        self.time = nn.Sequential(nn.Linear(256, WIDTH), nn.SiLU(), nn.Linear(WIDTH, WIDTH))
        self.blocks = nn.ModuleList(Block(cross=i % 2 == 0) for i in range(LAYERS))
        self.norm_out = nn.LayerNorm(WIDTH)
        self.decoder = nn.Sequential(nn.Linear(WIDTH, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, ACTION))
        self.to(torch.bfloat16)

    def forward(self, state, noise, text, image):
        s = self.state_encoder(state)[:, None]
        actions = noise
        for step in range(STEPS):
            t = torch.full((state.shape[0],), step / STEPS)
            temb = self.time(sinusoid(t, 256).to(state.dtype))
            a = self.action_in(actions)
            tau = sinusoid(t, WIDTH).to(state.dtype)[:, None].expand(-1, HORIZON, -1)
            a = self.action_out(F.silu(self.action_mix(torch.cat([a, tau], dim=-1))))
            x = torch.cat([s, a], dim=1)
            for i, block in enumerate(self.blocks):
                # Even layers cross-attend: text tokens, then image tokens, every two of them.
                context = None if i % 2 else (text if (i // 2) % 2 == 0 else image)
                x = block(x, temb, context)
            velocity = self.decoder(self.norm_out(x[:, 1:]))
            actions = actions + velocity / STEPS
        return actions


def get_inputs():
    return [
        torch.randn(1, ACTION, dtype=torch.bfloat16),
        torch.randn(1, HORIZON, ACTION, dtype=torch.bfloat16),
        torch.randn(1, TEXT_TOKENS, BACKBONE, dtype=torch.bfloat16),
        torch.randn(1, IMAGE_TOKENS, BACKBONE, dtype=torch.bfloat16),
    ]


def get_init_inputs():
    return []
