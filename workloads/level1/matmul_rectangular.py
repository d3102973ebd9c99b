# Rectangular matrix multiplication C[M, N] = A[M, K] @ B[K, N] with a long reduction.
import torch
import torch.nn as nn

M = 2048
K = 8192
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A @ B


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
