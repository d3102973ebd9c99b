# 3-D average pooling (3x3x3, stride 2, padding 1) via F.avg_pool3d.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 32
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.avg_pool3d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.rand(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
