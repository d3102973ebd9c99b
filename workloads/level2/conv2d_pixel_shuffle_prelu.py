# Sub-pixel upsampling: Conv2d to 4x channels, PixelShuffle(2), then PReLU.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
height = 112
width = 112
upscale = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, upscale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels * upscale * upscale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)
        self.act = nn.PReLU(out_channels)

    def forward(self, x):
        return self.act(self.shuffle(self.conv(x)))


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, upscale]
