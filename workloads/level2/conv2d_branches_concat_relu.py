# Two parallel Conv2d branches (1x1 and 3x3 after zero padding), channel concat, then ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 128
branch_channels = 64
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, branch_channels):
        super().__init__()
        self.conv1x1 = nn.Conv2d(in_channels, branch_channels, 1)
        self.conv3x3 = nn.Conv2d(in_channels, branch_channels, 3)

    def forward(self, x):
        a = self.conv1x1(x)
        b = self.conv3x3(F.pad(x, (1, 1, 1, 1)))
        return F.relu(torch.cat([a, b], dim=1))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, branch_channels]
