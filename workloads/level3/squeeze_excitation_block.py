# Residual block with squeeze-and-excitation: two 3x3 convs, global avg pool, FC-ReLU-FC-sigmoid
# channel gates rescaling the features, residual add, ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
channels = 256
height = 56
width = 56
reduction = 16


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        b, c, _, _ = out.shape
        s = out.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s)))).view(b, c, 1, 1)
        out = out * s
        return F.relu(out + x)


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, reduction]
