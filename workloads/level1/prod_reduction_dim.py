# Product reduction over dimension 1 of a [batch, dim1, dim2] tensor (values near 1).
import torch
import torch.nn as nn

batch_size = 32
dim1 = 256
dim2 = 65536
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.prod(x, dim=self.dim)


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
