# Argmax over a dimension of a [batch, dim1, dim2] tensor (int64 indices).
import torch
import torch.nn as nn

batch_size = 64
dim1 = 2048
dim2 = 4095
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
