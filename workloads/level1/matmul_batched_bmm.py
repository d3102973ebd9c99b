# Batched matrix multiplication with torch.bmm: [B, M, K] x [B, K, N].
import torch
import torch.nn as nn

batch = 128
M = 512
K = 1024
N = 384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.rand(batch, M, K), torch.rand(batch, K, N)]


def get_init_inputs():
    return []
