# LeNet-5: two conv + tanh + avg-pool stages, then three fully connected layers (32x32 inputs).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
num_classes = 10


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.avg_pool2d(torch.tanh(self.conv1(x)), kernel_size=2, stride=2)
        x = F.avg_pool2d(torch.tanh(self.conv2(x)), kernel_size=2, stride=2)
        x = x.view(x.size(0), -1)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.rand(batch_size, 1, 32, 32)]


def get_init_inputs():
    return [num_classes]
