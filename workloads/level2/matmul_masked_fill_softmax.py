# Scores = Q K^T scaled, padding mask (boolean input) applied with masked_fill, softmax, then P V.
import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 512
head_dim = 64


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = head_dim ** -0.5

    def forward(self, q, k, v, key_padding_mask):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        mask = key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


def get_inputs():
    q = torch.randn(batch_size, num_heads, seq_len, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    v = torch.randn(batch_size, num_heads, seq_len, head_dim)
    key_padding_mask = torch.rand(batch_size, seq_len) > 0.9
    return [q, k, v, key_padding_mask]


def get_init_inputs():
    return [head_dim]
