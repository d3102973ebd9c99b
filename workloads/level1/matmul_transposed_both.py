# Matmul with both operands transposed: C = A.T @ B.T.
import torch
import torch.nn as nn

M = 2048
K = 4096
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B.T)


def get_inputs():
    return [torch.rand(K, M), torch.rand(N, K)]


def get_init_inputs():
    return []
