# Non-causal scaled dot-product attention via F.scaled_dot_product_attention.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
