import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
channels = 3


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 3, stride=1, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=2)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.gelu(self.conv2(x))
        x = self.dw(x) + x
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        x = self.drop(x)
        return torch.softmax(self.fc(x), dim=-1)


def get_inputs():
    return [torch.rand(batch_size, channels, 32, 32)]


def get_init_inputs():
    return [10]
