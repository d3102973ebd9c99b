# GEMM, GroupNorm over feature groups, then HardSigmoid.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 1024
out_features = 4096
num_groups = 32


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        return F.hardsigmoid(self.gn(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
