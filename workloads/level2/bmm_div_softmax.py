# Attention-score style: bmm(Q, K^T), divide by sqrt(d), softmax, bmm with V.
import math

import torch
import torch.nn as nn

batch_heads = 128
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = math.sqrt(head_dim)

    def forward(self, q, k, v):
        scores = torch.bmm(q, k.transpose(1, 2)) / self.scale
        probs = torch.softmax(scores, dim=-1)
        return torch.bmm(probs, v)


def get_inputs():
    return [
        torch.randn(batch_heads, seq_len, head_dim),
        torch.randn(batch_heads, seq_len, head_dim),
        torch.randn(batch_heads, seq_len, head_dim),
    ]


def get_init_inputs():
    return [head_dim]
