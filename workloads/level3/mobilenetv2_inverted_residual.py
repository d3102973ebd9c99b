# MobileNetV2 stack of inverted residual blocks: 1x1 expand, 3x3 depthwise, 1x1 linear project.
import torch
import torch.nn as nn

batch_size = 64
height = 112
width = 112
# (in_channels, out_channels, stride, expand_ratio)
block_configs = [(16, 24, 2, 6), (24, 24, 1, 6), (24, 32, 2, 6), (32, 32, 1, 6), (32, 32, 1, 6)]


class InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, stride, expand_ratio):
        super().__init__()
        hidden = in_ch * expand_ratio
        self.use_residual = stride == 1 and in_ch == out_ch
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch),
        )

    def forward(self, x):
        if self.use_residual:
            return x + self.block(x)
        return self.block(x)


class Model(nn.Module):
    def __init__(self, block_configs):
        super().__init__()
        self.blocks = nn.Sequential(*[InvertedResidual(*cfg) for cfg in block_configs])

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.rand(batch_size, block_configs[0][0], height, width)]


def get_init_inputs():
    return [block_configs]
