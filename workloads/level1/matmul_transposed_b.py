# Matmul with a transposed right operand: C = A @ B.T, B stored as [N, K].
import torch
import torch.nn as nn

M = 4096
K = 2048
N = 3072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.rand(M, K), torch.rand(N, K)]


def get_init_inputs():
    return []
