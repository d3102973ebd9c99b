# Reflection padding of 3 pixels on each side of an image batch via F.pad(mode='reflect').
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 256
width = 256
pad = 3


class Model(nn.Module):
    def __init__(self, pad):
        super().__init__()
        self.pad = pad

    def forward(self, x):
        p = self.pad
        return F.pad(x, (p, p, p, p), mode="reflect")


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [pad]
