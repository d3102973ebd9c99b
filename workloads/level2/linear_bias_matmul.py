# The paper's Figure 2 program: Linear(256 -> 512, bias) then matmul with D [512, 64].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 512, bias=True)
        self.D = nn.Parameter(torch.randn(512, 64))

    def forward(self, x):
        y = self.fc(x)
        return torch.matmul(y, self.D)


def get_inputs():
    return [torch.randn(2, 128, 256)]


def get_init_inputs():
    return []
