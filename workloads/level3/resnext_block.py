# ResNeXt bottleneck block (32x4d cardinality): 1x1 conv, grouped 3x3 conv (32 groups), 1x1 conv,
# batch norms, identity residual, ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 256
width_channels = 128
cardinality = 32
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, width_channels, cardinality):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width_channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width_channels)
        self.conv2 = nn.Conv2d(width_channels, width_channels, 3, padding=1, groups=cardinality, bias=False)
        self.bn2 = nn.BatchNorm2d(width_channels)
        self.conv3 = nn.Conv2d(width_channels, in_channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(in_channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, width_channels, cardinality]
