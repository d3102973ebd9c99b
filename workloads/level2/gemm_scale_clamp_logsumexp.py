# GEMM, multiply by a constant scale, residual doubling, clamp, then logsumexp over features.
import torch
import torch.nn as nn

batch_size = 128
in_features = 2048
hidden_size = 4096
scale_factor = 0.5
clamp_min = -8.0
clamp_max = 8.0


class Model(nn.Module):
    def __init__(self, in_features, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.fc(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        return torch.logsumexp(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden_size, scale_factor, clamp_min, clamp_max]
