# torch.gather along dimension 1 with an int64 index tensor (pick k entries per row).
import torch
import torch.nn as nn

batch_size = 8192
dim = 32768
num_picks = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, 1, index)


def get_inputs():
    x = torch.rand(batch_size, dim)
    index = torch.randint(0, dim, (batch_size, num_picks))
    return [x, index]


def get_init_inputs():
    return []
