# ShuffleNet unit (stride 1): grouped 1x1 conv, channel shuffle (view/transpose/view), depthwise
# 3x3 conv, grouped 1x1 conv, batch norms, residual add, ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 240
groups = 3
height = 56
width = 56


def channel_shuffle(x, groups):
    b, c, h, w = x.shape
    x = x.view(b, groups, c // groups, h, w)
    x = x.transpose(1, 2).contiguous()
    return x.view(b, c, h, w)


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        mid = channels // 4
        self.groups = groups
        self.gconv1 = nn.Conv2d(channels, mid, 1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.dwconv = nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.gconv2 = nn.Conv2d(mid, channels, 1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.gconv1(x)))
        out = channel_shuffle(out, self.groups)
        out = self.bn2(self.dwconv(out))
        out = self.bn3(self.gconv2(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
