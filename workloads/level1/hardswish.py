# HardSwish activation via F.hardswish on a 4-D feature map.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
channels = 96
height = 112
width = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
