# GoogLeNet Inception module (3a-sized): 1x1, 1x1->3x3, 1x1->5x5 and 3x3 maxpool->1x1 branches,
# each with ReLU, concatenated along channels.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 192
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        super().__init__()
        self.b1 = nn.Conv2d(in_channels, ch1x1, 1)
        self.b2_red = nn.Conv2d(in_channels, ch3x3red, 1)
        self.b2 = nn.Conv2d(ch3x3red, ch3x3, 3, padding=1)
        self.b3_red = nn.Conv2d(in_channels, ch5x5red, 1)
        self.b3 = nn.Conv2d(ch5x5red, ch5x5, 5, padding=2)
        self.b4_pool = nn.MaxPool2d(3, stride=1, padding=1)
        self.b4 = nn.Conv2d(in_channels, pool_proj, 1)

    def forward(self, x):
        y1 = F.relu(self.b1(x))
        y2 = F.relu(self.b2(F.relu(self.b2_red(x))))
        y3 = F.relu(self.b3(F.relu(self.b3_red(x))))
        y4 = F.relu(self.b4(self.b4_pool(x)))
        return torch.cat([y1, y2, y3, y4], dim=1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, 64, 96, 128, 16, 32, 32]
