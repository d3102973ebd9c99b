# Two-operand einsum contracting a 4-D tensor with a matrix on its last axis: 'bijl,lk->bijk'.
import torch
import torch.nn as nn

dim_b = 16
dim_i = 128
dim_j = 512
dim_l = 256
dim_k = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.rand(dim_b, dim_i, dim_j, dim_l), torch.rand(dim_l, dim_k)]


def get_init_inputs():
    return []
