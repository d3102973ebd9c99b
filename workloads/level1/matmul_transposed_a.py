# Matmul with a transposed left operand: C = A.T @ B, A stored as [K, M].
import torch
import torch.nn as nn

M = 2048
K = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A.T @ B


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
