# Two-operand einsum computing per-head attention scores: 'bhqd,bhkd->bhqk'.
import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    q = torch.rand(batch_size, num_heads, seq_len, head_dim)
    k = torch.rand(batch_size, num_heads, seq_len, head_dim)
    return [q, k]


def get_init_inputs():
    return []
