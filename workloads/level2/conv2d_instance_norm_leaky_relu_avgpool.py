# Conv2d, InstanceNorm2d, LeakyReLU(0.2), then 2x2 average pooling (style-transfer style block).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
height = 112
width = 112
kernel_size = 3
negative_slope = 0.2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, negative_slope):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.norm(self.conv(x))
        x = F.leaky_relu(x, self.negative_slope)
        return F.avg_pool2d(x, kernel_size=2)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, negative_slope]
