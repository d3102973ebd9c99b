# Conv2d, minimum over the channel dimension (keepdim), then Softplus.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 32
out_channels = 128
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        return F.softplus(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
