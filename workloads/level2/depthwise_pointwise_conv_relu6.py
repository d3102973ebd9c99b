# Depthwise-separable convolution: depthwise 3x3 conv, ReLU6, pointwise 1x1 conv, ReLU6.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 144
out_channels = 256
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels, out_channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels, out_channels, 1, bias=False)

    def forward(self, x):
        x = F.relu6(self.depthwise(x))
        return F.relu6(self.pointwise(x))


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, out_channels]
