# In-place scaling x.mul_(scale) by a Python float set at construction time.
import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.mul_(self.scale)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [0.125]
