# Matrix-vector product y = A @ x with a 1-D vector operand.
import torch
import torch.nn as nn

M = 16384
K = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, x):
        return torch.matmul(A, x)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K)]


def get_init_inputs():
    return []
