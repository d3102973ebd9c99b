# Matmul with a weight parameter, hand-written RMS norm with a learned gain, then SiLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 1024
in_features = 2048
out_features = 2048
eps = 1e-6


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.02)
        self.gain = nn.Parameter(torch.ones(out_features))
        self.eps = eps

    def forward(self, x):
        y = torch.matmul(x, self.weight)
        rms = torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        y = y * rms * self.gain
        return F.silu(y)


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]
