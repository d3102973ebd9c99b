# Circular shift with torch.roll along two dimensions of an image batch.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
height = 128
width = 128
shifts = (5, -3)


class Model(nn.Module):
    def __init__(self, shifts):
        super().__init__()
        self.shifts = shifts

    def forward(self, x):
        return torch.roll(x, shifts=self.shifts, dims=(2, 3))


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [shifts]
