# Three-operand einsum computing a batched bilinear form x^T W y per row: 'bi,ij,bj->b'.
import torch
import torch.nn as nn

batch_size = 8192
dim_x = 4096
dim_y = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, W, y):
        return torch.einsum("bi,ij,bj->b", x, W, y)


def get_inputs():
    return [torch.rand(batch_size, dim_x), torch.rand(dim_x, dim_y), torch.rand(batch_size, dim_y)]


def get_init_inputs():
    return []
