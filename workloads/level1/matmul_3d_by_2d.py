# Matmul of a 3-D tensor by a 2-D matrix: [B, M, K] @ [K, N] (weight shared across the batch).
import torch
import torch.nn as nn

batch = 16
M = 1024
K = 2048
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(batch, M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
