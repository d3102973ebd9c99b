# Concatenation of three feature maps along the channel dimension via torch.cat.
import torch
import torch.nn as nn

batch_size = 32
channels_a = 128
channels_b = 256
channels_c = 64
height = 112
width = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        return torch.cat([a, b, c], dim=1)


def get_inputs():
    a = torch.rand(batch_size, channels_a, height, width)
    b = torch.rand(batch_size, channels_b, height, width)
    c = torch.rand(batch_size, channels_c, height, width)
    return [a, b, c]


def get_init_inputs():
    return []
