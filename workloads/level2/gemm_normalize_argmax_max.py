# GEMM, L2-normalise the rows, argmax over features, plus the max value times a scale.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 1024
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = F.normalize(self.fc(x), p=2.0, dim=1)
        idx = torch.argmax(y, dim=1)
        top = torch.amax(y, dim=1)
        return idx, top * 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
