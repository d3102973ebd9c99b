# torch.index_select of rows (dimension 0) of a large table by an int64 index vector.
import torch
import torch.nn as nn

num_rows = 262144
row_dim = 2048
num_selected = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.index_select(x, 0, index)


def get_inputs():
    x = torch.rand(num_rows, row_dim)
    index = torch.randint(0, num_rows, (num_selected,))
    return [x, index]


def get_init_inputs():
    return []
