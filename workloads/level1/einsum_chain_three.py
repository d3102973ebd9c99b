# Three-operand einsum chaining two contractions: 'ij,jk,kl->il'.
import torch
import torch.nn as nn

dim_i = 2048
dim_j = 4096
dim_k = 1024
dim_l = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        return torch.einsum("ij,jk,kl->il", A, B, C)


def get_inputs():
    return [torch.rand(dim_i, dim_j), torch.rand(dim_j, dim_k), torch.rand(dim_k, dim_l)]


def get_init_inputs():
    return []
