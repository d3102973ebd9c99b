# SwiGLU feed-forward: gate and up projections, SiLU(gate) * up, then down projection.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 2048
hidden_size = 2048
intermediate_size = 5632


class Model(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, intermediate_size]
