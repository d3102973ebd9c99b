# Conv2d, Mish, add a constant, then HardTanh clipping.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 64
out_channels = 64
height = 112
width = 112
kernel_size = 3
add_value = 0.5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, add_value):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.add_value = add_value

    def forward(self, x):
        x = F.mish(self.conv(x))
        x = x + self.add_value
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, add_value]
