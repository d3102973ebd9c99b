# Live dropout nn.Dropout(p=0.1) (training mode, never switched to eval).
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.dropout = nn.Dropout(p=p)

    def forward(self, x):
        return self.dropout(x)


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [0.1]
