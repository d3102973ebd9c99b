# A PyTorch program with an operator that has no lowering (aten.hypot): the agent's fallback
# test. hypot(x, y) = sqrt(x^2 + y^2), then a linear layer that the deterministic lowering takes.
import torch
import torch.nn as nn

N = 16
D = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)

    def forward(self, x, y):
        return self.fc(torch.hypot(x, y))


def get_inputs():
    return [torch.randn(N, D), torch.randn(N, D)]


def get_init_inputs():
    return []
